package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The scale benchmark (scripts/bench-manager.sh) builds collections of
// millions of pages directly with linkgraph's API, from a generator of a
// national-web-shaped graph, and measures a full manager run in a child
// process: wall time and peak memory (the child's maximum resident set).
//
//	WIRE_SCALE_PAGES=1000000 WIRE_SCALE_LINKS=20 WIRE_SCALE_DIR=/tmp/wire-scale \
//	  go test -run TestScale -v -timeout 0 ./pkg/manager
//
// WIRE_SCALE_STRATEGIES (default "pagerank,opic") lists the strategies
// run; a collection already built in WIRE_SCALE_DIR is reused;
// WIRE_SCALE_REVISITS sets manager.revisits (optimal or uniform);
// WIRE_SCALE_BATCH sets manager.batch_size; WIRE_SCALE_WORK names the
// directory the cycles run in, kept afterwards (default: a copy beside
// the collection, removed).

// scaleWeb is the shape of the generated web: site sizes heavy-tailed
// (Pareto, α = 1.1, capped at 25,000 pages as the papers' crawls were),
// half of each site fetched, the fetched pages linking to 2·links pages
// on average (so links per known page overall), 90 % of them inside the
// site and skewed towards the site's first pages, 10 % to other sites
// chosen by size, mostly their home pages.
type scaleWeb struct {
	pages, linksPerPage int
	sites               []int   // pages per site
	first               []int   // first doc index of each site
	fetched             float64 // share of each site's pages fetched (WIRE_SCALE_FETCHED, default ½)
}

// fetchedPages is the number of the n pages of a site that are fetched.
func (w *scaleWeb) fetchedPages(n int) int {
	if w.fetched == 0 || w.fetched == 0.5 {
		return (n + 1) / 2
	}
	return min(int(math.Ceil(float64(n)*w.fetched)), n)
}

func newScaleWeb(pages, linksPerPage int) *scaleWeb {
	w := &scaleWeb{pages: pages, linksPerPage: linksPerPage}
	r := rand.New(rand.NewPCG(7, uint64(pages)))
	total := 0
	for total < pages {
		n := int(2 / math.Pow(1-r.Float64(), 1/1.1))
		n = min(max(n, 1), 25000, pages-total)
		w.first = append(w.first, total)
		w.sites = append(w.sites, n)
		total += n
	}
	return w
}

func (w *scaleWeb) url(site, page int) string {
	if page%10 == 9 {
		return fmt.Sprintf("http://s%07d.cl/p%07d.php?id=%d", site, page, page)
	}
	return fmt.Sprintf("http://s%07d.cl/p%07d.html", site, page)
}

