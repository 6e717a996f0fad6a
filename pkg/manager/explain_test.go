package manager

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

func (f *fixture) explain(u string) *Explanation {
	f.t.Helper()
	ex, err := Explain(context.Background(), f.col, u, f.options())
	if err != nil {
		f.t.Fatalf("explain %s: %v", u, err)
	}
	return ex
}

// Explain tells, for each page of smallWeb, whether the next run takes
// it and why not, and its factors agree with the batch the run writes.
func TestExplain(t *testing.T) {
	f := smallWebFixture(t, StrategyPageRank)
	tests := []struct {
		url     string
		inBatch bool
		verdict string
	}{
		{"http://a.cl/q?p=2", true, "in the next batch, at position 1 of 6"},
		{"http://b.cl/", true, "at position 6 of 6"},
		{"http://a.cl/x", false, "its site already has 3 pages of higher profit in this batch (max_pages_per_site)"},
		{"http://a.cl/y", false, "not due: the revisit policy gives it one visit every"},
		{"http://a.cl/z?id=1", false, "depth 6 is beyond the limit for dynamic pages (5)"},
		{"http://b.cl/deep", false, "depth 16 is beyond the limit for static pages (15)"},
		{"http://b.cl/2", false, "its last 3 attempts got no response"},
		{"https://c.cl/robots-says-no", false, "it is excluded"},
		{"https://c.cl/in-batch", false, "it is scheduled in batch 0"},
	}
	for _, tt := range tests {
		ex := f.explain(tt.url)
		if ex.InBatch != tt.inBatch || !strings.Contains(ex.Verdict, tt.verdict) {
			t.Errorf("%s: in batch %v, verdict %q, want %v and %q", tt.url, ex.InBatch, ex.Verdict, tt.inBatch, tt.verdict)
		}
	}
	// The factors multiply out to the score the batch file gives.
	ex := f.explain("http://b.cl/")
	if !approx(ex.VAfter, math.Pow(ex.IQ, 1)) || !approx(ex.VNow, ex.IQ*ex.RQ*ex.F) || ex.RQ != 1 || ex.Change.Visits != 1 {
		t.Errorf("b.cl/: %+v", ex)
	}
	res := f.mustRun()
	_, entries := readBatch(t, f.col, res.Batch)
	for _, e := range entries {
		if e.URL == "http://b.cl/" && math.Abs(e.Score-ex.Profit) > 1e-6 {
			t.Errorf("explain profit %g, batch score %g", ex.Profit, e.Score)
		}
	}
	// A URL given in another form is normalised; an unknown one is an error.
	if ex := f.explain("HTTP://B.CL:80/"); ex.Doc.URL != "http://b.cl/" {
		t.Errorf("normalised lookup found %s", ex.Doc.URL)
	}
	if _, err := Explain(context.Background(), f.col, "http://nowhere.cl/", f.options()); !errors.Is(err, ErrUnknownURL) {
		t.Errorf("unknown URL: %v", err)
	}
	// The printed form names every factor.
	var out bytes.Buffer
	if err := f.explain("http://a.cl/").Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"IQ ", "PageRank", "RQ ", "F ", "changes", "V now", "V after", "profit", "next batch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain output lacks %q:\n%s", want, out.String())
		}
	}
}

// A page beyond the batch size is explained as such, with its rank; the
// script and site limits name themselves.
func TestExplainLimits(t *testing.T) {
	// Candidates in breadth-first order: a.cl/s.php?id=2, b.cl/1, 2, 3,
	// c.cl/1, 2, 3 (a.cl/s.php?id=1 and c.cl/ were fetched yesterday).
	f := newFixture(t)
	f.cfg.Manager.Strategy = StrategyBreadthFirst
	f.cfg.Manager.MaxSitePages = 2
	f.add(fetchedPage("http://a.cl/s.php?id=1", 1), page{url: "http://a.cl/s.php?id=2"},
		page{url: "http://b.cl/1"}, page{url: "http://b.cl/2"}, page{url: "http://b.cl/3"},
		fetchedPage("http://c.cl/", 1), page{url: "http://c.cl/1"}, page{url: "http://c.cl/2"}, page{url: "http://c.cl/3"})
	check := func(u, want string) {
		t.Helper()
		if ex := f.explain(u); !strings.Contains(ex.Verdict, want) {
			t.Errorf("%s: verdict %q, want %q", u, ex.Verdict, want)
		}
	}
	check("http://a.cl/s.php?id=2", "its script already has 1 URLs fetched, tried or scheduled (max_fetches_per_script 1)")
	check("http://c.cl/1", "in the next batch, at position 3 of 3") // b.cl/3 is over max_site_pages too
	check("http://c.cl/3", "its site has 2 pages fetched, tried or scheduled (max_site_pages 2)")
	f.cfg.Manager.BatchSize = 2
	check("http://b.cl/3", "(profit rank 4 of 7 candidates): the batch is full (batch_size 2) before its turn")
}

