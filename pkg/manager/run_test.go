package manager

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

// smallWeb is three sites with one page in each situation the manager
// distinguishes.
func smallWeb() []page {
	return []page{
		// a.cl: 4 candidates for a cap of 3 pages per site.
		{url: "http://a.cl/", visits: 3, changes: 1, state: linkgraph.StateFetched, first: daysAgo(60), fetched: daysAgo(20),
			links: []string{"http://a.cl/x", "http://a.cl/y", "http://a.cl/w", "http://b.cl/", "https://c.cl/"}},
		{url: "http://a.cl/x", found: 1, depth: 1, anchors: []string{"the x page"}},
		{url: "http://a.cl/y", found: 1, depth: 1, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(2), // too recent
			links: []string{"http://a.cl/", "http://a.cl/q?p=2", "http://a.cl/z?id=1"}},
		{url: "http://a.cl/z?id=1", found: 2, depth: 6}, // dynamic, too deep
		{url: "http://a.cl/q?p=2", found: 2, depth: 2},  // dynamic, within its limit
		{url: "http://a.cl/w", found: 1, depth: 1},      // capped or not, by profit
		{url: "http://b.cl/", visits: 1, state: linkgraph.StateFetched, fetched: daysAgo(10), lm: "Mon, 02 Nov 2026 15:04:05 GMT", etag: `"5f2a"`,
			links: []string{"http://b.cl/1", "http://b.cl/2", "http://a.cl/"}},
		{url: "http://b.cl/1", found: 1, depth: 1, state: linkgraph.StateFailed, failures: 1},
		{url: "http://b.cl/2", found: 1, depth: 1, state: linkgraph.StateFailed, failures: MaxFailures},
		{url: "http://b.cl/deep", found: 1, depth: 16}, // static, too deep
		{url: "https://c.cl/", found: 1, depth: 0},
		{url: "https://c.cl/robots-says-no", found: 1, depth: 1, state: linkgraph.StateExcluded},
		{url: "https://c.cl/in-batch", found: 1, depth: 1, state: linkgraph.StateScheduled, batch: 0},
	}
}

func smallWebFixture(t *testing.T, strategy string) *fixture {
	f := newFixture(t)
	f.cfg.Manager.Strategy = strategy
	f.cfg.Manager.MaxPagesPerSite = 3
	f.add(smallWeb()...)
	if strategy == StrategyHistorical {
		// The previous crawl knew a.cl/ and b.cl/ well, a.cl/x a little.
		f.importHistory("http://a.cl/\t0.3\nhttp://b.cl/\t0.2\nhttp://a.cl/x\t0.01\nhttp://old.cl/\t0.1\n")
	}
	return f
}

// importHistory imports a PageRank file with the given lines.
func (f *fixture) importHistory(lines string) *HistoryResult {
	f.t.Helper()
	path := filepath.Join(f.t.TempDir(), "pagerank.tsv")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		f.t.Fatal(err)
	}
	res, err := ImportHistory(context.Background(), f.col, path, HistoryOptions{Config: f.cfg, Now: func() time.Time { return testNow }})
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func readBatch(t *testing.T, col *collection.Collection, id int) (batch.Header, []batch.Entry) {
	t.Helper()
	h, entries, err := batch.ReadFile(col.Batch(id).File())
	if err != nil {
		t.Fatal(err)
	}
	return h, entries
}

