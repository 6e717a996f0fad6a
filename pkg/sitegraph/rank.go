package sitegraph

import (
	"cmp"
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
	// Every link as (dst<<32 | src, links), sorted and merged: in-edges
	// grouped by target in a fixed order, so the sums are the same bit
	// for bit every time.
	type link struct {
		key uint64
		w   float64
	}
	var links []link
	for _, g := range graphs {
		ids := make([]int32, len(g.Sites))
		for i, s := range g.Sites {
			ids[i] = id(s)
		}
		for _, e := range g.Edges {
			if s, d := ids[e.Src], ids[e.Dst]; s != d && e.Links > 0 {
				links = append(links, link{uint64(d)<<32 | uint64(s), float64(e.Links)})
			}
		}
	}
	slices.SortFunc(links, func(a, b link) int { return cmp.Compare(a.key, b.key) })
	merged := links[:0]
	for _, l := range links {
		if k := len(merged); k > 0 && merged[k-1].key == l.key {
			merged[k-1].w += l.w
			continue
		}
		merged = append(merged, l)
	}
	links = merged
	n := len(keys)
	r := &Ranking{rank: make(map[string]float64, n), Sites: n, Edges: len(links)}
	if n == 0 {
		r.base = 1
		return r
	}
	out := make([]float64, n)
	for _, l := range links {
		out[uint32(l.key)] += l.w
	}
	// In-edges in compressed rows: for each site, its sources and the
	// share of the source's links.
	start := make([]int32, n+1)
	src := make([]int32, len(links))
	share := make([]float64, len(links))
	for k, l := range links {
		start[l.key>>32+1]++
		s := int32(uint32(l.key))
		src[k], share[k] = s, l.w/out[s]
	}
	for i := range n {
		start[i+1] += start[i]
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
