package scripts_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestSlurm brings up a real single-host Slurm cluster (munged with a
// key of its own, slurmctld and slurmd on loopback, everything in a
// temporary directory, stopped at the end) and crawls the test web of
// TestPartitions through scripts/slurm/submit.sh as K = 2 partitioned
// collections, with 2 harvester shards each (a job array per batch), to
// the end: every partition idle and every exchange file taken in
// (slurm/done on both). Partition 2 reads partition 1's exchange files
// on the shared file system; partition 1 copies partition 2's with
// rsync (copy mode), so both ways are run. Midway the running cycle
// job of partition 1 is cancelled (scancel) while its harvest array
// runs; its successor, queued by that job, resumes the crawl; and
// partition 2's running cycle job gets SIGUSR1, as Slurm sends it before
// a time limit, and leaves the rest to its successor. Then the audit of
// TestPartitions (auditPartitions: the pages of the web's crawl as one
// collection, none twice, no address asked by both partitions, nothing
// left to exchange, seeder check) and: sites were handed over, partition
// 1 ran a later cycle job, the harvests ran as job arrays, partition 1
// took in copies (exchange/in/p2/), and no job is left in the queue.
// Last, submit.sh refuses a partition run as shared that does not read
// the other's files, submits the crawl again, and --stop empties the
// queue.
func TestSlurm(t *testing.T) {
	longtest.Need(t, "a Slurm cluster on loopback crawling the test web as 2 partitions of 2 harvester shards (about 3 minutes)")
	for _, tool := range []struct{ name, pkg string }{
		{"munged", "munge"}, {"slurmctld", "slurm-wlm"}, {"slurmd", "slurm-wlm"},
		{"sbatch", "slurm-wlm"}, {"squeue", "slurm-wlm"}, {"scancel", "slurm-wlm"}, {"scontrol", "slurm-wlm"},
		{"rsync", "rsync"},
	} {
		longtest.Tool(t, tool.name, tool.pkg)
	}
	if os.Geteuid() != 0 {
		// slurmd starts each job as its owner; run unprivileged (as
		// nobody, SlurmUser and SlurmdUser nobody) in the development
		// container, it did not serve ("Unable to bind listen port").
		longtest.Unavailable(t, "a Slurm cluster", "the test runs the Slurm daemons as root, and this is uid "+strconv.Itoa(os.Geteuid()))
	}
	start := time.Now()
	bin := stageBinaries(t)
	e := newCrawlEnv(t, bin, testweb.Config{Seed: 7, Hosts: 40, MaxPages: 30, Addresses: 6, SubdomainShare: 0.5}, 6)
	settings := []string{"--manager-batch-size", "200", "--harvester-address-wait", "0s", "--manager-max-fetches-per-script", "0"}
	up := time.Now()
	cl := startSlurm(t)
	t.Logf("Slurm cluster up in %s (%s since the test's start, with the build)", time.Since(up).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	whole := e.newCollection(t, settings...)
	if r := e.crawl(nil, whole, "1000"); r.code != 0 {
		t.Fatalf("crawl.sh on the whole web: exit %d\n%s", r.code, r.stderr)
	}
	want := fetchedURLs(t, whole)
	if len(want) < 100 {
		t.Fatalf("the whole web's crawl fetched %d pages", len(want))
	}

	dir := filepath.Join(cl.dir, "crawl")
	prefix := filepath.Join(dir, "p")
	env := append(cl.env(),
		"WIRE_SLURM_SBATCH=--mem=64M --cpus-per-task=1 --time=20",
		"WIRE_SLURM_IDLE_WAIT=2", "WIRE_SLURM_RETRY_WAIT=1", "WIRE_SLURM_PULL_EVERY=2")
	initFlags := append([]string{"--harvester-allow-private", "--harvester-dns-server", e.web.DNSAddr(),
		"--harvester-wait", "20ms", "--harvester-connections", "30", "--harvester-total-timeout", "10s",
		"--scope-domains", "cl"}, settings...)
	// Partition 1 copies partition 2's exchange files with rsync (copy
	// mode: --only 1 --peer 2=SOURCE, as on separate file systems);
	// partition 2 reads partition 1's directly (a shared file system).
	crawlStart := time.Now()
	submit := func(args ...string) opsResult {
		return e.run(env, "bash", append([]string{"slurm/submit.sh"}, args...)...)
	}
	copyMode, shared := []string{"--only", "1", "--peer", "2=" + prefix + "2"}, []string{"--only", "2"}
	for i, args := range [][]string{copyMode, shared} {
		args = append(append(append([]string{"--seeds", e.seeds}, args...), prefix, "2", "2", "--"), initFlags...)
		if i == 0 {
			// Partition 1 routes new names by their registrable domain
			// (partition 2 looks them up, the default), so that sites
			// are handed over.
			args = append(args, "--crawl-partition-lookup=false")
		}
		if r := submit(args...); r.code != 0 {
			t.Fatalf("submit.sh %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	cols := []string{prefix + "1", prefix + "2"}

	// Cancel partition 1's cycle job while its harvest array runs, and
	// warn partition 2's as Slurm does before a time limit (SIGUSR1).
	killed, warned := "", ""
	deadline := time.Now().Add(8 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the crawl did not end within 8 minutes\n%s\n%s", cl.queue(t), tailLogs(cols))
		}
		// Over: both partitions say so, and their last jobs have ended.
		if fileExists(filepath.Join(cols[0], "slurm", "done")) && fileExists(filepath.Join(cols[1], "slurm", "done")) &&
			strings.TrimSpace(cl.queue(t)) == "" {
			break
		}
		for _, c := range cols {
			if b, err := os.ReadFile(filepath.Join(c, "slurm", "failed")); err == nil {
				t.Fatalf("%s: the cycle jobs gave up: %s\n%s", c, b, tailLogs(cols))
			}
		}
		if killed == "" || warned == "" {
			jobs := cl.jobs(t)
			if cycle := jobs["wire-p1/RUNNING"]; killed == "" && len(cycle) > 0 && len(jobs["wire-p1-h/RUNNING"]) > 0 && len(batchStates(t, cols[0])) >= 2 {
				killed = cycle[0]
				cl.ctl(t, "scancel", killed)
				t.Logf("cancelled partition 1's cycle job %s during its harvest, %s into the crawl", killed, time.Since(crawlStart).Round(time.Second))
			}
			// What Slurm sends before the time limit (--signal=B:USR1@300).
			if cycle := jobs["wire-p2/RUNNING"]; warned == "" && len(cycle) > 0 && len(batchStates(t, cols[1])) >= 3 {
				warned = cycle[0]
				cl.ctl(t, "scancel", "--signal=USR1", "--batch", warned)
				t.Logf("sent SIGUSR1 to partition 2's cycle job %s, %s into the crawl", warned, time.Since(crawlStart).Round(time.Second))
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("crawl on Slurm: %s (the whole test: %s so far)", time.Since(crawlStart).Round(time.Second), time.Since(start).Round(time.Second))
	if killed == "" {
		t.Error("partition 1's cycle job was never seen running beside its harvest array: nothing was cancelled")
	} else {
		log := readFile(t, filepath.Join(cols[0], "slurm", "logs", "cycle-"+killed+".out"))
		if !strings.Contains(log, "received SIGTERM") {
			t.Errorf("the cancelled cycle job %s did not say it was stopped:\n%s", killed, log)
		}
		lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
		t.Logf("the end of the cancelled job's log:\n%s", strings.Join(lines[max(0, len(lines)-8):], "\n"))
		later := 0
		for _, id := range cycleJobs(t, cols[0]) {
			if n, _ := strconv.Atoi(id); n > mustAtoi(t, killed) && strings.Contains(readFile(t, filepath.Join(cols[0], "slurm", "logs", "cycle-"+id+".out")), "start: partition 1/2") {
				later++
			}
		}
		if later == 0 {
			t.Errorf("no cycle job of partition 1 ran after %s was cancelled", killed)
		}
	}
	handed, arrays := 0, 0
	for _, c := range cols {
		logs, _ := filepath.Glob(filepath.Join(c, "slurm", "logs", "*.out"))
		for _, l := range logs {
			b := readFile(t, l)
			handed += len(handedOver.FindAllString(b, -1))
			if strings.Contains(b, "submitted as job array") {
				arrays++
			}
		}
	}
	if handed == 0 {
		t.Error("no site was handed over to the partition of its address")
	}
	if warned == "" {
		t.Error("partition 2's cycle job was never seen running after its batch 2: no SIGUSR1 was sent")
	} else {
		log := readFile(t, filepath.Join(cols[1], "slurm", "logs", "cycle-"+warned+".out"))
		// Stopped (crawl.sh, or after the exchange), or ended as usual
		// when the signal came during its last steps.
		if !strings.Contains(log, "received SIGUSR1") || !ending.MatchString(log) {
			t.Errorf("partition 2's cycle job %s got SIGUSR1 and did not end for its successor:\n%s", warned, log)
		}
	}
	if arrays == 0 {
		t.Error("no harvest ran as a job array")
	}
	// Copies of exchange files are removed once taken; the site graph
	// and the report of files taken stay.
	for _, name := range []string{"sitegraph.sz", "taken"} {
		if _, err := os.Stat(filepath.Join(cols[0], "exchange", "in", "p2", name)); err != nil {
			t.Errorf("partition 1 (copy mode) has no copy of partition 2's %s in exchange/in/p2/: %v", name, err)
		}
	}
	auditPartitions(t, e, want, cols)

	// Partition 1 does not read partition 2's files on the shared file
	// system: submit.sh refuses to run it so (the idle counts would
	// claim files it never took in).
	if r := submit("--only", "1", prefix, "2", "2"); r.code != 1 || !strings.Contains(r.stderr, "does not read partition 2's exchange files") {
		t.Errorf("submit.sh of partition 1 in shared mode: exit %d, want 1 and a message saying why\n%s", r.code, r.stderr)
	}
	// Submitted again, the crawl starts again (and finds nothing);
	// --stop cancels every job at once and marks the partitions stopped.
	for _, args := range [][]string{copyMode, shared} {
		if r := submit(append(args, prefix, "2", "2")...); r.code != 0 {
			t.Fatalf("submit.sh %s again: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if fileExists(filepath.Join(cols[0], "slurm", "done")) {
		t.Error("submit.sh did not clear slurm/done")
	}
	if r := submit("--stop", prefix, "2"); r.code != 0 {
		t.Fatalf("submit.sh --stop: exit %d\n%s", r.code, r.stderr)
	}
	waitFor(t, 60*time.Second, "the queue empty after submit.sh --stop", func() bool { return strings.TrimSpace(cl.queue(t)) == "" })
	for _, c := range cols {
		if !fileExists(filepath.Join(c, "slurm", "stop")) {
			t.Errorf("%s: no slurm/stop after submit.sh --stop", c)
		}
	}
	d := slurmDelays(t, cols)
	t.Logf("Slurm's part: %d shard tasks started a median %s after their array's submission (max %s); %d harvest stages ended a median %s after their last shard (max %s); %d successors started a median %s after their idle wait (max %s)",
		len(d.dispatch), median(d.dispatch), slices.Max(append(d.dispatch, 0)), len(d.merge), median(d.merge), slices.Max(append(d.merge, 0)),
		len(d.successor), median(d.successor), slices.Max(append(d.successor, 0)))
	t.Logf("TestSlurm: %s in all", time.Since(start).Round(time.Second))
}

// ending is the last line of a cycle job that left the crawl to its
// successor, or ended it.
var ending = regexp.MustCompile(`(the successor resumes|the successor crawls it|the successor looks again in \S+|the crawl is over: .*)\n*$`)

// slurmLine is a line of the Slurm scripts' logs (scripts/slurm/lib.sh,
// slurm_log): its time, who wrote it (cycle, harvest, shard), its job
// and its text.
var slurmLine = regexp.MustCompile(`(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (cycle|harvest|shard)\[(\d+)\]: (.*)$`)

// delays are what Slurm adds to a crawl, from the jobs' logs: how long
// a shard task waited from its array's submission to its start, how long
// a harvest stage took after its last shard ended, and how long an idle
// partition's successor started after its idle wait.
type delays struct {
	dispatch, merge, successor []time.Duration
}

// slurmDelays reads the delays of the crawl of cols from their logs.
func slurmDelays(t *testing.T, cols []string) delays {
	t.Helper()
	var d delays
	for _, col := range cols {
		submitted := map[string]time.Time{} // array job → submission
		lastShard := map[string]time.Time{} // batch → its last shard's end
		var idleUntil time.Time
		logs, err := filepath.Glob(filepath.Join(col, "slurm", "logs", "*.out"))
		if err != nil {
			t.Fatal(err)
		}
		type event struct {
			at         time.Time
			who, job   string
			text, file string
		}
		var events []event
		for _, l := range logs {
			for _, line := range strings.Split(readFile(t, l), "\n") {
				m := slurmLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				at, err := time.Parse("2006-01-02T15:04:05.000Z", m[1])
				if err != nil {
					t.Fatal(err)
				}
				events = append(events, event{at, m[2], m[3], m[4], filepath.Base(l)})
			}
		}
		slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
		arrayOf := regexp.MustCompile(`^harvest-(\d{6})-\d+-(\d+)\.out$`)
		for _, ev := range events {
			switch {
			case strings.Contains(ev.text, "submitted as job array"):
				f := strings.Fields(ev.text)
				submitted[f[len(f)-1]] = ev.at
			case ev.who == "shard" && strings.Contains(ev.text, "(restart"):
				if m := arrayOf.FindStringSubmatch(ev.file); m != nil && !submitted[m[2]].IsZero() {
					d.dispatch = append(d.dispatch, ev.at.Sub(submitted[m[2]]))
				}
			case ev.who == "shard" && strings.Contains(ev.text, ": exit "):
				lastShard[strings.TrimSuffix(strings.Fields(ev.text)[1], ":")] = ev.at
			case ev.who == "harvest" && strings.HasSuffix(ev.text, ": harvested"):
				b := strings.TrimSuffix(strings.Fields(ev.text)[1], ":")
				if !lastShard[b].IsZero() {
					d.merge = append(d.merge, ev.at.Sub(lastShard[b]))
				}
			case ev.who == "cycle" && strings.HasPrefix(ev.text, "the successor looks again in "):
				wait, err := time.ParseDuration(strings.TrimPrefix(ev.text, "the successor looks again in "))
				if err != nil {
					t.Fatal(err)
				}
				idleUntil = ev.at.Add(wait)
			case ev.who == "cycle" && strings.HasPrefix(ev.text, "start:") && !idleUntil.IsZero():
				d.successor = append(d.successor, ev.at.Sub(idleUntil))
				idleUntil = time.Time{}
			}
		}
	}
	return d
}

// median is the median of ds (0 if none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// slurmCluster is a single-host Slurm cluster of the test's own.
type slurmCluster struct {
	dir  string // everything of it: config, keys, state, logs
	conf string // slurm.conf
}

// env is the environment that points Slurm's commands at the cluster.
func (c *slurmCluster) env() []string { return []string{"SLURM_CONF=" + c.conf} }

// ctl runs a Slurm command against the cluster and returns its output;
// a failure fails the test.
func (c *slurmCluster) ctl(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := c.command(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// command runs a Slurm command against the cluster, within 30 s.
func (c *slurmCluster) command(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), c.env()...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// queue is squeue's listing.
func (c *slurmCluster) queue(t *testing.T) string {
	t.Helper()
	return c.ctl(t, "squeue", "-h", "-o", "%i %j %T %r")
}

// jobs maps "NAME/STATE" to the ids of the jobs in the queue.
func (c *slurmCluster) jobs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, l := range strings.Split(c.ctl(t, "squeue", "-h", "-o", "%i %j %T"), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 {
			out[f[1]+"/"+f[2]] = append(out[f[1]+"/"+f[2]], f[0])
		}
	}
	return out
}

// startSlurm starts munged, slurmctld and slurmd on loopback with a
// configuration of their own in a temporary directory, waits until the
// node is idle, and stops everything at the end of the test (jobs
// cancelled, daemons stopped, and any process left of them killed).
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "wire-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	// munged wants every directory above its socket searchable by all.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	var daemons []*exec.Cmd
	t.Cleanup(func() { c.stop(t, daemons) })
	for _, d := range []string{"munge", "run", "state", "spool", "log"} {
		mode := os.FileMode(0o700)
		if d == "run" {
			mode = 0o755
		}
		if err := os.Mkdir(filepath.Join(dir, d), mode); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "munge", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "run", "munge.socket")
	daemons = append(daemons, c.daemon(t, "munged", "--foreground", "--socket="+socket, "--key-file="+keyFile,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--seed-file="+filepath.Join(dir, "munge", "munged.seed")))
	waitFor(t, 10*time.Second, "munged's socket", func() bool { return fileExists(socket) })

	node, err := exec.Command("slurmd", "-C").Output()
	if err != nil {
		t.Fatalf("slurmd -C: %v", err)
	}
	hw := regexp.MustCompile(`(?m)^NodeName=\S+ (.*)$`).FindSubmatch(node)
	if hw == nil {
		t.Fatalf("slurmd -C printed no NodeName line:\n%s", node)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	conf := fmt.Sprintf(`# TestSlurm's cluster: one node, localhost, on loopback.
ClusterName=wiretest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
# No cgroups, no systemd: processes tracked by their parents, no task
# binding, no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
# slurmd listens on 127.0.0.1 only (slurmctld, in 22.05, on every
# address whatever the setting; munge authenticates every message).
CommunicationParameters=NoInAddrAny
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
ReturnToService=2
KillWait=10
MinJobAge=120
NodeName=localhost NodeAddr=127.0.0.1 %s State=UNKNOWN
# The harvesters mostly wait on politeness: up to 8 jobs share a core.
PartitionName=wire Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
`, ports[0], ports[1], u.Username, socket, filepath.Join(dir, "state"), filepath.Join(dir, "spool"),
		filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "slurmd.pid"),
		filepath.Join(dir, "log", "slurmctld.log"), filepath.Join(dir, "log", "slurmd.log"), hw[1])
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	daemons = append(daemons, c.daemon(t, "slurmctld", "-D", "-i", "-f", c.conf))
	daemons = append(daemons, c.daemon(t, "slurmd", "-D", "-N", "localhost", "-f", c.conf))
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := c.command("sinfo", "-h", "-o", "%T")
		if err == nil && strings.TrimSpace(out) == "idle" {
			return c
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, name := range []string{"munged.out", "slurmctld.out", "slurmd.out"} {
				b, _ := os.ReadFile(filepath.Join(dir, "log", name))
				lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
				fmt.Fprintf(&logs, "== %s\n%s\n", name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
			}
			t.Fatalf("the Slurm node is not idle after 60 s (sinfo: %q, %v); the daemons' logs:\n%s", out, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// daemon starts a daemon of the cluster in the foreground, its output in
// log/NAME.out.
func (c *slurmCluster) daemon(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	out, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), c.env()...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	out.Close()
	return cmd
}

// stop cancels every job of the cluster, stops the daemons (slurmd,
// slurmctld, munged: the reverse order), kills any process that still
// has the cluster's configuration in its environment (a job's
// slurmstepd and its children outlive slurmd), and removes the
// directory unless the test failed (then it says where it is).
func (c *slurmCluster) stop(t *testing.T, daemons []*exec.Cmd) {
	if len(daemons) == 3 {
		if _, err := c.command("scancel", "--user="+strconv.Itoa(os.Getuid())); err == nil {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				out, err := c.command("squeue", "-h")
				if err != nil || strings.TrimSpace(out) == "" {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	for _, d := range slices.Backward(daemons) {
		_ = d.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-d.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	for _, pid := range processesWithEnv("SLURM_CONF=" + c.conf) {
		t.Logf("killing process %d left by the cluster", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if t.Failed() {
		t.Logf("the cluster's files (slurm.conf, daemon logs in log/, the collections in crawl/): %s", c.dir)
		return
	}
	_ = os.RemoveAll(c.dir)
}

// processesWithEnv lists the processes (but this one) whose environment
// holds the entry kv.
func processesWithEnv(kv string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if slices.ContainsFunc(bytes.Split(b, []byte{0}), func(e []byte) bool { return string(e) == kv }) {
			out = append(out, pid)
		}
	}
	return out
}

// freePorts returns n TCP ports free on 127.0.0.1 now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// waitFor polls ok every 100 ms until it holds, failing the test after
// limit.
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cycleJobs lists the ids of a partition's cycle jobs that wrote a log.
func cycleJobs(t *testing.T, col string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(col, "slurm", "logs", "cycle-*.out"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range logs {
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(l), "cycle-"), ".out"))
	}
	return ids
}

// tailLogs returns the last lines of the cycle jobs' logs, for a failure.
func tailLogs(cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		logs, _ := filepath.Glob(filepath.Join(c, "slurm", "logs", "cycle-*.out"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			fmt.Fprintf(&b, "== %s\n%s\n", l, strings.Join(lines[max(0, len(lines)-8):], "\n"))
		}
	}
	return b.String()
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// readFile returns a file's content, failing the test if it cannot.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustAtoi is strconv.Atoi, failing the test on an error.
func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
