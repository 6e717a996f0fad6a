package collection

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "col")
	c, err := Create(dir, []byte("# config\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, nil); !errors.Is(err, ErrExists) {
		t.Errorf("second Create: %v, want ErrExists", err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c.ConfigPath(), c.TextPath(), c.LogsPath(), filepath.Join(dir, BatchesDir)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotCollection) {
		t.Errorf("Open of empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FormatFile), []byte("wire-collection 99\n"), 0o644)
	if _, err := Open(dir); !errors.Is(err, ErrVersion) {
		t.Errorf("Open of future version: %v", err)
	}
}

func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.txt")
	if err := WriteFileAtomic(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("writer failed")
	if err := WriteAtomic(p, func(w io.Writer) error { w.Write([]byte("half")); return failed }); !errors.Is(err, failed) {
		t.Fatalf("failed write: %v", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "one" {
		t.Errorf("a failed write changed the file: %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestReplaceDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "harvest")
	for _, content := range []string{"first", "second"} {
		tmp := filepath.Join(dir, "harvest.partial")
		os.MkdirAll(tmp, 0o755)
		os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644)
		if err := ReplaceDir(tmp, out); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(out, "f"))
		if string(got) != content {
			t.Errorf("got %q want %q", got, content)
		}
	}
	if _, err := os.Stat(out + ".old"); !os.IsNotExist(err) {
		t.Error("old directory left behind")
	}
}

func TestBatchStages(t *testing.T) {
	c, err := Create(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NextReady(StageHarvested); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("empty collection: %v", err)
	}
	id, _ := c.NextBatchID()
	b := c.Batch(id)
	if err := b.CheckReady(StageHarvested); !errors.Is(err, ErrNoBatch) {
		t.Errorf("missing batch: %v", err)
	}
	WriteFileAtomic(b.File(), []byte("# wire-batch 1\n"))
	if next, _ := c.NextBatchID(); next != id+1 {
		t.Errorf("next id %d", next)
	}
	if err := b.CheckReady(StageGathered); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "not harvested") {
		t.Errorf("gather before harvest: %v", err)
	}
	got, err := c.NextReady(StageHarvested)
	if err != nil || got.ID != id {
		t.Fatalf("NextReady: %v %v", got, err)
	}
	if err := b.MarkDone(StageHarvested, map[string]int{"pages": 3}); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckReady(StageHarvested); !errors.Is(err, ErrAlreadyDone) {
		t.Errorf("harvest twice: %v", err)
	}
	var sum map[string]int
	if err := b.Summary(StageHarvested, &sum); err != nil || sum["pages"] != 3 {
		t.Errorf("summary %v %v", sum, err)
	}
	if _, err := c.NextReady(StageGathered); err != nil {
		t.Errorf("gather ready: %v", err)
	}
}

// TestLockExcludesOtherProcess takes a stage lock, then checks that a
// second process cannot take it (flock is per open file, so a child
// process is the honest test) and can once it is released.
func TestLockExcludesOtherProcess(t *testing.T) {
	if os.Getenv("WIRE_LOCK_CHILD") != "" {
		_, err := LockPath(os.Getenv("WIRE_LOCK_CHILD"))
		if errors.Is(err, ErrLocked) {
			os.Exit(4)
		}
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	c, _ := Create(t.TempDir(), nil)
	l, err := c.Lock("seeder")
	if err != nil {
		t.Fatal(err)
	}
	child := func() int {
		cmd := exec.Command(os.Args[0], "-test.run=TestLockExcludesOtherProcess")
		cmd.Env = append(os.Environ(), "WIRE_LOCK_CHILD="+filepath.Join(c.Dir, LocksDir, "seeder.lock"))
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	if code := child(); code != 4 {
		t.Errorf("child took a held lock: exit %d", code)
	}
	l.Release()
	if code := child(); code != 0 {
		t.Errorf("child could not take a free lock: exit %d", code)
	}
}
