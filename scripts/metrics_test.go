package scripts_test

// The metrics and the full-disk rule of issue 22 (docs/operations.md,
// "Metrics" and "A full disk"), through the real binaries and scripts:
// every stage run writes its STAGE.prom (parsed here with Prometheus'
// own text parser), a harvest serves the same live on loopback, and a
// collection on a small file system the test mounts itself stops every
// stage at collection.min_free with exit code 7, resumably.

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/metrics"
	"github.com/wirecrawl/wire/pkg/testweb"
)

func TestMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("the metrics tests crawl the test web; skipped in -short mode")
	}
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	bin := stageBinaries(t)
	// Every answer takes 40 ms: a batch of 300 URLs on 20 hosts takes
	// seconds, time to scrape it live and to fill the disk under it.
	e := newCrawlEnv(t, bin, testweb.Config{Seed: 5, Hosts: 20, MaxPages: 60, Latency: 40 * time.Millisecond}, 8)
	t.Run("files", e.testMetricFiles)
	t.Run("live", e.testMetricsLive)
	t.Run("disk-full", e.testDiskFull)
}

// stages are the four stages, the names of their metric files.
var stages = []string{"manager", "harvester", "gatherer", "seeder"}

// testMetricFiles crawls two cycles with metrics.dir set and reads the
// four files.
func (e *opsEnv) testMetricFiles(t *testing.T) {
	col := e.newCollection(t, "--metrics-dir", "metrics")
	start := float64(time.Now().Unix())
	if r := e.crawl(nil, col, "2"); r.code != 0 {
		t.Fatalf("crawl.sh: exit %d\n%s", r.code, r.stderr)
	}
	dir := filepath.Join(col, "metrics")
	names := map[string]bool{}
	for _, stage := range stages {
		mfs, err := metrics.ReadFile(filepath.Join(dir, metrics.FileName(stage)))
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			names[mf.GetName()] = true
			for _, m := range mf.GetMetric() {
				if l := label(m, "stage"); l != stage {
					t.Errorf("%s.prom: %s has stage %q", stage, mf.GetName(), l)
				}
				if l := label(m, "collection"); l != col {
					t.Errorf("%s.prom: %s has collection %q, want %q", stage, mf.GetName(), l, col)
				}
			}
		}
		v := func(name string, labels ...string) float64 { return metrics.Value(mfs, "wire_"+name, labels...) }
		if ts := v("stage_last_success_timestamp_seconds"); ts < start || ts > float64(time.Now().Unix()+1) {
			t.Errorf("%s: last success %v, want between %v and now", stage, ts, start)
		}
		for _, name := range []string{"stage_wall_seconds", "stage_peak_memory_bytes", "collection_disk_bytes", "filesystem_free_bytes", "filesystem_size_bytes", "collection_min_free_bytes", "batch_urls", "stage_batch"} {
			if v(name) <= 0 {
				t.Errorf("%s: %s = %v, want > 0", stage, name, v(name))
			}
		}
		if cpu := v("stage_cpu_seconds", "mode", "user") + v("stage_cpu_seconds", "mode", "system"); cpu <= 0 {
			t.Errorf("%s: no CPU time", stage)
		}
		if v("stage_batch") != 2 || v("stage_exit_code") != 0 {
			t.Errorf("%s: batch %v exit code %v, want batch 2, exit 0", stage, v("stage_batch"), v("stage_exit_code"))
		}
		if mfs["wire_stage_cpu_seconds"].GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s: wire_stage_cpu_seconds is a %v", stage, mfs["wire_stage_cpu_seconds"].GetType())
		}
		switch stage {
		case "harvester":
			for _, name := range []string{"harvest_run_pages_total", "harvest_run_bytes_total", "harvest_run_requests_total", "harvest_pages", "batch_bytes", "harvest_hosts_total"} {
				if v(name) <= 0 {
					t.Errorf("harvester: %s = %v, want > 0", name, v(name))
				}
			}
			if v("harvest_hosts", "state", "done") <= 0 || mfs["wire_harvest_hosts_given_up"] == nil {
				t.Errorf("harvester: hosts done %v, given up %v", v("harvest_hosts", "state", "done"), mfs["wire_harvest_hosts_given_up"])
			}
			if mfs["wire_harvest_run_pages_total"].GetType() != dto.MetricType_COUNTER {
				t.Errorf("harvester: wire_harvest_run_pages_total is a %v", mfs["wire_harvest_run_pages_total"].GetType())
			}
		case "seeder":
			if mfs["wire_frontier_urls"] == nil || v("seeder_docs_total") <= 0 {
				t.Errorf("seeder: frontier %v, docs %v", mfs["wire_frontier_urls"], v("seeder_docs_total"))
			}
		case "gatherer":
			if v("gatherer_docs_total") <= 0 {
				t.Errorf("gatherer: no docs")
			}
		case "manager":
			if v("manager_candidates") <= 0 {
				t.Errorf("manager: no candidates")
			}
		}
	}

	// The sample alerting rules name only metrics the stages write.
	rules, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(rules), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "summary:") || strings.HasPrefix(line, "description:") {
			continue
		}
		for _, name := range regexp.MustCompile(`\bwire_[a-z_]+`).FindAllString(line, -1) {
			if !names[name] {
				t.Errorf("prometheus/alerts.yml names %s, which no stage writes", name)
			}
		}
	}

	// A failed run writes its exit code and keeps the last success.
	before, err := metrics.ReadFile(filepath.Join(dir, "gatherer.prom"))
	if err != nil {
		t.Fatal(err)
	}
	r := e.run(nil, filepath.Join(e.bin, "gatherer"), "run", "--collection", col, "--batch", "2")
	if r.code != command.ExitFailure {
		t.Fatalf("gatherer run --batch 2 again: exit %d, want 1\n%s", r.code, r.stderr)
	}
	after, err := metrics.ReadFile(filepath.Join(dir, "gatherer.prom"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := metrics.Value(after, metrics.LastSuccess), metrics.Value(before, metrics.LastSuccess); got != want || want == 0 {
		t.Errorf("after a failed run: last success %v, want %v kept", got, want)
	}
	if got := metrics.Value(after, "wire_stage_exit_code"); got != 1 {
		t.Errorf("after a failed run: exit code %v, want 1", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gatherer.prom.tmp")); err == nil {
		t.Error("a temporary file is left in the metrics directory")
	}
}

// label is the value of the label name of m.
func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// servingMetrics matches the harvester's log line naming its live
// metrics.
var servingMetrics = regexp.MustCompile(`msg="serving metrics" url=(http://\S+/metrics)`)

// testMetricsLive scrapes a harvest while it runs.
func (e *opsEnv) testMetricsLive(t *testing.T) {
	// The seeds' batch first; the next batch has every host's links, and
	// a wait of 300 ms makes its harvest last seconds.
	col := e.newCollection(t)
	if r := e.crawl(nil, col, "1"); r.code != 0 {
		t.Fatalf("crawl.sh: exit %d\n%s", r.code, r.stderr)
	}
	e.wire(t, "manager", "run", "--collection", col)
	cmd := exec.Command(filepath.Join(e.bin, "harvester"), "run", "--verbose", "--collection", col, "--metrics-listen", "0", "--harvester-wait", "300ms")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	url := ""
	for url == "" && sc.Scan() {
		if m := servingMetrics.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	go io.Copy(io.Discard, stderr)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("metrics served at %q, want loopback", url)
	}
	var pages []float64
	statusSeen := false
	for i := 0; i < 40; i++ {
		if i == 10 {
			// manager status shows the running harvest as its status
			// line would (progress.json).
			st := e.run(nil, filepath.Join(e.bin, "manager"), "status", "--collection", col, "--no-graph")
			statusSeen = regexp.MustCompile(`(?m)^harvest +000002: \d+/\d+ URLs, .* pages/s \(last \d+s\), ETA .*; most left: \S+ \d+`).MatchString(st.stdout)
			if !statusSeen {
				t.Errorf("manager status during the harvest:\n%s", st.stdout)
			}
		}
		resp, err := http.Get(url)
		if err != nil {
			break // the run is over
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("parse the live metrics: %v", err)
		}
		pages = append(pages, metrics.Value(mfs, "wire_harvest_run_pages_total"))
		if mfs["wire_stage_start_timestamp_seconds"] == nil || (pages[len(pages)-1] > 0 && mfs["wire_harvest_hosts"] == nil) {
			t.Errorf("live metrics lack the hosts or the start: %v", mfs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("harvester: %v", err)
	}
	if !statusSeen {
		t.Error("the harvest ended before manager status was asked")
	}
	if _, err := os.Stat(filepath.Join(col, "batches", "000002", "harvest", fetchlog.ProgressFile)); err == nil {
		t.Error("progress.json published with the harvest")
	}
	if len(pages) < 3 || pages[len(pages)-1] <= pages[0] {
		t.Errorf("pages seen live: %v, want a growing count over three scrapes or more", pages)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the metrics are still served after the run")
	}
}

// mountSmallFS mounts a tmpfs of size bytes on a new directory, or
// skips the test saying why.
func mountSmallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs for a small file system (%v): needs root or CAP_SYS_ADMIN; the full-disk test is skipped", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// testDiskFull runs the stages on a collection in a 32 MiB file system.
func (e *opsEnv) testDiskFull(t *testing.T) {
	fs := mountSmallFS(t, "32m")
	col := e.newCollectionIn(t, filepath.Join(fs, "col"), "--collection-min-free", "4MiB")
	bin := func(name string) string { return filepath.Join(e.bin, name) }
	full := []string{"WIRE_COLLECTION_MIN_FREE=1TiB"}
	checkFull := func(what string, r opsResult) {
		t.Helper()
		if r.code != command.ExitDiskFull || !strings.Contains(r.stderr, "disk full") || !strings.Contains(r.stderr, "gatherer compact") {
			t.Errorf("%s with the disk full: exit %d, want %d and a message saying what to do\n%s", what, r.code, command.ExitDiskFull, r.stderr)
		}
	}

	// Before they start: the manager (no batch written), and after one
	// harvest the gatherer; the seeder after one gathering. The seeds'
	// batch first: batch 2 has every host's links.
	if r := e.crawl(nil, col, "1"); r.code != 0 {
		t.Fatalf("crawl.sh: exit %d\n%s", r.code, r.stderr)
	}
	checkFull("manager run", e.run(full, bin("manager"), "run", "--collection", col))
	if ids, _ := (&collection.Collection{Dir: col}).BatchIDs(); len(ids) != 1 {
		t.Fatalf("the manager wrote batches %v on a full disk", ids)
	}
	e.wire(t, "manager", "run", "--collection", col)

	// Mid-batch: a file fills the disk under the harvester once it has
	// logged a few pages; it stops within a second or two, resumably.
	// A wait of 1 s: a host's next page comes a second after its first, so
	// the batch is not over before the disk fills (at 300 ms it was, now
	// and then, beside the package's other crawls).
	cmd := exec.Command(bin("harvester"), "run", "--collection", col, "--harvester-wait", "1s")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(col, "batches", "000002", "harvest.partial", fetchlog.LogFile)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if recs, _ := fetchlog.ReadFile(logPath); len(recs) >= 10 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	sp, err := collection.StatSpace(fs)
	if err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(fs, "filler")
	if err := os.WriteFile(filler, make([]byte, sp.Free-3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	filled := time.Now()
	err = cmd.Wait()
	stopped := time.Since(filled)
	if code := cmd.ProcessState.ExitCode(); code != command.ExitDiskFull {
		t.Fatalf("harvester with the disk filled mid-batch: %v, exit %d, want %d\n%s", err, code, command.ExitDiskFull, stderr.String())
	}
	if stopped > 3*time.Second {
		t.Errorf("the harvester stopped %v after the disk filled, want within about a second", stopped)
	}
	if !strings.Contains(stderr.String(), "disk full") || !strings.Contains(stderr.String(), "gatherer compact") {
		t.Errorf("harvester message: %s", stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(logPath), "stopped.json"))
	if err != nil || !strings.Contains(string(data), `"why":"disk-full"`) {
		t.Errorf("stopped.json: %s %v", data, err)
	}
	before, _ := fetchlog.ReadFile(logPath)
	st := e.run(nil, bin("manager"), "status", "--collection", col, "--no-graph")
	if !strings.Contains(st.stdout, "disk full") {
		t.Errorf("manager status does not say the harvest stopped for a full disk:\n%s", st.stdout)
	}

	// Space freed, the rerun finishes the batch: every URL once.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.wire(t, "harvester", "run", "--collection", col)
	recs, err := fetchlog.ReadFile(filepath.Join(col, "batches", "000002", "harvest", fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.URL]++
		if seen[r.URL] > 1 {
			t.Errorf("%s logged twice", r.URL)
		}
	}
	if len(before) == 0 || len(before) >= len(recs) {
		t.Errorf("the stopped run logged %d of %d URLs", len(before), len(recs))
	}

	checkFull("gatherer run", e.run(full, bin("gatherer"), "run", "--collection", col))
	e.wire(t, "gatherer", "run", "--collection", col)
	checkFull("seeder run", e.run(full, bin("seeder"), "run", "--collection", col))
	e.wire(t, "seeder", "run", "--collection", col)

	// cron.sh says "disk full".
	r := e.cron(full, "--cycles", "1", col)
	if r.code != command.ExitDiskFull || !strings.Contains(r.stderr, "DISK FULL: manager") {
		t.Errorf("cron.sh with the disk full: exit %d, want %d and a DISK FULL line\n%s", r.code, command.ExitDiskFull, r.stderr)
	}
	if log := readLog(t, col); !strings.Contains(log, "end: disk full") {
		t.Errorf("cron.log does not end with 'disk full':\n%s", log)
	}
}
