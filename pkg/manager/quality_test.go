package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

const (
	pA = "http://a.cl/"
	pB = "http://a.cl/b"
	pC = "http://a.cl/c"
	pD = "http://a.cl/d"
	pE = "http://a.cl/e"
)

// estimateIQ runs the estimator of m over f's graph and returns IQ by
// URL, the estimator (for describe) and its save function.
func (f *fixture) estimateIQ(m config.Manager) (map[string]float64, func(*linkgraph.Tx) error) {
	f.t.Helper()
	iq := map[string]float64{}
	var save func(*linkgraph.Tx) error
	f.view(func(tx *linkgraph.Tx) error {
		v, err := readDocs(context.Background(), tx, &m, testNow, 0, nil)
		if err != nil {
			return err
		}
		e, err := intrinsicQuality(context.Background(), tx, v, &m)
		if err != nil {
			return err
		}
		for u, id := range f.ids {
			if p := v.position(id); p >= 0 {
				iq[u] = e.iq(p)
				if d := e.describe(p); d == "" {
					f.t.Errorf("no description of %s", u)
				}
			}
		}
		save = e.save
		return nil
	})
	return iq, save
}

func (f *fixture) strategy(s string) config.Manager {
	m := f.cfg.Manager
	m.Strategy = s
	return m
}

func checkIQ(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for u, w := range want {
		if g, ok := got[u]; !ok || math.Abs(g-w) > 1e-7 {
			t.Errorf("IQ(%s) = %.8f, want %.8f", u, g, w)
		}
	}
}

// The intrinsic quality of every page of small graphs, per strategy,
// computed by hand. Pages are added in order, so a.cl/ is doc 1, and so
// on; d = 0.85.
func TestIntrinsicQuality(t *testing.T) {
	tests := []struct {
		name  string
		pages []page
		want  map[string]map[string]float64 // strategy → URL → IQ
	}{
		{
			// A→B, A→C, B→C, C→A. In-links: A 1, B 1, C 2. PageRank
			// (pkg/pagerank's "classic" case) 686, 380, 703 /1769, over
			// the maximum 703. Discovery order A (batch 0), B, C (batch 1).
			// All three pending in one site: larger-sites-first ties them.
			name: "classic",
			pages: []page{
				{url: pA, links: []string{pB, pC}},
				{url: pB, found: 1, depth: 1, links: []string{pC}},
				{url: pC, found: 1, depth: 1, links: []string{pA}},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:         {pA: 2.0 / 3, pB: 2.0 / 3, pC: 1},
				StrategyPageRank:         {pA: 686.0 / 703, pB: 380.0 / 703, pC: 1},
				StrategyPartialPageRank:  {pA: 686.0 / 703, pB: 380.0 / 703, pC: 1}, // first run: a full computation
				StrategyBreadthFirst:     {pA: 1, pB: 2.0 / 3, pC: 1.0 / 3},
				StrategyLargerSitesFirst: {pA: 1, pB: 1, pC: 1},
			},
		},
		{
			// A→A, A→B: the self-link counts for nothing. B is dangling:
			// PageRank 20/57 and 37/57, over the maximum 37/57.
			name: "self-link and dangling",
			pages: []page{
				{url: pA, links: []string{pA, pB}},
				{url: pB, found: 1, depth: 1},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:     {pA: 1.0 / 2, pB: 1},
				StrategyPageRank:     {pA: 20.0 / 37, pB: 1},
				StrategyBreadthFirst: {pA: 1, pB: 1.0 / 2},
			},
		},
		{
			// Breadth-first sorts by (batch found, depth, id): B (0, 0),
			// A (0, 2), C (1, 0, id 3), D (1, 0, id 4), so IQ = 1 − r/4
			// gives 1, 3/4, 2/4, 1/4. No links: every backlink count is 0
			// and PageRank is uniform.
			name: "discovery order",
			pages: []page{
				{url: pA, found: 0, depth: 2},
				{url: pB, found: 0, depth: 0},
				{url: pC, found: 1, depth: 0},
				{url: pD, found: 1, depth: 0},
			},
			want: map[string]map[string]float64{
				StrategyBacklink:     {pA: 1, pB: 1, pC: 1, pD: 1},
				StrategyPageRank:     {pA: 1, pB: 1, pC: 1, pD: 1},
				StrategyBreadthFirst: {pA: 3.0 / 4, pB: 1, pC: 2.0 / 4, pD: 1.0 / 4},
			},
		},
		{
			// Larger sites first: a.cl has 3 pending pages, b.cl 1 pending
			// and 1 fetched, c.cl only a fetched page. IQ = (pending+1)/
			// (max+1): 4/4, 2/4, 1/4 for every page of the site.
			name: "larger sites first",
			pages: []page{
				{url: pA}, {url: pB}, {url: pC},
				{url: "http://b.cl/", state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(30)},
				{url: "http://b.cl/x"},
				{url: "http://c.cl/", state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(30)},
			},
			want: map[string]map[string]float64{
				StrategyLargerSitesFirst: {pA: 1, pC: 1, "http://b.cl/": 0.5, "http://b.cl/x": 0.5, "http://c.cl/": 0.25},
			},
		},
	}
	for _, tt := range tests {
		f := newFixture(t)
		f.add(tt.pages...)
		for strategy, want := range tt.want {
			t.Run(tt.name+"/"+strategy, func(t *testing.T) {
				got, _ := f.estimateIQ(f.strategy(strategy))
				checkIQ(t, got, want)
			})
		}
	}
}

