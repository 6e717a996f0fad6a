package harvester

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Shard is one part of a batch shared by N harvesters (N machines): shard
// I of N fetches the batch URLs of the servers the batch's split gives it
// (split.go), so that one server, under all its names, is only ever asked
// by one shard. The zero value is the whole batch.
type Shard struct {
	I, N int // 1 ≤ I ≤ N
}

// ParseShard reads "i/N" (1 ≤ i ≤ N ≤ 1024).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 1024 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %s: want i/N with 1 ≤ i ≤ N ≤ 1024, e.g. 1/4", excerpt.Quote(s))
	}
	return Shard{I: i, N: n}, nil
}

// Whole tells whether the shard is the whole batch.
func (s Shard) Whole() bool { return s.N <= 1 }

// String is "i/N", or "" for the whole batch.
func (s Shard) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Of returns the shard (1..n) of a key (an address the batch does not
// know, split.go): xxhash64 of the lower-case key, modulo n, plus one
// (partition.Hash, which partitions share). The function is part of the
// harvest format: every harvester must agree on it.
func Of(key string, n int) int { return partition.Hash(key, n) }

// HarvestDir is the shard's finished output directory inside the batch
// directory: "harvest-shard-I-of-N" ("harvest" for the whole batch). The
// names of this file are spelled in pkg/collection (names.go).
func (s Shard) HarvestDir() string {
	if s.Whole() {
		return collection.HarvestDir
	}
	return collection.ShardHarvestDir(s.I, s.N)
}

// PartialDir is the shard's work-in-progress directory.
func (s Shard) PartialDir() string {
	if s.Whole() {
		return PartialDir
	}
	return collection.ShardPartialDir(s.I, s.N)
}

// Marker is the file that says the shard is done: "harvested-shard-I-of-N.done".
func (s Shard) Marker() string {
	if s.Whole() {
		return collection.MarkerFile(collection.StageHarvested)
	}
	return collection.ShardMarker(s.I, s.N)
}

// LockFile is the shard's lock in the batch directory.
func (s Shard) LockFile() string {
	return collection.LockFileName(s.LockName())
}

// LockName is the shard's lock in the collection's locks directory.
func (s Shard) LockName() string {
	if s.Whole() {
		return collection.HarvesterLock
	}
	return collection.ShardLockName(s.I, s.N)
}

// WARCName is the template of the names of the shard's WARC files
// (warcio.Name, serial left to the output): the configured prefix, the
// harvest's start, the batch and the shard (1 of 1 for the whole batch),
// so that the files of all shards, and of all batches, can share one
// directory or one archive.
func (s Shard) WARCName(prefix string, batch int, start time.Time) warcio.Name {
	i, n := s.I, s.N
	if s.Whole() {
		i, n = 1, 1
	}
	return warcio.Name{Prefix: prefix, Time: start, Batch: batch, ShardI: i, ShardN: n}
}

// shardDone tells whether the shard's marker exists in the batch
// directory.
func shardDone(dir string, s Shard) bool { return exists(filepath.Join(dir, s.Marker())) }

// shardsPresent returns the N of the shard outputs or markers found in a
// batch directory (0 if none), and an error if shards of different N are
// mixed.
func shardsPresent(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("read %s: %w", dir, err)
	}
	found := map[int]bool{}
	for _, e := range entries {
		_, n, ok := collection.ParseShardFile(e.Name())
		if !ok || strings.HasSuffix(e.Name(), collection.LockSuffix) {
			continue
		}
		found[n] = true
	}
	if len(found) > 1 {
		var ns []string
		for n := range found {
			ns = append(ns, strconv.Itoa(n))
		}
		sort.Strings(ns)
		return 0, fmt.Errorf("%w: shards of different counts (%s) in %s", ErrShards, strings.Join(ns, ", "), dir)
	}
	for n := range found {
		return n, nil
	}
	return 0, nil
}

// missingShards lists the shards of n without a marker.
func missingShards(dir string, n int) []int {
	var out []int
	for i := 1; i <= n; i++ {
		if !shardDone(dir, Shard{I: i, N: n}) {
			out = append(out, i)
		}
	}
	return out
}

