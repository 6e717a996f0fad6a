// Package harvester is the harvester stage: given a batch file and the
// config (never graph.db), it downloads the batch politely into the
// batch's harvest directory — WARC files, a fetch log with one line per
// batch URL, and the robots.txt files it obeyed — and survives being
// killed at any moment: a rerun resumes from what was logged.
//
// The output format is docs/format/harvest.md; the politeness rules are
// docs/harvester.md.
package harvester

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/robots"
)

// Progress receives the progress of a run; command.Progress fits it
// through a small adapter. Calls may come from several goroutines.
type Progress interface {
	Start(total int) // URLs this run has to log
	Add(n int)       // n more URLs logged
	Done()
}

// Options are the settings of a run.
type Options struct {
	Config config.Config
	// Logger receives the run's log; nil discards it.
	Logger *slog.Logger
	// Progress, if not nil, is told of each logged URL.
	Progress Progress
	// Ranking orders the servers; nil means QualityRanking.
	Ranking Ranking
	// Force harvests a batch again even if it is already harvested
	// (starting afresh; the old harvest is replaced at the end).
	Force bool
	// MaxWARCSize starts a new WARC file past this size; 0 means
	// DefaultMaxWARCSize.
	MaxWARCSize int64
}

// ClientConfig returns the HTTP client settings of a configuration.
func ClientConfig(cfg config.Config) fetch.Config {
	h := cfg.Harvester
	return fetch.Config{
		UserAgent:      cfg.Crawl.UserAgent,
		ConnectTimeout: h.ConnectTimeout.D(),
		ReadTimeout:    h.ReadTimeout.D(),
		TotalTimeout:   h.TotalTimeout.D(),
		AllowPrivate:   h.AllowPrivate,
		DNSServer:      h.DNSServer,
	}
}

// FetchOne fetches a single URL with the harvester's client and limits
// (address policy included), without robots.txt or politeness: a
// debugging aid.
func FetchOne(ctx context.Context, cfg config.Config, rawURL string, log *slog.Logger) (*fetch.Response, error) {
	h := fetch.New(ClientConfig(cfg), log).NewHost()
	defer h.Close()
	return h.Get(ctx, rawURL, cfg.Harvester.MaxBodyBytes)
}

// RunCollection harvests batch id of the collection, or the oldest batch
// ready for the harvester when id is 0, holding the collection's
// harvester lock. It fails with collection.ErrNothingToDo when no batch is
// ready, collection.ErrAlreadyDone or ErrNotReady for a batch that cannot
// be harvested (unless opts.Force), collection.ErrLocked when another
// harvester runs.
func RunCollection(ctx context.Context, col *collection.Collection, id int, opts Options) (*Summary, error) {
	lock, err := col.Lock("harvester")
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var b *collection.Batch
	if id == 0 {
		if b, err = col.NextReady(collection.StageHarvested); err != nil {
			return nil, err
		}
	} else {
		b = col.Batch(id)
	}
	return harvestBatch(ctx, b, opts)
}

// RunDir harvests the bare batch directory dir (a batch.tsv, nothing
// else needed), e.g. on a machine without the collection. The lock is
// dir/harvester.lock.
func RunDir(ctx context.Context, dir string, opts Options) (*Summary, error) {
	b := &collection.Batch{Dir: filepath.Clean(dir)}
	if id, err := strconv.Atoi(filepath.Base(b.Dir)); err == nil {
		b.ID = id
	}
	return harvestBatch(ctx, b, opts)
}