func TestBacklinkIQRange(t *testing.T) {
	e := backlinkIQ([]int32{0, 3, 1})
	want := []float64{0.25, 1, 0.5}
	for i := range want {
		if g := e.iq(int32(i)); g != want[i] {
			t.Errorf("iq[%d] = %g, want %g", i, g, want[i])
		}
	}
}

// Partial PageRank: the first run computes PageRank and stores it; a
// run with fewer than pagerank_interval new fetches reuses it and gives
// a page found since Σ PR(parent)/outdegree, or (1−d)/N without a parent
// that has a PageRank; enough fetches make it compute again.
func TestPartialPageRank(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.PageRankInterval = 2
	f.add(
		page{url: pA, links: []string{pB, pC}},
		page{url: pB, links: []string{pC}},
		page{url: pC, links: []string{pA}},
	)
	m := f.strategy(StrategyPartialPageRank)
	_, save := f.estimateIQ(m)
	if save == nil {
		t.Fatal("the first run stores nothing")
	}
	f.update(save)
	// D is new, linked from A (now 3 out-links) and C (now 2); E is new,
	// linked from nobody.
	f.add(page{url: pA, links: []string{pB, pC, pD}}, page{url: pC, links: []string{pA, pD}}, page{url: pE})
	got, save2 := f.estimateIQ(m)
	if save2 != nil {
		t.Error("a reuse stores a new PageRank")
	}
	pr := func(x float64) float64 { return x / 1769 }
	max := pr(703)
	checkIQ(t, got, map[string]float64{
		pA: pr(686) / max, pB: pr(380) / max, pC: 1, // as computed
		pD: (pr(686)/3 + pr(703)/2) / max, // temporary
		pE: 0.15 / 3 / max,                // (1−d)/N at the computation
	})
	// Two pages fetched since the computation: PageRank is computed again
	// over the five pages and stored.
	f.add(page{url: pA, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(10), links: []string{pB, pC, pD}},
		page{url: pB, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(10), links: []string{pC}})
	got, save3 := f.estimateIQ(m)
	if save3 == nil {
		t.Error("no recomputation after pagerank_interval fetches")
	}
	full, _ := f.estimateIQ(f.strategy(StrategyPageRank))
	checkIQ(t, got, full)
}

