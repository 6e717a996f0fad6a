package scripts_test

// The operations tests (issue 8, docs/operations.md): scripts/cron.sh
// (lock, logs, rotation, failures, kills, deadlines, overlapping
// cycles), `manager status`,
// recrawls with `seeder import`, stages on separate machines, harvester
// shards, and `manager report` rendered in headless Chromium. They run
// the real binaries against the synthetic test web on loopback, one
// binary build and one test web for all of them.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// opsEnv is what every operations test needs: the binaries and a
// running test web.
type opsEnv struct {
	bin   string
	web   *testweb.Web
	seeds string
}

// opsResult is the outcome of one command.
type opsResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func TestOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("operations tests crawl the test web; skipped in -short mode")
	}
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	e := &opsEnv{bin: stageBinaries(t)}
	web, err := testweb.New(testweb.Config{Seed: 11, Hosts: 50, MaxPages: 90})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	e.web = web
	e.seeds = filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(e.seeds, []byte(strings.Join(web.SeedURLs(10), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("cron", e.testCron)
	t.Run("cron-lock", e.testCronLock)
	t.Run("cron-failure", e.testCronFailure)
	t.Run("cron-kill", e.testCronKill)
	t.Run("cron-deadline", e.testCronDeadline)
	t.Run("cron-sigterm", e.testCronSigterm)
	t.Run("cron-overlap", e.testCronOverlap)

	// One crawl of four cycles for the tests that start from a crawl,
	// made when the first of them runs.
	baseDir, baseDone := filepath.Join(t.TempDir(), "base"), false
	base := func(t *testing.T) string {
		if !baseDone {
			e.newCollectionIn(t, baseDir)
			if r := e.cron(nil, "--cycles", "4", baseDir); r.code != 0 {
				t.Fatalf("cron.sh --cycles 4: exit %d\n%s", r.code, r.stderr)
			}
			baseDone = true
		}
		return baseDir
	}
	t.Run("report", func(t *testing.T) {
		out := e.testReport(t, base(t))
		// The long suite renders it (scripts/test.sh --long).
		t.Run("chromium", func(t *testing.T) {
			longtest.Need(t, "renders the report in headless Chromium")
			e.testReportRendering(t, out)
		})
	})
	t.Run("recrawl", func(t *testing.T) { e.testRecrawl(t, base(t)) })
	t.Run("separate-machines", e.testSeparateMachines)
	t.Run("two-shards", e.testTwoShards)
	t.Run("two-shards-parallel", e.testShardsParallel)
}

// run runs a program with extra environment and returns its result
// without failing the test.
func (e *opsEnv) run(env []string, name string, args ...string) opsResult {
	cmd := exec.Command(name, args...)
	// The tests of overlapping cycles want them from batch 2 on: the
	// serial start of crawl.sh (WIRE_SERIAL_BATCHES) is off unless a
	// test's env sets it (TestCrawlScript/serial-start does).
	cmd.Env = append(append(os.Environ(), "WIRE_BIN="+e.bin, "WIRE_SERIAL_BATCHES=0"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := opsResult{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// must runs a program and fails the test unless it exits 0.
func (e *opsEnv) must(t *testing.T, env []string, name string, args ...string) opsResult {
	t.Helper()
	r := e.run(env, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// wire runs one of the four binaries.
func (e *opsEnv) wire(t *testing.T, name string, args ...string) opsResult {
	t.Helper()
	return e.must(t, nil, filepath.Join(e.bin, name), args...)
}

// newCollection creates a collection for the test web, seeded, with
// extra settings flags.
func (e *opsEnv) newCollection(t *testing.T, extra ...string) string {
	t.Helper()
	return e.newCollectionIn(t, filepath.Join(t.TempDir(), "col"), extra...)
}

// newCollectionIn is newCollection in the directory col.
func (e *opsEnv) newCollectionIn(t *testing.T, col string, extra ...string) string {
	t.Helper()
	args := append([]string{"init", "--collection", col,
		"--harvester-allow-private", "--harvester-dns-server", e.web.DNSAddr(),
		"--harvester-wait", "20ms", "--harvester-connections", "30",
		// Every host of this web answers on 127.0.0.1: the per-address
		// floor would make one server of it (the e2e test checks it).
		"--harvester-address-wait", "0s",
		"--harvester-total-timeout", "10s",
		"--manager-batch-size", "300", "--scope-domains", "cl"}, extra...)
	e.wire(t, "seeder", args...)
	e.wire(t, "seeder", "add", "--collection", col, e.seeds)
	return col
}

// cron runs scripts/cron.sh.
func (e *opsEnv) cron(env []string, args ...string) opsResult {
	return e.run(env, "bash", append([]string{"cron.sh"}, args...)...)
}

// readLog returns the collection's cron.log.
func readLog(t *testing.T, col string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(col, collection.LogsDir, "cron.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// stampedLine is the shape of every line of cron.log.
var stampedLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (cron\[\d+\]: |(manager|harvester|gatherer|seeder) (\d{6}|-{6})\| )`)

func checkStamped(t *testing.T, log string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if !stampedLine.MatchString(line) {
			t.Errorf("cron.log line %d lacks a timestamp and a source: %q", i+1, line)
		}
	}
}

// batchState returns the last stage marker of each batch, e.g.
// "000001 seeded".
func batchStates(t *testing.T, col string) []string {
	t.Helper()
	c, err := collection.Open(col)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.BatchIDs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		b := c.Batch(id)
		st := collection.StageManaged
		for _, s := range []collection.Stage{collection.StageHarvested, collection.StageGathered, collection.StageSeeded} {
			if b.Done(s) {
				st = s
			}
		}
		out = append(out, fmt.Sprintf("%s %s", b.Name(), st))
	}
	return out
}

func (e *opsEnv) testCron(t *testing.T) {
	col := e.newCollection(t)
	r := e.cron(nil, "--cycles", "2", col)
	if r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("cron.sh printed output on success (cron would mail it):\n%s%s", r.stdout, r.stderr)
	}
	if got := batchStates(t, col); strings.Join(got, ",") != "000001 seeded,000002 seeded" {
		t.Errorf("batches after 2 cycles: %v", got)
	}
	log := readLog(t, col)
	checkStamped(t, log)
	for _, want := range []string{"]: start: collection=" + col + " cycles=2 deadline=-", "]: manager on batch 000001: start",
		"]: harvester on batch 000002: done in ", "]: seeder on batch 000002: done in ", "]: end: ok: 2 cycle(s)"} {
		if !strings.Contains(log, want) {
			t.Errorf("cron.log lacks %q:\n%s", want, log)
		}
	}

	// Status after a clean run.
	st := e.wire(t, "manager", "status", "--collection", col).stdout
	for _, want := range []string{"2 batches", "last batch  000002 seeded", "unfinished  none", "running     nothing", " fetched, ", "ended ", ": ok: 2 cycle(s)", "errors      none"} {
		if !strings.Contains(st, want) {
			t.Errorf("manager status lacks %q:\n%s", want, st)
		}
	}
	if n := strings.Count(st, "\n"); n > 24 {
		t.Errorf("manager status takes %d lines, more than one screen:\n%s", n, st)
	}

	// Rotation: a log over the limit is moved to cron.log.1 at the next
	// start. This run is serial (WIRE_OVERLAP=0, passed on to crawl.sh):
	// one stage at a time, its lines tagged by cron.sh.
	r = e.cron([]string{"WIRE_CRON_LOG_MAX=1000", "WIRE_CRON_LOG_KEEP=2", "WIRE_OVERLAP=0"}, "--cycles", "1", col)
	if r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	old, err := os.ReadFile(filepath.Join(col, collection.LogsDir, "cron.log.1"))
	if err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	if string(old) != log {
		t.Errorf("cron.log.1 is not the previous cron.log")
	}
	cur := readLog(t, col)
	if !strings.Contains(strings.SplitN(cur, "\n", 2)[0], "]: start: ") {
		t.Errorf("the new cron.log does not start with the run's start line:\n%s", cur)
	}
	checkStamped(t, cur)
	for _, want := range []string{"]: manager on batch 000003: start (cycle 1)\n", "]: harvester on batch 000003: start\n",
		"Z harvester 000003| ", "Z seeder 000003| ", "]: seeder on batch 000003: done in ", "]: end: ok: 1 cycle(s)\n"} {
		if !strings.Contains(cur, want) {
			t.Errorf("the serial run's cron.log lacks %q:\n%s", want, cur)
		}
	}
	if strings.Contains(cur, "beside: ") {
		t.Errorf("the serial run ran stages beside each other:\n%s", cur)
	}
	for i := 0; i < 3; i++ {
		e.cron([]string{"WIRE_CRON_LOG_MAX=100", "WIRE_CRON_LOG_KEEP=2"}, "--cycles", "0", col)
	}
	logs, _ := filepath.Glob(filepath.Join(col, collection.LogsDir, "cron.log*"))
	if len(logs) != 3 {
		t.Errorf("with WIRE_CRON_LOG_KEEP=2 want cron.log, .1, .2; got %v", logs)
	}
}

func (e *opsEnv) testCronLock(t *testing.T) {
	col := e.newCollection(t)
	lock, err := collection.LockPath(filepath.Join(col, collection.LocksDir, "cron.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	r := e.cron(nil, col)
	if r.code != 4 {
		t.Fatalf("cron.sh with the lock held: exit %d, want 4\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "another cron.sh holds") || !strings.Contains(r.stderr, fmt.Sprint(os.Getpid())) {
		t.Errorf("message does not say who holds the lock: %q", r.stderr)
	}
	if r.elapsed > 5*time.Second {
		t.Errorf("cron.sh took %v to give up; it should exit at once", r.elapsed)
	}
	if ids := batchStates(t, col); len(ids) != 0 {
		t.Errorf("cron.sh ran stages without the lock: %v", ids)
	}
	lock.Release()
	if r := e.cron(nil, col); r.code != 0 {
		t.Errorf("cron.sh after the lock was released: exit %d\n%s", r.code, r.stderr)
	}
}

func (e *opsEnv) testCronFailure(t *testing.T) {
	col := e.newCollection(t)
	e.wire(t, "manager", "run", "--collection", col)
	// A bad setting in the environment breaks the first stage to run, the
	// harvester on batch 1: cron.sh stops with its code and names both.
	// (--cycles 0: else the manager, started beside that harvester, fails
	// on the same setting, and either could be the first to fail.)
	// (WIRE_FOLLOW=0: no gatherer follows that harvest either; it would
	// fail on the same setting, now and then first.)
	r := e.cron([]string{"WIRE_HARVESTER_WAIT=soon", "WIRE_FOLLOW=0"}, "--cycles", "0", col)
	if r.code != 2 {
		t.Fatalf("cron.sh with a bad setting: exit %d, want the harvester's 2\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "FAILED: harvester on batch 000001 exited 2: ") || !strings.Contains(r.stderr, "harvester.wait") {
		t.Errorf("failure message does not name the stage, the batch and the cause: %q", r.stderr)
	}
	log := readLog(t, col)
	checkStamped(t, log)
	if !strings.Contains(log, "]: end: failed (exit 2) after 0 cycle(s); the next run continues from harvester on batch 000001") {
		t.Errorf("cron.log does not record the failure:\n%s", log)
	}
	st := e.wire(t, "manager", "status", "--collection", col).stdout
	if !strings.Contains(st, "FAILED: harvester on batch 000001") || !strings.Contains(st, "000001 managed → harvester") {
		t.Errorf("manager status does not show the failure and the waiting batch:\n%s", st)
	}
	// The next run continues with that batch and adds one cycle.
	if r := e.cron(nil, col); r.code != 0 {
		t.Fatalf("cron.sh after the failure: exit %d\n%s", r.code, r.stderr)
	}
	if got := batchStates(t, col); strings.Join(got, ",") != "000001 seeded,000002 seeded" {
		t.Errorf("batches after the rerun: %v", got)
	}
}

// slowEnv makes the harvester slow enough to be caught in the middle
// of a batch: a long wait between two requests to one host.
var slowEnv = []string{"WIRE_HARVESTER_WAIT=700ms"}

// startCron runs one fast cycle (batch 1: the seeds), then starts
// cron.sh with args in its own process group, with a slow harvester,
// and waits until the harvester has logged some URLs of batch 2 (or
// fails the test). env is added to (and overrides) slowEnv.
func (e *opsEnv) startCron(t *testing.T, col string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	return e.launchCron(t, col, env, args...)
}

// launchCron starts cron.sh as startCron does, without the first cycle.
func (e *opsEnv) launchCron(t *testing.T, col string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"cron.sh"}, append(args, col)...)...)
	cmd.Env = append(append(append(os.Environ(), "WIRE_BIN="+e.bin), slowEnv...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(col, collection.BatchesDir, "000002", "harvest.partial", fetchlog.LogFile)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if recs, err := fetchlog.ReadFile(partial); err == nil && len(recs) >= 5 {
			return cmd
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	t.Fatalf("the harvester did not start batch 2 within 60 s; cron.sh said:\n%s\ncron.log:\n%s", stderr.String(), readLog(t, col))
	return nil
}

func (e *opsEnv) testCronKill(t *testing.T) {
	col := e.newCollection(t, "--manager-max-pages-per-site", "40")
	cmd := e.startCron(t, col, nil)
	// Kill cron.sh and the harvester at once, as a reboot or the OOM
	// killer would.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	partial := filepath.Join(col, collection.BatchesDir, "000002", "harvest.partial")
	before, err := fetchlog.ReadFile(filepath.Join(partial, fetchlog.LogFile))
	if err != nil {
		t.Fatalf("no partial harvest after the kill: %v", err)
	}
	st := e.wire(t, "manager", "status", "--collection", col).stdout
	for _, want := range []string{"000002 managed", "harvest.partial", "did not finish (killed?)"} {
		if !strings.Contains(st, want) {
			t.Errorf("manager status after a kill lacks %q:\n%s", want, st)
		}
	}
	// The next run resumes the harvest of batch 2 and finishes it.
	r := e.cron(nil, "--cycles", "0", col)
	if r.code != 0 {
		t.Fatalf("cron.sh after the kill: exit %d\n%s", r.code, r.stderr)
	}
	if got := batchStates(t, col); strings.Join(got, ",") != "000001 seeded,000002 seeded" {
		t.Errorf("batches after the rerun: %v", got)
	}
	log := readLog(t, col)
	rerun := log[strings.LastIndex(log, "]: start: "):]
	if !strings.Contains(rerun, "]: harvester on batch 000002: start") || !strings.Contains(rerun, "]: seeder on batch 000002: done") {
		t.Errorf("the rerun did not continue batch 2:\n%s", rerun)
	}
	recs, err := fetchlog.ReadFile(filepath.Join(col, collection.BatchesDir, "000002", collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.URL] {
			t.Errorf("%s is in the fetch log twice", r.URL)
		}
		seen[r.URL] = true
	}
	for _, r := range before {
		if !seen[r.URL] {
			t.Errorf("%s, logged before the kill, is missing after the resume", r.URL)
		}
	}
	if len(recs) <= len(before) {
		t.Errorf("the resumed harvest logged %d URLs, the killed one %d", len(recs), len(before))
	}
}

func (e *opsEnv) testCronDeadline(t *testing.T) {
	col := e.newCollection(t, "--manager-max-pages-per-site", "40")
	// The deadline must fall inside batch 2's harvest, on a loaded
	// machine too (the package's crawls run side by side): batch 2 is
	// written before cron.sh starts, so that its run begins with the
	// harvester, and a wait of 2 s makes the batch at least 8 s long (the
	// shortest batch is four waits), twice the time to the deadline.
	slow := []string{"WIRE_HARVESTER_WAIT=2s"}
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run(slow, filepath.Join(e.bin, "manager"), "run", "--collection", col); r.code != 0 {
		t.Fatalf("manager run: exit %d\n%s", r.code, r.stderr)
	}
	cmd := e.launchCron(t, col, slow, "--for", "4s", "--grace", "20s")
	start := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cron.sh --for 4s: %v", err)
	}
	if el := time.Since(start); el > 26*time.Second {
		t.Errorf("cron.sh --for 4s took %v", el)
	}
	log := readLog(t, col)
	// The gatherer following the harvest (crawl.sh, WIRE_FOLLOW) is
	// stopped with it when it has started. Batch 2's manager ran before
	// cron.sh; the manager may have written batch 3 beside its harvest
	// (a cycle: with the harvester following the batches no thin-batch
	// minimum holds it back), which the harvester then holds too.
	if !regexp.MustCompile(`\]: end: deadline reached after [01] cycle\(s\): stopped harvester on batch 000002 after \d+s(; the next run resumes it|, gatherer on batch 000002 after \d+s; the next run resumes them)`).MatchString(log) {
		t.Errorf("cron.log does not say the deadline stopped the harvester:\n%s", log)
	}
	if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 managed" && got != "000001 seeded,000002 managed,000003 managed" {
		t.Errorf("batches after the deadline: %v", got)
	}
	// A deadline already past: nothing starts.
	r := e.cron(nil, "--until", "1 hour ago", col)
	if r.code != 0 || !strings.Contains(readLog(t, col), "]: end: deadline reached after 0 cycle(s), before the harvester stage") {
		t.Errorf("cron.sh --until '1 hour ago': exit %d\n%s", r.code, readLog(t, col))
	}
	// A bare time of day already past is tomorrow's.
	past := time.Now().Add(-time.Minute)
	if r := e.cron(nil, "--cycles", "0", "--until", past.Format("15:04"), col); r.code != 0 {
		t.Fatalf("cron.sh after the deadline: exit %d\n%s", r.code, r.stderr)
	}
	m := regexp.MustCompile(`\]: start: collection=\S+ cycles=0 deadline=(\S+)\n`).FindAllStringSubmatch(readLog(t, col), -1)
	if len(m) == 0 {
		t.Fatal("no start line")
	}
	if dl, err := time.Parse(time.RFC3339, m[len(m)-1][1]); err != nil || dl.Sub(past) < 23*time.Hour || dl.Sub(past) > 25*time.Hour {
		t.Errorf("--until %s started at %v: deadline %v (%v), want tomorrow", past.Format("15:04"), time.Now(), dl, err)
	}
	if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 seeded" && got != "000001 seeded,000002 seeded,000003 seeded" {
		t.Errorf("batches after the rerun: %v", got)
	}
}

func (e *opsEnv) testCronSigterm(t *testing.T) {
	col := e.newCollection(t, "--manager-max-pages-per-site", "40")
	cmd := e.startCron(t, col, nil)
	// SIGTERM to cron.sh alone, as `kill PID` or a shutdown would send it:
	// it stops the harvester, waits for it and says so.
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("cron.sh after SIGTERM: %v, want exit 143", err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("cron.sh took %v to stop", el)
	}
	log := readLog(t, col)
	for _, want := range []string{"]: received SIGTERM: stopping harvester on batch 000002", "]: end: interrupted by SIGTERM after 1 cycle(s); the next run continues from harvester on batch 000002"} {
		if !strings.Contains(log, want) {
			t.Errorf("cron.log lacks %q:\n%s", want, log)
		}
	}
	st := e.wire(t, "manager", "status", "--collection", col).stdout
	if !strings.Contains(st, "running     nothing") {
		t.Errorf("a stage still runs after cron.sh stopped:\n%s", st)
	}
	if r := e.cron(nil, "--cycles", "0", col); r.code != 0 {
		t.Fatalf("cron.sh after SIGTERM: exit %d\n%s", r.code, r.stderr)
	}
	if got := batchStates(t, col); strings.Join(got, ",") != "000001 seeded,000002 seeded" {
		t.Errorf("batches after the rerun: %v", got)
	}
}

// cronEvent is a line of cron.log that tells of a stage and its batch:
// cron.sh's start and end lines ("cron[PID]: STAGE on batch NNNNNN: …")
// and the stages' own lines ("STAGE NNNNNN| …").
var cronEvent = regexp.MustCompile(`^\S+ (?:cron\[\d+\]: (manager|harvester|gatherer|seeder) on batch (\d{6}): (start|done)|(manager|harvester|gatherer|seeder) (\d{6})\| )`)

// overlaps returns the first line of log showing the gatherer or the
// seeder at work on batch N between the start and the end of the
// harvester on batch N+1, or "".
func overlaps(log string) string {
	harvesting := -1
	for _, line := range strings.Split(log, "\n") {
		m := cronEvent.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		stage, batch := m[1]+m[4], m[2]+m[5]
		n, _ := strconv.Atoi(batch)
		switch {
		case stage == "harvester" && m[3] == "start":
			harvesting = n
		case stage == "harvester" && m[3] == "done":
			harvesting = -1
		case (stage == "gatherer" || stage == "seeder") && harvesting > 0 && n == harvesting-1:
			return line
		}
	}
	return ""
}

// testCronOverlap: cron.sh runs crawl.sh, so its cycles overlap (the
// gatherer or the seeder of batch N at work while the harvester fetches
// batch N+1); a deadline stops an overlapped run cleanly (exit 0, no
// stage left running) and the next run finishes what it left.
func (e *opsEnv) testCronOverlap(t *testing.T) {
	// Batches smaller than the frontier, so that the manager has a batch
	// N+1 to write beside the harvest of batch N.
	col := e.newCollection(t, "--manager-batch-size", "60", "--manager-max-pages-per-site", "40")
	r := e.cron(nil, "--cycles", "4", col)
	if r.code != 0 {
		t.Fatalf("cron.sh --cycles 4: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("cron.sh printed output on success:\n%s%s", r.stdout, r.stderr)
	}
	want := "000001 seeded,000002 seeded,000003 seeded,000004 seeded"
	if got := batchStates(t, col); strings.Join(got, ",") != want {
		t.Errorf("batches after 4 cycles: %v", got)
	}
	log := readLog(t, col)
	checkStamped(t, log)
	if line := overlaps(log); line == "" {
		t.Errorf("no gatherer or seeder line of batch N between the start and the end of the harvester on batch N+1:\n%s", log)
	} else {
		t.Logf("overlap: %s", line)
	}
	if !strings.Contains(log, "]: end: ok: 4 cycle(s)") {
		t.Errorf("cron.log lacks the end line of 4 cycles:\n%s", log)
	}

	// Slow harvests and a deadline of 3 s: three cycles cannot be done.
	r = e.cron(slowEnv, "--cycles", "3", "--for", "3s", "--grace", "20s", col)
	if r.code != 0 {
		t.Fatalf("cron.sh --for 3s: exit %d, want 0 (deadline)\n%s", r.code, r.stderr)
	}
	if r.elapsed > 25*time.Second {
		t.Errorf("cron.sh --for 3s took %v", r.elapsed)
	}
	log = readLog(t, col)
	run := log[strings.LastIndex(log, "]: start: "):]
	if !regexp.MustCompile(`\]: end: deadline reached after \d cycle\(s\)(: stopped .+ after \d+s; the next run resumes (it|them)|, before the \w+ stage; the next run continues from there)\n$`).MatchString(run) {
		t.Errorf("the run with a deadline did not end on it:\n%s", run)
	}
	t.Logf("deadline: %s", run[strings.LastIndex(strings.TrimSuffix(run, "\n"), "\n")+1:])
	unfinished := 0
	for _, s := range batchStates(t, col) {
		if !strings.HasSuffix(s, " seeded") {
			unfinished++
		}
	}
	if unfinished == 0 {
		t.Errorf("the deadline left nothing unfinished: %v\n%s", batchStates(t, col), run)
	}
	if st := e.wire(t, "manager", "status", "--collection", col).stdout; !strings.Contains(st, "running     nothing") {
		t.Errorf("a stage still runs after the deadline:\n%s", st)
	}
	// The next run finishes every batch the deadline left.
	if r := e.cron(nil, "--cycles", "0", col); r.code != 0 {
		t.Fatalf("cron.sh after the deadline: exit %d\n%s", r.code, r.stderr)
	}
	for _, s := range batchStates(t, col) {
		if !strings.HasSuffix(s, " seeded") {
			t.Errorf("after the rerun: %s", s)
		}
	}
	if log := readLog(t, col); !strings.HasSuffix(log, "]: end: ok: 0 cycle(s)\n") {
		t.Errorf("the rerun did not end well:\n%s", log[strings.LastIndex(log, "]: start: "):])
	}
}