// mergeShards builds the batch's harvest/ from the n finished shard
// directories: the WARC files and their indexes are hard-linked (no
// copy; a missing index is written), the fetch logs,
// robots files and servers files concatenated, the result checked
// against the batch, and published by one rename; the shard directories
// are removed afterwards. Readers of harvest/ see an ordinary harvest.
// The caller holds the batch directory's lock.
func mergeShards(dir string, n int, entries []batch.Entry) ([]fetchlog.Record, error) {
	tmp := filepath.Join(dir, collection.HarvestMergingDir)
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	var recs []fetchlog.Record
	var robotsLines []fetchlog.Robots
	var serverLines []fetchlog.Server
	for i := 1; i <= n; i++ {
		sdir := filepath.Join(dir, Shard{I: i, N: n}.HarvestDir())
		r, err := fetchlog.ReadFile(filepath.Join(sdir, fetchlog.LogFile))
		if err != nil {
			return nil, fmt.Errorf("merge shards: %w", err)
		}
		recs = append(recs, r...)
		if rl, err := fetchlog.ReadRobots(filepath.Join(sdir, fetchlog.RobotsFile)); err == nil {
			robotsLines = append(robotsLines, rl...)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("merge shards: %w", err)
		}
		if sl, err := fetchlog.ReadServers(filepath.Join(sdir, fetchlog.ServersFile)); err == nil {
			serverLines = append(serverLines, sl...)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("merge shards: %w", err)
		}
		for _, w := range warcFiles(sdir) {
			if err := os.Link(filepath.Join(sdir, w), filepath.Join(tmp, w)); err != nil {
				return nil, fmt.Errorf("merge shards: %w", err)
			}
			idx := cdxj.IndexName(w)
			if err := os.Link(filepath.Join(sdir, idx), filepath.Join(tmp, idx)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("merge shards: %w", err)
			}
		}
	}
	// A shard published by a harvester from before the indexes has none.
	if err := indexWARCs(tmp, slog.New(slog.DiscardHandler)); err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	if err := verify(entries, recs); err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	err := collection.WriteAtomic(filepath.Join(tmp, fetchlog.LogFile), func(w io.Writer) error {
		if _, err := io.WriteString(w, fetchlog.Header()); err != nil {
			return err
		}
		for i := range recs {
			if _, err := io.WriteString(w, recs[i].Format()); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = collection.WriteAtomic(filepath.Join(tmp, fetchlog.RobotsFile), func(w io.Writer) error {
			for _, l := range robotsLines {
				b, err := fetchlog.FormatRobots(l)
				if err != nil {
					return err
				}
				if _, err := w.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = writeServers(filepath.Join(tmp, fetchlog.ServersFile), serverLines)
	}
	if err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	if err := collection.ReplaceDir(tmp, filepath.Join(dir, collection.HarvestDir)); err != nil {
		return nil, fmt.Errorf("merge shards: %w", err)
	}
	return recs, nil
}

// removeShards deletes the shard directories once harvest/ and its
// marker are published (their WARC files live on in harvest/ as hard
// links). The shard markers stay, as a record of who fetched what.
func removeShards(dir string, n int) error {
	for i := 1; i <= n; i++ {
		s := Shard{I: i, N: n}
		for _, d := range []string{s.HarvestDir(), s.PartialDir()} {
			if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
				return fmt.Errorf("remove shard output: %w", err)
			}
		}
	}
	return nil
}

// checkShards deals with the shard outputs of a batch before a run: an
// unsharded run merges a complete set of shards (done is then true) and
// refuses an incomplete one; a shard run refuses a batch that is being
// harvested unsharded or in another number of shards, and a shard that is
// already done (merging the set first if it is complete).
func checkShards(b *collection.Batch, entries []batch.Entry, opts Options, log *slog.Logger) (bool, *Summary, error) {
	s := opts.Shard
	n, err := shardsPresent(b.Dir)
	if err != nil {
		return false, nil, err
	}
	if s.Whole() {
		if n == 0 {
			return false, nil, nil
		}
		if opts.Force {
			for i := 1; i <= n; i++ {
				os.Remove(filepath.Join(b.Dir, Shard{I: i, N: n}.Marker()))
			}
			return false, nil, removeShards(b.Dir, n)
		}
		if missing := missingShards(b.Dir, n); len(missing) > 0 {
			return false, nil, fmt.Errorf("batch %s: %w: harvested in %d shards, shards %s not done (harvester run --shard i/%d)", b.Name(), ErrShards, n, joinInts(missing), n)
		}
		sum, err := finishMerge(b, entries, n, opts.KeepShards, log)
		return true, sum, err
	}
	if exists(filepath.Join(b.Dir, PartialDir)) || exists(b.HarvestPath()) {
		return false, nil, fmt.Errorf("batch %s: %w: an unsharded harvest is in progress (harvester run without --shard, or --force)", b.Name(), ErrShards)
	}
	if n != 0 && n != s.N {
		return false, nil, fmt.Errorf("batch %s: %w: it is being harvested in %d shards, not %d", b.Name(), ErrShards, n, s.N)
	}
	if shardDone(b.Dir, s) && !opts.Force {
		if len(missingShards(b.Dir, s.N)) == 0 {
			if _, err := mergeIfFree(b, entries, s.N, opts.KeepShards, log); err != nil {
				return false, nil, err
			}
		}
		return false, nil, fmt.Errorf("batch %s: %w: shard %s already harvested", b.Name(), collection.ErrAlreadyDone, s)
	}
	return false, nil, nil
}

// mergeIfFree merges the shards of a batch unless another harvester holds
// the batch lock (it is then merging them itself).
func mergeIfFree(b *collection.Batch, entries []batch.Entry, n int, keep bool, log *slog.Logger) (bool, error) {
	lock, err := collection.LockPath(filepath.Join(b.Dir, LockFile))
	if errors.Is(err, collection.ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer lock.Release()
	if b.Done(collection.StageHarvested) {
		return false, nil
	}
	if _, err := finishMerge(b, entries, n, keep, log); err != nil {
		return false, err
	}
	return true, nil
}

// finishMerge merges the n shards into harvest/, marks the batch
// harvested and, unless keep, removes the shard directories. The caller
// holds the batch lock.
func finishMerge(b *collection.Batch, entries []batch.Entry, n int, keep bool, log *slog.Logger) (*Summary, error) {
	start := time.Now()
	recs, err := mergeShards(b.Dir, n, entries)
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", b.Name(), err)
	}
	sum := summarize(b.ID, entries, recs)
	sum.RobotsFiles = countLines(filepath.Join(b.HarvestPath(), fetchlog.RobotsFile))
	sum.WARCFiles = warcFiles(b.HarvestPath())
	sum.Shards = n
	sum.Merged = true
	for i := 1; i <= n; i++ {
		var part Summary
		if data, err := os.ReadFile(filepath.Join(b.Dir, Shard{I: i, N: n}.Marker())); err == nil {
			if jsonUnmarshal(data, &part) == nil {
				sum.Ranking = part.Ranking
				if sum.Started.IsZero() || part.Started.Before(sum.Started) {
					sum.Started = part.Started
				}
				if part.Finished.After(sum.Finished) {
					sum.Finished = part.Finished
				}
				sum.ShardTimes = append(sum.ShardTimes, ShardTime{Shard: part.Shard, ExpectedSeconds: part.ExpectedSeconds,
					ElapsedSeconds: part.ElapsedSeconds, URLs: part.URLs, Fetched: part.Fetched, Deferred: part.Deferred})
			}
		}
	}
	if !sum.Started.IsZero() {
		sum.ElapsedSeconds = sum.Finished.Sub(sum.Started).Seconds()
	}
	if err := b.MarkDone(collection.StageHarvested, sum); err != nil {
		return nil, err
	}
	if !keep {
		if err := removeShards(b.Dir, n); err != nil {
			log.Warn("shard directories left behind", "batch", b.Name(), "err", err)
		}
	}
	log.Info("merged shards", "batch", b.Name(), "shards", n, "urls", sum.URLs, "elapsed", time.Since(start).Round(time.Millisecond))
	return sum, nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