// Totals count what graph.db holds.
func TestCollectionTotals(t *testing.T) {
	f := smallWebFixture(t, StrategyOPIC)
	f.mustRun()
	tot, err := CollectionTotals(context.Background(), f.col, f.cfg, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Docs != 13 || tot.Fetched != 3 || tot.Sites != 3 || tot.Links != 11 || tot.Batches != 1 || tot.Dynamic != 2 {
		t.Errorf("totals %+v", tot)
	}
	if tot.ByState["scheduled"] != 7 || tot.ByState["excluded"] != 1 || tot.ByDepth["1"] != 7 || len(tot.Estimators) != 1 {
		t.Errorf("by state %v, by depth %v, estimators %v", tot.ByState, tot.ByDepth, tot.Estimators)
	}
	var out bytes.Buffer
	if err := tot.Print(&out); err != nil || !strings.Contains(out.String(), "known") || !strings.Contains(out.String(), "opic: 1 runs") {
		t.Errorf("print: %v\n%s", err, out.String())
	}
}

// The PageRank of a previous crawl, from its collection or from a file
// exported from it, gives the same historical IQ; the two tables swap.
func TestHistoryImportExport(t *testing.T) {
	old := smallWebFixture(t, StrategyPageRank)
	var file bytes.Buffer
	exp, err := ExportPageRank(context.Background(), old.col, &file, HistoryOptions{Config: old.cfg})
	if err != nil {
		t.Fatal(err)
	}
	if exp.Pages != 13 || !strings.HasPrefix(file.String(), PageRankMagic+" 1\n") {
		t.Fatalf("export %+v:\n%s", exp, file.String())
	}
	// The file is in URL order and its values are the PageRank.
	var prev string
	sum := 0.0
	sc := bufio.NewScanner(bytes.NewReader(file.Bytes()))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		u, v, _ := strings.Cut(sc.Text(), "\t")
		if u <= prev {
			t.Errorf("%s after %s", u, prev)
		}
		prev = u
		x, _ := strconv.ParseFloat(v, 64)
		sum += x
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("exported PageRank sums to %g", sum)
	}
	path := filepath.Join(t.TempDir(), "old.tsv")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	f := newFixture(t)
	f.add(smallWeb()...)
	f.add(page{url: "http://new.cl/"}, page{url: "http://a.cl/brand-new"})
	m := f.strategy(StrategyHistorical)
	m.HistoricalNewPages = "zero"
	var iqs []map[string]float64
	var tables []string
	for _, src := range []string{old.col.Dir, path, old.col.GraphPath()} {
		res, err := ImportHistory(context.Background(), f.col, src, HistoryOptions{Config: f.cfg})
		if err != nil {
			t.Fatalf("import %s: %v", src, err)
		}
		if res.Pages != 13 || res.Matched != 13 {
			t.Errorf("import %s: %+v", src, res)
		}
		iq, _ := f.estimateIQ(m)
		iqs = append(iqs, iq)
		f.view(func(tx *linkgraph.Tx) error {
			st, err := readHistoryState(tx)
			tables = append(tables, st.Table)
			return err
		})
	}
	pr, _ := old.estimateIQ(old.strategy(StrategyPageRank))
	for i, iq := range iqs {
		checkIQ(t, iq, pr)
		if iq["http://a.cl/brand-new"] >= 0.001 {
			t.Errorf("import %d: new page IQ %g, want the zero rule's", i, iq["http://a.cl/brand-new"])
		}
		// A site the old crawl did not have: its root is valued as the
		// median of the old sites' roots.
		var roots []float64
		for u, x := range pr {
			if strings.Count(u, "/") == 3 && strings.HasSuffix(u, "/") {
				roots = append(roots, x)
			}
		}
		slices.Sort(roots)
		if want := roots[len(roots)/2]; len(roots) == 0 || math.Abs(iq["http://new.cl/"]-want) > 1e-9 {
			t.Errorf("import %d: new site's root IQ %g, want the median of the old roots %g (%v)", i, iq["http://new.cl/"], want, roots)
		}
	}
	if tables[0] == tables[1] || tables[0] != tables[2] {
		t.Errorf("tables %v do not alternate", tables)
	}
	f.view(func(tx *linkgraph.Tx) error {
		if n := tx.ScoreTableLen(tables[1]); n != 0 {
			t.Errorf("the replaced table keeps %d entries", n)
		}
		return nil
	})

	// A bad file is refused with its line, and the previous import stays.
	bad := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(bad, []byte("http://a.cl/\t0.5\nhttp://b.cl/ 0.1\n"), 0o644)
	if _, err := ImportHistory(context.Background(), f.col, bad, HistoryOptions{Config: f.cfg}); !errors.Is(err, ErrHistorySource) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := ImportHistory(context.Background(), f.col, f.col.Dir, HistoryOptions{Config: f.cfg}); !errors.Is(err, ErrHistorySource) {
		t.Errorf("own graph: %v", err)
	}
	iq, _ := f.estimateIQ(m)
	checkIQ(t, iq, pr)
}
