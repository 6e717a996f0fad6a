package manager

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// cacheWeb fills f with a web of n pages on a few sites, the first half
// fetched with links, and returns the random source the cycles go on
// with.
func cacheWeb(f *fixture, n int) *rand.Rand {
	r := rand.New(rand.NewPCG(3, 4))
	var pages []page
	for i := range n {
		p := page{url: fmt.Sprintf("http://s%d.cl/p%d", i%7, i), depth: 1 + i%4, found: i % 3}
		if i < n/2 {
			p.state, p.visits, p.fetched = linkgraph.StateFetched, 1, daysAgo(float64(8+i%40))
			for range 1 + r.IntN(8) {
				p.links = append(p.links, fmt.Sprintf("http://s%d.cl/p%d", r.IntN(7), r.IntN(n)))
			}
		}
		pages = append(pages, p)
	}
	f.add(pages...)
	return r
}

// seedCycle does what the seeder does with a harvested batch, roughly:
// each entry fetched now with a new out-link set (some to new URLs, a few
// empty), and the links of a few other pages added to or emptied.
func seedCycle(f *fixture, r *rand.Rand, entries int, cycle int) int {
	f.t.Helper()
	changed := 0
	f.update(func(tx *linkgraph.Tx) error {
		last := tx.LastDocID()
		target := func() (linkgraph.Target, error) {
			if r.IntN(5) == 0 { // a URL not known yet
				u := fmt.Sprintf("http://s%d.cl/new-%d-%d", r.IntN(9), cycle, r.IntN(1000))
				site, _, err := tx.AddSite(urlnorm.SiteKey(u))
				if err != nil {
					return linkgraph.Target{}, err
				}
				id, created, err := tx.AddURL(u, site, 2, cycle)
				if err != nil || !created {
					return linkgraph.Target{Doc: id, Site: site}, err
				}
				s, err := tx.Site(site) // the seeder counts a site's pages
				if err != nil {
					return linkgraph.Target{}, err
				}
				s.Pages++
				return linkgraph.Target{Doc: id, Site: site}, tx.PutSite(s)
			}
			id := 1 + r.Uint64N(last)
			site, err := tx.DocSite(id)
			return linkgraph.Target{Doc: id, Site: site}, err
		}
		batchID := 0
		for id := uint64(1); id <= last; id++ {
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if d.State != linkgraph.StateScheduled {
				continue
			}
			batchID = d.Batch
			d.State, d.Visits, d.Fetched = linkgraph.StateFetched, d.Visits+1, testNow
			if err := tx.PutDoc(d); err != nil {
				return err
			}
			var targets []linkgraph.Target
			for range r.IntN(10) { // 0: the page has no links now
				tg, err := target()
				if err != nil {
					return err
				}
				targets = append(targets, tg)
			}
			if _, err := tx.ReplaceOutLinks(id, d.Site, targets); err != nil {
				return err
			}
			changed++
		}
		for range 3 { // links found again on pages not in the batch
			id := 1 + r.Uint64N(last)
			site, err := tx.DocSite(id)
			if err != nil {
				return err
			}
			tg, err := target()
			if err != nil {
				return err
			}
			if _, err := tx.AddOutLinks(id, site, []linkgraph.Target{tg}); err != nil {
				return err
			}
		}
		if batchID > 0 {
			return tx.PutBatch(linkgraph.BatchState{ID: batchID, URLs: entries, Managed: testNow, Seeded: testNow})
		}
		return nil
	})
	return changed
}

// graphRows reads every non-empty out-link set of graph.db.
func graphRows(tx *linkgraph.Tx) (map[uint32][]uint32, error) {
	rows := map[uint32][]uint32{}
	err := tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		if !bm.IsEmpty() {
			rows[uint32(id)] = bm.ToArray()
		}
		return nil
	})
	return rows, err
}

