package manager

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Cancel puts every document back as it was; running again writes the
// same batch under the same id.
func TestCancelRestores(t *testing.T) {
	f := smallWebFixture(t, StrategyPageRank)
	before := map[string]linkgraph.State{}
	for _, p := range smallWeb() {
		before[p.url] = f.doc(p.url).State
	}
	res := f.mustRun()
	first, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := f.cancel(false)
	if err != nil {
		t.Fatal(err)
	}
	if cr.Batch != 1 || cr.Restored != res.URLs {
		t.Errorf("cancel result %+v, run %+v", cr, res)
	}
	for u, st := range before {
		if d := f.doc(u); d.State != st {
			t.Errorf("%s: %s after cancel, %s before the run", u, d.State, st)
		}
	}
	if _, ok := f.batchState(1); ok {
		t.Error("graph.db still records batch 1")
	}
	entries, _ := os.ReadDir(filepath.Join(f.col.Dir, collection.BatchesDir))
	if len(entries) != 0 {
		t.Errorf("batches/ holds %v", entries)
	}
	res = f.mustRun()
	again, err := os.ReadFile(res.File)
	if err != nil {
		t.Fatal(err)
	}
	if res.Batch != 1 || !bytes.Equal(first, again) {
		t.Errorf("batch after cancel: %d\n%s\nwant\n%s", res.Batch, again, first)
	}
}

// A failed page keeps its failure when its batch is cancelled.
func TestCancelRestoresFailed(t *testing.T) {
	f := newFixture(t)
	f.add(page{url: "http://a.cl/", state: linkgraph.StateFailed, failures: 1, visits: 2, fetched: daysAgo(30)})
	f.mustRun()
	if _, err := f.cancel(false); err != nil {
		t.Fatal(err)
	}
	if d := f.doc("http://a.cl/"); d.State != linkgraph.StateFailed {
		t.Errorf("state %s, want failed", d.State)
	}
}

func TestCancelRefuses(t *testing.T) {
	t.Run("nothing to cancel", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.cancel(true); !errors.Is(err, collection.ErrNothingToDo) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("harvested", func(t *testing.T) {
		f := smallWebFixture(t, StrategyBacklink)
		f.mustRun()
		if err := f.col.Batch(1).MarkDone(collection.StageHarvested, map[string]int{"urls": 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.cancel(true); !errors.Is(err, collection.ErrAlreadyDone) {
			t.Errorf("err %v", err)
		}
		if !f.col.Batch(1).Done(collection.StageManaged) {
			t.Error("harvested batch removed")
		}
	})
	for _, dir := range []string{collection.HarvestPartialDir, collection.HarvestDir, collection.ShardPartialDir(1, 2), collection.ShardHarvestDir(2, 2), collection.ShardMarker(1, 2)} {
		t.Run(dir, func(t *testing.T) {
			f := smallWebFixture(t, StrategyBacklink)
			res := f.mustRun()
			if err := os.MkdirAll(filepath.Join(f.col.Batch(1).Dir, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := f.cancel(false); !errors.Is(err, ErrHarvestStarted) {
				t.Errorf("err %v", err)
			}
			cr, err := f.cancel(true)
			if err != nil || cr.Restored != res.URLs {
				t.Errorf("forced: %+v, %v", cr, err)
			}
		})
	}
	// A running harvester, whole or shard, holds a lock in locks/ or in
	// the batch directory (--batch-dir): cancel refuses even with --force,
	// and leaves the batch as it was.
	for _, tc := range []struct{ name, dir, lock string }{
		{"harvester running", "", collection.HarvesterLock},
		{"shard running", "", collection.ShardLockName(2, 2)},
		{"shard running on the batch directory", "batch", collection.ShardLockName(1, 2)},
		{"harvester running on the batch directory", "batch", collection.HarvesterLock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := smallWebFixture(t, StrategyBacklink)
			f.mustRun()
			b := f.col.Batch(1)
			path := filepath.Join(f.col.Dir, collection.LocksDir, collection.LockFileName(tc.lock))
			if tc.dir != "" {
				path = filepath.Join(b.Dir, collection.LockFileName(tc.lock))
			}
			lock, err := collection.LockPath(path)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Release()
			if _, err := f.cancel(true); !errors.Is(err, collection.ErrLocked) {
				t.Errorf("err %v", err)
			}
			if !b.Done(collection.StageManaged) {
				t.Error("batch removed under a running harvester")
			}
			lock.Release()
			if _, err := f.cancel(true); err != nil {
				t.Errorf("after the harvester stopped: %v", err)
			}
		})
	}
}

// Only the newest batch is cancelled.
func TestCancelNewest(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	f.cfg.Manager.BatchSize = 2
	f.mustRun()
	f.mustRun()
	cr, err := f.cancel(false)
	if err != nil || cr.Batch != 2 {
		t.Fatalf("%+v %v", cr, err)
	}
	if ids, _ := f.col.BatchIDs(); len(ids) != 1 || ids[0] != 1 {
		t.Errorf("batches %v", ids)
	}
	if _, ok := f.batchState(1); !ok {
		t.Error("batch 1 forgotten")
	}
}

// A cancel killed after renaming the directory, before the graph
// transaction: the next run finishes the roll-back before it chooses.
func TestRunFinishesInterruptedCancel(t *testing.T) {
	f := smallWebFixture(t, StrategyBreadthFirst)
	res := f.mustRun()
	first, _ := os.ReadFile(res.File)
	b := f.col.Batch(1)
	moved := filepath.Join(f.col.Dir, collection.BatchesDir, cancelledPrefix+b.Name())
	if err := os.Rename(b.Dir, moved); err != nil {
		t.Fatal(err)
	}
	res = f.mustRun()
	again, _ := os.ReadFile(res.File)
	if res.Batch != 1 || res.Recovered || !bytes.Equal(first, again) {
		t.Errorf("run after an interrupted cancel: %+v\n%s", res, again)
	}
	if _, err := os.Stat(moved); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left: %v", moved, err)
	}
}
