package harvester

// Following the batches (harvester run --follow): one process harvests
// its batch and takes each newer batch as soon as the manager writes it,
// beside the harvests still running, over one engine (engine.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/tally"
)

// FollowPoll is how often a following harvester looks for a newer batch
// ready for it while its harvests run: a stat of the batches directory
// and of the few newer batch directories, so it costs nothing next to a
// harvest.
const FollowPoll = 50 * time.Millisecond

// followRescan is how often the batches directory is listed again even
// when its modification time did not change (a file system whose times
// are in whole seconds would hide a directory made within the second of
// the last listing).
const followRescan = time.Second

// FollowCollection harvests batch id of the collection, or the oldest
// batch ready for the harvester when id is 0, exactly as RunCollection
// does, and while any of its harvests runs it takes every newer batch
// that becomes ready for the harvester (its batch file written, not
// harvested, no harvester holding it, no shards of it under way), oldest
// first, and harvests it in this process beside the running ones, over
// one politeness state, one HTTP client, one pool of
// harvester.connections and one set of robots.txt answers (engine.go;
// docs/harvester.md, "Following the batches"). Each batch keeps its own
// life on disk (lock, partial directory, fetch log, WARC files, servers
// file, marker, summary) and is published the moment its own URLs are
// done. done, if not nil, is called with each batch's summary as it is
// published (from one goroutine). It returns once every harvest it took
// has ended and no batch is ready, with the summaries of the published
// batches in batch order and the first failure: a failure of one
// harvest stops the others as an interruption does (resumable by a
// rerun); a batch another harvester took first is skipped. Whole batches
// only: opts.Shard must be the zero value.
func FollowCollection(ctx context.Context, col *collection.Collection, id int, opts Options, done func(*Summary)) ([]*Summary, error) {
	if !opts.Shard.Whole() {
		return nil, fmt.Errorf("%w: following the batches harvests whole batches, not shard %s", config.ErrInvalid, opts.Shard)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := col.Lock(opts.Shard.LockName())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var b *collection.Batch
	if id != 0 {
		b = col.Batch(id)
	} else if b, err = col.NextReady(collection.StageHarvested); err != nil {
		return nil, err
	}
	eng, err := newEngine(opts.Config, log)
	if err != nil {
		return nil, err
	}
	opts.eng = eng
	if opts.Progress != nil {
		opts.Progress = &lockedProgress{p: opts.Progress}
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	f := &follower{
		ctx: runCtx, stop: stop, col: col, opts: opts, log: log, done: done,
		first: b.ID, taken: map[int]bool{}, pending: map[int]bool{},
		results: make(chan followResult),
	}
	f.take(b, false)
	return f.wait(ctx)
}

// follower is the state of one FollowCollection: the harvests running
// and what is known of the batches directory. It belongs to the
// goroutine of wait; the harvests report on results.
type follower struct {
	ctx  context.Context // the harvests' context: stop ends it
	stop context.CancelCauseFunc
	col  *collection.Collection
	opts Options
	log  *slog.Logger
	done func(*Summary)

	first   int          // the first batch taken: newer ones are followed
	taken   map[int]bool // batches taken and not given up
	running int          // harvests running
	// pending are the batch directories newer than first not taken yet;
	// listed when the batches directory changes (listedAt, dirTime).
	pending  map[int]bool
	dirTime  time.Time
	listedAt time.Time

	results  chan followResult
	sums     []*Summary
	firstErr error
	stopping bool
	// interrupted is set once the parent context ended (SIGINT, SIGTERM):
	// every harvest then ends interrupted, none failed, and the run's
	// error is the oldest batch's (errBatch), the one its output is
	// named by.
	interrupted  bool
	errBatch     int
	errInterrupt bool // firstErr is an interrupted harvest's
}

// followResult is the end of one harvest.
type followResult struct {
	batch    int
	followed bool
	sum      *Summary
	err      error
}

// take starts the harvest of b beside the running ones.
func (f *follower) take(b *collection.Batch, followed bool) {
	f.taken[b.ID] = true
	delete(f.pending, b.ID)
	f.running++
	opts := f.opts
	opts.followed = followed
	if followed {
		f.log.Info("following: taking the next batch beside the running harvests", "batch", b.Name(), "running", f.running-1)
	}
	go func() {
		sum, err := harvestBatch(f.ctx, b, opts)
		f.results <- followResult{batch: b.ID, followed: followed, sum: sum, err: err}
	}()
}

// wait runs until every harvest taken has ended and, unless stopping, no
// batch is ready: it takes the newer batches as they become ready and
// gathers the harvests' ends.
func (f *follower) wait(parent context.Context) ([]*Summary, error) {
	tick := time.NewTicker(FollowPoll)
	defer tick.Stop()
	interrupted := parent.Done()
	for {
		if f.running == 0 && (f.stopping || !f.takeReady()) {
			break
		}
		select {
		case r := <-f.results:
			f.ended(r)
		case <-tick.C:
			if !f.stopping {
				f.takeReady()
			}
		case <-interrupted:
			// Every harvest stops as it would alone (its context is a
			// child of parent); nothing new is taken.
			f.stopping, f.interrupted, interrupted = true, true, nil
		}
	}
	slices.SortFunc(f.sums, func(a, b *Summary) int { return a.Batch - b.Batch })
	return f.sums, f.firstErr
}

// ended takes the end of one harvest: its summary, or its failure, the
// first of which stops the others. A followed batch that another
// harvester took, or harvested, first is skipped.
func (f *follower) ended(r followResult) {
	f.running--
	switch {
	case r.err == nil:
		f.sums = append(f.sums, r.sum)
		if f.done != nil {
			f.done(r.sum)
		}
	case r.followed && !f.stopping && (errors.Is(r.err, collection.ErrLocked) || errors.Is(r.err, collection.ErrAlreadyDone) || errors.Is(r.err, collection.ErrNotReady)):
		f.log.Info("following: batch skipped, another harvester has it", "batch", collection.BatchName(r.batch), "err", r.err)
		delete(f.taken, r.batch)
	case f.interrupted && (f.firstErr == nil || f.errInterrupt):
		// A failure before the signal stays the run's error.
		if f.firstErr == nil || r.batch < f.errBatch {
			f.firstErr, f.errBatch, f.errInterrupt = r.err, r.batch, true
		}
	default:
		if f.firstErr == nil {
			f.firstErr, f.errBatch = r.err, r.batch
			if f.running > 0 {
				f.log.Warn("following: a harvest failed: stopping the others (a rerun resumes them)", "batch", collection.BatchName(r.batch), "err", r.err)
			}
			f.stop(fmt.Errorf("batch %s failed: %w", collection.BatchName(r.batch), r.err))
		}
		f.stopping = true
	}
}

// takeReady takes every newer batch that is ready for the harvester,
// oldest first, and tells whether it took any.
func (f *follower) takeReady() bool {
	f.list()
	ids := make([]int, 0, len(f.pending))
	for id := range f.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	took := false
	for _, id := range ids {
		b := f.col.Batch(id)
		if f.ready(b) {
			f.take(b, true)
			took = true
		}
	}
	return took
}

// list adds to pending the batch directories newer than the first batch
// and not taken, when the batches directory changed (or followRescan
// passed).
func (f *follower) list() {
	dir := filepath.Join(f.col.Dir, collection.BatchesDir)
	fi, err := os.Stat(dir)
	now := time.Now()
	if err == nil && fi.ModTime().Equal(f.dirTime) && now.Sub(f.listedAt) < followRescan {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.log.Warn("following: batches not listed", "dir", dir, "err", err)
		return
	}
	if fi != nil {
		f.dirTime = fi.ModTime()
	}
	f.listedAt = now
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= f.first || f.taken[id] || collection.BatchName(id) != e.Name() {
			continue
		}
		f.pending[id] = true
	}
}

// ready tells whether b may be taken: its batch file is written, it is
// not harvested, no shards of it are under way (a complete set is merged
// by the harvest, as by a plain run), and no harvester holds its lock.
// A batch harvested meanwhile (by another run on its directory) leaves
// pending.
func (f *follower) ready(b *collection.Batch) bool {
	if err := b.CheckReady(collection.StageHarvested); err != nil {
		if errors.Is(err, collection.ErrAlreadyDone) {
			delete(f.pending, b.ID)
		}
		return false
	}
	if n, err := shardsPresent(b.Dir); err != nil || n > 0 && len(missingShards(b.Dir, n)) > 0 {
		return false
	}
	l, err := collection.LockPath(filepath.Join(b.Dir, LockFile))
	if err != nil {
		return false
	}
	l.Release()
	return true
}

// lockedProgress passes the progress of the harvests of a following
// harvester to one display, one call at a time (Progress's calls come
// from one goroutine; Stats.Batch says whose they are).
type lockedProgress struct {
	mu sync.Mutex
	p  Progress
}

// Start implements Progress.
func (l *lockedProgress) Start(total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Start(total)
}

// Update implements Progress.
func (l *lockedProgress) Update(st Stats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Update(st)
}

// Done implements Progress.
func (l *lockedProgress) Done(st Stats) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Done(st)
}

// FollowTotal is the one-line total of the batches a following harvester
// published (more than one): batches, URLs, pages fetched and their
// bytes, requests, and the time from the first start to the last end.
func FollowTotal(sums []*Summary) string {
	if len(sums) == 0 {
		return ""
	}
	var urls, fetched, reqs, runFetched int
	var bytes int64
	start, end := sums[0].Started, sums[0].Finished
	names := make([]string, len(sums))
	for i, s := range sums {
		urls += s.URLs
		fetched += s.Fetched
		bytes += s.Bytes
		reqs += s.Requests
		runFetched += s.RunFetched
		if s.Started.Before(start) {
			start = s.Started
		}
		if s.Finished.After(end) {
			end = s.Finished
		}
		names[i] = collection.BatchName(s.Batch)
	}
	took := end.Sub(start)
	rate := 0.0
	if took > 0 {
		rate = float64(runFetched) / took.Seconds()
	}
	return fmt.Sprintf("followed %d batches (%s): %d URLs, %d fetched (%s), %d requests; these runs fetched %d pages in %s, %.1f pages/s.",
		len(sums), strings.Join(names, ", "), urls, fetched, tally.Bytes(bytes), reqs, runFetched, took.Round(100*time.Millisecond), rate)
}
