package sitegraph

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// Ranking is the site-level PageRank of a site graph: a random surfer on
// sites who follows a page link out of a site with probability d
// (the links from a site shared by their page link counts) and jumps to
// a site drawn uniformly otherwise, or when the site has no links out.
type Ranking struct {
	rank  map[string]float64
	base  float64 // the rank of a site no link reaches
	Sites int     // sites in the union
	Edges int     // distinct site pairs linked
	Iter  int     // iterations run
}

// Of is the rank of site key; a site the graphs do not list gets the
// rank of a site no link reaches.
func (r *Ranking) Of(key string) float64 {
	if v, ok := r.rank[key]; ok {
		return v
	}
	return r.base
}

// Rank computes the site rank over the union of graphs: the sites every
// graph lists, and the links of all (a pair linked in two graphs counts
// the links of both). Power iteration from the uniform vector until the
// L1 change is below 1e-9, at most 200 iterations, as the page-level
// PageRank (docs/manager.md).
func Rank(graphs []*Graph, damping float64) *Ranking {
	index := map[string]int32{}
	var keys []string
	id := func(k string) int32 {
		i, ok := index[k]
		if !ok {
			i = int32(len(keys))
			index[k] = i
			keys = append(keys, k)
		}
		return i
	}
	type pair struct{ src, dst int32 }
	weights := map[pair]float64{}
	for _, g := range graphs {
		ids := make([]int32, len(g.Sites))
		for i, s := range g.Sites {
			ids[i] = id(s)
		}
		for _, e := range g.Edges {
			if s, d := ids[e.Src], ids[e.Dst]; s != d && e.Links > 0 {
				weights[pair{s, d}] += float64(e.Links)
			}
		}
	}
	n := len(keys)
	pairs := slices.SortedFunc(maps.Keys(weights), func(a, b pair) int {
		if c := cmp.Compare(a.dst, b.dst); c != 0 {
			return c
		}
		return cmp.Compare(a.src, b.src)
	}) // a fixed order: the same sums bit for bit
	r := &Ranking{rank: make(map[string]float64, n), Sites: n, Edges: len(weights)}
	if n == 0 {
		r.base = 1
		return r
	}
	out := make([]float64, n)
	for _, p := range pairs {
		out[p.src] += weights[p]
	}
	// In-edges in compressed rows: for each site, its sources and the
	// share of the source's links.
	start := make([]int32, n+1)
	for _, p := range pairs {
		start[p.dst+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	src := make([]int32, len(weights))
	share := make([]float64, len(weights))
	fill := append([]int32(nil), start[:n]...)
	for _, p := range pairs {
		k := fill[p.dst]
		fill[p.dst]++
		src[k], share[k] = p.src, weights[p]/out[p.src]
	}
	cur, next := make([]float64, n), make([]float64, n)
	for i := range cur {
		cur[i] = 1 / float64(n)
	}
	var jump float64
	for r.Iter = 1; r.Iter <= 200; r.Iter++ {
		dangling := 0.0
		for i, w := range out {
			if w == 0 {
				dangling += cur[i]
			}
		}
		jump = (1-damping)/float64(n) + damping*dangling/float64(n)
		diff := 0.0
		for i := range n {
			s := jump
			for k := start[i]; k < start[i+1]; k++ {
				s += damping * cur[src[k]] * share[k]
			}
			next[i] = s
			diff += math.Abs(s - cur[i])
		}
		cur, next = next, cur
		if diff < 1e-9 {
			break
		}
	}
	for i, k := range keys {
		r.rank[k] = cur[i]
	}
	r.base = jump
	return r
}
