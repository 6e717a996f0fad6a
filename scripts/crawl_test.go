package scripts_test

// Tests of scripts/crawl.sh's overlapping cycles (docs/architecture.md,
// "Overlapping cycles"), through the real binaries and the test web on
// loopback: an overlapped crawl to an empty frontier, CYCLES, a failing
// stage in the foreground and in the background, SIGTERM, and
// WIRE_OVERLAP=0.

import (
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
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// newCrawlEnv starts a test web for the crawl.sh tests, with the
// binaries in bin.
func newCrawlEnv(t *testing.T, bin string, web testweb.Config, seeds int) *opsEnv {
	t.Helper()
	e := &opsEnv{bin: bin}
	w, err := testweb.New(web)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	e.web = w
	e.seeds = filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(e.seeds, []byte(strings.Join(w.SeedURLs(seeds), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// crawl runs scripts/crawl.sh.
func (e *opsEnv) crawl(env []string, args ...string) opsResult {
	return e.run(env, "bash", append([]string{"crawl.sh"}, args...)...)
}

// besideHarvester is a log line of crawl.sh showing an older batch taken
// in while the harvester fetches a newer one.
var besideHarvester = regexp.MustCompile(`(gatherer|seeder) on batch (\d{6}): start \(bg; beside: harvester on batch (\d{6})`)

// harvestedBy tells whether batch b's harvest had ended (its marker's
// finished time) by the end of the second of a crawl.sh log line (its
// start, "2006-01-02T15:04:05Z ...").
func harvestedBy(t *testing.T, col, b, line string) bool {
	t.Helper()
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(strings.Fields(line + " x")[0]))
	if err != nil {
		t.Errorf("crawl.sh log line without a time: %q", line)
		return false
	}
	id, _ := strconv.Atoi(b)
	var m struct {
		Finished time.Time `json:"finished"`
	}
	cl, err := collection.Open(col)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Batch(id).Summary(collection.StageHarvested, &m); err != nil {
		return false
	}
	return m.Finished.Before(at.Add(time.Second))
}

// testOverlap crawls a small test web of its own to an empty frontier
// with overlapping cycles and checks the collection and the server's
// records.
func testOverlap(t *testing.T, bin string) {
	e := newCrawlEnv(t, bin, testweb.Config{Seed: 3, Hosts: 30, MaxPages: 60}, 8)
	// One address for every host: no floor between them (the audit
	// checks what the settings ask).
	col := e.newCollection(t, "--manager-batch-size", "60", "--harvester-address-wait", "0")
	start := time.Now()
	r := e.crawl(nil, col, "1000")
	if r.code != 0 {
		t.Fatalf("crawl.sh: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("crawl.sh to an empty frontier in %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(r.stderr, "frontier is empty after ") || !strings.Contains(r.stderr, "crawl.sh: done\n") {
		t.Errorf("crawl.sh did not end on an empty frontier:\n%s", r.stderr)
	}
	// Batch 1 holds every seed: the manager, beside its harvest, finds
	// nothing, and runs again once the seeder has taken batch 1 in.
	retry := regexp.MustCompile(`(?s)cycle 2: manager on batch 000002: nothing to schedule while 1 batch\(es\) are not seeded.*seeder on batch 000001: done.*cycle 2: manager on batch 000002: start.*cycle 2: manager on batch 000002: done`)
	if !retry.MatchString(r.stderr) {
		t.Errorf("the manager's empty frontier with batch 1 in flight did not end in a retry after its seeder:\n%s", r.stderr)
	}
	m := besideHarvester.FindAllStringSubmatchIndex(r.stderr, -1)
	if len(m) == 0 {
		t.Errorf("no gatherer or seeder ran beside the harvester:\n%s", r.stderr)
	}
	for _, x := range m {
		stage, b, hb := r.stderr[x[2]:x[3]], r.stderr[x[4]:x[5]], r.stderr[x[6]:x[7]]
		// The same batch: the harvester has written its marker and is
		// exiting, or the gatherer follows it. A newer batch: the
		// following harvester holds several and published that one
		// first (its summary line came before the start).
		// (crawl.sh's log says the second: the batch's harvest must
		// have ended within it.)
		if b > hb && !harvestedBy(t, col, b, r.stderr[strings.LastIndexByte(r.stderr[:x[0]], '\n')+1:x[0]]) {
			t.Errorf("%s of batch %s beside the harvester of batch %s: want an older batch, the same, or one already harvested", stage, b, hb)
		}
	}
	// The gatherer followed harvests in flight (WIRE_FOLLOW=1, the
	// default) and finished them.
	if n := len(regexp.MustCompile(`gatherer on batch \d{6}: done in \d+s, following its harvest`).FindAllString(r.stderr, -1)); n == 0 {
		t.Errorf("no gatherer followed a harvest to its end:\n%s", r.stderr)
	}
	// Two stages that open graph.db never ran at once: the log's starts
	// and ends, replayed.
	checkExclusion(t, r.stderr)
	if strings.Contains(r.stdout, "\nbatch ") || !strings.Contains(r.stdout, "harvester ") {
		t.Errorf("stage output is not tagged with the stage and batch:\n%.2000s", r.stdout)
	}
	for _, s := range batchStates(t, col) {
		if !strings.HasSuffix(s, " seeded") {
			t.Errorf("batch not seeded: %s", s)
		}
	}
	if got := e.run(nil, filepath.Join(e.bin, "manager"), "run", "--collection", col); got.code != 3 {
		t.Errorf("manager run after the crawl: exit %d, want 3 (frontier empty)\n%s", got.code, got.stderr)
	}
	e.wire(t, "seeder", "check", "--collection", col)
	cfg, err := config.Load(config.Sources{File: filepath.Join(col, config.FileName), NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.web.Requests()); n < 200 {
		t.Errorf("only %d requests served", n)
	}
	if rep := checkPoliteness(t, e.web, cfg); !rep.OK() {
		explainGap(t, col, rep)
	}
}

// stageLine is a start or end line of crawl.sh.
var stageLine = regexp.MustCompile(`(?m)(manager|harvester|gatherer|seeder) on batch (\d{6}): (start|done|nothing)`)

// checkExclusion replays crawl.sh's log: never the manager beside the
// seeder, never two runs of one stage at once.
func checkExclusion(t *testing.T, log string) {
	t.Helper()
	run := map[string]string{}
	for _, m := range stageLine.FindAllStringSubmatch(log, -1) {
		stage, b, ev := m[1], m[2], m[3]
		if ev != "start" {
			delete(run, stage)
			continue
		}
		if other, ok := run[stage]; ok {
			t.Errorf("%s started on batch %s while it ran on batch %s", stage, b, other)
		}
		other := map[string]string{"manager": "seeder", "seeder": "manager"}[stage]
		if ob, ok := run[other]; other != "" && ok {
			t.Errorf("%s started on batch %s while the %s ran on batch %s", stage, b, other, ob)
		}
		run[stage] = b
	}
}

// TestCrawlScript: an overlapped crawl to an empty frontier, CYCLES,
// WIRE_OVERLAP=0, a failing stage in the foreground and in the
// background, SIGTERM and Ctrl-C.
func TestCrawlScript(t *testing.T) {
	if testing.Short() {
		t.Skip("crawl.sh tests crawl the test web; skipped in -short mode")
	}
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	bin := stageBinaries(t)
	t.Run("overlap", func(t *testing.T) { testOverlap(t, bin) })
	e := newCrawlEnv(t, bin, testweb.Config{Seed: 5, Hosts: 30, MaxPages: 60}, 10)

	t.Run("cycles", func(t *testing.T) {
		col := e.newCollection(t, "--manager-batch-size", "40")
		if r := e.crawl(nil, col, "0"); r.code != 0 || len(batchStates(t, col)) != 0 {
			t.Fatalf("crawl.sh COL 0: exit %d, batches %v\n%s", r.code, batchStates(t, col), r.stderr)
		}
		r := e.crawl(nil, col, "2")
		if r.code != 0 {
			t.Fatalf("crawl.sh COL 2: exit %d\n%s", r.code, r.stderr)
		}
		if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 seeded" {
			t.Errorf("crawl.sh COL 2 left %s, want two batches seeded", got)
		}
		checkExclusion(t, r.stderr)
		// Serial: one stage at a time, one more batch, output untagged.
		r = e.crawl([]string{"WIRE_OVERLAP=0"}, col, "1")
		if r.code != 0 {
			t.Fatalf("WIRE_OVERLAP=0 crawl.sh COL 1: exit %d\n%s", r.code, r.stderr)
		}
		if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 seeded,000003 seeded" {
			t.Errorf("WIRE_OVERLAP=0 crawl.sh COL 1 left %s", got)
		}
		if strings.Contains(r.stderr, "beside") || strings.Contains(r.stdout, "| ") {
			t.Errorf("WIRE_OVERLAP=0 ran stages beside each other or tagged their output:\n%s", r.stderr)
		}
		want := []string{"manager 000003", "harvester 000003", "gatherer 000003", "seeder 000003"}
		var got []string
		for _, m := range stageLine.FindAllStringSubmatch(r.stderr, -1) {
			if m[3] == "start" {
				got = append(got, m[1]+" "+m[2])
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("WIRE_OVERLAP=0 ran %v, want %v", got, want)
		}
		if r := e.crawl([]string{"WIRE_OVERLAP=2"}, col, "1"); r.code != 2 {
			t.Errorf("WIRE_OVERLAP=2: exit %d, want 2", r.code)
		}
		if r := e.crawl(nil, col, "x"); r.code != 2 {
			t.Errorf("CYCLES x: exit %d, want 2", r.code)
		}
	})

	t.Run("serial-start", func(t *testing.T) { testSerialStart(t, e) })

	t.Run("harvester-fails", func(t *testing.T) {
		col := e.newCollection(t)
		e.wire(t, "manager", "run", "--collection", col)
		// The bad setting fails every stage that loads the config: with
		// the serial start (WIRE_SERIAL_BATCHES=4) no
		// manager runs beside the harvester, so the harvester fails
		// alone (with overlap, the next batch's manager failed first
		// now and then, and crawl.sh named it instead).
		// WIRE_FOLLOW=0: no gatherer follows the harvest either (it
		// would fail on the setting as well, and now and then first).
		r := e.crawl([]string{"WIRE_HARVESTER_WAIT=soon", "WIRE_SERIAL_BATCHES=4", "WIRE_FOLLOW=0"}, col, "1")
		if r.code != 2 {
			t.Fatalf("crawl.sh with a bad harvester setting: exit %d, want the harvester's 2\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "crawl.sh: harvester failed (exit 2) on batch 000001") {
			t.Errorf("the failure does not name the stage, batch and code:\n%s", r.stderr)
		}
		if r := e.crawl(nil, col, "1"); r.code != 0 {
			t.Fatalf("crawl.sh after the failure: exit %d\n%s", r.code, r.stderr)
		}
		if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 seeded" {
			t.Errorf("after the rerun: %s", got)
		}
	})

	t.Run("harvester-stops", func(t *testing.T) {
		// A harvester that found the network down (5), or was stopped
		// by someone else's signal (143): crawl.sh and cron.sh pass the
		// code on and say so, not "failed".
		col := e.newCollection(t)
		e.wire(t, "manager", "run", "--collection", col)
		for _, tc := range []struct {
			code        int
			crawl, cron string
		}{
			{5, "crawl.sh: harvester found the network down (exit 5) on batch 000001", "NETWORK DOWN: harvester on batch 000001 exited 5: harvester: network down"},
			{143, "crawl.sh: harvester interrupted (exit 143) on batch 000001", "INTERRUPTED: harvester on batch 000001 exited 143: harvester: network down"},
		} {
			bin := t.TempDir()
			for _, s := range []string{"manager", "gatherer", "seeder"} {
				if err := os.Symlink(filepath.Join(e.bin, s), filepath.Join(bin, s)); err != nil {
					t.Fatal(err)
				}
			}
			fake := fmt.Sprintf("#!/bin/sh\necho 'harvester: network down' >&2\nexit %d\n", tc.code)
			if err := os.WriteFile(filepath.Join(bin, "harvester"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			r := e.run([]string{"WIRE_BIN=" + bin}, "bash", "crawl.sh", col, "1")
			if r.code != tc.code || !strings.Contains(r.stderr, tc.crawl) || strings.Contains(r.stderr, "failed") {
				t.Errorf("crawl.sh: exit %d, want %d and %q, not \"failed\":\n%s", r.code, tc.code, tc.crawl, r.stderr)
			}
			// The gatherer started to follow the batch is stopped with
			// its harvester, and that is not a failure of its own.
			if !strings.Contains(r.stderr, "crawl.sh: stopping the gatherer following batch 000001: its harvester ended") ||
				!strings.Contains(r.stderr, "gatherer on batch 000001: stopped with its harvester") {
				t.Errorf("crawl.sh did not stop the gatherer following the harvest:\n%s", r.stderr)
			}
			r = e.run([]string{"WIRE_BIN=" + bin}, "bash", "cron.sh", col)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.cron) {
				t.Errorf("cron.sh: exit %d, want %d and %q:\n%s", r.code, tc.code, tc.cron, r.stderr)
			}
		}
	})

	t.Run("background-fails", func(t *testing.T) {
		// A gatherer that fails once the harvester of the next batch
		// is at work: the failure is reported after that harvester ends.
		col := e.newCollection(t, "--manager-batch-size", "5")
		bin := t.TempDir()
		for _, s := range []string{"manager", "harvester", "seeder"} {
			if err := os.Symlink(filepath.Join(e.bin, s), filepath.Join(bin, s)); err != nil {
				t.Fatal(err)
			}
		}
		fake := `#!/bin/sh
# gatherer run --collection COL --batch N: waits (at most 30 s) for the harvest of batch 2, then fails.
i=0
while [ ! -d "$3/batches/000002/harvest.partial" ] && [ ! -e "$3/batches/000002/harvested.done" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
echo "gatherer: broken on purpose" >&2
exit 5
`
		if err := os.WriteFile(filepath.Join(bin, "gatherer"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		// WIRE_FOLLOW=0: the gatherer of batch 1 runs after its harvest
		// (a gatherer following it would wait for itself).
		// WIRE_HARVEST_FOLLOW=0: batch 2 is harvested after batch 1, so
		// the gatherer of batch 1 fails beside it (a harvester following
		// the batches would have harvested both by then).
		r := e.run(append([]string{"WIRE_BIN=" + bin, "WIRE_FOLLOW=0", "WIRE_HARVEST_FOLLOW=0"}, slowEnv...), "bash", "crawl.sh", col, "3")
		if r.code != 5 {
			t.Fatalf("crawl.sh with a failing gatherer: exit %d, want 5\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "crawl.sh: gatherer failed (exit 5) on batch 000001 in cycle 2") ||
			!strings.Contains(r.stderr, "waiting for harvester on batch 000002") ||
			!strings.Contains(r.stderr, "gatherer 000001| gatherer: broken on purpose") {
			t.Errorf("the background failure is not reported with its stage, batch and code:\n%s", r.stderr)
		}
		// The harvester beside it finished its batch; nothing started after the failure.
		if got := strings.Join(batchStates(t, col), ","); got != "000001 harvested,000002 harvested" {
			t.Errorf("after the failure: %s, want both batches harvested", got)
		}
		if r := e.crawl(nil, col, "0"); r.code != 0 {
			t.Fatalf("crawl.sh COL 0 after the failure: exit %d\n%s", r.code, r.stderr)
		}
		if got := strings.Join(batchStates(t, col), ","); got != "000001 seeded,000002 seeded" {
			t.Errorf("after the rerun: %s", got)
		}
		e.wire(t, "seeder", "check", "--collection", col)
	})

	// SIGTERM to crawl.sh alone (kill, a service manager), and SIGINT to
	// its whole process group (Ctrl-C in a terminal: the stages get it
	// too).
	t.Run("sigterm", func(t *testing.T) { testInterrupt(t, e, syscall.SIGTERM, false, 143) })
	t.Run("sigint-group", func(t *testing.T) { testInterrupt(t, e, syscall.SIGINT, true, 130) })
}

// testInterrupt sends sig to crawl.sh (to its process group if group)
// while batch 2 is harvested: crawl.sh stops every stage, waits for it,
// and exits code; a rerun finishes the batches.
func testInterrupt(t *testing.T, e *opsEnv, sig syscall.Signal, group bool, code int) {
	col := e.newCollection(t, "--manager-batch-size", "20")
	cmd := exec.Command("bash", "crawl.sh", col, "3")
	cmd.Env = append(append(os.Environ(), "WIRE_BIN="+e.bin), slowEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until batch 2 is being harvested.
	partial := filepath.Join(col, collection.BatchesDir, "000002", "harvest.partial")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(partial); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			t.Fatalf("batch 2 was not harvested within 60 s:\n%s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	pid := cmd.Process.Pid
	if group {
		pid = -pid
	}
	_ = syscall.Kill(pid, sig)
	err := cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Fatalf("crawl.sh after %v: exit %d (%v), want %d\n%s", sig, got, err, code, stderr.String())
	}
	name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[sig]
	if !regexp.MustCompile(`received ` + name + `: stopping .*harvester on batch 000002`).MatchString(stderr.String()) {
		t.Errorf("crawl.sh did not say what it stopped:\n%s", stderr.String())
	}
	// The harvester said how it stopped, through its output tag.
	if !strings.Contains(stderr.String(), "harvester 000002| harvester: harvest batch 000002: harvest interrupted") {
		t.Errorf("the harvester's last words are missing:\n%s", stderr.String())
	}
	// No stage is left running: every stage lock is free.
	for _, s := range []string{"manager", "harvester", "gatherer", "seeder"} {
		lock := filepath.Join(col, collection.LocksDir, s+".lock")
		if _, err := os.Stat(lock); err != nil {
			continue
		}
		if out, err := exec.Command("flock", "-n", lock, "true").CombinedOutput(); err != nil {
			t.Errorf("%s still holds its lock after crawl.sh ended: %v %s", s, err, out)
		}
	}
	r := e.crawl(nil, col, "0")
	if r.code != 0 {
		t.Fatalf("crawl.sh COL 0 after %v: exit %d\n%s", sig, r.code, r.stderr)
	}
	for _, s := range batchStates(t, col) {
		if !strings.HasSuffix(s, " seeded") {
			t.Errorf("after the rerun: %s", s)
		}
	}
	e.wire(t, "seeder", "check", "--collection", col)
}

// testSerialStart: with WIRE_SERIAL_BATCHES=4 (the default without
// WIRE_HARVEST_FOLLOW) the first four batches are each written only once
// the batch before is seeded (the manager never starts beside an
// unseeded batch for them), and from batch 5 on the cycles overlap
// again; a bad value is a usage error.
func testSerialStart(t *testing.T, e *opsEnv) {
	col := e.newCollection(t, "--manager-batch-size", "60", "--harvester-address-wait", "0")
	r := e.crawl([]string{"WIRE_SERIAL_BATCHES=4"}, col, "8")
	if r.code != 0 {
		t.Fatalf("crawl.sh: exit %d\n%s", r.code, r.stderr)
	}
	states := batchStates(t, col)
	if len(states) < 6 {
		t.Fatalf("only %d batches (%v): the test needs more than the serial ones", len(states), states)
	}
	managerStart := regexp.MustCompile(`manager on batch (\d{6}): start`)
	seededAt := map[int]int{} // batch -> offset of its seeder's "done" in the log
	for _, m := range regexp.MustCompile(`seeder on batch (\d{6}): done`).FindAllStringSubmatchIndex(r.stderr, -1) {
		b, _ := strconv.Atoi(r.stderr[m[2]:m[3]])
		seededAt[b] = m[0]
	}
	overlapped := 0
	for _, m := range managerStart.FindAllStringSubmatchIndex(r.stderr, -1) {
		b, _ := strconv.Atoi(r.stderr[m[2]:m[3]])
		prev, ok := seededAt[b-1]
		waited := ok && prev < m[0]
		switch {
		case b >= 2 && b <= 4 && !waited:
			t.Errorf("the manager of batch %d started before batch %d was seeded:\n%s", b, b-1, r.stderr)
		case b > 4 && !waited:
			overlapped++
		}
	}
	if overlapped == 0 {
		t.Errorf("no batch after the fourth was written beside the one before:\n%s", r.stderr)
	}
	checkExclusion(t, r.stderr)
	if r := e.crawl([]string{"WIRE_SERIAL_BATCHES=some"}, col, "1"); r.code != 2 || !strings.Contains(r.stderr, "WIRE_SERIAL_BATCHES must be a whole number") {
		t.Errorf("WIRE_SERIAL_BATCHES=some: exit %d, want 2 and a message\n%s", r.code, r.stderr)
	}
}