// harvestBatch is the run both modes share: lock the batch directory,
// check the batch, resume or start harvest.partial, fetch what is left,
// verify the fetch log, publish harvest/ and mark the batch harvested.
func harvestBatch(ctx context.Context, b *collection.Batch, opts Options) (*Summary, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !b.Done(collection.StageManaged) {
		// Before locking: the lock would create the directory.
		return nil, b.CheckReady(collection.StageHarvested)
	}
	lock, err := collection.LockPath(filepath.Join(b.Dir, LockFile))
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if err := b.CheckReady(collection.StageHarvested); err != nil && !(opts.Force && errors.Is(err, collection.ErrAlreadyDone)) {
		return nil, err
	}
	hdr, entries, err := batch.ReadFile(b.File())
	if err != nil {
		return nil, err
	}
	if hdr.Batch > 0 {
		b.ID = hdr.Batch
	}
	start := time.Now()
	partial, final := filepath.Join(b.Dir, PartialDir), b.HarvestPath()
	switch {
	case b.Done(collection.StageHarvested):
		// Forced: start afresh; the old harvest/ is replaced at the end.
		if err := os.RemoveAll(partial); err != nil {
			return nil, fmt.Errorf("remove %s: %w", partial, err)
		}
		log.Info("harvesting again (forced)", "batch", b.Name())
	case !exists(partial) && exists(final):
		// A run published harvest/ but died before marking the batch:
		// take it back and finish (nothing is left to fetch).
		if err := os.Rename(final, partial); err != nil {
			return nil, fmt.Errorf("resume published harvest: %w", err)
		}
		log.Info("resuming a published but unmarked harvest", "batch", b.Name())
	}
	resuming := exists(partial)
	out, res, err := openOutput(partial, opts.MaxWARCSize, log)
	if err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	for _, msg := range res.repaired {
		log.Warn("repaired harvest.partial", "batch", b.Name(), "what", msg)
	}
	h := newHarvest(opts, log, out, res)
	todo, pending := h.todo(entries, res.records)
	if resuming {
		log.Info("resuming", "batch", b.Name(), "logged", len(res.records), "robots", len(res.robots), "left", pending)
	}

	runErr := h.run(ctx, b, entries, todo, pending, resuming)
	if cerr := out.close(); runErr == nil && cerr != nil {
		runErr = fmt.Errorf("harvest batch %s: %w", b.Name(), cerr)
	}
	if runErr != nil {
		return nil, runErr
	}

	recs, err := fetchlog.ReadFile(filepath.Join(partial, fetchlog.LogFile))
	if err != nil {
		return nil, err
	}
	if err := verify(entries, recs); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	sum := summarize(b.ID, entries, recs)
	if rl, err := fetchlog.ReadRobots(filepath.Join(partial, fetchlog.RobotsFile)); err == nil {
		sum.RobotsFiles = len(rl)
	}
	sum.WARCFiles = warcFiles(partial)
	sum.Ranking = h.rank.Name()
	sum.Resumed = resuming && len(res.records) > 0
	sum.Started, sum.Finished = start.UTC(), time.Now().UTC()
	sum.ElapsedSeconds = sum.Finished.Sub(sum.Started).Seconds()
	sum.RunFetched = int(h.runFetched)
	if sum.ElapsedSeconds > 0 {
		sum.PagesPerSecond = float64(sum.RunFetched) / sum.ElapsedSeconds
	}
	if err := collection.ReplaceDir(partial, final); err != nil {
		return nil, fmt.Errorf("harvest batch %s: %w", b.Name(), err)
	}
	if err := b.MarkDone(collection.StageHarvested, sum); err != nil {
		return nil, err
	}
	log.Info("harvested", "batch", b.Name(), "urls", sum.URLs, "fetched", sum.Fetched, "elapsed", time.Since(start).Round(time.Millisecond))
	return sum, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// verify checks that the fetch log holds exactly one line per batch entry.
func verify(entries []batch.Entry, recs []fetchlog.Record) error {
	want := map[string]int{}
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

func key(docID uint64, u string) string { return strconv.FormatUint(docID, 10) + "\t" + u }

// harvest is the shared state of one run.
type harvest struct {
	cfg   config.Config
	log   *slog.Logger
	out   *output
	rank  Ranking
	prog  Progress
	wait  time.Duration
	known map[string]fetchlog.Robots // robots.txt from an earlier run
	// notBefore is, per host, the earliest time of its next request.
	notBefore map[string]time.Time

	mu         sync.Mutex
	runFetched int64
	fatalErr   error
	cancel     context.CancelFunc
}

func newHarvest(opts Options, log *slog.Logger, out *output, res *resumed) *harvest {
	h := &harvest{
		cfg:       opts.Config,
		log:       log,
		out:       out,
		rank:      opts.Ranking,
		prog:      opts.Progress,
		wait:      opts.Config.Harvester.Wait.D(),
		known:     res.robots,
		notBefore: map[string]time.Time{},
	}
	if h.rank == nil {
		h.rank = QualityRanking{}
	}
	out.onLine = func(r fetchlog.Record) {
		if r.OK() {
			h.runFetched++ // under out.mu
		}
		if h.prog != nil {
			h.prog.Add(1)
		}
	}
	return h
}

// todo marks the entries that still need a line, and sets each host's
// earliest next request from what the log says it was last asked.
func (h *harvest) todo(entries []batch.Entry, recs []fetchlog.Record) ([]bool, int) {
	logged := map[string]int{}
	for _, r := range recs {
		logged[key(r.DocID, r.URL)]++
		if !requested(r) {
			continue
		}
		site := siteOf(r.URL)
		end := r.Fetched.Add(time.Duration(r.Millis) * time.Millisecond)
		h.later(hostOf(site), end.Add(h.delayOf(site)))
	}
	for site, rl := range h.known {
		h.later(hostOf(site), rl.Fetched.Add(h.delayOf(site)))
	}
	todo := make([]bool, len(entries))
	pending := 0
	for i, e := range entries {
		k := key(e.DocID, e.URL)
		if logged[k] > 0 {
			logged[k]--
			continue
		}
		todo[i] = true
		pending++
	}
	return todo, pending
}

func (h *harvest) later(host string, t time.Time) {
	if t.After(h.notBefore[host]) {
		h.notBefore[host] = t
	}
}

// requested tells whether a logged URL was actually requested from its
// host (as opposed to skipped for robots.txt, a given-up host, or an
// address that was never dialled).
func requested(r fetchlog.Record) bool {
	if r.Status > 0 {
		return true
	}
	switch fetch.KindOf(r.Err) {
	case ErrRobots, ErrGaveUp, string(fetch.KindDNS), string(fetch.KindBlocked), string(fetch.KindBadURL), string(fetch.KindCancelled):
		return false
	}
	return true
}

// siteOf is scheme://host[:port] of a URL.
func siteOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return u.Scheme + "://" + u.Host
}

// delayOf is the pause between two requests to a site whose robots.txt is
// known from an earlier run; harvester.wait otherwise.
func (h *harvest) delayOf(site string) time.Duration {
	d := h.wait
	if rl, ok := h.known[site]; ok {
		d = max(d, min(h.rulesOf(rl).CrawlDelay(), MaxCrawlDelay))
	}
	return d
}

// knownRobots returns the robots.txt outcome an earlier run logged.
func (h *harvest) knownRobots(site string) (fetchlog.Robots, bool) {
	rl, ok := h.known[site]
	return rl, ok
}

// rulesOf turns a robots file line into rules.
func (h *harvest) rulesOf(rl fetchlog.Robots) *robots.Rules {
	return robots.ForFetch(rl.Status, rl.Body, rl.Err, h.cfg.Crawl.ProductToken)
}

// skip logs a URL that is not requested.
func (h *harvest) skip(e batch.Entry, why string) error {
	rec := fetchlog.Record{DocID: e.DocID, URL: e.URL, Fetched: time.Now().UTC(), Err: why}
	if err := h.out.page(nil, rec); err != nil {
		return h.fatal(err)
	}
	return nil
}

// fatal records the first error that must stop the run (a disk error)
// and cancels the workers.
func (h *harvest) fatal(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fatalErr == nil {
		h.fatalErr = err
		if h.cancel != nil {
			h.cancel()
		}
	}
	return err
}

// run serves the servers with up to harvester.connections workers.
func (h *harvest) run(parent context.Context, b *collection.Batch, entries []batch.Entry, todo []bool, pending int, resuming bool) error {
	servers := plan(entries, todo, h.rank)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	h.mu.Lock()
	h.cancel = cancel
	h.mu.Unlock()

	if resuming {
		// The killed run may have had requests in flight that it never
		// logged: no host is asked again before a full wait from now.
		floor := time.Now().Add(h.wait)
		for _, srv := range servers {
			h.later(srv.Host, floor)
		}
	}
	workers := min(h.cfg.Harvester.Connections, len(servers))
	h.log.Info("harvesting", "batch", b.Name(), "urls", len(entries), "left", pending, "hosts", len(servers),
		"connections", workers, "ranking", h.rank.Name(), "wait", h.wait)
	if h.prog != nil {
		h.prog.Start(pending)
		defer h.prog.Done()
	}

	queue := make(chan *Server)
	go func() {
		defer close(queue)
		for _, srv := range servers {
			select {
			case queue <- srv:
			case <-ctx.Done():
				return
			}
		}
	}()
	tickDone := make(chan struct{})
	go func() {
		t := time.NewTicker(syncEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := h.out.tick(); err != nil {
					h.fatal(err)
				}
			case <-tickDone:
				return
			}
		}
	}()
	client := fetch.New(ClientConfig(h.cfg), h.log)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for srv := range queue {
				w := &worker{h: h, srv: srv, client: client.NewHost(), next: h.notBefore[srv.Host], delay: h.wait}
				if err := w.run(ctx); err != nil {
					return
				}
				h.log.Debug("host done", "host", srv.Host, "urls", srv.URLs)
			}
		}()
	}
	wg.Wait()
	close(tickDone)

	h.mu.Lock()
	fatal := h.fatalErr
	h.mu.Unlock()
	switch {
	case fatal != nil:
		return fmt.Errorf("harvest batch %s: %w", b.Name(), fatal)
	case parent.Err() != nil:
		return fmt.Errorf("harvest batch %s: %w: %w", b.Name(), ErrInterrupted, context.Cause(parent))
	}
	return nil
}
