package seeder

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
)

// TestSiteSetLookup: a worker's answers for a site's URLs are graph.db's
// (id and site id, or nothing), looked up one by one at first and from
// memory once the site is read: small sites soon, a large one only when
// its lookups pay for reading it, never past the worker's bound; a site
// graph.db does not know is answered without a lookup.
func TestSiteSetLookup(t *testing.T) {
	g, err := linkgraph.Open(filepath.Join(t.TempDir(), "graph.db"), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sizes := map[string]int{"http://small.cl": 20, "http://large.cl": 2000, "https://small.cl": 5, "http://small.cl:8080": 3}
	want := map[string][2]uint64{} // URL → id, site id
	err = g.Update(func(tx *linkgraph.Tx) error {
		for key, n := range sizes {
			site, _, err := tx.AddSite(key)
			if err != nil {
				return err
			}
			for i := range n {
				u := fmt.Sprintf("%s/p%d", key, i)
				id, _, err := tx.AddURL(u, site, 0, 0)
				if err != nil {
					return err
				}
				want[u] = [2]uint64{id, site}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := scope.MustNew(testConfig().Scope)
	for _, bound := range []int{maxSiteURLs, 30} {
		t.Run(fmt.Sprint("bound ", bound), func(t *testing.T) {
			s := newSiteSet()
			s.max = bound
			err := g.View(func(tx *linkgraph.Tx) error {
				// Each site's URLs and as many it does not know, three
				// times over.
				for round := range 3 {
					for key, n := range sizes {
						for i := range 2 * n {
							u := fmt.Sprintf("%s/p%d", key, i)
							id, site := s.lookup(tx, s.site(tx, key, sc), key, u)
							if got := [2]uint64{id, site}; got != want[u] {
								t.Fatalf("round %d: %s: %v, want %v", round, u, got, want[u])
							}
						}
					}
					if id, site := s.lookup(tx, s.site(tx, "http://new.cl", sc), "http://new.cl", "http://new.cl/p1"); id != 0 || site != 0 {
						t.Errorf("unknown site: %d, %d", id, site)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.loaded > bound {
				t.Errorf("%d URLs in memory, bound %d", s.loaded, bound)
			}
			if s.sites["http://new.cl"].lookups != 0 {
				t.Error("URLs of a site graph.db does not know were looked up")
			}
			small, large := s.sites["http://small.cl"], s.sites["http://large.cl"]
			switch bound {
			case maxSiteURLs:
				// 120 lookups of a 20-URL site: read; 12,000 of a
				// 2,000-URL site: read once they pay for it.
				if small.urls == nil || large.urls == nil || len(large.urls) != 2000 {
					t.Errorf("sites not read: small %d, large %d URLs", len(small.urls), len(large.urls))
				}
			case 30:
				if large.urls != nil {
					t.Errorf("large site read past the bound: %d URLs", len(large.urls))
				}
			}
		})
	}
}
