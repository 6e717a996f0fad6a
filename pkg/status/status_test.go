package status

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

func TestParseLocks(t *testing.T) {
	// Lines as Linux 6.x prints them (fs/locks.c, lock_get_status).
	const table = `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1573402 0 EOF
2: POSIX  ADVISORY  READ 77 08:02:12 0 EOF
2: -> FLOCK  ADVISORY  WRITE 99 fd:01:1573402 0 EOF
3: OFDLCK ADVISORY  WRITE -1 00:1a:5 0 EOF
garbage
4: FLOCK  ADVISORY  WRITE x fd:01:1 0 EOF
5: FLOCK  ADVISORY  WRITE 12 zz:01:1 0 EOF
`
	got := parseLocks(bufio.NewScanner(strings.NewReader(table)))
	want := lockTable{
		{0xfd, 1, 1573402}: 4242,
		{8, 2, 12}:         77,
		{0, 0x1a, 5}:       -1,
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v: pid %d, want %d", k, got[k], v)
		}
	}
}

func TestDevNumbers(t *testing.T) {
	for _, c := range []struct{ dev, major, minor uint64 }{
		{0xfd01, 0xfd, 1},                 // device-mapper 253:1
		{0x0802, 8, 2},                    // sda2
		{0x1a, 0, 0x1a},                   // an anonymous device (tmpfs, overlay)
		{0x100056723489, 0x1234, 0x56789}, // makedev(0x1234, 0x56789): large numbers use the high bits
	} {
		if devMajor(c.dev) != c.major || devMinor(c.dev) != c.minor {
			t.Errorf("dev %#x: %d:%d, want %d:%d", c.dev, devMajor(c.dev), devMinor(c.dev), c.major, c.minor)
		}
	}
}

