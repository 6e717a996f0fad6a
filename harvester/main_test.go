package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestMain lets the tests run this binary as the harvester itself, in a
// subprocess they can kill.
func TestMain(m *testing.M) {
	if os.Getenv("WIRE_HARVESTER_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const wait = 50 * time.Millisecond

// runCLI runs the app in-process and returns stdout, stderr and the exit
// code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	app := newApp()
	var out, errw bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errw
	err := app.RunContext(context.Background(), append([]string{"harvester"}, args...))
	if err != nil {
		fmt.Fprintf(&errw, "harvester: %v\n", err)
	}
	return out.String(), errw.String(), command.ExitCode(err)
}

func writeConfig(t *testing.T, path string, cfg config.Config) string {
	t.Helper()
	if err := os.WriteFile(path, config.Render(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func smallWeb(t *testing.T, hosts, pages int) (*ht.Web, []string) {
	var hs []*ht.Host
	for h := 0; h < hosts; h++ {
		host := &ht.Host{Name: fmt.Sprintf("h%d.test", h), Robots: &ht.Page{Body: []byte("User-agent: *\nDisallow: /p1\n")}, Pages: map[string]*ht.Page{}}
		for p := 0; p < pages; p++ {
			host.Pages[fmt.Sprintf("/p%d", p)] = &ht.Page{Body: []byte(fmt.Sprintf("page %d of %s", p, host.Name))}
		}
		hs = append(hs, host)
	}
	web := ht.Start(t, hs...)
	var urls []string
	for p := 0; p < pages; p++ {
		for h := 0; h < hosts; h++ {
			urls = append(urls, web.URL(fmt.Sprintf("h%d.test", h), fmt.Sprintf("/p%d", p)))
		}
	}
	return web, urls
}

func TestRunCollection(t *testing.T) {
	web, urls := smallWeb(t, 2, 3)
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, web.Config(wait))
	ht.WriteBatch(t, col.Batch(1).Dir, 1, ht.Entries(urls...))

	out, errs, code := runCLI(t, "run", "-c", dir, "-q")
	if code != command.ExitOK || !strings.Contains(out, "batch 000001: 6 URLs, 4 fetched") || !strings.Contains(out, "2 excluded by robots.txt") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if _, errs, code := runCLI(t, "run", "-c", dir); code != command.ExitNothingToDo {
		t.Errorf("nothing to do: exit %d, %s", code, errs)
	}
	if _, errs, code := runCLI(t, "run", "-c", dir, "--batch", "1"); code != command.ExitFailure || !strings.Contains(errs, "already harvested") {
		t.Errorf("already harvested: exit %d, %s", code, errs)
	}
	if _, _, code := runCLI(t, "run", "-c", dir, "--batch", "1", "--force", "-q"); code != command.ExitOK {
		t.Errorf("forced: exit %d", code)
	}
	lock, err := col.Lock("harvester")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, "run", "-c", dir); code != command.ExitLocked {
		t.Errorf("locked: exit %d", code)
	}
	lock.Release()
}

// TestRunDeadline: through the command line, --harvester-batch-deadline
// ends a batch whose hosts cannot be done in time; the command exits 0,
// says how many URLs it deferred, and the next batch (harvested right
// after) still keeps each host's wait from the first.
func TestRunDeadline(t *testing.T) {
	web, urls := smallWeb(t, 2, 40)
	dir := t.TempDir()
	cfg := web.Config(100 * time.Millisecond)
	col := ht.NewCollection(t, dir, cfg)
	ht.WriteBatch(t, col.Batch(1).Dir, 1, ht.Entries(urls[:60]...))
	ht.WriteBatch(t, col.Batch(2).Dir, 2, ht.Entries(urls[60:]...))
	start := time.Now()
	out, errs, code := runCLI(t, "run", "-c", dir, "-q", "--harvester-batch-deadline", "700ms")
	if code != command.ExitOK || !strings.Contains(out, "deferred to the next batch (ended by its deadline)") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("batch 1 took %v with a 700 ms deadline", d)
	}
	out, errs, code = runCLI(t, "run", "-c", dir, "-q")
	if code != command.ExitOK || !strings.Contains(out, "batch 000002: 20 URLs") {
		t.Fatalf("batch 2: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if err := web.CheckWait(100 * time.Millisecond); err != nil {
		t.Errorf("wait broken across the two batches:\n%v", err)
	}
}

func TestRunBatchDir(t *testing.T) {
	web, urls := smallWeb(t, 2, 2)
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000003")
	ht.WriteBatch(t, bdir, 3, ht.Entries(urls...))
	cfgFile := writeConfig(t, filepath.Join(tmp, "wire.toml"), web.Config(wait))
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "-q")
	if code != command.ExitOK || !strings.Contains(out, "batch 000003: 4 URLs") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !(&collection.Batch{ID: 3, Dir: bdir}).Done(collection.StageHarvested) {
		t.Error("not marked")
	}

	// Without --config, DIR/wire.toml is used; flags override it.
	bdir2 := filepath.Join(tmp, "000004")
	ht.WriteBatch(t, bdir2, 4, ht.Entries(urls...))
	cfg := web.Config(wait)
	cfg.Harvester.AllowPrivate = false
	writeConfig(t, filepath.Join(bdir2, "wire.toml"), cfg)
	out, errs, code = runCLI(t, "run", "--batch-dir", bdir2, "--harvester-allow-private", "-q")
	if code != command.ExitOK || !strings.Contains(out, "4 URLs, 2 fetched") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--batch", "1", "--batch-dir", "x"},
		{"run", "--force"},
		{"run", "--batch", "0"},
		{"run", "extra"},
		{"run", "--no-such-flag"},
		{"fetch"},
		{"run", "--batch-dir", t.TempDir(), "--harvester-wait", "soon"},
		{"run", "--follow", "--shard", "1/2"},
		{"run", "--follow", "--batch-dir", t.TempDir()},
		{"run", "--follow", "--batch", "1", "--force"},
	} {
		if _, errs, code := runCLI(t, args...); code != command.ExitUsage {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
	if _, errs, code := runCLI(t, "run", "-c", t.TempDir()); code != command.ExitUsage || !strings.Contains(errs, "not a collection") {
		t.Errorf("not a collection: exit %d, %s", code, errs)
	}
}

func TestFetchCommand(t *testing.T) {
	web, _ := smallWeb(t, 1, 1)
	url := web.URL("h0.test", "/p0")
	out, errs, code := runCLI(t, "fetch", "--harvester-allow-private", "--harvester-dns-server", web.DNSAddr, "--body", url)
	if code != command.ExitOK || !strings.HasPrefix(out, "HTTP/1.1 200 OK\n") || !strings.Contains(out, "Content-Type: text/html") ||
		!strings.Contains(out, "bytes stored from 127.0.0.1") || !strings.Contains(out, "page 0 of h0.test") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	_, errs, code = runCLI(t, "fetch", "--harvester-dns-server", web.DNSAddr, url)
	if code != command.ExitFailure || !strings.Contains(errs, "blocked-address 127.0.0.1") {
		t.Fatalf("blocked: exit %d, %s", code, errs)
	}

	// The URL is normalised as a batch URL would be (issue 37: a space
	// went raw into the request line, "GET /p0?a b HTTP/1.1").
	web.Reset()
	raw := "http://user:pw@h0.test:" + web.Port + "/p0?a b"
	out, errs, code = runCLI(t, "fetch", "--harvester-allow-private", "--harvester-dns-server", web.DNSAddr, raw)
	if code != command.ExitOK || !strings.Contains(out, "requested "+web.URL("h0.test", "/p0?a%20b")+" (the URL normalised)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if rs := web.Requests(); len(rs) != 1 || rs[0].Path != "/p0?a%20b" {
		t.Errorf("server saw %+v, want one request for /p0?a%%20b", rs)
	}
	_, errs, code = runCLI(t, "fetch", "--harvester-allow-private", "--harvester-dns-server", web.DNSAddr, "http://exa mple.test/")
	if code != command.ExitUsage || !strings.Contains(errs, `fetch: url "http://exa mple.test/": unparsable`) || !strings.Contains(errs, "nothing was done") {
		t.Errorf("unnormalisable URL: exit %d, %s", code, errs)
	}
}

// subprocess starts the harvester binary (this test binary) on a batch
// directory.
func subprocess(t *testing.T, bdir, cfgFile string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--batch-dir", bdir, "--config", cfgFile, "-q")
	cmd.Env = append(os.Environ(), "WIRE_HARVESTER_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// lines counts the complete lines of the partial fetch log.
func lines(bdir string) int {
	data, err := os.ReadFile(filepath.Join(bdir, harvester.PartialDir, fetchlog.LogFile))
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("\n")) - 2 // header
}

// TestKillAndResume kills the harvester (SIGKILL, then SIGINT) at several
// points, then lets a last run finish: every batch URL ends with exactly
// one fetch log line, and politeness holds across all the runs.
func TestKillAndResume(t *testing.T) {
	web, urls := smallWeb(t, 3, 12)
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000002")
	ht.WriteBatch(t, bdir, 2, ht.Entries(urls...))
	cfgFile := writeConfig(t, filepath.Join(tmp, "wire.toml"), web.Config(wait))

	for i, at := range []int{2, 9, 17} {
		cmd, stderr := subprocess(t, bdir, cfgFile)
		deadline := time.Now().Add(10 * time.Second)
		for lines(bdir) < at && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		if i == 2 {
			// SIGINT: a clean stop with a non-zero exit.
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != command.ExitInterrupted+int(syscall.SIGINT) || !strings.Contains(stderr.String(), "interrupted by SIGINT") {
				t.Fatalf("after SIGINT: %v, stderr %q", err, stderr.String())
			}
		} else {
			cmd.Process.Kill()
			cmd.Wait()
		}
		n := lines(bdir)
		if n < at || n >= len(urls) {
			t.Fatalf("round %d: %d lines logged before the stop (wanted to stop after %d of %d)", i, n, at, len(urls))
		}
	}
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "-q")
	if code != command.ExitOK || !strings.Contains(out, fmt.Sprintf("%d URLs", len(urls))) {
		t.Fatalf("final run: exit %d\n%s\n%s", code, out, errs)
	}
	recs, err := fetchlog.ReadFile(filepath.Join(bdir, collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.URL]++
	}
	for _, u := range urls {
		if seen[u] != 1 {
			t.Errorf("%s logged %d times", u, seen[u])
		}
	}
	if len(recs) != len(urls) {
		t.Errorf("%d lines for %d URLs", len(recs), len(urls))
	}
	if err := web.CheckWait(wait); err != nil {
		t.Errorf("politeness across restarts: %v", err)
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	warcs, _ := filepath.Glob(filepath.Join(bdir, collection.HarvestDir, "*.warc.gz"))
	if len(warcs) < 3 {
		t.Errorf("WARC files %v: want a new file per run", warcs)
	}
}

// TestShards runs a batch in two shards through the command line, then
// checks the merged harvest and the refusals.
func TestShards(t *testing.T) {
	web, urls := smallWeb(t, 4, 3)
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000008")
	ht.WriteBatch(t, bdir, 8, ht.Entries(urls...))
	cfgFile := writeConfig(t, filepath.Join(tmp, "wire.toml"), web.Config(wait))
	if _, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "--shard", "3/2"); code != command.ExitUsage {
		t.Errorf("--shard 3/2: exit %d, %s", code, errs)
	}
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "--shard", "1/2", "-q")
	if code != command.ExitOK || !strings.Contains(out, "batch 000008 shard 1/2: ") || strings.Contains(out, "merged") {
		t.Fatalf("shard 1: exit %d\n%s\n%s", code, out, errs)
	}
	if _, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "-q"); code != command.ExitFailure || !strings.Contains(errs, "shards 2 not done") {
		t.Errorf("unsharded run with shard 2 missing: exit %d, %s", code, errs)
	}
	out, errs, code = runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "--shard", "2/2", "-q")
	if code != command.ExitOK || !strings.Contains(out, "All shards done: merged into harvest/.") {
		t.Fatalf("shard 2: exit %d\n%s\n%s", code, out, errs)
	}
	recs, err := fetchlog.ReadFile(filepath.Join(bdir, collection.HarvestDir, fetchlog.LogFile))
	if err != nil || len(recs) != len(urls) {
		t.Fatalf("merged log: %d lines, %v", len(recs), err)
	}
	if !(&collection.Batch{Dir: bdir}).Done(collection.StageHarvested) {
		t.Error("batch not marked harvested")
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
}