// OPIC, by hand: every page starts with cash 1; a fetched page adds its
// cash to its history and splits it among its out-links.
func TestOPIC(t *testing.T) {
	f := newFixture(t)
	fetched := func(u string, links ...string) page {
		return page{url: u, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(10), links: links}
	}
	f.add(fetched(pA, pB, pC), page{url: pB}, page{url: pC})
	m := f.strategy(StrategyOPIC)
	// Run 1: A gives 1/2 to B and C. A: history 1, cash 0; B, C: 1.5.
	got, save := f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1 / 1.5, pB: 1, pC: 1})
	f.update(save)
	// The same graph again: nobody was fetched since, nothing moves.
	got, save = f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1 / 1.5, pB: 1, pC: 1})
	f.update(save)
	// B is fetched and links to C and D (new, cash 1): B gives 0.75 to
	// each. A: 1; B: history 1.5; C: 2.25; D: 1.75.
	f.add(fetched(pB, pC, pD))
	got, save = f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1 / 2.25, pB: 1.5 / 2.25, pC: 1, pD: 1.75 / 2.25})
	f.update(save)
	// A is fetched again (visits 2): it gives its new cash, 0, to B and
	// C. D is fetched without out-links: its 1.75 goes to every one of the
	// four pages, 0.4375 each. A: 1.4375, B: 1.9375, C: 2.6875, D: 2.1875.
	f.add(page{url: pA, state: linkgraph.StateFetched, visits: 2, fetched: daysAgo(1), links: []string{pB, pC}}, fetched(pD))
	got, save = f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1.4375 / 2.6875, pB: 1.9375 / 2.6875, pC: 1, pD: 2.1875 / 2.6875})
	f.update(save)
	// Cash is conserved: 4 pages' initial cash.
	f.view(func(tx *linkgraph.Tx) error {
		cash, err := tx.ScoreVector(opicCash)
		if err != nil {
			return err
		}
		var st opicState
		if err := json.Unmarshal(tx.ScoreMeta(opicMeta), &st); err != nil {
			return err
		}
		sum := 0.0
		for _, id := range f.ids {
			sum += cash[id] + st.Uniform
		}
		if math.Abs(sum-4) > 1e-9 || st.Runs != 4 || st.Distributed != 2 {
			t.Errorf("cash sums to %g, state %+v", sum, st)
		}
		return nil
	})
}

// Historical PageRank from a file: A and B were in the previous crawl;
// C and D are new (A links to C and B).
func TestHistorical(t *testing.T) {
	f := newFixture(t)
	f.add(page{url: pA, links: []string{pB, pC}}, page{url: pB}, page{url: pC}, page{url: pD})
	file := filepath.Join(t.TempDir(), "pr.tsv")
	content := "# wire-pagerank 1\nhttp://a.cl/\t0.6\nhttp://A.cl/b\t0.1\nhttp://a.cl/b\t0.1\nhttp://gone.cl/\t0.2\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ImportHistory(context.Background(), f.col, file, HistoryOptions{Config: f.cfg})
	if err != nil {
		t.Fatal(err)
	}
	// http://A.cl/b normalises to http://a.cl/b: the two lines add up.
	if res.Pages != 3 || res.Matched != 2 || res.Max != 0.6 || res.Min != 0.2 {
		t.Errorf("import %+v", res)
	}
	m := f.strategy(StrategyHistorical)
	tests := []struct {
		mode string
		want map[string]float64
	}{
		// zero: a thousandth of the smallest imported value (0.2).
		{"zero", map[string]float64{pA: 1, pB: 0.2 / 0.6, pC: 0.0002 / 0.6, pD: 0.0002 / 0.6}},
		// parent: C gets PR(A)/2; D has no old parent: the zero value.
		{"parent", map[string]float64{pA: 1, pB: 0.2 / 0.6, pC: 0.3 / 0.6, pD: 0.0002 / 0.6}},
	}
	for _, tt := range tests {
		m.HistoricalNewPages = tt.mode
		got, _ := f.estimateIQ(m)
		checkIQ(t, got, tt.want)
	}
	// pagerank: the known graph's PageRank, × 4 known / 3 imported pages.
	// C, linked from A, above D, linked from nothing; D still above the
	// zero value (its random-jump share); the old pages as imported.
	m.HistoricalNewPages = "pagerank"
	pr, _ := f.estimateIQ(m)
	if !(pr[pC] > pr[pD] && pr[pD] > 0.0002/0.6 && approx(pr[pA], 1) && approx(pr[pB], 0.2/0.6)) {
		t.Errorf("pagerank: IQ %v, want A 1, B 1/3, C > D > the zero value", pr)
	}
	// random: an imported value, the same one on every run.
	m.HistoricalNewPages = "random"
	got, _ := f.estimateIQ(m)
	again, _ := f.estimateIQ(m)
	for _, u := range []string{pC, pD} {
		x := got[u] * 0.6
		if !(approx(x, 0.6) || approx(x, 0.2) || approx(x, 0.2)) || got[u] != again[u] {
			t.Errorf("random IQ(%s) = %g (value %g), again %g", u, got[u], x, again[u])
		}
	}
}