// The batch file of smallWeb for each strategy, byte for byte. Run with
// -update to rewrite testdata/golden after a deliberate change.
func TestRunGolden(t *testing.T) {
	for _, strategy := range config.Strategies() {
		t.Run(strategy, func(t *testing.T) {
			f := smallWebFixture(t, strategy)
			// The rules and golden files of the uniform revisit rule (the
			// optimal policy: TestRevisitPolicyRun).
			f.cfg.Manager.Revisits = config.RevisitsUniform
			res := f.mustRun()
			got, err := os.ReadFile(res.File)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", strategy+".tsv")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("batch file differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", golden, got, want)
			}
			if res.Batch != 1 || res.Recovered || res.Strategy != strategy {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// What every strategy must agree on for smallWeb.
func TestRunRules(t *testing.T) {
	for _, strategy := range config.Strategies() {
		t.Run(strategy, func(t *testing.T) {
			f := smallWebFixture(t, strategy)
			// The rules and golden files of the uniform revisit rule (the
			// optimal policy: TestRevisitPolicyRun).
			f.cfg.Manager.Revisits = config.RevisitsUniform
			res := f.mustRun()
			h, entries := readBatch(t, f.col, 1)
			in := map[string]batch.Entry{}
			perSite := map[string]int{}
			for i, e := range entries {
				in[e.URL] = e
				perSite[e.Site]++
				if i > 0 && (e.Score > entries[i-1].Score || e.Score == entries[i-1].Score && e.DocID < entries[i-1].DocID) {
					t.Errorf("entry %d (%s) out of order", i, e.URL)
				}
			}
			for _, u := range []string{"http://a.cl/y", "http://a.cl/z?id=1", "http://b.cl/2", "http://b.cl/deep", "https://c.cl/robots-says-no", "https://c.cl/in-batch"} {
				if _, ok := in[u]; ok {
					t.Errorf("%s is in the batch", u)
				}
			}
			for _, u := range []string{"http://b.cl/", "http://b.cl/1", "https://c.cl/"} {
				if _, ok := in[u]; !ok {
					t.Errorf("%s is not in the batch", u)
				}
			}
			if perSite["http://a.cl"] != 3 {
				t.Errorf("a.cl has %d pages in the batch, want the cap 3", perSite["http://a.cl"])
			}
			if e := in["http://b.cl/"]; e.Kind != batch.KindRevisit || e.LastModified != "Mon, 02 Nov 2026 15:04:05 GMT" || e.ETag != `"5f2a"` {
				t.Errorf("b.cl/ entry %+v, want a revisit with its validators", e)
			}
			if e := in["https://c.cl/"]; e.Kind != batch.KindNew || e.Site != "https://c.cl" {
				t.Errorf("c.cl/ entry %+v", e)
			}
			if h.Counts["urls"] != len(entries) || h.Counts["urls"] != res.URLs || h.Counts["new"]+h.Counts["revisits"] != len(entries) || h.Counts["sites"] != 3 {
				t.Errorf("counts %v, result %+v", h.Counts, res)
			}
			if !h.Created.Equal(testNow) || h.Strategy != strategy || h.Params["max_pages_per_site"] != "3" || h.Params["alpha"] != "1" {
				t.Errorf("header %+v", h)
			}
			// Every entry is now scheduled in batch 1, and graph.db knows the batch.
			for _, e := range entries {
				d := f.doc(e.URL)
				if d.State != linkgraph.StateScheduled || d.Batch != 1 {
					t.Errorf("%s: state %s batch %d after the run", e.URL, d.State, d.Batch)
				}
			}
			if bs, ok := f.batchState(1); !ok || bs.URLs != len(entries) || !bs.Managed.Equal(testNow) {
				t.Errorf("batch state %+v, %v", bs, ok)
			}
			if d := f.doc("http://a.cl/y"); d.State != linkgraph.StateFetched {
				t.Errorf("a.cl/y left %s", d.State)
			}
		})
	}
}

// A second run never takes a scheduled page again; runs go on until the
// frontier is empty.
func TestRunAgainSchedulesOthers(t *testing.T) {
	f := smallWebFixture(t, StrategyPageRank)
	seen := map[uint64]int{}
	for id := 1; ; id++ {
		res, err := f.run()
		if errors.Is(err, collection.ErrNothingToDo) {
			if !strings.Contains(err.Error(), "frontier is empty") {
				t.Errorf("message %q", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Batch != id {
			t.Fatalf("batch %d, want %d", res.Batch, id)
		}
		_, entries := readBatch(t, f.col, id)
		for _, e := range entries {
			if b, ok := seen[e.DocID]; ok {
				t.Errorf("doc %d scheduled in batch %d and again in %d", e.DocID, b, id)
			}
			seen[e.DocID] = id
		}
		if id > 5 {
			t.Fatal("the frontier never empties")
		}
	}
	// a.cl has 4 candidates and a cap of 3: one comes in batch 2.
	aInBatch2 := 0
	for _, u := range []string{"http://a.cl/", "http://a.cl/x", "http://a.cl/q?p=2", "http://a.cl/w"} {
		if seen[f.ids[u]] == 2 {
			aInBatch2++
		}
	}
	if aInBatch2 != 1 {
		t.Errorf("%d pages of a.cl in batch 2, want 1 (the one over the cap)", aInBatch2)
	}
	// Candidates: a.cl/ (revisit), a.cl/x, a.cl/q?p=2, a.cl/w, b.cl/
	// (revisit), b.cl/1 (failed once), c.cl/.
	if len(seen) != 7 {
		t.Errorf("%d documents scheduled in all, want 7", len(seen))
	}
}

func TestRunBatchSize(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	f.cfg.Manager.BatchSize = 2
	res := f.mustRun()
	if res.URLs != 2 || res.Stats.Left == 0 {
		t.Errorf("result %+v", res)
	}
}

func TestRunEmptyFrontier(t *testing.T) {
	t.Run("no documents", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.run()
		if !errors.Is(err, collection.ErrNothingToDo) || !strings.Contains(err.Error(), "no documents") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("all recent", func(t *testing.T) {
		f := newFixture(t)
		f.cfg.Manager.Revisits = config.RevisitsUniform
		f.add(page{url: "http://a.cl/", state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(1)})
		_, err := f.run()
		if !errors.Is(err, collection.ErrNothingToDo) || !strings.Contains(err.Error(), "fetched too recently: 1") {
			t.Errorf("err %v", err)
		}
		if ids, _ := f.col.BatchIDs(); len(ids) != 0 {
			t.Errorf("batches %v written", ids)
		}
	})
	t.Run("no gain", func(t *testing.T) {
		f := newFixture(t)
		f.cfg.Manager.Beta, f.cfg.Manager.Gamma = 0, 0
		f.add(page{url: "http://a.cl/"})
		_, err := f.run()
		if !errors.Is(err, collection.ErrNothingToDo) || !strings.Contains(err.Error(), "gain no value") {
			t.Errorf("err %v", err)
		}
	})
}

// A run killed after writing batch.tsv but before its graph.db
// transaction: the next run completes that batch and writes no new one.
func TestRunCompletesInterruptedBatch(t *testing.T) {
	f := smallWebFixture(t, StrategyBreadthFirst)
	entries := []batch.Entry{
		{DocID: f.ids["https://c.cl/"], Site: "https://c.cl", Score: 0.5, Kind: batch.KindNew, URL: "https://c.cl/"},
		{DocID: f.ids["http://b.cl/"], Site: "http://b.cl", Score: 0.25, Kind: batch.KindRevisit, URL: "http://b.cl/"},
	}
	created := testNow.Add(-time.Hour)
	h := batch.Header{Batch: 1, Created: created, Strategy: "breadth-first", Counts: map[string]int{"urls": 2}}
	if err := collection.WriteAtomic(f.col.Batch(1).File(), func(w io.Writer) error { return batch.Write(w, h, entries) }); err != nil {
		t.Fatal(err)
	}
	res := f.mustRun()
	if !res.Recovered || res.Batch != 1 || res.URLs != 2 || res.New != 1 || res.Revisits != 1 {
		t.Errorf("result %+v", res)
	}
	for _, u := range []string{"https://c.cl/", "http://b.cl/"} {
		if d := f.doc(u); d.State != linkgraph.StateScheduled || d.Batch != 1 {
			t.Errorf("%s: %s in batch %d", u, d.State, d.Batch)
		}
	}
	if bs, ok := f.batchState(1); !ok || bs.URLs != 2 || !bs.Managed.Equal(created) {
		t.Errorf("batch state %+v %v", bs, ok)
	}
	if ids, _ := f.col.BatchIDs(); len(ids) != 1 {
		t.Errorf("batches %v", ids)
	}
	// The next run is an ordinary one.
	res = f.mustRun()
	if res.Recovered || res.Batch != 2 {
		t.Errorf("second result %+v", res)
	}
	_, entries2 := readBatch(t, f.col, 2)
	for _, e := range entries2 {
		if e.URL == "https://c.cl/" || e.URL == "http://b.cl/" {
			t.Errorf("%s scheduled again", e.URL)
		}
	}
}

func TestRunRefusesMismatchedInterruptedBatch(t *testing.T) {
	f := smallWebFixture(t, StrategyBreadthFirst)
	h := batch.Header{Batch: 7, Created: testNow, Strategy: "x", Counts: map[string]int{"urls": 0}}
	if err := collection.WriteAtomic(f.col.Batch(1).File(), func(w io.Writer) error { return batch.Write(w, h, nil) }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(); !errors.Is(err, ErrBatchMismatch) {
		t.Errorf("err %v, want ErrBatchMismatch", err)
	}
}

// A manager killed while writing the file leaves a directory with a
// temporary file only; the next run uses that id.
func TestRunRemovesUnwrittenDirectory(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	dir := f.col.Batch(1).Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".batch.tsv.tmp-123"), []byte("# wire-batch 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := f.mustRun()
	if res.Batch != 1 {
		t.Errorf("batch %d, want 1", res.Batch)
	}
	if _, err := os.Stat(filepath.Join(dir, ".batch.tsv.tmp-123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
}

func TestRunLockedAndBusy(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	lock, err := f.col.Lock(LockName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(); !errors.Is(err, collection.ErrLocked) {
		t.Errorf("with the lock held: %v", err)
	}
	lock.Release()
	g := f.open()
	opts := f.options()
	opts.GraphTimeout = 50 * time.Millisecond
	_, err = Run(context.Background(), f.col, opts)
	g.Close()
	if !errors.Is(err, linkgraph.ErrBusy) || !strings.Contains(err.Error(), "seeder") {
		t.Errorf("with graph.db open: %v", err)
	}
}

// The same graph gives the same batch, in two collections.
func TestRunDeterministic(t *testing.T) {
	var files [2][]byte
	for i := range files {
		f := smallWebFixture(t, StrategyPageRank)
		res := f.mustRun()
		var err error
		if files[i], err = os.ReadFile(res.File); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("two runs differ:\n%s\n%s", files[0], files[1])
	}
}

// BenchmarkRun scores a synthetic graph of 100,000 pages on 1,000 sites
// (a third fetched, with ~45 out-links each, 15 per page on average) and
// writes a batch of 10,000:
//
//	go test -run XXX -bench Run -benchtime 3x ./pkg/manager
func BenchmarkRun(b *testing.B) {
	const docs, sites, links = 100_000, 1000, 15
	dir := b.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		b.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for pass := 0; pass < 2; pass++ { // documents, then links between them
		for lo := 0; lo < docs; lo += 10_000 {
			err := g.Update(func(tx *linkgraph.Tx) error {
				for i := lo; i < lo+10_000; i++ {
					key := fmt.Sprintf("http://s%d.cl", i%sites)
					if pass == 0 {
						site, _, err := tx.AddSite(key)
						if err != nil {
							return err
						}
						d := &linkgraph.Doc{Site: site, Depth: i / sites % 10, Found: i / 20_000, State: linkgraph.StatePending}
						if i%3 == 0 {
							d.State, d.Visits, d.Fetched = linkgraph.StateFetched, 1, testNow.Add(-30*day)
						}
						if _, _, err := tx.AddURLDoc(fmt.Sprintf("%s/p%d", key, i), d); err != nil {
							return err
						}
						continue
					}
					if i%3 != 0 {
						continue
					}
					bm := roaring.New()
					for j := 0; j < 3*links; j++ {
						bm.Add(uint32(1 + int(float64(docs-1)*math.Pow(r.Float64(), 2))))
					}
					if err := tx.SetOutLinks(uint64(i+1), bm); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	g.Close()
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 10_000
	// The historical strategy uses this graph's own PageRank, exported
	// and imported.
	var pr bytes.Buffer
	if _, err := ExportPageRank(context.Background(), col, &pr, HistoryOptions{Config: cfg}); err != nil {
		b.Fatal(err)
	}
	prFile := filepath.Join(dir, "pagerank.tsv")
	if err := os.WriteFile(prFile, pr.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := ImportHistory(context.Background(), col, prFile, HistoryOptions{Config: cfg}); err != nil {
		b.Fatal(err)
	}
	for _, strategy := range config.Strategies() {
		b.Run(strategy, func(b *testing.B) {
			cfg.Manager.Strategy = strategy
			for b.Loop() {
				res, err := Run(context.Background(), col, Options{Config: cfg, Now: func() time.Time { return testNow }})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := Cancel(context.Background(), col, CancelOptions{}); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Stats.Links), "links")
				b.StartTimer()
			}
		})
	}
}

// Marking a batch in several transactions: the batch is recorded only by
// the last, so a failure half-way leaves it unrecorded, and the next run
// completes it from the file.
func TestMarkInChunks(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	res := f.mustRun()
	_, entries := readBatch(t, f.col, 1)
	if _, err := f.cancel(false); err != nil {
		t.Fatal(err)
	}
	// The file again, by hand, and a bad entry at the end.
	h := batch.Header{Batch: 1, Created: testNow, Strategy: "backlink", Counts: map[string]int{"urls": len(entries)}}
	if err := collection.WriteAtomic(f.col.Batch(1).File(), func(w io.Writer) error { return batch.Write(w, h, entries) }); err != nil {
		t.Fatal(err)
	}
	bad := append(slices.Clone(entries), batch.Entry{DocID: 999, Site: "http://a.cl", Kind: batch.KindNew, URL: "http://a.cl/none"})
	g := f.open()
	saved := false
	_, err := markInChunks(g, 1, bad, testNow, func(*linkgraph.Tx) error { saved = true; return nil }, 4)
	g.Close()
	if !errors.Is(err, ErrBatchMismatch) || saved {
		t.Fatalf("err %v, state saved %v", err, saved)
	}
	if _, ok := f.batchState(1); ok {
		t.Fatal("batch recorded after a failed chunk")
	}
	scheduled := 0
	for _, e := range entries {
		if f.doc(e.URL).State == linkgraph.StateScheduled {
			scheduled++
		}
	}
	if scheduled == 0 || scheduled == len(entries) {
		t.Errorf("%d of %d scheduled: the chunks before the failure should be", scheduled, len(entries))
	}
	again := f.mustRun()
	if !again.Recovered || again.URLs != res.URLs {
		t.Errorf("recovery %+v", again)
	}
	for _, e := range entries {
		if d := f.doc(e.URL); d.State != linkgraph.StateScheduled || d.Batch != 1 {
			t.Errorf("%s: %s in batch %d", e.URL, d.State, d.Batch)
		}
	}
}

// TestRunMinSites: with Options.MinSites (manager run --min-sites) a
// batch of fewer sites is not written: the run says so with an error
// wrapping ErrThinBatch and collection.ErrNothingToDo (exit 3), writes
// nothing and marks nothing; with the limit met the same batch is
// written.
func TestRunMinSites(t *testing.T) {
	f := smallWebFixture(t, StrategyBreadthFirst)
	opts := f.options()
	opts.MinSites = 4 // the small web's batch has 3 sites
	_, err := Run(context.Background(), f.col, opts)
	if !errors.Is(err, ErrThinBatch) || !errors.Is(err, collection.ErrNothingToDo) || !strings.Contains(err.Error(), "on 3 sites, fewer than the 4") {
		t.Fatalf("run with MinSites 4: %v", err)
	}
	if ids, _ := f.col.BatchIDs(); len(ids) != 0 {
		t.Errorf("batches %v written", ids)
	}
	if d := f.doc("http://a.cl/x"); d.State != linkgraph.StatePending {
		t.Errorf("a.cl/x is %s after a thin run", d.State)
	}
	opts.MinSites = 3
	res, err := Run(context.Background(), f.col, opts)
	if err != nil || res.Sites != 3 {
		t.Fatalf("run with MinSites 3: %v %+v", err, res)
	}
}

// TestRunFits: Options.Fits (collection.min_free) is asked with the
// chosen batch's URLs before anything is written; its error is the
// run's, and nothing is written or marked.
func TestRunFits(t *testing.T) {
	f := smallWebFixture(t, StrategyBreadthFirst)
	opts := f.options()
	asked := 0
	opts.Fits = func(urls int) error {
		asked = urls
		return &collection.DiskFull{Dir: f.col.Dir, Keep: 1, Need: int64(urls)}
	}
	_, err := Run(context.Background(), f.col, opts)
	if !errors.Is(err, collection.ErrDiskFull) || asked == 0 {
		t.Fatalf("run with a full disk: %v (asked for %d URLs)", err, asked)
	}
	if ids, _ := f.col.BatchIDs(); len(ids) != 0 {
		t.Errorf("batches %v written", ids)
	}
	if d := f.doc("http://a.cl/x"); d.State != linkgraph.StatePending {
		t.Errorf("a.cl/x is %s after a run refused", d.State)
	}
	opts.Fits = func(urls int) error { return nil }
	res, err := Run(context.Background(), f.col, opts)
	if err != nil || res.URLs != asked {
		t.Fatalf("run with room: %v %+v, want the %d URLs asked about", err, res, asked)
	}
}