// build writes the web into a new collection at dir.
func (w *scaleWeb) build(dir string, log func(string, ...any)) error {
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		return err
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		return err
	}
	defer g.Close()
	r := rand.New(rand.NewPCG(11, uint64(w.pages)))
	// siteBySize picks a site with probability proportional to its size.
	cum := make([]int, len(w.sites))
	for i, n := range w.sites {
		cum[i] = w.first[i] + n
	}
	pickSite := func() int {
		x := r.IntN(w.pages)
		lo, hi := 0, len(cum)-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cum[mid] > x {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	zipfIn := func(n int) int { // skewed towards 0: home page, top menus
		return min(int(float64(n)*math.Pow(r.Float64(), 2)), n-1)
	}
	now := testNow
	start := time.Now()
	const perTx = 20000
	site := 0
	for site < len(w.sites) {
		err := g.Update(func(tx *linkgraph.Tx) error {
			done := 0
			for ; site < len(w.sites) && done < perTx; site++ {
				n := w.sites[site]
				done += n
				key := fmt.Sprintf("http://s%07d.cl", site)
				sid, _, err := tx.AddSite(key)
				if err != nil {
					return err
				}
				for j := 0; j < n; j++ {
					depth := int(math.Log2(float64(j + 1)))
					d := &linkgraph.Doc{Site: sid, Depth: depth, Found: depth, State: linkgraph.StatePending}
					fetched := j < w.fetchedPages(n)
					if fetched {
						visits := 1 + r.IntN(3)
						d.State, d.Visits, d.Status = linkgraph.StateFetched, visits, 200
						d.Fetched = now.Add(-time.Duration(8+r.IntN(60)) * 24 * time.Hour)
						d.FirstFetched = d.Fetched.Add(-time.Duration(visits-1) * 30 * 24 * time.Hour)
						for v := 0; v < visits; v++ {
							d.History = append(d.History, linkgraph.Visit{Time: d.FirstFetched.Add(time.Duration(v) * 30 * 24 * time.Hour), Status: 200, Changed: v > 0 && r.IntN(3) == 0})
						}
						d.LastModified, d.ETag = "Mon, 02 Nov 2026 15:04:05 GMT", fmt.Sprintf(`"%x"`, j)
					} else {
						d.Anchors = []string{fmt.Sprintf("page %d", j)}
					}
					if _, _, err := tx.AddURLDoc(w.url(site, j), d); err != nil {
						return err
					}
				}
				s, err := tx.Site(sid)
				if err != nil {
					return err
				}
				s.Pages = n
				if err := tx.PutSite(s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		log("docs: %d sites of %d, %s", site, len(w.sites), time.Since(start).Round(time.Second))
	}
	// Links, once every document has its id (doc id = index + 1).
	site = 0
	var links uint64
	for site < len(w.sites) {
		err := g.Update(func(tx *linkgraph.Tx) error {
			done := 0
			bm := roaring.New()
			var targets []linkgraph.Target
			for ; site < len(w.sites) && done < perTx; site++ {
				n := w.sites[site]
				done += n
				base := w.first[site]
				for j := 0; j < w.fetchedPages(n); j++ {
					bm.Clear()
					targets = targets[:0]
					k := 1 + r.IntN(4*w.linksPerPage)
					for l := 0; l < k; l++ {
						t, ts := 0, site
						if l < n-1 && r.IntN(10) != 0 { // a small site has few pages to link to
							t = base + zipfIn(n)
						} else {
							ts = pickSite()
							t = w.first[ts]
							if r.IntN(3) == 0 {
								t += zipfIn(w.sites[ts])
							}
						}
						if t != base+j && bm.CheckedAdd(uint32(t+1)) {
							targets = append(targets, linkgraph.Target{Doc: uint64(t + 1), Site: uint64(ts + 1)})
						}
					}
					links += uint64(len(targets))
					if _, err := tx.ReplaceOutLinks(uint64(base+j+1), uint64(site+1), targets); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		log("links: %d sites of %d, %d links, %s", site, len(w.sites), links, time.Since(start).Round(time.Second))
	}
	return os.WriteFile(filepath.Join(dir, "scale.done"), []byte(strconv.FormatUint(links, 10)), 0o644)
}

// peakAnon samples the process's anonymous resident memory (RssAnon:
// heap, stacks; not the pages of graph.db mapped from the file, which
// the kernel can drop) every 20 ms until stop is closed.
//
// It also records the peak of the live heap, /gc/heap/live:bytes: what
// the last collection found reachable, the memory the run needs when the
// collector is given a limit (GOMEMLIMIT) close to it.
func peakAnon(stop <-chan struct{}, peak, live *int64) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		*peak = max(*peak, procStatus("RssAnon:"))
		metrics.Read(sample)
		*live = max(*live, int64(sample[0].Value.Uint64()>>10))
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// links reads the number of links the build wrote.
func (w *scaleWeb) links(dir string) uint64 {
	data, _ := os.ReadFile(filepath.Join(dir, "scale.done"))
	n, _ := strconv.ParseUint(string(data), 10, 64)
	return n
}

// scaleRun is what the child process reports.
type scaleRun struct {
	Strategy   string  `json:"strategy"`
	Batch      int     `json:"batch"`
	Docs       int     `json:"docs"`
	Links      int     `json:"links"`
	URLs       int     `json:"urls"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	HWMKiB     int64   `json:"hwmKiB"`  // VmHWM of the child: peak resident memory, file pages of graph.db included
	AnonKiB    int64   `json:"anonKiB"` // peak RssAnon, sampled
	LiveKiB    int64   `json:"liveKiB"` // peak live heap, sampled
}

// procStatus reads a kB field of /proc/self/status.
func procStatus(field string) int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// resetEstimators forgets the OPIC and partial-pagerank state, so every
// run is a first one (OPIC distributes the cash of every fetched page).
func resetEstimators(col *collection.Collection) error {
	g, err := linkgraph.Open(col.GraphPath(), false, time.Minute)
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Update(func(tx *linkgraph.Tx) error {
		for _, name := range []string{opicCash, opicHistory, opicVisits, partialVector, pagerankVector} {
			if err := tx.DeleteScores(name); err != nil {
				return err
			}
		}
		for _, key := range []string{opicMeta, partialMeta} {
			if err := tx.PutScoreMeta(key, []byte("{}")); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestScaleChild is the child process: one manager run.
func TestScaleChild(t *testing.T) {
	strategy := os.Getenv("WIRE_SCALE_CHILD")
	if strategy == "" {
		t.Skip("run by TestScale")
	}
	col, err := collection.Open(os.Getenv("WIRE_SCALE_COLLECTION"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Manager.Strategy = strategy
	if r := os.Getenv("WIRE_SCALE_REVISITS"); r != "" {
		cfg.Manager.Revisits = r // optimal (the default) or uniform
	}
	if b, _ := strconv.Atoi(os.Getenv("WIRE_SCALE_BATCH")); b > 0 {
		// Batches the size of what a cycle changes (a manager run often,
		// writing short batches) instead of the default batch_size.
		cfg.Manager.BatchSize = b
	}
	now := testNow
	if sec, _ := strconv.ParseInt(os.Getenv("WIRE_SCALE_NOW"), 10, 64); sec > 0 { // a cycle of TestScale's cycles
		now = time.Unix(sec, 0).UTC()
	}
	if path := os.Getenv("WIRE_SCALE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	var anon, live int64
	go func() { peakAnon(stop, &anon, &live); close(done) }()
	res, err := Run(context.Background(), col, Options{Config: cfg, Now: func() time.Time { return now }, GraphTimeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("WIRE_SCALE_HEAPPROFILE"); path != "" { // live objects at the last collection of the run
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	out, _ := json.Marshal(scaleRun{Strategy: strategy, Batch: res.Batch, Docs: res.Stats.Docs, Links: res.Stats.Links, URLs: res.URLs,
		Iterations: res.Stats.Iterations, Seconds: res.Elapsed.Seconds(), HWMKiB: procStatus("VmHWM:"), AnonKiB: anon, LiveKiB: live})
	fmt.Printf("SCALE %s\n", out)
}

func TestScale(t *testing.T) {
	pages, _ := strconv.Atoi(os.Getenv("WIRE_SCALE_PAGES"))
	if pages <= 0 {
		t.Skip("set WIRE_SCALE_PAGES (scripts/bench-manager.sh)")
	}
	linksPer, _ := strconv.Atoi(os.Getenv("WIRE_SCALE_LINKS"))
	if linksPer <= 0 {
		linksPer = 20
	}
	root := os.Getenv("WIRE_SCALE_DIR")
	if root == "" {
		root = t.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("pages%d-links%d", pages, linksPer))
	w := newScaleWeb(pages, linksPer)
	if f, _ := strconv.ParseFloat(os.Getenv("WIRE_SCALE_FETCHED"), 64); f > 0 && f != 0.5 {
		w.fetched = min(f, 1)
		dir += fmt.Sprintf("-fetched%g", w.fetched)
	}
	// WIRE_SCALE_SOURCE=testweb builds the graph from the test web's
	// generator (buildFromTestWeb) instead of the synthetic generator.
	fromTestWeb := os.Getenv("WIRE_SCALE_SOURCE") == "testweb"
	if fromTestWeb {
		dir = filepath.Join(root, fmt.Sprintf("testweb-pages%d", pages))
	}
	if _, err := os.Stat(filepath.Join(dir, "scale.done")); err != nil {
		os.RemoveAll(dir)
		t0 := time.Now()
		if fromTestWeb {
			err = buildFromTestWeb(dir, pages, t.Logf)
		} else {
			err = w.build(dir, t.Logf)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("built %d pages in %s", pages, time.Since(t0).Round(time.Second))
	}
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(col.GraphPath())
	strategies := strings.Split(os.Getenv("WIRE_SCALE_STRATEGIES"), ",")
	if strategies[0] == "" {
		strategies = []string{StrategyPageRank, StrategyOPIC}
	}
	for _, s := range strategies {
		// A clean slate: no batch, no estimator state.
		for {
			if _, err := Cancel(context.Background(), col, CancelOptions{Force: true, GraphTimeout: time.Minute}); err != nil {
				break
			}
		}
		if err := resetEstimators(col); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^TestScaleChild$", "-test.v")
		cmd.Env = append(os.Environ(), "WIRE_SCALE_CHILD="+s, "WIRE_SCALE_COLLECTION="+dir)
		out, err := cmd.CombinedOutput()
		wall := time.Since(t0)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s, err, out)
		}
		var run scaleRun
		for _, line := range strings.Split(string(out), "\n") {
			if j, ok := strings.CutPrefix(line, "SCALE "); ok {
				if err := json.Unmarshal([]byte(j), &run); err != nil {
					t.Fatal(err)
				}
			}
		}
		maxrss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
		t.Logf("RESULT pages=%d links=%d strategy=%s wall=%.1fs run=%.1fs iterations=%d maxrss=%dMiB anon=%dMiB live=%dMiB graph.db=%dMiB",
			run.Docs, w.links(dir), s, wall.Seconds(), run.Seconds, run.Iterations, maxrss>>10, run.AnonKiB>>10, run.LiveKiB>>10, fi.Size()>>20)
	}
	if cycles, _ := strconv.Atoi(os.Getenv("WIRE_SCALE_CYCLES")); cycles > 0 {
		scaleCycles(t, w, dir, strategies[0], cycles)
	}
}

// scaleCycles runs cycles of the manager on a copy of the collection at
// dir (WIRE_SCALE_CYCLES): a manager run in a child process, then, in
// this process, what the seeder would do with the batch (seedScale),
// the clock a day later each cycle (WIRE_SCALE_STEP, a Go duration), so
// that every fetched page's freshness changes between runs. It logs each
// run's wall time and CPU time (user + system) and what the links cache
// did.
func scaleCycles(t *testing.T, w *scaleWeb, dir, strategy string, cycles int) {
	work := dir + ".cycles"
	keep := os.Getenv("WIRE_SCALE_WORK") // the copy's place, kept after the cycles (A/B runs from one state)
	if keep != "" {
		work = keep
	}
	os.RemoveAll(work)
	if out, err := exec.Command("cp", "-a", dir, work).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", dir, err, out)
	}
	if keep == "" {
		defer os.RemoveAll(work)
	}
	col, err := collection.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := Cancel(context.Background(), col, CancelOptions{Force: true, GraphTimeout: time.Minute}); err != nil {
			break
		}
	}
	if err := resetEstimators(col); err != nil {
		t.Fatal(err)
	}
	step := 24 * time.Hour
	if d, err := time.ParseDuration(os.Getenv("WIRE_SCALE_STEP")); err == nil && d > 0 {
		step = d
	}
	r := rand.New(rand.NewPCG(13, uint64(w.pages)))
	for c := 1; c <= cycles; c++ {
		now := testNow.Add(time.Duration(c-1) * step)
		t0 := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^TestScaleChild$", "-test.v")
		cmd.Env = append(os.Environ(), "WIRE_SCALE_CHILD="+strategy, "WIRE_SCALE_COLLECTION="+work, "WIRE_SCALE_NOW="+strconv.FormatInt(now.Unix(), 10))
		if d := os.Getenv("WIRE_SCALE_PROFILES"); d != "" { // a CPU profile of each cycle's run
			cmd.Env = append(cmd.Env, fmt.Sprintf("WIRE_SCALE_CPUPROFILE=%s/cycle%d.prof", d, c))
		}
		out, err := cmd.CombinedOutput()
		wall := time.Since(t0)
		if err != nil {
			t.Fatalf("cycle %d: %v\n%s", c, err, out)
		}
		var run scaleRun
		cache := ""
		for _, line := range strings.Split(string(out), "\n") {
			if j, ok := strings.CutPrefix(line, "SCALE "); ok {
				if err := json.Unmarshal([]byte(j), &run); err != nil {
					t.Fatal(err)
				}
			}
			if i := strings.Index(line, "msg=\"links cache"); i >= 0 {
				cache += " " + line[i:]
			}
			if i := strings.Index(line, "msg=\"documents cache"); i >= 0 {
				cache += " " + line[i:]
			}
		}
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		t.Logf("CYCLE %d strategy=%s docs=%d links=%d urls=%d wall=%.2fs run=%.2fs cpu=%.2fs iterations=%d anon=%dMiB %s",
			c, strategy, run.Docs, run.Links, run.URLs, wall.Seconds(), run.Seconds, cpu.Seconds(), run.Iterations, run.AnonKiB>>10, cache)
		t1 := time.Now()
		if err := seedScale(w, col, run.Batch, now.Add(step/2), r); err != nil {
			t.Fatal(err)
		}
		t.Logf("seeded batch %d in %s", run.Batch, time.Since(t1).Round(time.Millisecond))
	}
}

// seedScale does roughly what the seeder does with a harvested batch:
// every entry fetched at now (a visit added to its history); a page
// fetched for the first time gets out-links as the generator gives them
// (a tenth to new pages of its site, which join the frontier); one
// revisited page in five gains a link.
func seedScale(w *scaleWeb, col *collection.Collection, id int, now time.Time, r *rand.Rand) error {
	_, entries, err := batch.ReadFile(col.Batch(id).File())
	if err != nil {
		return err
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Minute)
	if err != nil {
		return err
	}
	defer g.Close()
	zipfIn := func(n int) int { return min(int(float64(n)*math.Pow(r.Float64(), 2)), n-1) }
	newPages := 0
	const perTx = 20000
	for lo := 0; lo < len(entries); lo += perTx {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for _, e := range entries[lo:min(lo+perTx, len(entries))] {
				d, err := tx.Doc(e.DocID)
				if err != nil {
					return err
				}
				first := d.Visits == 0
				d.State, d.Batch, d.Visits, d.Status, d.Fetched, d.Failures = linkgraph.StateFetched, id, d.Visits+1, 200, now, 0
				if d.FirstFetched.IsZero() {
					d.FirstFetched = now
				}
				d.History = append(d.History, linkgraph.Visit{Time: now, Status: 200, Changed: !first && r.IntN(3) == 0})
				if len(d.History) > linkgraph.MaxHistory {
					d.History = d.History[len(d.History)-linkgraph.MaxHistory:]
				}
				if err := tx.PutDoc(d); err != nil {
					return err
				}
				si := int(d.Site) - 1
				if si < 0 || si >= len(w.sites) {
					continue
				}
				base, n := w.first[si], w.sites[si]
				var targets []linkgraph.Target
				switch {
				case first:
					for range 1 + r.IntN(2*w.linksPerPage) {
						if r.IntN(10) == 0 {
							newPages++
							u := fmt.Sprintf("http://s%07d.cl/n%d-%d.html", si, id, newPages)
							nid, _, err := tx.AddURLDoc(u, &linkgraph.Doc{Site: d.Site, Depth: d.Depth + 1, Found: id, State: linkgraph.StatePending, Anchors: []string{"new"}})
							if err != nil {
								return err
							}
							targets = append(targets, linkgraph.Target{Doc: nid, Site: d.Site})
						} else if t := uint64(base + zipfIn(n) + 1); t != e.DocID {
							targets = append(targets, linkgraph.Target{Doc: t, Site: d.Site})
						}
					}
					if _, err := tx.ReplaceOutLinks(e.DocID, d.Site, targets); err != nil {
						return err
					}
				case r.IntN(5) == 0:
					if t := uint64(base + zipfIn(n) + 1); t != e.DocID {
						if _, err := tx.AddOutLinks(e.DocID, d.Site, []linkgraph.Target{{Doc: t, Site: d.Site}}); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return g.Update(func(tx *linkgraph.Tx) error {
		b, _, err := tx.Batch(id)
		if err != nil {
			return err
		}
		b.Seeded = now
		return tx.PutBatch(b)
	})
}
