package manager

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/wirecrawl/wire/pkg/pagerank"
)

// Intrinsic-quality estimators (manager.strategy), after Baeza-Yates et
// al. 2005, §4.1. Each gives every known page an IQ in (0, 1]; only the
// order matters within a strategy, the scale matters when new pages
// compete with revisits.
const (
	StrategyBreadthFirst = "breadth-first"
	StrategyBacklink     = "backlink"
	StrategyPageRank     = "pagerank"
)

// breadthFirstIQ ranks the N pages by order of discovery: earlier batch
// first (found), then lower depth, then lower id, and gives the page of
// rank r (0-based) IQ = 1 − r/N, so the first page has 1 and the last
// 1/N. Arguments are indexed alike; ids ascend.
func breadthFirstIQ(found, depth []int32, ids []uint64) []float64 {
	n := len(ids)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(found[a], found[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(depth[a], depth[b]); c != 0 {
			return c
		}
		return cmp.Compare(ids[a], ids[b])
	})
	iq := make([]float64, n)
	for r, i := range order {
		iq[i] = 1 - float64(r)/float64(n)
	}
	return iq
}

// backlinkIQ turns in-link counts c into IQ = (c+1)/(max+1): pages nobody
// links to yet (seeds) keep a positive value, the most linked page has 1.
func backlinkIQ(indeg []int32) []float64 {
	m := int32(0)
	for _, c := range indeg {
		m = max(m, c)
	}
	iq := make([]float64, len(indeg))
	for i, c := range indeg {
		iq[i] = float64(c+1) / float64(m+1)
	}
	return iq
}

// pagerankIQ is the PageRank of every known page over the known graph,
// scaled so that the highest is 1.
func pagerankIQ(ctx context.Context, g *pagerank.Graph, damping float64) ([]float64, pagerank.Result, error) {
	res, err := pagerank.Compute(ctx, g, pagerank.Options{Damping: damping})
	if err != nil {
		return nil, res, fmt.Errorf("compute pagerank: %w", err)
	}
	pagerank.NormalizeMax(res.Rank)
	return res.Rank, res, nil
}
