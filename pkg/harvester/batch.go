package harvester

// The batch lifecycle: harvestBatch and its steps, from the batch
// directory's lock to the harvested marker (or the shard's marker and
// the merge, shard.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// harvestBatch is the run both modes share: lock the batch directory,
// check the batch, resume or start the partial directory, fetch what is
// left, verify the fetch log, publish and mark. For a shard, the batch is
// marked harvested once every shard is done (mergeShards). Each step is a
// function below, in the order they run.
func harvestBatch(ctx context.Context, b *collection.Batch, opts Options) (*Summary, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := opts.Shard
	if opts.eng == nil {
		// A run of its own: the process's politeness state and client
		// are this harvest's (Follow shares one among its harvests).
		eng, err := newEngine(opts.Config, log)
		if err != nil {
			return nil, err
		}
		opts.eng = eng
	}
	if !b.Done(collection.StageManaged) {
		// Before locking: the lock would create the directory.
		return nil, b.CheckReady(collection.StageHarvested)
	}
	lock, err := collection.LockPath(filepath.Join(b.Dir, s.LockFile()))
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if err := admit(b, opts, log); err != nil {
		return nil, err
	}
	hdr, entries, err := batch.ReadFile(b.File())
	if err != nil {
		return nil, err
	}
	if hdr.Batch > 0 {
		b.ID = hdr.Batch
	}
	if done, sum, err := checkShards(b, entries, opts, log); done || err != nil {
		return sum, err
	}

	start := time.Now()
	partial, final := filepath.Join(b.Dir, s.PartialDir()), filepath.Join(b.Dir, s.HarvestDir())
	if err := preparePartial(b, s, opts.Force, partial, final, log); err != nil {
		return nil, err
	}
	resuming := exists(partial)
	sp := splitBatch(b, s, entries, opts)
	mine := shardEntries(s, sp, entries)
	h, res, err := startHarvest(b, hdr, mine, sp, partial, start, resuming, opts, log)
	if err != nil {
		return nil, err
	}
	todo, pending := h.todo(mine, res.records)
	h.logged = make([]fetchlog.Record, 0, pending) // a line per URL left
	if resuming {
		log.Info("resuming", "batch", b.Name(), "shard", s.String(), "logged", len(res.records), "robots", len(res.robots), "left", pending)
	}
	if err := fetchLeft(ctx, h, b, mine, todo, pending, resuming, partial); err != nil {
		return nil, err
	}
	sum, err := publish(h, b, s, res, mine, partial, final, resuming, start)
	if err != nil {
		return nil, err
	}
	if sp != nil {
		sum.ExpectedSeconds = sp.load[s.I-1].Seconds()
	}
	return mark(b, s, entries, sum, opts.KeepShards, start, log)
}

// admit checks, under the batch directory's lock, that the batch may be
// harvested: ready, or already harvested and forced. A forced shard of a
// batch harvested whole is refused (ErrShards). A batch merged by a shard
// in a bare batch directory, which kept the shard directories, has them
// tidied by the collection's run.
func admit(b *collection.Batch, opts Options, log *slog.Logger) error {
	s := opts.Shard
	ready := b.CheckReady(collection.StageHarvested)
	switch {
	case ready == nil:
	case errors.Is(ready, collection.ErrAlreadyDone) && opts.Force && s.Whole():
	case errors.Is(ready, collection.ErrAlreadyDone) && opts.Force:
		return fmt.Errorf("batch %s: %w: already harvested as a whole; harvest it again without --shard", b.Name(), ErrShards)
	case errors.Is(ready, collection.ErrAlreadyDone) && !opts.KeepShards:
		// Merged by a shard in a bare batch directory, which kept the
		// shard directories: the collection's run tidies them.
		if n, err := shardsPresent(b.Dir); err == nil && n > 0 {
			if err := removeShards(b.Dir, n); err != nil {
				log.Warn("shard directories left behind", "batch", b.Name(), "err", err)
			}
		}
		return ready
	default:
		return ready
	}
	return nil
}

// preparePartial readies the partial directory of shard s before a run:
// a forced run of a harvested batch starts afresh (the old harvest
// directory is replaced at the end); a forced shard also drops its
// published directory and marker; a harvest published but not marked
// (the run died between the two) is taken back, to be finished.
// Otherwise an existing partial directory is resumed as it is.
func preparePartial(b *collection.Batch, s Shard, force bool, partial, final string, log *slog.Logger) error {
	switch {
	case s.Whole() && b.Done(collection.StageHarvested):
		// Forced: start afresh; the old harvest/ is replaced at the end.
		if err := os.RemoveAll(partial); err != nil {
			return fmt.Errorf("remove %s: %w", partial, err)
		}
		log.Info("harvesting again (forced)", "batch", b.Name())
	case !s.Whole() && force:
		for _, p := range []string{partial, final, filepath.Join(b.Dir, s.Marker())} {
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
		}
		log.Info("harvesting the shard again (forced)", "batch", b.Name(), "shard", s.String())
	case !exists(partial) && exists(final):
		// A run published its directory but died before its marker:
		// take it back and finish (nothing is left to fetch).
		if err := os.Rename(final, partial); err != nil {
			return fmt.Errorf("resume published harvest: %w", err)
		}
		log.Info("resuming a published but unmarked harvest", "batch", b.Name(), "shard", s.String())
	}
	return nil
}