// The parent rule goes on through new pages, level by level, as the
// paper values a new page by the page its link was found in: C (new,
// linked from old A) gets PR(A)/2; D and E (linked from C only) C/2; F
// (linked from D, which also links back to C) D/2; C keeps its level-1
// value whatever the cycle; G, which no valued page leads to, the zero
// value.
func TestHistoricalParentLevels(t *testing.T) {
	const pE, pF, pG = "http://a.cl/e", "http://a.cl/f", "http://a.cl/g"
	f := newFixture(t)
	f.add(page{url: pA, links: []string{pB, pC}}, page{url: pB}, page{url: pC, links: []string{pD, pE}},
		page{url: pD, links: []string{pC, pF}}, page{url: pE}, page{url: pF}, page{url: pG})
	f.importHistory("# wire-pagerank 1\nhttp://a.cl/\t0.6\nhttp://a.cl/b\t0.2\n")
	m := f.strategy(StrategyHistorical)
	m.HistoricalNewPages = "parent"
	got, _ := f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1, pB: 0.2 / 0.6, pC: 0.3 / 0.6, pD: 0.15 / 0.6, pE: 0.15 / 0.6, pF: 0.075 / 0.6, pG: 0.0002 / 0.6})
}

// A site the previous crawl had no page of is valued as the old sites
// were, whatever the variant: its root at the median of the old roots,
// its other pages at the median of the old pages at their depth (the
// deepest known for deeper ones). A new page of an old site gets the
// variant's value.
func TestHistoricalNewSitePages(t *testing.T) {
	const (
		nRoot, nX, nY = "http://n.cl/", "http://n.cl/x", "http://n.cl/y"
		pE            = "http://a.cl/e"
	)
	f := newFixture(t)
	f.add(page{url: pA, links: []string{pB, pC, pE}}, page{url: pB, depth: 1}, page{url: pC, depth: 1}, page{url: pE, depth: 1},
		page{url: nRoot}, page{url: nX, depth: 1}, page{url: nY, depth: 2})
	f.importHistory("# wire-pagerank 1\nhttp://a.cl/\t0.6\nhttp://a.cl/b\t0.1\nhttp://a.cl/c\t0.3\n")
	m := f.strategy(StrategyHistorical)
	m.HistoricalNewPages = "zero"
	got, _ := f.estimateIQ(m)
	checkIQ(t, got, map[string]float64{pA: 1, pB: 0.1 / 0.6, pC: 0.3 / 0.6, pE: 0.0001 / 0.6, nRoot: 1, nX: 0.3 / 0.6, nY: 0.3 / 0.6})
	f.cfg.Manager.Strategy, f.cfg.Manager.HistoricalNewPages = StrategyHistorical, "zero"
	if ex := f.explain(nY); !strings.Contains(ex.IQWhy, "depth 2 of a site the previous crawl did not have") {
		t.Errorf("explain %s: %+v", nY, ex)
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestHistoricalWithoutImport(t *testing.T) {
	f := newFixture(t)
	f.add(page{url: pA})
	f.view(func(tx *linkgraph.Tx) error {
		m := f.strategy(StrategyHistorical)
		v, err := readDocs(context.Background(), tx, &m, testNow, 0, nil)
		if err != nil {
			return err
		}
		if _, err := intrinsicQuality(context.Background(), tx, v, &m); err == nil || !strings.Contains(err.Error(), "history import") {
			t.Errorf("err %v", err)
		}
		return nil
	})
}

// Out-links to ids that have no document (a graph the seeder left
// inconsistent) map to no position and are ignored.
func TestPositionOfUnknownIDs(t *testing.T) {
	v := &graphView{ids: []uint32{1, 2}, pos: []int32{-1, 0, 1}}
	for _, id := range []uint64{0, 3, 1 << 40} {
		if p := v.position(id); p != -1 {
			t.Errorf("position(%d) = %d", id, p)
		}
	}
	sparse := &graphView{ids: []uint32{5, 90000}}
	if sparse.position(90000) != 1 || sparse.position(6) != -1 || sparse.position(1<<40) != -1 {
		t.Error("sparse ids are not found by binary search")
	}
}

// The pagerank strategy computes PageRank and stores it; the next runs
// reuse it, giving a page found since Σ PR(parent)/outdegree from its
// in-links, or (1−d)/N without a parent that has a PageRank, until
// pagerankRuns runs have reused it or the documents grow by
// pagerankGrowth; then it is computed again, from the stored ranks, and
// agrees with a computation from scratch.
func TestIncrementalPageRank(t *testing.T) {
	f := newFixture(t)
	pages := []page{
		{url: pA, links: []string{pB, pC}},
		{url: pB, links: []string{pC}},
		{url: pC, links: []string{pA}},
	}
	for i := range 5 {
		pages = append(pages, page{url: fmt.Sprintf("http://b.cl/%d", i)})
	}
	f.add(pages...)
	m := f.strategy(StrategyPageRank)
	first, save := f.estimateIQ(m)
	f.update(save)
	var stored []float64
	f.view(func(tx *linkgraph.Tx) (err error) {
		stored, err = tx.ScoreVector(pagerankVector)
		return err
	})
	top := stored[f.ids[pC]]
	// D is new, linked from A (now 3 out-links) and C (now 2); E is new,
	// linked from nobody: 10 documents, less than 1.5 × 8.
	f.add(page{url: pA, links: []string{pB, pC, pD}}, page{url: pC, links: []string{pA, pD}}, page{url: pE})
	for run := 1; run < pagerankRuns; run++ {
		got, save := f.estimateIQ(m)
		f.update(save)
		checkIQ(t, got, map[string]float64{
			pA: first[pA], pB: first[pB], pC: 1, // as computed
			pD: first[pA]/3 + first[pC]/2, // temporary
			pE: 0.15 / 8 / top,            // (1−d)/N at the computation
		})
		var st pagerankState
		f.view(func(tx *linkgraph.Tx) error { return json.Unmarshal(tx.ScoreMeta(pagerankMeta), &st) })
		if st.Reused != run || st.Docs != 8 {
			t.Fatalf("run %d: state %+v, want the computation of 8 documents reused %d times", run, st, run)
		}
	}
	// The eighth run computes it again, over the ten documents.
	got, save := f.estimateIQ(m)
	f.update(save)
	f.view(func(tx *linkgraph.Tx) error {
		fresh, err := readDocs(context.Background(), tx, &m, testNow, 0, nil)
		if err != nil {
			return err
		}
		pr, err := fresh.pageRank(context.Background(), tx, m.Damping, nil)
		if err != nil {
			return err
		}
		e := pageRankIQ(pr)
		for u, id := range f.ids {
			if p := fresh.position(id); p >= 0 && math.Abs(e.iq(p)-got[u]) > 1e-6 {
				t.Errorf("after %d runs: IQ(%s) = %g, from scratch %g", pagerankRuns, u, got[u], e.iq(p))
			}
		}
		return nil
	})
	// Growth by half (10 → 15 documents) computes it again at once.
	var more []page
	for i := range 5 {
		more = append(more, page{url: fmt.Sprintf("http://c.cl/%d", i)})
	}
	f.add(more...)
	f.view(func(tx *linkgraph.Tx) error {
		var st pagerankState
		if err := json.Unmarshal(tx.ScoreMeta(pagerankMeta), &st); err != nil {
			return err
		}
		if due, why := st.due(15, 0); !due || st.Docs != 10 || st.Reused != 0 {
			t.Errorf("state %+v with 15 documents: due %v (%s), want due for growth", st, due, why)
		}
		return nil
	})
}