// TestWARCSize: harvester.warc_max_bytes rolls the WARC files; every file
// reads back whole with gowarc.
func TestWARCSize(t *testing.T) {
	web, urls := smallWeb(t, 2, 6)
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000009")
	ht.WriteBatch(t, bdir, 9, ht.Entries(urls...))
	cfgFile := writeConfig(t, filepath.Join(tmp, "wire.toml"), web.Config(wait))
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "--harvester-warc-max-bytes", "2048", "-q")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	warcs, _ := filepath.Glob(filepath.Join(bdir, collection.HarvestDir, "*.warc.gz"))
	if len(warcs) < 4 {
		t.Errorf("%d WARC files, want several at 2 KiB each", len(warcs))
	}
	for _, w := range warcs {
		infos, err := warcio.Verify(w)
		if err != nil || len(infos) < 2 || infos[0].Type != "warcinfo" {
			t.Errorf("%s: %d records, %v", w, len(infos), err)
		}
		// Every file has its index, the ones closed on the way too.
		lines, err := cdxj.ReadFile(strings.TrimSuffix(w, warcio.Suffix) + cdxj.Suffix)
		captures := 0
		for _, in := range infos {
			if in.Type == "response" || in.Type == "revisit" {
				captures++
			}
		}
		if err != nil || len(lines) != captures {
			t.Errorf("%s: %d index lines for %d responses, %v", w, len(lines), captures, err)
		}
	}
}