// splitBatch is the batch's split over the shards (split.go), nil for
// the whole batch. It reads the batch's servers.jsonl as far as it is
// good, as every shard does.
func splitBatch(b *collection.Batch, s Shard, entries []batch.Entry, opts Options) *split {
	if s.Whole() {
		return nil
	}
	servers, _ := fetchlog.ReadServers(b.ServersPath())
	hc := opts.Config.Harvester
	return planSplit(entries, servers, s.N, hc.Wait.D(), hc.MaxCrawlDelay.D())
}

// shardEntries is the part of the batch's entries that shard s fetches:
// all of them for the whole batch.
func shardEntries(s Shard, sp *split, entries []batch.Entry) []batch.Entry {
	if s.Whole() {
		return entries
	}
	var mine []batch.Entry
	for _, e := range entries {
		if sp.has(s.I, e) {
			mine = append(mine, e)
		}
	}
	return mine
}

// startHarvest opens the partial directory's output (repairing what a
// killed run left, see output.go), clears an earlier stop record, and
// sets up the run's shared state: robots.txt copies and server estimates
// from the batch, an earlier run of this harvest and the previous
// harvest (carry.go), and the batch header's batch_duration. On an
// error the output is closed. The WARC files are named after the run's
// start, unless an earlier run of the harvest left some (nextWARCName).
func startHarvest(b *collection.Batch, hdr batch.Header, mine []batch.Entry, sp *split, partial string, start time.Time, resuming bool, opts Options, log *slog.Logger) (*harvest, *resumed, error) {
	s := opts.Shard
	tmpl := s.WARCName(opts.Config.Harvester.WARCPrefix, b.ID, start)
	out, res, err := openOutput(partial, tmpl, opts.Config.Harvester.WARCMaxBytes, warcInfo(opts.Config, b, s), log)
	if err != nil {
		return nil, nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	for _, msg := range res.repaired {
		log.Warn("repaired "+s.PartialDir(), "batch", b.Name(), "what", msg)
	}
	if err := clearStopped(partial); err != nil {
		out.close()
		return nil, nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	h, err := newHarvest(opts, log, out, res, b)
	if err != nil {
		out.close()
		return nil, nil, err
	}
	if sp != nil {
		h.split, h.shardI = sp, s.I
	}
	// What the previous harvest left for these hosts (an earlier run of
	// this harvest, already in h, wins over it).
	now := time.Now()
	prev := previousHarvests(b, h.carryHorizon(), now)
	h.carryOver(prev, mine, now)
	if !opts.bare {
		h.quiet, h.quietOK = quietSince(b, s, resuming, prev)
	}
	if v := hdr.Params[batchDurationParam]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			log.Warn("batch header: batch_duration ignored", "batch", b.Name(), "value", v)
		} else {
			h.batchDuration = d
		}
	}
	return h, res, nil
}

// fetchLeft fetches the URLs left (harvest.run) and flushes the output.
// A run that stops before the end (interrupted, a fatal error) closes the
// output and records why in the partial directory (stopped.go); a rerun
// resumes from what was logged.
func fetchLeft(ctx context.Context, h *harvest, b *collection.Batch, mine []batch.Entry, todo []bool, pending int, resuming bool, partial string) error {
	runErr := h.run(ctx, b, mine, todo, pending, resuming)
	if runErr == nil {
		if err := h.out.flush(); err != nil {
			runErr = fmt.Errorf("harvest batch %s: %w", b.Name(), err)
		}
	}
	if runErr != nil {
		h.out.close()
		if err := recordStopped(partial, runErr); err != nil {
			h.log.Warn("stop not recorded", "batch", b.Name(), "err", err)
		}
		return runErr
	}
	return nil
}