// newCollection makes a collection with two batches: 000001 seeded,
// 000002 managed with a harvest in progress, three documents, and a cron
// log with a failed run.
func newCollection(t *testing.T) *collection.Collection {
	t.Helper()
	col, err := collection.Create(t.TempDir(), []byte("\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		for i, st := range []linkgraph.State{linkgraph.StateFetched, linkgraph.StateScheduled, linkgraph.StatePending} {
			id, _, err := tx.AddURL("http://a.cl/"+string(rune('a'+i)), site, 0, 0)
			if err != nil {
				return err
			}
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			d.State = st
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		return nil
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, content string) {
		p := filepath.Join(col.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("batches/000001/batch.tsv", "# wire-batch 2\n# batch: 000001\n# created: 2026-11-20T02:00:00Z\n")
	write("batches/000001/harvested.done", `{"version":1,"batch":1,"urls":10,"fetched":8,"bytes":2500000,"robots_excluded":1,"errors":{"dns":1},"pages_per_second":4.25}`)
	write("batches/000001/gathered.done", "{}")
	write("batches/000001/seeded.done", "{}")
	write("batches/000002/batch.tsv", "# wire-batch 2\n# batch: 000002\n# created: 2026-11-21T02:00:00Z\n")
	write("batches/000002/harvest.partial/fetch.log", "# wire-fetchlog 1\n")
	write("logs/cron.log", `2026-11-21T02:00:00Z cron[100]: start: collection=/c cycles=1 deadline=-
2026-11-21T02:00:01Z harvester 000001| time=2026-11-21T02:00:01Z level=ERROR msg="disk full"
2026-11-21T02:00:02Z cron[100]: FAILED: harvester on batch 000001 exited 1: harvester: write: no space left on device
2026-11-21T02:00:02Z cron[100]: end: failed (exit 1) after 0 cycle(s); the next run continues from harvester on batch 000001
2026-11-22T02:00:00Z cron[200]: start: collection=/c cycles=1 deadline=-
2026-11-22T02:00:00Z cron[200]: harvester on batch 000002: start
`)
	return col
}

func TestCollect(t *testing.T) {
	col := newCollection(t)
	lock, err := col.Lock("harvester")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	// A shard harvester at work on batch 2 (docs/format/harvest.md).
	if err := os.Mkdir(filepath.Join(col.Dir, "batches", "000002", "harvest-shard-1-of-2.partial"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(col.Dir, "batches", "000002", "harvested-shard-2-of-2.done"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	shard, err := collection.LockPath(filepath.Join(col.Dir, "batches", "000002", "harvester-shard-1-of-2.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer shard.Release()
	s, err := Collect(col, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Batches != 2 || s.Last == nil || s.Last.ID != 2 || s.Last.Stage != collection.StageManaged || s.Last.Next != "harvester" {
		t.Fatalf("batches %d, last %+v", s.Batches, s.Last)
	}
	if len(s.Last.Partial) != 2 || s.Last.Partial[0] != "harvest-shard-1-of-2.partial" || s.Last.Partial[1] != "harvest.partial" || !s.Last.Created.Equal(time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)) {
		t.Errorf("last batch %+v", s.Last)
	}
	if len(s.InProgress) != 1 || s.InProgress[0].ID != 2 {
		t.Errorf("in progress %+v", s.InProgress)
	}
	if p := s.Pages; p == nil || *p != (Pages{Known: 3, Fetched: 1, Scheduled: 1, Pending: 1, Sites: 1}) {
		t.Errorf("pages %+v (%s)", s.Pages, s.GraphError)
	}
	if _, err := os.Stat("/proc/locks"); err == nil {
		if len(s.Running) != 2 || s.Running[0].Name != "harvester-shard-1-of-2 000002" || s.Running[1].Name != "harvester" || s.Running[1].PID != os.Getpid() {
			t.Errorf("running %+v, want the shard's and the harvester's locks held by this process (%d)", s.Running, os.Getpid())
		}
	}
	if c := s.Cron; c == nil || c.PID != 200 || !c.Ended.IsZero() || c.Running {
		t.Errorf("cron %+v, want run 200 not ended", s.Cron)
	}
	if len(s.Errors) != 2 || s.Errors[1].Line != 3 || !strings.Contains(s.Errors[1].Text, "FAILED: harvester on batch 000001") {
		t.Errorf("errors %+v", s.Errors)
	}

	var out bytes.Buffer
	if err := s.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"collection  " + col.Dir + ", 2 batches\n",
		"last batch  000002 managed, next: harvester (harvest-shard-1-of-2.partial, harvest.partial present: running or interrupted) (shards done: harvested-shard-2-of-2.done), created 2026-11-21T02:00:00Z\n",
		"unfinished  000002 managed [harvest-shard-1-of-2.partial, harvest.partial] → harvester\n",
		"running     harvester-shard-1-of-2 000002 (pid ",
		"pages       3 known: 1 fetched, 1 pending, 1 scheduled, 0 failed, 0 excluded; 1 sites\n",
		"cron        pid 200 started 2026-11-22T02:00:00Z, did not finish (killed?)\n",
		"errors      last 2 in logs/:\n  cron.log:2: ",
		"  cron.log:3: 2026-11-21T02:00:02Z cron[100]: FAILED: harvester on batch 000001 exited 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
}

func TestCollectHarvestSummary(t *testing.T) {
	col := newCollection(t)
	if err := os.RemoveAll(filepath.Join(col.Dir, "batches", "000002")); err != nil {
		t.Fatal(err)
	}
	s, err := Collect(col, Options{NoGraph: true, Errors: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pages != nil || len(s.Errors) != 1 || len(s.InProgress) != 0 {
		t.Errorf("pages %+v, errors %+v, in progress %+v", s.Pages, s.Errors, s.InProgress)
	}
	var out bytes.Buffer
	s.WriteText(&out)
	for _, want := range []string{
		"last batch  000001 seeded, created 2026-11-20T02:00:00Z\n",
		"            10 URLs, 8 fetched (2.5 MB), 1 excluded by robots.txt, fetch errors: dns 1; 4.2 pages/s\n",
		"unfinished  none: every batch is seeded\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status text lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCollectGraphBusy(t *testing.T) {
	col := newCollection(t)
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := Collect(col, Options{GraphTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pages != nil || !strings.Contains(s.GraphError, "being written") {
		t.Errorf("pages %+v, graph error %q", s.Pages, s.GraphError)
	}
}

func TestScanLogsEnded(t *testing.T) {
	dir := t.TempDir()
	log := "2026-11-22T02:00:00Z cron[7]: start: x\n2026-11-22T03:00:00Z cron[8]: skipped: another cron.sh holds l\n2026-11-22T04:00:00Z cron[7]: end: ok: 3 cycle(s)\n"
	if err := os.WriteFile(filepath.Join(dir, CronLogFile), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harvester.log"), []byte("level=ERROR msg=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, errs := scanLogs(dir, 5)
	if run == nil || run.PID != 7 || run.Result != "ok: 3 cycle(s)" || !run.Ended.Equal(time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)) {
		t.Errorf("run %+v", run)
	}
	if len(errs) != 1 || errs[0].File != "harvester.log" {
		t.Errorf("errors %+v, want the line of harvester.log", errs)
	}
}

func FuzzScanLogs(f *testing.F) {
	f.Add("2026-11-22T02:00:00Z cron[7]: start: x\n2026-11-22T04:00:00Z cron[7]: end: ok\n")
	f.Add("x cron[99999999999999999999]: end: \n\xff]: FAILED\n")
	f.Fuzz(func(t *testing.T, log string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, CronLogFile), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		run, errs := scanLogs(dir, 3)
		if len(errs) > 3 {
			t.Errorf("%d errors kept, limit 3", len(errs))
		}
		if run != nil && run.Result != "" && run.Ended.IsZero() && !strings.Contains(log, "end:") {
			t.Errorf("run %+v ended without an end line", run)
		}
	})
}

func FuzzParseLocks(f *testing.F) {
	f.Add("1: FLOCK  ADVISORY  WRITE 4242 fd:01:1573402 0 EOF\n")
	f.Add("1: -> FLOCK ADVISORY WRITE 1 0:0:0 0 EOF\n")
	f.Fuzz(func(t *testing.T, table string) {
		got := parseLocks(bufio.NewScanner(strings.NewReader(table)))
		if len(got) > strings.Count(table, "\n")+1 {
			t.Errorf("%d locks from %d lines", len(got), strings.Count(table, "\n")+1)
		}
	})
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"ñññ", 3, "ñ…"}, // never half a rune
		{"ñññ", 4, "ññ…"},
	} {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestCollectStopped: a harvest stopped by a signal or a network outage
// (its stopped.json) is shown as such, not as a failure.
func TestCollectStopped(t *testing.T) {
	for _, tc := range []struct{ why, want string }{
		{"interrupted", "harvest interrupted at 2026-11-22T02:00:05Z; a rerun resumes it"},
		{"network-down", "harvest stopped, network down at 2026-11-22T02:00:05Z; a rerun resumes it"},
		{"disk-full", "harvest stopped, disk full (collection.min_free) at 2026-11-22T02:00:05Z; a rerun resumes it"},
	} {
		t.Run(tc.why, func(t *testing.T) {
			col := newCollection(t)
			p := filepath.Join(col.Dir, "batches", "000002", "harvest.partial", stoppedFile)
			data := `{"why":"` + tc.why + `","error":"harvest batch 000002: x","at":"2026-11-22T02:00:05Z"}` + "\n"
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Collect(col, Options{NoGraph: true})
			if err != nil {
				t.Fatal(err)
			}
			if st := s.Last.Stopped; st == nil || st.Why != tc.why || st.Dir != "harvest.partial" {
				t.Fatalf("stopped %+v", s.Last.Stopped)
			}
			var out bytes.Buffer
			s.WriteText(&out)
			for _, want := range []string{
				"last batch  000002 managed, next: harvester (harvest.partial present: " + tc.want + ")",
				"unfinished  000002 managed [harvest.partial] (" + tc.want + ") → harvester\n",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("status text lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// A damaged graph.db is shown like a busy one, but Damaged reports it
// (manager status then exits with the damaged-file code); a busy one is
// not damage.
func TestCollectGraphDamaged(t *testing.T) {
	col := newCollection(t)
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if s, err := Collect(col, Options{}); err != nil || s.Damaged() != nil {
		t.Fatalf("a sound graph.db: %v, damaged %v", err, s.Damaged())
	}
	junk := bytes.Repeat([]byte{0xa5}, 8192)
	if err := os.WriteFile(col.GraphPath(), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Collect(col, Options{GraphTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pages != nil || s.GraphError == "" || !errors.Is(s.Damaged(), collection.ErrDamaged) {
		t.Errorf("pages %+v, graph error %q, damaged %v", s.Pages, s.GraphError, s.Damaged())
	}
}