func cacheRows(t *testing.T, c *linkCache) map[uint32][]uint32 {
	t.Helper()
	rows := map[uint32][]uint32{}
	if err := c.forEach(context.Background(), func(src uint32, targets []uint32) error {
		rows[src] = slices.Clone(targets)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// The incremental links cache, over cycles of runs and seeding, holds
// exactly graph.db's out-links, and a plan made from it is the plan made
// from graph.db; a cache that is torn, damaged, from another state of
// graph.db or written by a run killed before it reset the change log is
// rebuilt, never used; a killed run's temporary file is removed.
func TestLinksCacheIncremental(t *testing.T) {
	for _, strategy := range []string{StrategyPageRank, StrategyBacklink, StrategyPartialPageRank} {
		t.Run(strategy, func(t *testing.T) { testLinksCacheIncremental(t, strategy) })
	}
}

func testLinksCacheIncremental(t *testing.T, strategy string) {
	f := newFixture(t)
	f.cfg.Manager.Strategy = strategy
	f.cfg.Manager.BatchSize = 40
	f.cfg.Manager.PageRankInterval = 60
	r := cacheWeb(f, 400)
	path := f.col.LinksCachePath()
	var stale []byte // a cache of an earlier state
	for cycle := 1; cycle <= 12; cycle++ {
		want := "updated"
		switch cycle {
		case 1:
			want = "rebuilt" // no cache yet
		case 2:
			stale, _ = os.ReadFile(path)
		case 3: // torn: the file cut short
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)/2], 0o644)
			want = "rebuilt"
		case 5: // damaged in the middle (a byte of a target id), same size and token
			data, _ := os.ReadFile(path)
			data[len(data)/2] ^= 0x40
			os.WriteFile(path, data, 0o644)
			want = "rebuilt"
		case 7: // a cache of an earlier state of graph.db
			os.WriteFile(path, stale, 0o644)
			want = "rebuilt"
		case 9: // killed after publishing a new cache, before resetting the log
			f.view(func(tx *linkgraph.Tx) error {
				var n uint64
				return rebuildLinks(context.Background(), tx, path, 12345, &n)
			})
			want = "rebuilt"
		case 10: // killed while writing one
			os.WriteFile(path[:len(path)-len("graph.links")]+".graph.links.tmp-1", []byte("WIRELNK1 torn"), 0o644)
		}
		g := f.open()
		var links *linkCache
		var res linkRefresh
		var err error
		links, res, err = refreshLinks(context.Background(), f.col, g, slog.New(slog.DiscardHandler))
		if err != nil {
			g.Close()
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		if res.how != want {
			t.Errorf("cycle %d: cache %s (%s), want %s", cycle, res.how, res.why, want)
		}
		err = g.View(func(tx *linkgraph.Tx) error {
			wantRows, err := graphRows(tx)
			if err != nil {
				return err
			}
			if got := cacheRows(t, links); !reflect.DeepEqual(got, wantRows) {
				t.Errorf("cycle %d: cache holds %d rows, graph.db %d, and they differ", cycle, len(got), len(wantRows))
			}
			cfg := f.cfg
			p1, err := makePlan(context.Background(), tx, &cfg, testNow, slog.New(slog.DiscardHandler), 0, cycle, links)
			if err != nil {
				return err
			}
			p2, err := makePlan(context.Background(), tx, &cfg, testNow, slog.New(slog.DiscardHandler), 0, cycle, nil)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(p1.entries, p2.entries) || p1.stats.Links != p2.stats.Links || p1.stats.Links == 0 {
				t.Errorf("cycle %d: the plan from the cache (%d entries, %d links) is not the plan from graph.db (%d, %d)",
					cycle, len(p1.entries), p1.stats.Links, len(p2.entries), p2.stats.Links)
			}
			return nil
		})
		g.Close()
		if err != nil {
			t.Fatal(err)
		}
		if tmps, _ := os.ReadDir(f.col.Dir); slices.ContainsFunc(tmps, func(e os.DirEntry) bool { return e.Name() == ".graph.links.tmp-1" }) {
			t.Errorf("cycle %d: a killed run's temporary file is left", cycle)
		}
		res2 := f.mustRun()
		seedCycle(f, r, res2.URLs, cycle)
	}
}