// TestSIGTERM: SIGTERM while requests are in flight: they finish (within
// harvester.stop_timeout), are logged, and the process exits 1 soon
// after; the next run resumes.
func TestSIGTERM(t *testing.T) {
	var hs []*ht.Host
	var urls []string
	for h := 0; h < 3; h++ {
		host := &ht.Host{Name: fmt.Sprintf("slow%d.test", h), Pages: map[string]*ht.Page{}}
		for p := 0; p < 4; p++ {
			host.Pages[fmt.Sprintf("/p%d", p)] = &ht.Page{Body: []byte("slow page"), Delay: 700 * time.Millisecond}
		}
		hs = append(hs, host)
	}
	web := ht.Start(t, hs...)
	for p := 0; p < 4; p++ {
		for h := 0; h < 3; h++ {
			urls = append(urls, web.URL(fmt.Sprintf("slow%d.test", h), fmt.Sprintf("/p%d", p)))
		}
	}
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000010")
	ht.WriteBatch(t, bdir, 10, ht.Entries(urls...))
	cfg := web.Config(wait)
	cfg.Harvester.StopTimeout = config.Duration(5 * time.Second)
	cfgFile := writeConfig(t, filepath.Join(tmp, "wire.toml"), cfg)
	cmd, stderr := subprocess(t, bdir, cfgFile)
	deadline := time.Now().Add(10 * time.Second)
	for len(web.Started()) < 5 && time.Now().Before(deadline) { // robots.txt ×3, then pages
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 || !strings.Contains(stderr.String(), "interrupted by SIGTERM") {
		t.Fatalf("after SIGTERM: %v, stderr %q", err, stderr.String())
	}
	if took > 3*time.Second {
		t.Errorf("exited %v after SIGTERM; requests in flight needed at most 700 ms", took)
	}
	for _, r := range web.Started() {
		if r.Start.After(sent.Add(10 * time.Millisecond)) {
			t.Errorf("%s%s started after SIGTERM", r.Host, r.Path)
		}
	}
	if n := lines(bdir); n < 3 {
		t.Errorf("%d lines logged: the pages in flight at SIGTERM should be", n)
	}
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", cfgFile, "-q")
	if code != command.ExitOK || !strings.Contains(out, "this run (resumed)") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestStatusLine: the terminal status line says what the issue asks for,
// and log lines written meanwhile go above it.
func TestStatusLine(t *testing.T) {
	var buf bytes.Buffer
	s := newStatusLine(&buf, "harvesting shard 1/2")
	s.Start(100)
	s.Update(harvester.Stats{Total: 100, Logged: 20, Pages: 15, Bytes: 1 << 20, Errors: 1, HostsActive: 5, HostsWaiting: 9, HostsDone: 1, Elapsed: 5 * time.Second})
	s.Update(harvester.Stats{Total: 100, Logged: 40, Pages: 30, Bytes: 3 << 20, Errors: 2, HostsActive: 5, HostsWaiting: 7, HostsDone: 3, Elapsed: 10 * time.Second,
		Holding: []fetchlog.HostLeft{{Host: "www.a.cl", Left: 9}, {Host: "b.cl", Left: 4}}})
	fmt.Fprintf(s, "level=INFO msg=hello\n")
	s.Done(harvester.Stats{})
	// The rate is the last 10 s' (here 15 pages in 5 s), the ETA the
	// URLs left at that rate (60 at 4 a second).
	want := "\r\x1b[Kharvesting shard 1/2: 20/100 URLs, 15 pages, 1.0 MiB, 0.0 pages/s, ETA ?, hosts 5 active 9 waiting 1 done, 1 errors, 5s" +
		"\r\x1b[Kharvesting shard 1/2: 40/100 URLs, 30 pages, 3.0 MiB, 3.0 pages/s, ETA 15s, hosts 5 active 7 waiting 3 done, 2 errors, 10s; most left: www.a.cl 9, b.cl 4" +
		"\r\x1b[Klevel=INFO msg=hello\nharvesting shard 1/2: 40/100 URLs, 30 pages, 3.0 MiB, 3.0 pages/s, ETA 15s, hosts 5 active 7 waiting 3 done, 2 errors, 10s; most left: www.a.cl 9, b.cl 4" +
		"\r\x1b[K"
	if buf.String() != want {
		t.Errorf("terminal got\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestNetworkDown: through the binary, a resolver that refuses every
// query stops the harvest with exit code 5 and one line; nothing is
// logged, and a run with the resolver back harvests the batch with no
// DNS error.
func TestNetworkDown(t *testing.T) {
	web, urls := smallWeb(t, 12, 2)
	tmp := t.TempDir()
	bdir := filepath.Join(tmp, "000005")
	ht.WriteBatch(t, bdir, 5, ht.Entries(urls...))
	// A closed UDP port: every query is refused.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().String()
	pc.Close()
	down := web.Config(wait)
	down.Harvester.DNSServer = closed
	cmd, stderr := subprocess(t, bdir, writeConfig(t, filepath.Join(tmp, "down.toml"), down))
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != command.ExitNetworkDown {
		t.Fatalf("with the resolver down: %v, want exit %d; stderr %q", err, command.ExitNetworkDown, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "harvester: harvest batch 000005: network down: ") {
		t.Errorf("stderr %q, want one line naming the outage", msg)
	}
	if n := lines(bdir); n > 0 {
		t.Errorf("%d URLs logged during the outage", n)
	}
	out, errs, code := runCLI(t, "run", "--batch-dir", bdir, "--config", writeConfig(t, filepath.Join(tmp, "up.toml"), web.Config(wait)), "-q")
	if code != command.ExitOK || !strings.Contains(out, "24 URLs, 12 fetched") || !strings.Contains(out, "no errors") {
		t.Fatalf("with the resolver back: exit %d\n%s\n%s", code, out, errs)
	}
}

// BenchmarkRunStart is the start of `harvester run` as the benchmark
// (scripts/bench-harvester.sh) calls it, in the process: the command
// line, the full rendered config file, the settings, up to the batch
// directory (missing here, so the run ends there). It comes before the
// first request of every run: docs/harvester.md, "Figures".
func BenchmarkRunStart(b *testing.B) {
	dir := b.TempDir()
	cfgFile := filepath.Join(dir, "wire.toml")
	if err := os.WriteFile(cfgFile, config.Render(config.Defaults()), 0o644); err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, code := runCLI(t, "run", "--batch-dir", filepath.Join(dir, "none"), "--config", cfgFile, "-q"); code == command.ExitOK {
			b.Fatal("a run without a batch succeeded")
		}
	}
}
