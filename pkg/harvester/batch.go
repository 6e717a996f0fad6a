package harvester

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
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// harvestBatch is the run both modes share: lock the batch directory,
// check the batch, resume or start the partial directory, fetch what is
// left, verify the fetch log, publish and mark. For a shard, the batch is
// marked harvested once every shard is done (mergeShards).
func harvestBatch(ctx context.Context, b *collection.Batch, opts Options) (*Summary, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := opts.Shard
	if !b.Done(collection.StageManaged) {
		// Before locking: the lock would create the directory.
		return nil, b.CheckReady(collection.StageHarvested)
	}
	lock, err := collection.LockPath(filepath.Join(b.Dir, s.LockFile()))
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	ready := b.CheckReady(collection.StageHarvested)
	switch {
	case ready == nil:
	case errors.Is(ready, collection.ErrAlreadyDone) && opts.Force && s.Whole():
	case errors.Is(ready, collection.ErrAlreadyDone) && opts.Force:
		return nil, fmt.Errorf("batch %s: %w: already harvested as a whole; harvest it again without --shard", b.Name(), ErrShards)
	case errors.Is(ready, collection.ErrAlreadyDone) && !opts.KeepShards:
		// Merged by a shard in a bare batch directory, which kept the
		// shard directories: the collection's run tidies them.
		if n, err := shardsPresent(b.Dir); err == nil && n > 0 {
			if err := removeShards(b.Dir, n); err != nil {
				log.Warn("shard directories left behind", "batch", b.Name(), "err", err)
			}
		}
		return nil, ready
	default:
		return nil, ready
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
	switch {
	case s.Whole() && b.Done(collection.StageHarvested):
		// Forced: start afresh; the old harvest/ is replaced at the end.
		if err := os.RemoveAll(partial); err != nil {
			return nil, fmt.Errorf("remove %s: %w", partial, err)
		}
		log.Info("harvesting again (forced)", "batch", b.Name())
	case !s.Whole() && opts.Force:
		for _, p := range []string{partial, final, filepath.Join(b.Dir, s.Marker())} {
			if err := os.RemoveAll(p); err != nil {
				return nil, fmt.Errorf("remove %s: %w", p, err)
			}
		}
		log.Info("harvesting the shard again (forced)", "batch", b.Name(), "shard", s.String())
	case !exists(partial) && exists(final):
		// A run published its directory but died before its marker:
		// take it back and finish (nothing is left to fetch).
		if err := os.Rename(final, partial); err != nil {
			return nil, fmt.Errorf("resume published harvest: %w", err)
		}
		log.Info("resuming a published but unmarked harvest", "batch", b.Name(), "shard", s.String())
	}
	resuming := exists(partial)
	mine := entries
	if !s.Whole() {
		mine = nil
		for _, e := range entries {
			if s.Has(e) {
				mine = append(mine, e)
			}
		}
	}
	out, res, err := openOutput(partial, s.WARCPrefix(), opts.Config.Harvester.WARCMaxBytes, warcInfo(opts.Config, b, s), log)
	if err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	for _, msg := range res.repaired {
		log.Warn("repaired "+s.PartialDir(), "batch", b.Name(), "what", msg)
	}
	if err := clearStopped(partial); err != nil {
		out.close()
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	h, err := newHarvest(opts, log, out, res, b)
	if err != nil {
		out.close()
		return nil, err
	}
	// What the previous harvest left for these hosts (an earlier run of
	// this harvest, already in h, wins over it).
	h.carryOver(previousHarvest(b), mine, time.Now())
	if v := hdr.Params[batchDurationParam]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			log.Warn("batch header: batch_duration ignored", "batch", b.Name(), "value", v)
		} else {
			h.batchDuration = d
		}
	}
	todo, pending := h.todo(mine, res.records)
	h.logged = make([]fetchlog.Record, 0, pending) // a line per URL left
	if resuming {
		log.Info("resuming", "batch", b.Name(), "shard", s.String(), "logged", len(res.records), "robots", len(res.robots), "left", pending)
	}

	runErr := h.run(ctx, b, mine, todo, pending, resuming)
	if runErr == nil {
		if err := out.flush(); err != nil {
			runErr = fmt.Errorf("harvest batch %s: %w", b.Name(), err)
		}
	}
	if runErr != nil {
		out.close()
		if err := recordStopped(partial, runErr); err != nil {
			log.Warn("stop not recorded", "batch", b.Name(), "err", err)
		}
		return nil, runErr
	}
	// Everything is in the files: they are fsynced and closed (the WARC
	// files first, then the logs) while the fetch log is read back and
	// checked and the servers file written; nothing is published before
	// both are done.
	closed := make(chan error, 1)
	go func() { closed <- out.close() }()
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
	if err := waitClose(); err != nil {
		return nil, err
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
		merged, err := mergeIfFree(b, entries, s.N, opts.KeepShards, log)
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
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		info = append(info, warcio.Field{Name: "hostname", Value: host})
	}
	return info
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
