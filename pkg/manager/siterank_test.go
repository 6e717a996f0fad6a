package manager

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/sitegraph"
)

// TestGlobalSiteRank: partition 1 of 2 knows a.cl/, which links to b.cl/
// and c.cl/ alike; partition 2's site graph says many of its sites link
// to c.cl. With that graph (copied into exchange/in/) c.cl/ is worth
// more than b.cl/; without it, with global_site_rank off, or with a
// graph of another K, they tie. explain names the factor.
func TestGlobalSiteRank(t *testing.T) {
	peer := &sitegraph.Graph{From: partition.Partition{I: 2, K: 2}, Written: testNow.Add(-time.Minute),
		Sites: []string{"http://c.cl", "http://d.cl", "http://e.cl", "http://f.cl"},
		Edges: []sitegraph.Edge{{Src: 1, Dst: 0, Links: 5}, {Src: 2, Dst: 0, Links: 3}, {Src: 3, Dst: 0, Links: 1}, {Src: 1, Dst: 2, Links: 1}}}
	for _, c := range []struct {
		name   string
		graph  *sitegraph.Graph
		on     bool
		higher bool // c.cl/ above b.cl/
	}{
		{"peer graph", peer, true, true},
		{"no peer graph", nil, true, false},
		{"off", peer, false, false},
		{"other K", &sitegraph.Graph{From: partition.Partition{I: 2, K: 3}, Written: peer.Written, Sites: peer.Sites, Edges: peer.Edges}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Crawl.Partition = "1/2"
			f.cfg.Manager.GlobalSiteRank = c.on
			f.add(page{url: "http://a.cl/", state: linkgraph.StateFetched, visits: 1, first: daysAgo(1), fetched: daysAgo(1),
				links: []string{"http://b.cl/", "http://c.cl/"}})
			if c.graph != nil {
				if err := c.graph.Write(filepath.Join(f.col.Dir, "exchange", "in", "p2", sitegraph.FileName)); err != nil {
					t.Fatal(err)
				}
			}
			ex, err := Explain(t.Context(), f.col, "http://c.cl/", f.options())
			if err != nil {
				t.Fatal(err)
			}
			res := f.mustRun()
			_, entries := readBatch(t, f.col, res.Batch)
			score := map[string]float64{}
			for _, e := range entries {
				score[e.URL] = e.Score
			}
			b, cc := score["http://b.cl/"], score["http://c.cl/"]
			if b == 0 || cc == 0 {
				t.Fatalf("batch %v", score)
			}
			if got := cc > b*1.01; got != c.higher {
				t.Errorf("c.cl/ %g, b.cl/ %g: c above b %v, want %v", cc, b, got, c.higher)
			}
			if named := strings.Contains(ex.IQWhy, "global site rank"); named != c.higher {
				t.Errorf("explain %q: names the global site rank %v, want %v", ex.IQWhy, named, c.higher)
			}
		})
	}
}
