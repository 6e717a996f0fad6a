package collection

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The names below are the one place where the collection's lock, marker
// and work-directory names are spelled (docs/format/collection.md,
// docs/format/harvest.md). The shell scripts (scripts/crawl.sh,
// scripts/cron.sh) repeat a few of them as literals and point here.

// Lock names: a stage's lock is locks/NAME.lock in the collection
// (Collection.Lock), and a harvester on a bare batch directory also locks
// NAME.lock in that directory.
const (
	ManagerLock   = "manager"
	HarvesterLock = "harvester"
	GathererLock  = "gatherer"
	SeederLock    = "seeder"
	// CronLock is held by scripts/cron.sh for a whole run.
	CronLock = "cron"
)

// Suffixes of lock files, stage markers and work-in-progress directories.
const (
	LockSuffix    = ".lock"
	MarkerSuffix  = ".done"
	PartialSuffix = ".partial"
)

// Work directories inside a batch directory.
const (
	// HarvestPartialDir is the harvest directory while it is written.
	HarvestPartialDir = HarvestDir + PartialSuffix
	// HarvestMergingDir is where the shards are merged before the
	// result is renamed to harvest/.
	HarvestMergingDir = HarvestDir + ".merging"
	// ParsedPartialDir is the gatherer's output while it is written.
	ParsedPartialDir = ParsedDir + PartialSuffix
)

// LockFileName is the file name of lock name: "harvester.lock".
func LockFileName(name string) string { return name + LockSuffix }

// MarkerFile is the file name of stage s's marker: "harvested.done".
func MarkerFile(s Stage) string { return string(s) + MarkerSuffix }

// ShardName is "shard-I-of-N", the part of every name of harvester shard
// i of n.
func ShardName(i, n int) string { return fmt.Sprintf("shard-%d-of-%d", i, n) }

// ShardHarvestDir is the finished output of shard i of n in the batch
// directory: "harvest-shard-I-of-N".
func ShardHarvestDir(i, n int) string { return HarvestDir + "-" + ShardName(i, n) }

// ShardPartialDir is the output of shard i of n while it is written:
// "harvest-shard-I-of-N.partial".
func ShardPartialDir(i, n int) string { return ShardHarvestDir(i, n) + PartialSuffix }

// ShardMarker is the file that says shard i of n is done:
// "harvested-shard-I-of-N.done".
func ShardMarker(i, n int) string {
	return string(StageHarvested) + "-" + ShardName(i, n) + MarkerSuffix
}

// ShardLockName is the lock of harvester shard i of n:
// "harvester-shard-I-of-N" (locks/harvester-shard-I-of-N.lock in the
// collection, harvester-shard-I-of-N.lock in the batch directory).
func ShardLockName(i, n int) string { return HarvesterLock + "-" + ShardName(i, n) }

// ParseShardFile reads the shard of a name written for a harvester shard:
// its output directory (harvest-shard-I-of-N, with or without .partial),
// its marker (harvested-shard-I-of-N.done) or its lock file
// (harvester-shard-I-of-N.lock). ok is false for any other name.
func ParseShardFile(name string) (i, n int, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(name, HarvestDir+"-shard-"):
		rest = strings.TrimSuffix(strings.TrimPrefix(name, HarvestDir+"-"), PartialSuffix)
	case strings.HasPrefix(name, string(StageHarvested)+"-shard-"):
		rest, ok = strings.CutSuffix(strings.TrimPrefix(name, string(StageHarvested)+"-"), MarkerSuffix)
		if !ok {
			return 0, 0, false
		}
	case strings.HasPrefix(name, HarvesterLock+"-shard-"):
		rest, ok = strings.CutSuffix(strings.TrimPrefix(name, HarvesterLock+"-"), LockSuffix)
		if !ok {
			return 0, 0, false
		}
	default:
		return 0, 0, false
	}
	a, b, found := strings.Cut(strings.TrimPrefix(rest, "shard-"), "-of-")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n || ShardName(i, n) != rest {
		return 0, 0, false
	}
	return i, n, true
}

// IsHarvestOutput tells whether a name in a batch directory is something
// a harvester writes before the batch is harvested: harvest/,
// harvest.partial/, harvest.merging/, a shard's output directory or a
// shard's marker. Any of them means the batch's harvest has started.
func IsHarvestOutput(name string) bool {
	switch name {
	case HarvestDir, HarvestPartialDir, HarvestMergingDir:
		return true
	}
	if _, _, ok := ParseShardFile(name); ok {
		return !strings.HasSuffix(name, LockSuffix)
	}
	return false
}

// IsHarvesterLockFile tells whether a file name is a harvester's lock:
// harvester.lock or harvester-shard-I-of-N.lock.
func IsHarvesterLockFile(name string) bool {
	if name == LockFileName(HarvesterLock) {
		return true
	}
	_, _, ok := ParseShardFile(name)
	return ok && strings.HasSuffix(name, LockSuffix)
}

// HarvestOutputs lists the names in the batch directory for which
// IsHarvestOutput holds, sorted (none if the directory does not exist).
func (b *Batch) HarvestOutputs() ([]string, error) {
	entries, err := os.ReadDir(b.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read batch %s: %w", b.Dir, err)
	}
	var out []string
	for _, e := range entries {
		if IsHarvestOutput(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// HarvesterLockFiles lists the lock files that harvesters of batch b use,
// sorted: locks/harvester.lock, every locks/harvester-shard-I-of-N.lock
// and the harvester*.lock files in the batch directory. A file's presence
// does not mean it is held; take it with LockPath to know.
func (c *Collection) HarvesterLockFiles(b *Batch) ([]string, error) {
	out := []string{filepath.Join(c.Dir, LocksDir, LockFileName(HarvesterLock))}
	for _, dir := range []string{filepath.Join(c.Dir, LocksDir), b.Dir} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list harvester locks in %s: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if IsHarvesterLockFile(e.Name()) && p != out[0] {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
