package manager

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Intrinsic-quality estimators (manager.strategy), after Baeza-Yates et
// al. 2005, §4. Each gives every known page an IQ in (0, 1]; only the
// order matters within a strategy, the scale matters when new pages
// compete with revisits.
const (
	StrategyBreadthFirst     = "breadth-first"
	StrategyBacklink         = "backlink"
	StrategyPageRank         = "pagerank"
	StrategyPartialPageRank  = "partial-pagerank"
	StrategyOPIC             = "opic"
	StrategyLargerSitesFirst = "larger-sites-first"
	StrategyHistorical       = "historical"
)

// estimate is an estimator's answer: IQ(p) = val[p]/scale for every
// position p, what to write into graph.db's scores bucket with the batch,
// and how to describe a page's value to a person.
type estimate struct {
	val      []float64
	scale    float64
	describe func(p int32) string
	save     func(tx *linkgraph.Tx) error // nil: the estimator keeps no state
	notes    []string                     // for the run's log and explain
}

// iq is IQ(p).
func (e *estimate) iq(p int32) float64 { return e.val[p] / e.scale }

// scaleToMax sets scale to the largest value (1 if there is none).
func (e *estimate) scaleToMax() {
	e.scale = 0
	for _, x := range e.val {
		e.scale = max(e.scale, x)
	}
	if e.scale <= 0 {
		e.scale = 1
	}
}

func g4(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// intrinsicQuality runs the configured estimator over the whole graph.
func intrinsicQuality(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	switch m.Strategy {
	case StrategyBreadthFirst:
		return breadthFirstIQ(v), nil
	case StrategyBacklink:
		indeg, err := v.inDegrees(ctx, tx)
		if err != nil {
			return nil, err
		}
		return backlinkIQ(indeg), nil
	case StrategyPageRank:
		return warmPageRankIQ(ctx, tx, v, m)
	case StrategyPartialPageRank:
		return partialPageRankIQ(ctx, tx, v, m)
	case StrategyOPIC:
		return opicIQ(ctx, tx, v)
	case StrategyLargerSitesFirst:
		return largerSitesFirstIQ(v), nil
	case StrategyHistorical:
		return historicalIQ(ctx, tx, v, m)
	}
	return nil, fmt.Errorf("unknown strategy %q (want one of %s)", m.Strategy, strings.Join(config.Strategies(), ", "))
}

// breadthFirstIQ ranks the N pages by order of discovery: earlier batch
// first (found), then lower depth, then lower id, and gives the page of
// rank r (0-based) IQ = 1 − r/N, so the first page has 1 and the last
// 1/N.
func breadthFirstIQ(v *graphView) *estimate {
	n := len(v.ids)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(v.found[a], v.found[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(v.depth[a], v.depth[b]); c != 0 {
			return c
		}
		return cmp.Compare(v.ids[a], v.ids[b])
	})
	e := &estimate{val: make([]float64, n), scale: 1}
	for r, i := range order {
		e.val[i] = 1 - float64(r)/float64(n)
	}
	e.describe = func(p int32) string {
		return fmt.Sprintf("discovery rank %d of %d (found in batch %d at depth %d)", int(float64(n)*(1-e.val[p])+0.5)+1, n, v.found[p], v.depth[p])
	}
	return e
}

// backlinkIQ turns in-link counts c into IQ = (c+1)/(max+1): pages nobody
// links to yet (seeds) keep a positive value, the most linked page has 1.
func backlinkIQ(indeg []int32) *estimate {
	e := &estimate{val: make([]float64, len(indeg))}
	for i, c := range indeg {
		e.val[i] = float64(c + 1)
	}
	e.scaleToMax()
	e.describe = func(p int32) string {
		return fmt.Sprintf("%d in-links (the most linked page has %d)", indeg[p], int(e.scale)-1)
	}
	return e
}

// pageRankIQ is the PageRank of every known page over the known graph,
// scaled so that the highest is 1.
func pageRankIQ(pr []float64) *estimate {
	e := &estimate{val: pr}
	e.scaleToMax()
	e.describe = func(p int32) string {
		return fmt.Sprintf("PageRank %s (the highest is %s, the mean 1/N = %s)", g4(pr[p]), g4(e.scale), g4(1/float64(len(pr))))
	}
	return e
}

// pagerankVector names the PageRank of the last run in the scores
// bucket (by doc id): the pagerank strategy starts the next run's
// iteration from it.
const pagerankVector = "pagerank"

// warmPageRankIQ is pageRankIQ with the iteration started from the
// PageRank of the last run (docs/manager.md, "Incremental planning"): the
// same stopping rule (L1 change below 1e-9) from a vector close to the
// answer takes fewer iterations, and the ranks it gives differ from a
// start from the uniform vector by about the tolerance. The ranks are
// stored with the batch for the next run.
func warmPageRankIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	stored, err := tx.ScoreVector(pagerankVector)
	if err != nil {
		return nil, err
	}
	start := v.byPosition(stored)
	pr, err := v.pageRank(ctx, tx, m.Damping, start)
	if err != nil {
		return nil, err
	}
	e := pageRankIQ(pr)
	if start != nil {
		e.notes = append(e.notes, fmt.Sprintf("PageRank started from the last run's (%d iterations)", v.stats.Iterations))
	}
	e.save = func(tx *linkgraph.Tx) error { return tx.PutScoreVector(pagerankVector, v.byID(pr)) }
	return e, nil
}

// largerSitesFirstIQ gives every page of a site IQ = (pending+1)/(max+1),
// pending the site's pages never fetched (Baeza-Yates et al. §4.1: the
// site with the most pending pages first). Pages of one site tie and come
// in doc id order, the order the seeder found them.
func largerSitesFirstIQ(v *graphView) *estimate {
	e := &estimate{val: make([]float64, len(v.ids))}
	for p, s := range v.site {
		e.val[p] = float64(v.pending[s] + 1)
	}
	e.scaleToMax()
	e.describe = func(p int32) string {
		return fmt.Sprintf("its site has %d pending pages (the largest frontier is %d)", v.pending[v.site[p]], int(e.scale)-1)
	}
	return e
}
