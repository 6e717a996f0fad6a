package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Names of the historical state in the scores bucket.
const (
	historyMeta   = "historical"        // historyState as JSON
	historySample = "historical.sample" // quantiles of the imported values, ascending
	// The imported table is one of two, so that an import written in many
	// transactions replaces the old one at once (historyState.Table).
	historyTableA = "historical.a"
	historyTableB = "historical.b"
	// SampleSize is the number of quantiles of the imported PageRank kept
	// for the "random" rule.
	SampleSize = 4096
)

// historyState describes the imported PageRank of a previous crawl.
type historyState struct {
	Table    string    `json:"table"`    // score table holding URL → PageRank
	Source   string    `json:"source"`   // where it came from
	Kind     string    `json:"kind"`     // "graph" (computed from a graph.db) or "file"
	Imported time.Time `json:"imported"` // when
	Pages    int       `json:"pages"`    // entries
	Max      float64   `json:"max"`      // largest value
	Min      float64   `json:"min"`      // smallest positive value
	Damping  float64   `json:"damping,omitempty"`
}

// ErrNoHistory means the historical strategy has nothing to use: no
// PageRank of a previous crawl was imported.
var ErrNoHistory = errors.New("no historical PageRank imported (run manager history import SOURCE)")

func readHistoryState(tx *linkgraph.Tx) (*historyState, error) {
	raw := tx.ScoreMeta(historyMeta)
	if raw == nil {
		return nil, nil
	}
	var st historyState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("historical state: %w", err)
	}
	return &st, nil
}

