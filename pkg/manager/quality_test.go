package manager

import (
	"context"
	"math"
	"testing"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The intrinsic quality of every page of small graphs, per strategy,
// computed by hand. Pages are added in order, so a.cl/ is doc 1, and so
// on; d = 0.85.
func TestIntrinsicQuality(t *testing.T) {
	const (
		A = "http://a.cl/"
		B = "http://a.cl/b"
		C = "http://a.cl/c"
		D = "http://a.cl/d"
	)
	tests := []struct {
		name  string
		pages []page
		want  map[string]map[string]float64 // strategy → URL → IQ
	}{
		{
			// A→B, A→C, B→C, C→A. In-links: A 1, B 1, C 2. PageRank
			// (pkg/pagerank's "classic" case) 686, 380, 703 /1769, over
			// the maximum 703. Discovery order A (batch 0), B, C (batch 1).
			name: "classic",
			pages: []page{
				{url: A, links: []string{B, C}},
				{url: B, found: 1, depth: 1, links: []string{C}},
				{url: C, found: 1, depth: 1, links: []string{A}},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:     {A: 2.0 / 3, B: 2.0 / 3, C: 1},
				StrategyPageRank:     {A: 686.0 / 703, B: 380.0 / 703, C: 1},
				StrategyBreadthFirst: {A: 1, B: 2.0 / 3, C: 1.0 / 3},
			},
		},
		{
			// A→A, A→B: the self-link counts for nothing. B is dangling:
			// PageRank 20/57 and 37/57, over the maximum 37/57.
			name: "self-link and dangling",
			pages: []page{
				{url: A, links: []string{A, B}},
				{url: B, found: 1, depth: 1},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:     {A: 1.0 / 2, B: 1},
				StrategyPageRank:     {A: 20.0 / 37, B: 1},
				StrategyBreadthFirst: {A: 1, B: 1.0 / 2},
			},
		},
		{
			// Breadth-first sorts by (batch found, depth, id): B (0, 0),
			// A (0, 2), C (1, 0, id 3), D (1, 0, id 4), so IQ = 1 − r/4
			// gives 1, 3/4, 2/4, 1/4. No links: every backlink count is 0
			// and PageRank is uniform.
			name: "discovery order",
			pages: []page{
				{url: A, found: 0, depth: 2},
				{url: B, found: 0, depth: 0},
				{url: C, found: 1, depth: 0},
				{url: D, found: 1, depth: 0},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:     {A: 1, B: 1, C: 1, D: 1},
				StrategyPageRank:     {A: 1, B: 1, C: 1, D: 1},
				StrategyBreadthFirst: {A: 3.0 / 4, B: 1, C: 2.0 / 4, D: 1.0 / 4},
			},
		},
	}
	for _, tt := range tests {
		f := newFixture(t)
		f.add(tt.pages...)
		for strategy, want := range tt.want {
			t.Run(tt.name+"/"+strategy, func(t *testing.T) {
				m := f.cfg.Manager
				m.Strategy = strategy
				f.view(func(tx *linkgraph.Tx) error {
					v, err := readDocs(context.Background(), tx, &m, testNow)
					if err != nil {
						return err
					}
					iq, err := intrinsicQuality(context.Background(), tx, v, &m)
					if err != nil {
						return err
					}
					for u, w := range want {
						got := iq[v.position(f.ids[u])]
						if math.Abs(got-w) > 1e-7 {
							t.Errorf("IQ(%s) = %.8f, want %.8f", u, got, w)
						}
					}
					return nil
				})
			})
		}
	}
}

func TestBacklinkIQRange(t *testing.T) {
	iq := backlinkIQ([]int32{0, 3, 1})
	want := []float64{0.25, 1, 0.5}
	for i := range want {
		if iq[i] != want[i] {
			t.Errorf("iq[%d] = %g, want %g", i, iq[i], want[i])
		}
	}
}

// Out-links to ids that have no document (a graph the seeder left
// inconsistent) map to no position and are ignored.
func TestPositionOfUnknownIDs(t *testing.T) {
	v := &graphView{ids: []uint64{1, 2}, pos: []int32{-1, 0, 1}}
	for _, id := range []uint64{0, 3, 1 << 40} {
		if p := v.position(id); p != -1 {
			t.Errorf("position(%d) = %d", id, p)
		}
	}
	sparse := &graphView{ids: []uint64{5, 90000}}
	if sparse.position(90000) != 1 || sparse.position(6) != -1 {
		t.Error("sparse ids are not found by binary search")
	}
}
