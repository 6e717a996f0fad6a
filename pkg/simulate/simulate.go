// Package simulate replays a crawl of a known web graph under a page
// ordering strategy and measures how early it downloads the valuable
// pages (Baeza-Yates, Castillo, Marín, Rodríguez, "Crawling a country",
// WWW 2005, §3.2 and §5). Two models:
//
//   - the paper model (RunPaper): a heap of sites and a heap of pages per
//     site, r robots, a wait w between visits to one site, pages
//     discovered only through links of fetched pages, every strategy of
//     the paper implemented here;
//   - the batch model (RunBatch): the crawler's own manager chooses each
//     batch from what the simulated crawl has discovered, in a temporary
//     collection, and the seeder takes the "downloaded" batch in.
//
// Metrics: cumulative PageRank against the fraction of pages fetched and
// against simulated time, average cumulative PageRank, Kendall's τ on a
// sample, and the size of the pending queue. docs/simulator.md describes
// the models, strategies and outputs; docs/results.md the results.
package simulate

import (
	"context"
	"fmt"
	"math"

	"github.com/wirecrawl/wire/pkg/pagerank"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// PageRank computes the PageRank of the whole graph, the importance
// metric and the omniscient oracle (damping d, pkg/pagerank).
func PageRank(ctx context.Context, g *webgraph.Graph, damping float64) ([]float64, error) {
	res, err := pagerank.Compute(ctx, g.Links, pagerank.Options{Damping: damping})
	if err != nil {
		return nil, fmt.Errorf("pagerank of the graph: %w", err)
	}
	if !res.Converged {
		return nil, fmt.Errorf("pagerank of the graph did not converge in %d iterations", res.Iterations)
	}
	return res.Rank, nil
}

// HistoryMatch says how much of a graph a previous crawl knew.
type HistoryMatch struct {
	Known        int     // pages of the graph that the previous crawl had
	KnownRank    float64 // their share of the graph's true PageRank
	PreviousOnly int     // pages of the previous crawl the graph does not have
}

// History gives each page of g the PageRank it had in a previous crawl
// before (matched by page name), NaN for pages before did not have. pr is
// the true PageRank of g, used only for the match report.
func History(ctx context.Context, before, g *webgraph.Graph, damping float64, pr []float64) ([]float64, HistoryMatch, error) {
	old, err := PageRank(ctx, before, damping)
	if err != nil {
		return nil, HistoryMatch{}, fmt.Errorf("previous crawl: %w", err)
	}
	idx := before.Index()
	h := make([]float64, g.N())
	var m HistoryMatch
	for p, name := range g.Names {
		h[p] = math.NaN()
		if q, ok := idx[name]; ok {
			h[p] = old[q]
			m.Known++
			if pr != nil {
				m.KnownRank += pr[p]
			}
			delete(idx, name)
		}
	}
	m.PreviousOnly = len(idx)
	return h, m, nil
}