// publish ends a complete run. Everything is in the files: they are
// fsynced and closed (the WARC files first, then the logs) while the
// fetch log is read back and checked and the servers file written; the
// run is summed up, each closed WARC file gets its CDXJ index, and
// nothing is published (partial renamed to final) before all are done.
func publish(h *harvest, b *collection.Batch, s Shard, res *resumed, mine []batch.Entry, partial, final string, resuming bool, start time.Time) (*Summary, error) {
	closed := make(chan error, 1)
	go func() { closed <- h.out.close() }()
	closeErr, waited := error(nil), false
	waitClose := func() error {
		if !waited {
			closeErr, waited = <-closed, true
			if closeErr != nil {
				closeErr = fmt.Errorf("harvest batch %s: %w", b.Name(), closeErr)
			}
		}
		return closeErr
	}
	defer waitClose()

	// The fetch log is what an earlier run left (read and repaired at
	// the start) and what this run appended (close checks that the file
	// holds exactly that).
	recs := append(res.records[:len(res.records):len(res.records)], h.logged...)
	if err := verify(mine, recs); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	if err := h.finalServers(partial, recs); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	sum := summarize(b.ID, mine, recs)
	sum.RobotsFiles = countLines(filepath.Join(partial, fetchlog.RobotsFile))
	sum.WARCFiles = warcFiles(partial)
	sum.Ranking = h.rank.Name()
	sum.Shard = s.String()
	sum.Resumed = resuming && len(res.records) > 0
	sum.Ended = h.end.reason()
	sum.Holds = s.Whole()
	sum.QuietStart = h.quietOK
	sum.Followed = h.followed
	if err := waitClose(); err != nil {
		return nil, err
	}
	if err := indexWARCs(partial, h.log); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	sum.Started, sum.Finished = start.UTC(), time.Now().UTC()
	sum.ElapsedSeconds = sum.Finished.Sub(sum.Started).Seconds()
	st := h.snapshot()
	sum.RunFetched, sum.Requests = st.Pages, st.Requests
	if sum.ElapsedSeconds > 0 {
		sum.PagesPerSecond = float64(sum.RunFetched) / sum.ElapsedSeconds
	}
	if err := collection.ReplaceDir(partial, final); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	return sum, nil
}

// mark records a published harvest: the batch's harvested marker for the
// whole batch; for a shard, the shard's marker, then the merge of the
// shards once every one is done (unless another harvester holds the
// batch, see mergeIfFree).
func mark(b *collection.Batch, s Shard, entries []batch.Entry, sum *Summary, keepShards bool, start time.Time, log *slog.Logger) (*Summary, error) {
	if s.Whole() {
		if err := b.MarkDone(collection.StageHarvested, sum); err != nil {
			return nil, err
		}
		log.Info("harvested", "batch", b.Name(), "urls", sum.URLs, "fetched", sum.Fetched, "elapsed", time.Since(start).Round(time.Millisecond))
		return sum, nil
	}
	if err := writeMarker(filepath.Join(b.Dir, s.Marker()), sum); err != nil {
		return nil, err
	}
	log.Info("harvested shard", "batch", b.Name(), "shard", s.String(), "urls", sum.URLs, "fetched", sum.Fetched, "elapsed", time.Since(start).Round(time.Millisecond))
	if missing := missingShards(b.Dir, s.N); len(missing) == 0 {
		merged, err := mergeIfFree(b, entries, s.N, keepShards, log)
		if err != nil {
			return nil, err
		}
		sum.Merged = merged
	}
	return sum, nil
}

// warcInfo is the warcinfo record of the run's WARC files.
func warcInfo(cfg config.Config, b *collection.Batch, s Shard) warcio.Info {
	part := "batch " + b.Name()
	if !s.Whole() {
		part += " shard " + s.String()
	}
	info := warcio.Info{
		{Name: "software", Value: "wire harvester"},
		{Name: "format", Value: "WARC File Format 1.1"},
		{Name: "conformsTo", Value: "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{Name: "isPartOf", Value: part},
		{Name: "robots", Value: "obey (" + cfg.Crawl.ProductToken + ")"},
		{Name: "http-header-user-agent", Value: cfg.Crawl.UserAgent},
		{Name: "wire-warc-mode", Value: cfg.Harvester.WARCMode},
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		info = append(info, warcio.Field{Name: "hostname", Value: host})
	}
	return info
}

// indexWARCs writes the CDXJ index of every WARC file of a harvest
// directory that has none (docs/format/harvest.md, "CDXJ indexes"): the
// files of this run, and of an earlier run of a harvester from before
// the indexes. The WARC files are closed and never change again.
func indexWARCs(dir string, log *slog.Logger) error {
	st, err := cdxj.IndexDir(dir, false, log)
	if err != nil {
		return err
	}
	log.Debug("indexed WARC files", "dir", dir, "files", st.Indexed, "lines", st.Lines)
	return nil
}

// countLines is the number of whole lines in the file at path (0 if it
// cannot be read): the robots copies a harvest holds, without parsing
// them.
func countLines(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte{'\n'})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// verify checks that the fetch log holds exactly one line per batch entry.
func verify(entries []batch.Entry, recs []fetchlog.Record) error {
	want := make(map[entryKey]int, len(entries))
	for _, e := range entries {
		want[key(e.DocID, e.URL)]++
	}
	extra := 0
	for _, r := range recs {
		k := key(r.DocID, r.URL)
		if want[k] == 0 {
			extra++
			continue
		}
		want[k]--
	}
	missing := 0
	for _, n := range want {
		missing += n
	}
	if missing > 0 || extra > 0 {
		return fmt.Errorf("%w: %d batch URLs without a line, %d lines not in the batch or repeated", ErrIncomplete, missing, extra)
	}
	return nil
}

// entryKey identifies a batch entry (and its fetch log line).
type entryKey struct {
	docID uint64
	url   string
}

func key(docID uint64, u string) entryKey { return entryKey{docID, u} }

// writeMarker writes a shard's marker: its summary, JSON, atomically.
func writeMarker(path string, sum *Summary) error {
	data, err := jsonMarshal(sum)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return collection.WriteFileAtomic(path, data)
}