// historicalIQ is the PageRank of the previous crawl of the same web
// (Baeza-Yates et al. §4.2), imported with manager history import. A page
// the previous crawl did not have gets, by manager.historical_new_pages:
//
//	zero    a thousandth of the smallest imported value: every old page
//	        first, then the new ones in the order they were found;
//	random  an imported value chosen at random (fixed per doc id, so the
//	        same graph gives the same batch);
//	parent  Σ value(x)/|out(x)| over the pages x linking to it that are
//	        valued before it: the old pages and the new sites' roots,
//	        then, level by level, the new pages they link to (parentLevels);
//	        the zero value if no valued page leads to it;
//	pagerank its PageRank over the graph known now, times the known
//	        pages over the imported ones (both PageRanks sum to about 1,
//	        so a page as important as the average one gets the average
//	        imported value); a new site's root the larger of that and
//	        the median of the old roots. Not one of the paper's variants:
//	        the best estimate the crawl has of a page the history lacks.
func historicalIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	st, err := readHistoryState(tx)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrNoHistory
	}
	val := make([]float64, len(v.ids))
	matched := 0
	err = tx.JoinURLScores(st.Table, func(id uint64, x float64) error {
		if p := v.position(id); p >= 0 && x > 0 {
			val[p] = x
			matched++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read historical pagerank: %w", err)
	}
	zero := st.Min / 1000
	if zero <= 0 {
		zero = 1e-12
	}
	kinds := make([]uint8, len(val)) // 0 old, 1 parent, 2 random, 3 zero, 4 a new site's root, 5 pagerank, 6 a new site's page
	maxLevel := 0                    // parent: the deepest level of new pages valued
	pageRankScale := 0.0             // pagerank: known pages / imported pages
	roots, rootValue, err := newRoots(tx, v, val)
	if err != nil {
		return nil, err
	}
	sitePages, byDepth := newSitePages(v, val) // before the roots get a value: they are a new site's too
	for _, p := range sitePages {
		val[p], kinds[p] = byDepth.at(v.depth[p]), 6
	}
	for _, p := range roots {
		val[p], kinds[p] = rootValue.value, 4
	}
	switch m.HistoricalNewPages {
	case "random":
		sample, err := tx.ScoreVector(historySample)
		if err != nil {
			return nil, err
		}
		for p := range val {
			if val[p] > 0 {
				continue
			}
			kinds[p] = 3
			val[p] = zero
			if len(sample) > 0 {
				kinds[p] = 2
				val[p] = sample[mix64(uint64(v.ids[p]))%uint64(len(sample))]
			}
		}
	case "parent":
		levels, err := v.parentLevels(ctx, tx, val, kinds)
		if err != nil {
			return nil, err
		}
		maxLevel = levels
		for p := range val {
			if val[p] <= 0 {
				val[p], kinds[p] = zero, 3
			}
		}
	case "pagerank":
		pr, err := v.pageRank(ctx, tx, m.Damping, nil)
		if err != nil {
			return nil, err
		}
		// Per average page: the imported PageRank sums to about 1 over
		// its pages, the known graph's over the known pages.
		scale := float64(len(val)) / float64(max(st.Pages, 1))
		for p := range val {
			x := pr[p] * scale
			switch {
			case kinds[p] == 4:
				if x > val[p] {
					val[p], kinds[p] = x, 5
				}
			case val[p] > 0:
			case x > 0:
				val[p], kinds[p] = x, 5
			default:
				val[p], kinds[p] = zero, 3
			}
		}
		pageRankScale = scale
	default:
		for p := range val {
			if val[p] <= 0 {
				val[p], kinds[p] = zero, 3
			}
		}
	}
	e := &estimate{val: val}
	e.scaleToMax()
	e.scale = max(e.scale, st.Max)
	e.notes = append(e.notes, fmt.Sprintf("historical PageRank of %d pages from %s (%s); %d of %d known pages have one, new pages: %s; %d root pages of sites new since at %s (the median of %d old sites' roots), %d pages of sites new since by the median of the old pages at their depth (their roots as above)",
		st.Pages, st.Source, st.Imported.Format(time.RFC3339), matched, len(val), m.HistoricalNewPages, len(roots), g4(rootValue.value), rootValue.of, len(sitePages)))
	e.describe = func(p int32) string {
		switch kinds[p] {
		case 1:
			return fmt.Sprintf("new page: Σ value(parent)/outdegree over its parents valued before it (old pages, new sites' roots, new pages nearer to them; %d levels) = %s (the highest imported is %s)", maxLevel, g4(val[p]), g4(st.Max))
		case 2:
			return fmt.Sprintf("new page: an imported PageRank drawn at random, %s (the highest is %s)", g4(val[p]), g4(st.Max))
		case 3:
			return fmt.Sprintf("new page: %s, a thousandth of the smallest imported PageRank", g4(val[p]))
		case 6:
			return fmt.Sprintf("a page at depth %d of a site the previous crawl did not have: %s, the median imported PageRank of the old pages at that depth (the highest imported is %s)", v.depth[p], g4(val[p]), g4(st.Max))
		case 5:
			return fmt.Sprintf("new page: its PageRank in the graph known now × %s (known pages over imported ones) = %s (the highest imported is %s)", g4(pageRankScale), g4(val[p]), g4(st.Max))
		case 4:
			return fmt.Sprintf("the root page of a site the previous crawl did not have: %s, the median imported PageRank of the %d root pages it had (the highest imported is %s)", g4(val[p]), rootValue.of, g4(st.Max))
		}
		return fmt.Sprintf("PageRank %s in the previous crawl (the highest is %s)", g4(val[p]), g4(st.Max))
	}
	return e, nil
}

// rootPrior is the value of a new site's root page: the median imported
// PageRank of the old sites' roots (of of them; 0 when none).
type rootPrior struct {
	value float64
	of    int
}

// newRoots finds the root pages ("/" of a site key) the previous crawl did
// not have (val 0) and the value they get: a site the previous crawl did
// not know (a new seed, or a site found since by links) is valued by its
// root page as the previous crawl's sites were valued by theirs, the
// median imported PageRank of the old roots. Without it a recrawl put
// every new site last: its root has no old parent (parent, zero), and its
// other pages take their value from it (docs/manager.md, "historical").
// It returns the positions of the new roots and their value; none when
// no old root has a value.
func newRoots(tx *linkgraph.Tx, v *graphView, val []float64) ([]int32, rootPrior, error) {
	var oldRoots []float64
	var fresh []int32
	err := tx.ForEachSiteKey(func(key []byte, _ uint64) error {
		id, ok := tx.LookupURL(string(key) + "/")
		if !ok {
			return nil
		}
		p := v.position(id)
		switch {
		case p < 0:
		case val[p] > 0:
			oldRoots = append(oldRoots, val[p])
		default:
			fresh = append(fresh, p)
		}
		return nil
	})
	if err != nil {
		return nil, rootPrior{}, fmt.Errorf("site roots: %w", err)
	}
	if len(oldRoots) == 0 {
		return nil, rootPrior{}, nil
	}
	slices.Sort(oldRoots)
	return fresh, rootPrior{value: oldRoots[len(oldRoots)/2], of: len(oldRoots)}, nil
}

// depthPrior is the median imported PageRank of the old pages at each
// depth (links from their site's entry page), for the pages of a new site.
type depthPrior []float64

// at is the prior of depth d: the deepest one known for deeper pages.
func (dp depthPrior) at(d int32) float64 {
	return dp[min(max(int(d), 0), len(dp)-1)]
}

// newSitePages finds the pages of the sites the
// previous crawl had no page of, and values them as the previous crawl's
// pages at the same depth were valued: the median imported PageRank of
// the old pages at that depth. It extends the new roots' rule (newRoots)
// to the whole of a new site: a site that appeared since the last crawl
// has no old page, and its pages, valued by any variant from links the
// recrawl finds one batch at a time (its root, then the root's children
// at root/outdegree, ...), came after every old page of a similar place in
// its own site. It returns their positions (the roots among them get
// the roots' rule after) and the priors; none when no old page has a
// value. Call it before any new page has a value.
func newSitePages(v *graphView, val []float64) ([]int32, depthPrior) {
	if len(v.depth) != len(val) {
		return nil, nil
	}
	oldSite := make([]bool, len(v.held)) // by site id
	var byDepth [][]float64
	for p, x := range val {
		if x <= 0 {
			continue
		}
		oldSite[v.site[p]] = true
		d := max(int(v.depth[p]), 0)
		for len(byDepth) <= d {
			byDepth = append(byDepth, nil)
		}
		byDepth[d] = append(byDepth[d], x)
	}
	if len(byDepth) == 0 {
		return nil, nil
	}
	prior := make(depthPrior, len(byDepth))
	for d, xs := range byDepth {
		if len(xs) == 0 {
			if d > 0 {
				prior[d] = prior[d-1]
			}
			continue
		}
		slices.Sort(xs)
		prior[d] = xs[len(xs)/2]
	}
	for d := len(prior) - 1; d > 0; d-- { // a depth without old pages below one with
		if prior[d-1] == 0 {
			prior[d-1] = prior[d]
		}
	}
	var fresh []int32
	for p, x := range val {
		if x <= 0 && !oldSite[v.site[p]] {
			fresh = append(fresh, int32(p))
		}
	}
	return fresh, prior
}

// mix64 is SplitMix64's finaliser: a fixed pseudo-random function of x.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// parentLevels values the new pages (val 0) of the parent rule level by
// level, as the paper's "parent" variant values a new page by the page
// in which its link was found, whether that page is old or new: level 1
// is the new pages linked from a valued page (an old one, or a new site's
// root), each getting Σ val(x)/|out(x)| over its valued parents x; level
// k+1 the new pages linked from those of levels up to k, and so on until
// no new page is reached (at most maxParentLevels). A page's value is
// fixed at its level, from the pages valued before it, so a cycle of new
// pages adds nothing. Before, only level 1 was valued, and the pages
// two links deep into a new site went with the zero value, after every
// old page. It marks the valued pages kind 1 in kinds and returns the
// number of levels.
func (v *graphView) parentLevels(ctx context.Context, tx *linkgraph.Tx, val []float64, kinds []uint8) (int, error) {
	in, outDeg, err := v.inGraph(ctx, tx)
	if err != nil {
		return 0, err
	}
	var open []int32 // new pages not valued yet
	for p := range val {
		if val[p] <= 0 {
			open = append(open, int32(p))
		}
	}
	type valued struct {
		p int32
		x float64
	}
	var level []valued
	levels := 0
	for levels < maxParentLevels && len(open) > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		level = level[:0]
		rest := open[:0]
		for _, p := range open {
			sum := 0.0
			for _, x := range in.Out(int(p)) {
				if val[x] > 0 && outDeg[x] > 0 {
					sum += val[x] / float64(outDeg[x])
				}
			}
			if sum > 0 {
				level = append(level, valued{p, sum})
			} else {
				rest = append(rest, p)
			}
		}
		if len(level) == 0 {
			break
		}
		for _, e := range level { // after the whole level: its pages do not value each other
			val[e.p], kinds[e.p] = e.x, 1
		}
		open = rest
		levels++
	}
	return levels, nil
}

// maxParentLevels bounds the levels of the parent rule: deeper new pages
// get the zero value (the depth limits of the crawl stop far before).
const maxParentLevels = 64
