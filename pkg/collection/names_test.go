package collection

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestShardNames(t *testing.T) {
	got := []string{ShardHarvestDir(2, 3), ShardPartialDir(2, 3), ShardMarker(2, 3), ShardLockName(2, 3), LockFileName(HarvesterLock), MarkerFile(StageHarvested), HarvestPartialDir, ParsedPartialDir}
	want := []string{"harvest-shard-2-of-3", "harvest-shard-2-of-3.partial", "harvested-shard-2-of-3.done", "harvester-shard-2-of-3", "harvester.lock", "harvested.done", "harvest.partial", "parsed.partial"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

func TestParseShardFile(t *testing.T) {
	for _, tc := range []struct {
		name         string
		i, n         int
		ok           bool
		output, lock bool
	}{
		{"harvest-shard-2-of-3", 2, 3, true, true, false},
		{"harvest-shard-2-of-3.partial", 2, 3, true, true, false},
		{"harvested-shard-1-of-2.done", 1, 2, true, true, false},
		{"harvester-shard-2-of-2.lock", 2, 2, true, false, true},
		{"harvester.lock", 0, 0, false, false, true},
		{"harvest", 0, 0, false, true, false},
		{"harvest.partial", 0, 0, false, true, false},
		{"harvest.merging", 0, 0, false, true, false},
		{"harvested.done", 0, 0, false, false, false},
		{"harvest-shard-3-of-2", 0, 0, false, false, false},
		{"harvest-shard-01-of-2", 0, 0, false, false, false},
		{"harvest-shard-1-of-2x", 0, 0, false, false, false},
		{"harvested-shard-1-of-2", 0, 0, false, false, false},
		{"harvester-shard-1-of-2", 0, 0, false, false, false},
		{"gatherer.lock", 0, 0, false, false, false},
		{"parsed.partial", 0, 0, false, false, false},
	} {
		i, n, ok := ParseShardFile(tc.name)
		if i != tc.i || n != tc.n || ok != tc.ok {
			t.Errorf("ParseShardFile(%q) = %d, %d, %v; want %d, %d, %v", tc.name, i, n, ok, tc.i, tc.n, tc.ok)
		}
		if got := IsHarvestOutput(tc.name); got != tc.output {
			t.Errorf("IsHarvestOutput(%q) = %v", tc.name, got)
		}
		if got := IsHarvesterLockFile(tc.name); got != tc.lock {
			t.Errorf("IsHarvesterLockFile(%q) = %v", tc.name, got)
		}
	}
}

func TestHarvestOutputsAndLocks(t *testing.T) {
	c, err := Create(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := c.Batch(1)
	if out, err := b.HarvestOutputs(); err != nil || out != nil {
		t.Errorf("missing batch: %q %v", out, err)
	}
	for _, name := range []string{BatchFile, ShardMarker(1, 2), LockFileName(ShardLockName(2, 2)), "gatherer.lock"} {
		if err := WriteFileAtomic(filepath.Join(b.Dir, name), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(b.Dir, ShardPartialDir(2, 2)), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := c.Lock(ShardLockName(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	out, err := b.HarvestOutputs()
	if want := []string{"harvest-shard-2-of-2.partial", "harvested-shard-1-of-2.done"}; err != nil || !reflect.DeepEqual(out, want) {
		t.Errorf("outputs %q %v, want %q", out, err, want)
	}
	locks, err := c.HarvesterLockFiles(b)
	want := []string{filepath.Join(b.Dir, "harvester-shard-2-of-2.lock"), filepath.Join(c.Dir, LocksDir, "harvester-shard-1-of-2.lock"), filepath.Join(c.Dir, LocksDir, "harvester.lock")}
	if err != nil || !reflect.DeepEqual(locks, want) {
		t.Errorf("locks %q %v, want %q", locks, err, want)
	}
}
