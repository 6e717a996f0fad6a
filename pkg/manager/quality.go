package manager

import (
	"cmp"
	"context"
	"encoding/json"
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
		return incrementalPageRankIQ(ctx, tx, v, m)
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

// pagerankVector names the PageRank of the last computation in the
// scores bucket (by doc id), pagerankMeta its pagerankState: the
// pagerank strategy reuses it until the graph has grown enough, and
// starts the next computation from it.
const (
	pagerankVector = "pagerank"
	pagerankMeta   = "pagerank"
)

// When the pagerank strategy computes PageRank again (docs/manager.md,
// "Incremental planning"): once the documents or the fetched pages have
// grown by pagerankGrowth since the last computation, or pagerankRuns
// runs have reused it. A crawl growing from n to N pages computes it
// about log(N/n)/log(1+pagerankGrowth) times, plus once every
// pagerankRuns runs.
const (
	pagerankGrowth = 0.5
	pagerankRuns   = 8
)

// pagerankState describes the stored PageRank of the pagerank strategy.
type pagerankState struct {
	Docs       int `json:"docs"`       // documents when it was computed
	Fetched    int `json:"fetched"`    // documents with a visit then
	Iterations int `json:"iterations"` // power iterations it took
	Reused     int `json:"reused"`     // runs that reused it since
}

// due tells whether PageRank must be computed again for a view of docs
// documents of which fetched have a visit.
func (st *pagerankState) due(docs, fetched int) (bool, string) {
	switch {
	case st.Docs == 0:
		return true, "no stored PageRank"
	case float64(docs) >= (1+pagerankGrowth)*float64(st.Docs):
		return true, fmt.Sprintf("the documents grew from %d to %d", st.Docs, docs)
	case float64(fetched) >= (1+pagerankGrowth)*float64(max(st.Fetched, 1)):
		return true, fmt.Sprintf("the fetched pages grew from %d to %d", st.Fetched, fetched)
	case st.Reused+1 >= pagerankRuns:
		return true, fmt.Sprintf("%d runs reused the last one", st.Reused)
	}
	return false, ""
}

// incrementalPageRankIQ is the pagerank strategy (docs/manager.md,
// "Incremental planning"): PageRank over the known graph, computed again
// only when it is due (pagerankState.due), with the iteration started
// from the last computation's ranks (the same stopping rule, L1 change
// below 1e-9, from a vector close to the answer). In between, the pages
// known at the last computation keep their PageRank and a page found
// since gets Σ PR(x)/|out(x)| over the pages x linking to it that have
// one (read from graph.db's in-link sets of those pages alone), or
// (1−d)/N, as partial-pagerank does; no link pass is made.
func incrementalPageRankIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	stored, err := tx.ScoreVector(pagerankVector)
	if err != nil {
		return nil, err
	}
	var st pagerankState
	if raw := tx.ScoreMeta(pagerankMeta); raw != nil && stored != nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("pagerank state: %w", err)
		}
	}
	if due, why := st.due(len(v.ids), v.fetched); due {
		start := v.byPosition(stored)
		pr, err := v.pageRank(ctx, tx, m.Damping, start)
		if err != nil {
			return nil, err
		}
		e := pageRankIQ(pr)
		from := "the uniform vector"
		if start != nil {
			from = "the last computation's ranks"
		}
		e.notes = append(e.notes, fmt.Sprintf("PageRank computed (%s; from %s, %d iterations)", why, from, v.stats.Iterations))
		st = pagerankState{Docs: len(v.ids), Fetched: v.fetched, Iterations: v.stats.Iterations}
		e.save = func(tx *linkgraph.Tx) error {
			raw, _ := json.Marshal(st)
			if err := tx.PutScoreVector(pagerankVector, v.byID(pr)); err != nil {
				return err
			}
			return tx.PutScoreMeta(pagerankMeta, raw)
		}
		return e, nil
	}
	e, err := reusedPageRank(ctx, tx, v, stored, (1-m.Damping)/float64(st.Docs))
	if err != nil {
		return nil, err
	}
	e.notes = append(e.notes, fmt.Sprintf("PageRank of %d documents reused (computed with %d fetched, now %d documents, %d fetched; run %d of at most %d)",
		st.Docs, st.Fetched, len(v.ids), v.fetched, st.Reused+2, pagerankRuns))
	st.Reused++
	e.save = func(tx *linkgraph.Tx) error {
		raw, _ := json.Marshal(st)
		return tx.PutScoreMeta(pagerankMeta, raw)
	}
	return e, nil
}

// reusedPageRank is the estimate from a stored PageRank (by doc id): a
// page it has a value for keeps it; one found since gets the temporary
// value Σ PR(x)/|out(x)| over the pages x linking to it that have one,
// from graph.db's in-link set of that page and the out-degrees of its
// parents, or base if none does.
func reusedPageRank(ctx context.Context, tx *linkgraph.Tx, v *graphView, stored []float64, base float64) (*estimate, error) {
	known := func(id uint32) float64 {
		if int(id) < len(stored) {
			return stored[id]
		}
		return 0
	}
	val := make([]float64, len(v.ids))
	kinds := make([]uint8, len(v.ids)) // 0 computed, 1 from parents, 2 base
	outdeg := map[uint32]float64{}
	for p, id := range v.ids {
		if x := known(id); x > 0 {
			val[p] = x
			continue
		}
		if p%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		in, err := tx.InLinks(uint64(id))
		if err != nil {
			return nil, fmt.Errorf("in-links of doc %d: %w", id, err)
		}
		sum := 0.0
		it := in.Iterator()
		for it.HasNext() {
			x := it.Next()
			r := known(x)
			if r <= 0 || x == id {
				continue
			}
			d, ok := outdeg[x]
			if !ok {
				out, err := tx.OutLinks(uint64(x))
				if err != nil {
					return nil, fmt.Errorf("out-links of doc %d: %w", x, err)
				}
				d = float64(out.GetCardinality())
				outdeg[x] = d
			}
			if d > 0 {
				sum += r / d
			}
		}
		if sum > 0 {
			val[p], kinds[p] = sum, 1
		} else {
			val[p], kinds[p] = base, 2
		}
	}
	e := &estimate{val: val}
	e.scaleToMax()
	e.describe = func(p int32) string {
		switch kinds[p] {
		case 1:
			return fmt.Sprintf("temporary PageRank %s = Σ PR(parent)/outdegree (found since the last computation; the highest is %s)", g4(val[p]), g4(e.scale))
		case 2:
			return fmt.Sprintf("temporary PageRank %s = (1−d)/N (found since the last computation, no parent with a PageRank)", g4(val[p]))
		}
		return fmt.Sprintf("PageRank %s at the last computation (the highest is %s)", g4(val[p]), g4(e.scale))
	}
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
