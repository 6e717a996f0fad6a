package scripts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/scope"
)

// copyDir copies the contents of directory src into dst (created if
// needed) the way docs/operations.md says: with rsync -a when it is
// installed, else with cp -a. A "machine" in these tests is a directory
// that shares nothing with the collection but what is copied.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if _, err := exec.LookPath("rsync"); err == nil {
		cmd = exec.Command("rsync", "-a", src+"/", dst+"/")
	} else {
		cmd = exec.Command("cp", "-a", src+"/.", dst+"/")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// copyFile copies one file, keeping its time stamps.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-p", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", src, dst, err, out)
	}
}

// openGraph opens a collection's graph.db read-only for the test.
func openGraph(t *testing.T, col string) *linkgraph.Graph {
	t.Helper()
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (e *opsEnv) testRecrawl(t *testing.T, old string) {
	// Step 1 of docs/operations.md "Recrawls": a new collection with the
	// old one's config (here: the same settings).
	col := filepath.Join(t.TempDir(), "col2")
	e.wire(t, "seeder", "init", "--collection", col, "--config", filepath.Join(old, collection.ConfigFile))
	// Step 2: sites, robots.txt copies and seeds.
	seedsOut := filepath.Join(t.TempDir(), "seeds.txt")
	r := e.wire(t, "seeder", "import", "--collection", col, "--from", old, "--seeds-out", seedsOut)
	t.Logf("seeder import: %s", r.stdout)

	cfg, err := config.Load(config.Sources{File: filepath.Join(col, collection.ConfigFile), NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	sc := scope.MustNew(cfg.Scope)
	og, ng := openGraph(t, old), openGraph(t, col)
	var wantSeeds []string
	sites, robots := 0, 0
	err = og.View(func(otx *linkgraph.Tx) error {
		return ng.View(func(ntx *linkgraph.Tx) error {
			if err := otx.ForEachSite(func(s *linkgraph.Site) error {
				if sc.Check(s.Key+"/") != nil {
					return nil
				}
				sites++
				id, ok := ntx.SiteID(s.Key)
				if !ok {
					return fmt.Errorf("site %s was not carried over", s.Key)
				}
				ns, err := ntx.Site(id)
				if err != nil {
					return err
				}
				if ns.RobotsBody != s.RobotsBody || ns.RobotsStatus != s.RobotsStatus || !ns.RobotsFetched.Equal(s.RobotsFetched) || ns.RobotsErr != s.RobotsErr {
					return fmt.Errorf("site %s: robots.txt copy %d %q %v, want %d %q %v", s.Key, ns.RobotsStatus, ns.RobotsBody, ns.RobotsFetched, s.RobotsStatus, s.RobotsBody, s.RobotsFetched)
				}
				if !s.RobotsFetched.IsZero() {
					robots++
				}
				return nil
			}); err != nil {
				return err
			}
			return otx.ForEachDoc(func(d *linkgraph.Doc) error {
				if d.Depth != 0 || d.State == linkgraph.StateExcluded {
					return nil
				}
				wantSeeds = append(wantSeeds, d.URL)
				id, ok := ntx.LookupURL(d.URL)
				if !ok {
					return fmt.Errorf("seed %s (depth 0 in the old crawl) was not carried over", d.URL)
				}
				nd, err := ntx.Doc(id)
				if err != nil {
					return err
				}
				if nd.Depth != 0 || (nd.State != linkgraph.StatePending && nd.State != linkgraph.StateExcluded) {
					return fmt.Errorf("seed %s: depth %d, state %s", d.URL, nd.Depth, nd.State)
				}
				return nil
			})
		})
	})
	og.Close()
	ng.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sites < 20 || robots < 20 || len(wantSeeds) < 20 {
		t.Fatalf("only %d sites, %d robots.txt copies and %d seeds to carry over: the old crawl is too small", sites, robots, len(wantSeeds))
	}
	if data, err := os.ReadFile(seedsOut); err != nil || strings.Count(string(data), "\n") != len(wantSeeds) {
		t.Errorf("--seeds-out holds %d lines, want %d (%v)", strings.Count(string(data), "\n"), len(wantSeeds), err)
	}
	// --seeds fetched: every page fetched with a 2xx status.
	col3 := filepath.Join(t.TempDir(), "col3")
	e.wire(t, "seeder", "init", "--collection", col3, "--config", filepath.Join(old, collection.ConfigFile))
	fetchedOut := filepath.Join(t.TempDir(), "fetched.txt")
	e.wire(t, "seeder", "import", "--collection", col3, "--from", old, "--seeds", "fetched", "--seeds-out", fetchedOut)
	ok2xx := 0
	og = openGraph(t, old)
	og.View(func(tx *linkgraph.Tx) error {
		return tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if d.State == linkgraph.StateFetched && d.Status >= 200 && d.Status < 300 {
				ok2xx++
			}
			return nil
		})
	})
	og.Close()
	if data, err := os.ReadFile(fetchedOut); err != nil || strings.Count(string(data), "\n") != ok2xx || ok2xx <= len(wantSeeds) {
		t.Errorf("--seeds fetched wrote %d seeds, the old crawl fetched %d pages with 2xx (%v)", strings.Count(string(data), "\n"), ok2xx, err)
	}
	for _, bad := range [][]string{{"--from", old, "--seeds", "all"}, {"--from", col3}, {}} {
		r := e.run(nil, filepath.Join(e.bin, "seeder"), append([]string{"import", "--collection", col3}, bad...)...)
		if r.code != 2 {
			t.Errorf("seeder import %v: exit %d, want 2 (usage)\n%s", bad, r.code, r.stderr)
		}
	}

	// Running it twice adds nothing.
	r = e.wire(t, "seeder", "import", "--collection", col, "--from", old)
	if !strings.Contains(r.stdout, " 0 added") {
		t.Errorf("a second import added seeds: %s", r.stdout)
	}
	e.wire(t, "seeder", "check", "--collection", col)

	// Step 3: the old crawl's PageRank, for the historical strategy.
	e.wire(t, "manager", "history", "import", "--collection", col, old)
	prFile := filepath.Join(t.TempDir(), "old.pagerank")
	e.wire(t, "manager", "history", "export", "--collection", old, prFile)
	oldPR := readPageRank(t, prFile)

	// Step 4: crawl. The first batch starts from the carried seeds, the
	// most valuable of the old crawl first.
	e.wire(t, "manager", "run", "--collection", col, "--manager-strategy", "historical")
	if r := e.cron(nil, "--cycles", "0", col); r.code != 0 {
		t.Fatalf("cron.sh on the recrawl: exit %d\n%s", r.code, r.stderr)
	}
	_, entries, err := batch.ReadFile(filepath.Join(col, collection.BatchesDir, "000001", collection.BatchFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := min(len(wantSeeds), cfg.Manager.BatchSize); len(entries) < want/2 {
		t.Errorf("the recrawl's first batch has %d URLs; %d seeds were carried over", len(entries), len(wantSeeds))
	}
	best, bestPR := "", -1.0
	for _, en := range entries {
		if pr := oldPR[en.URL]; pr > bestPR {
			best, bestPR = en.URL, pr
		}
	}
	if entries[0].URL != best {
		t.Errorf("the recrawl's first batch starts with %s (old PageRank %g), not with the old crawl's best page %s (%g)",
			entries[0].URL, oldPR[entries[0].URL], best, bestPR)
	}
	e.wire(t, "seeder", "check", "--collection", col)
}

// readPageRank reads a PageRank file of manager history export: "URL<TAB>PageRank"
// lines after '#' comments.
func readPageRank(t *testing.T, path string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pr := map[string]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		u, v, ok := strings.Cut(line, "\t")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		pr[u] = x
	}
	if len(pr) == 0 {
		t.Fatalf("%s holds no PageRank", path)
	}
	return pr
}

// fetchRecords reads a fetch log.
func fetchRecords(t *testing.T, path string) []fetchlog.Record {
	t.Helper()
	recs, err := fetchlog.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (e *opsEnv) testSeparateMachines(t *testing.T) {
	col := e.newCollection(t)
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	e.wire(t, "manager", "run", "--collection", col)
	batchDir := filepath.Join(col, collection.BatchesDir, "000002")

	// The harvesting machine gets the batch directory (batch.tsv and any
	// sidecar file) and the config, nothing else.
	hm := filepath.Join(t.TempDir(), "harvest-machine")
	copyDir(t, batchDir, filepath.Join(hm, "000002"))
	copyFile(t, filepath.Join(col, collection.ConfigFile), filepath.Join(hm, "wire.toml"))
	e.wire(t, "harvester", "run", "--batch-dir", filepath.Join(hm, "000002"), "--config", filepath.Join(hm, "wire.toml"))
	// Back: the harvest first, the marker that vouches for it last.
	copyDir(t, filepath.Join(hm, "000002", collection.HarvestDir), filepath.Join(batchDir, collection.HarvestDir))
	copyFile(t, filepath.Join(hm, "000002", "harvested.done"), filepath.Join(batchDir, "harvested.done"))

	// The parsing machine gets the harvested batch directory, the config
	// and a copy of the text store (to tell unchanged pages).
	gm := filepath.Join(t.TempDir(), "gather-machine")
	copyDir(t, batchDir, filepath.Join(gm, "000002"))
	copyDir(t, filepath.Join(col, collection.TextDir), filepath.Join(gm, "text"))
	copyFile(t, filepath.Join(col, collection.ConfigFile), filepath.Join(gm, "wire.toml"))
	e.wire(t, "gatherer", "run", "--batch-dir", filepath.Join(gm, "000002"), "--text-dir", filepath.Join(gm, "text"), "--config", filepath.Join(gm, "wire.toml"))
	copyDir(t, filepath.Join(gm, "000002", collection.ParsedDir), filepath.Join(batchDir, collection.ParsedDir))
	for _, ext := range []string{".dat", ".idx"} { // the index, the segment's commit point, last
		copyFile(t, filepath.Join(gm, "text", "seg-000002"+ext), filepath.Join(col, collection.TextDir, "seg-000002"+ext))
	}
	copyFile(t, filepath.Join(gm, "000002", "gathered.done"), filepath.Join(batchDir, "gathered.done"))

	// The seeder, on the collection's machine, takes the batch in.
	e.wire(t, "seeder", "run", "--collection", col)
	e.wire(t, "seeder", "check", "--collection", col)
	recs := fetchRecords(t, filepath.Join(batchDir, collection.HarvestDir, fetchlog.LogFile))
	_, entries, err := batch.ReadFile(filepath.Join(batchDir, collection.BatchFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(entries) || len(entries) < 50 {
		t.Fatalf("the remote harvest logged %d of %d URLs", len(recs), len(entries))
	}
	g := openGraph(t, col)
	checked := 0
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, r := range recs {
			if !r.OK() {
				continue
			}
			d, err := tx.Doc(r.DocID)
			if err != nil {
				return err
			}
			if d.State != linkgraph.StateFetched || d.Status != r.Status || d.Batch != 2 {
				return fmt.Errorf("%s: state %s status %d batch %d after the remote harvest (log: status %d)", r.URL, d.State, d.Status, d.Batch, r.Status)
			}
			checked++
		}
		return nil
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The text gathered remotely is served by the collection.
	n := 0
	for _, r := range recs {
		if r.OK() && r.Status == 200 && r.MIME == "text/html" && n < 5 {
			if out := e.wire(t, "gatherer", "cat", "--collection", col, r.URL).stdout; strings.TrimSpace(out) == "" {
				t.Errorf("gatherer cat %s: no text after the remote gather", r.URL)
			}
			n++
		}
	}
	// The next cycle runs on the collection as usual.
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh after the remote batch: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("remote harvest and gather of batch 2: %d URLs, %d pages checked in graph.db", len(recs), checked)
}

func (e *opsEnv) testTwoShards(t *testing.T) {
	col := e.newCollection(t)
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	e.wire(t, "manager", "run", "--collection", col)
	batchDir := filepath.Join(col, collection.BatchesDir, "000002")
	_, entries, err := batch.ReadFile(filepath.Join(batchDir, collection.BatchFile))
	if err != nil {
		t.Fatal(err)
	}
	// Two machines, each with its own copy of the batch and the config,
	// harvest shards 1/2 and 2/2 at the same time.
	var machines [2]string
	var wg sync.WaitGroup
	results := make([]opsResult, 2)
	for i := range machines {
		machines[i] = filepath.Join(t.TempDir(), fmt.Sprintf("machine-%d", i+1), "000002")
		copyDir(t, batchDir, machines[i])
		copyFile(t, filepath.Join(col, collection.ConfigFile), filepath.Join(filepath.Dir(machines[i]), "wire.toml"))
		wg.Go(func() {
			results[i] = e.run(nil, filepath.Join(e.bin, "harvester"), "run", "--batch-dir", machines[i],
				"--config", filepath.Join(filepath.Dir(machines[i]), "wire.toml"), "--shard", fmt.Sprintf("%d/2", i+1))
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("harvester shard %d/2: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
		}
	}
	var logs [][]fetchlog.Record
	for i, m := range machines {
		logs = append(logs, shardLog(t, m, i+1, 2))
		copyShardBack(t, m, batchDir)
	}
	// With every shard back, a harvester run on the collection merges them
	// into harvest/ and marks the batch harvested (cron.sh's next run
	// would do it too).
	e.wire(t, "harvester", "run", "--collection", col)
	if _, err := os.Stat(filepath.Join(batchDir, "harvested.done")); err != nil {
		t.Fatalf("the shards were not merged: %v", err)
	}
	e.wire(t, "gatherer", "run", "--collection", col)
	e.wire(t, "seeder", "run", "--collection", col)
	e.wire(t, "seeder", "check", "--collection", col)
	checkShards(t, col, entries, logs)
}

// shardLog reads the fetch log of shard i of n in a batch directory
// (docs/format/harvest.md: harvest-shard-I-of-N/fetch.log).
func shardLog(t *testing.T, dir string, i, n int) []fetchlog.Record {
	t.Helper()
	return fetchRecords(t, filepath.Join(dir, fmt.Sprintf("harvest-shard-%d-of-%d", i, n), fetchlog.LogFile))
}

// copyShardBack copies a shard's output into the batch directory, as
// docs/format/harvest.md lays it out: every entry of the machine's batch
// directory but the batch file and its sidecars, directories first.
func copyShardBack(t *testing.T, machine, batchDir string) {
	t.Helper()
	ents, err := os.ReadDir(machine)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, en := range ents {
		name := en.Name()
		switch {
		case name == collection.BatchFile || name == collection.BatchRobotsFile || name == collection.BatchServersFile || strings.HasSuffix(name, ".lock"):
		case en.IsDir():
			if strings.HasSuffix(name, ".partial") {
				t.Fatalf("shard output %s still has %s", machine, name)
			}
			copyDir(t, filepath.Join(machine, name), filepath.Join(batchDir, name))
		default:
			files = append(files, name)
		}
	}
	for _, f := range files {
		copyFile(t, filepath.Join(machine, f), filepath.Join(batchDir, f))
	}
}

// checkShards checks that the shards split the batch: every URL was
// logged by exactly one shard, and the seeder took every one in once (a
// URL a shard deferred, ending its part of the batch by its tail, is
// back in the frontier: pending).
func checkShards(t *testing.T, col string, entries []batch.Entry, logs [][]fetchlog.Record) {
	t.Helper()
	logged := map[string]int{}
	deferred := map[string]bool{} // not requested: the shard ended its batch early (its tail)
	stored := 0
	for i, recs := range logs {
		for _, r := range recs {
			logged[r.URL]++
			if r.OK() {
				stored++
			}
			if strings.HasPrefix(r.Err, "deferred:") {
				deferred[r.URL] = true
			}
		}
		if len(recs) == 0 || len(recs) == len(entries) {
			t.Errorf("shard %d logged %d of the batch's %d URLs: not a split", i+1, len(recs), len(entries))
		}
	}
	for _, en := range entries {
		if logged[en.URL] != 1 {
			t.Errorf("%s is logged by %d shards, want 1", en.URL, logged[en.URL])
		}
	}
	if len(logged) != len(entries) {
		t.Errorf("the shards logged %d distinct URLs, the batch has %d", len(logged), len(entries))
	}
	g := openGraph(t, col)
	defer g.Close()
	fetched := 0
	err := g.View(func(tx *linkgraph.Tx) error {
		for _, en := range entries {
			d, err := tx.Doc(en.DocID)
			if err != nil {
				return err
			}
			if d.State == linkgraph.StateScheduled || d.State == linkgraph.StatePending && !deferred[en.URL] {
				return fmt.Errorf("%s is still %s after both shards were seeded", en.URL, d.State)
			}
			if d.State == linkgraph.StateFetched {
				fetched++
				if d.Visits != 1 || d.Batch != 2 {
					return fmt.Errorf("%s: %d visits (batch %d) after one fetch", en.URL, d.Visits, d.Batch)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if fetched != stored {
		t.Errorf("graph.db has %d pages fetched by the batch, the shards stored %d responses", fetched, stored)
	}
	t.Logf("%d URLs in the batch, %d and %d logged by the shards, %d fetched pages in graph.db", len(entries), len(logs[0]), len(logs[1]), fetched)
}

// fakeSSH is an ssh stand-in for GNU parallel (--ssh): it runs the
// command on this machine in the directory @REMOTE@-HOST, the "home
// directory" of each host, so that each has files of its own. Like a
// real ssh login it sets HOME and SHELL: parallel's remote worker runs
// the job with $SHELL and, where it is unset (as in CI's environment),
// the job does nothing and parallel still exits 0.
const fakeSSH = `#!/bin/bash
while [ $# -gt 0 ]; do case $1 in -l|-p|-o|-i|-e) shift 2 ;; -*) shift ;; *) break ;; esac; done
host=${1##*@}; shift
[ "${1:-}" = -- ] && shift
mkdir -p "@REMOTE@-$host" && cd "@REMOTE@-$host" && HOME=$PWD SHELL=/bin/bash exec bash -c "$*"
`

// testShardsParallel runs the worked example of docs/operations.md
// ("Harvester shards"): GNU parallel over ssh, with ssh replaced by a
// stand-in that runs each "host" in a directory of its own. It runs it
// as written (two hosts, two shards) and with more shards than hosts
// (one host, two shards): there both shards run in one scratch copy, the
// second one merges them there, and the shard output must still come
// back whole (a shard in a bare batch directory keeps the shard
// directories; the collection's merge removes them).
func (e *opsEnv) testShardsParallel(t *testing.T) {
	for _, tool := range []string{"parallel", "rsync"} {
		longtest.Tool(t, tool, tool)
	}
	t.Run("two-hosts", func(t *testing.T) { e.shardsParallel(t, []string{"h1", "h2"}, 2) })
	t.Run("one-host", func(t *testing.T) { e.shardsParallel(t, []string{"h1"}, 2) })
}

// shardsParallel runs the GNU parallel example with n shards on hosts.
func (e *opsEnv) shardsParallel(t *testing.T, hostNames []string, n int) {
	col := e.newCollection(t)
	if r := e.cron(nil, "--cycles", "1", col); r.code != 0 {
		t.Fatalf("cron.sh: exit %d\n%s", r.code, r.stderr)
	}
	e.wire(t, "manager", "run", "--collection", col)
	work := t.TempDir()
	remote := filepath.Join(work, "remote")
	ssh := filepath.Join(work, "ssh")
	if err := os.WriteFile(ssh, []byte(strings.ReplaceAll(fakeSSH, "@REMOTE@", remote)), 0o755); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(work, "harvest-hosts.txt")
	var lines strings.Builder
	for _, h := range hostNames {
		fmt.Fprintf(&lines, "1/%s\n", h)
	}
	if err := os.WriteFile(hosts, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The example's lines, with --ssh added.
	script := `set -e
cd "$COL/batches"
B=000002 N=$N
cp ../wire.toml $B/wire.toml
seq 1 $N | parallel --ssh "$SSH" --sshloginfile "$HOSTS" --jobs 1 --workdir wire-scratch \
    --transferfile $B --return $B/harvest-shard-{}-of-$N --return $B/harvested-shard-{}-of-$N.done --cleanup \
    harvester run --quiet --batch-dir $B --shard {}/$N
rm $B/wire.toml
`
	// The example's last line, run after the test has read what the
	// shards brought back (the merge removes the shard directories).
	merge := `harvester run --quiet --collection "$COL" --batch 000002`
	env := []string{"N=" + strconv.Itoa(n), "COL=" + col, "SSH=" + ssh, "HOSTS=" + hosts, "PATH=" + e.bin + ":" + os.Getenv("PATH")}
	e.must(t, env, "bash", "-c", script)
	for _, h := range hostNames {
		if _, err := os.Stat(filepath.Join(remote+"-"+h, "wire-scratch", "000002", collection.BatchFile)); err != nil {
			t.Errorf("host %s did not get the batch: %v", h, err)
		}
	}
	// Each shard's fetch log as parallel brought it back (--return):
	// what is left on the hosts after --cleanup depends on parallel's
	// version, what came back is the example's contract.
	batchDir := filepath.Join(col, collection.BatchesDir, "000002")
	var logs [][]fetchlog.Record
	for i := 1; i <= n; i++ {
		p := filepath.Join(batchDir, fmt.Sprintf("harvest-shard-%d-of-%d", i, n), fetchlog.LogFile)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("parallel did not bring back the fetch log of shard %d: %v", i, err)
		}
		logs = append(logs, fetchRecords(t, p))
	}
	e.must(t, env, "bash", "-c", "cd \"$COL/batches\" && "+merge)
	if _, err := os.Stat(filepath.Join(batchDir, "harvested.done")); err != nil {
		t.Fatalf("the shards brought back by parallel were not merged: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(batchDir, "harvest-shard-*")); len(left) > 0 {
		t.Errorf("the collection's merge left shard directories behind: %v", left)
	}
	_, entries, err := batch.ReadFile(filepath.Join(batchDir, collection.BatchFile))
	if err != nil {
		t.Fatal(err)
	}
	e.wire(t, "gatherer", "run", "--collection", col)
	e.wire(t, "seeder", "run", "--collection", col)
	e.wire(t, "seeder", "check", "--collection", col)
	checkShards(t, col, entries, logs)
}
