// Package harvester is the harvester stage: given a batch file and the
// config (never graph.db), it downloads the batch politely into the
// batch's harvest directory — WARC files, a fetch log with one line per
// batch URL, the robots.txt files it obeyed and what it measured of each
// server — and survives being killed at any moment: a rerun resumes from
// what was logged.
//
// Scheduling has two levels (Cao, Jiang and Singh): a server queue ranked
// by a Ranking, and per server a URL queue; a server that gets one of the
// harvester.connections connections keeps it for its next P URLs. The
// output format is docs/format/harvest.md; the politeness rules are
// docs/harvester.md.
package harvester

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Progress receives the progress of a run: Start once, Update every
// Options.ProgressEvery, Done at the end. Calls come from one goroutine.
type Progress interface {
	Start(total int) // URLs this run has to log
	Update(Stats)
	Done(Stats)
}

// Stats is a snapshot of a run, for progress displays.
type Stats struct {
	Total          int           // URLs this run has to log
	Logged         int           // of which logged so far
	Pages          int           // responses stored without error
	Bytes          int64         // their body bytes
	Errors         int           // URLs that failed (robots exclusions not counted)
	RobotsExcluded int           // URLs not requested because of robots.txt
	Requests       int           // requests made, robots.txt included
	HostsActive    int           // hosts holding a connection
	HostsWaiting   int           // hosts with URLs left, waiting for their turn, a connection or DNS
	HostsDone      int           // hosts with every URL logged
	Elapsed        time.Duration // since the run started
}

// PagesPerSecond is Pages over Elapsed.
func (s Stats) PagesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Pages) / s.Elapsed.Seconds()
}

// Options are the settings of a run.
type Options struct {
	Config config.Config
	// Logger receives the run's log; nil discards it.
	Logger *slog.Logger
	// Progress, if not nil, is told how the run goes.
	Progress Progress
	// ProgressEvery is how often Progress.Update is called; 0 means
	// 250 ms.
	ProgressEvery time.Duration
	// Ranking orders the servers; nil means the one harvester.ranking
	// names.
	Ranking Ranking
	// Force harvests a batch again even if it is already harvested
	// (starting afresh; the old harvest is replaced at the end).
	Force bool
	// Shard, if not the zero value, harvests only the batch URLs of one
	// shard, into that shard's own directory (docs/format/harvest.md).
	Shard Shard
	// KeepShards keeps the shard directories after a merge. RunDir sets
	// it: a bare batch directory may be a scratch copy whose shard
	// output is still to be copied back to the collection (GNU parallel
	// --return), so only a run in the collection removes them.
	KeepShards bool
}

// ClientConfig returns the HTTP client settings of a configuration.
func ClientConfig(cfg config.Config) fetch.Config {
	h := cfg.Harvester
	return fetch.Config{
		UserAgent:        cfg.Crawl.UserAgent,
		ConnectTimeout:   h.ConnectTimeout.D(),
		FirstByteTimeout: h.FirstByteTimeout.D(),
		ReadTimeout:      h.ReadTimeout.D(),
		TotalTimeout:     h.TotalTimeout.D(),
		MinTransferRate:  h.MinTransferRate,
		AllowPrivate:     h.AllowPrivate,
		DNSServer:        h.DNSServer,
		DNSTimeout:       h.DNSTimeout.D(),
		DNSCacheTime:     h.DNSCacheTime.D(),
	}
}

// Accept returns the media type filter of harvester.accept_mime: exact
// types and type/* patterns; a response without Content-Type is
// accepted; an empty list accepts everything.
func Accept(patterns []string) func(mediaType string) bool {
	if len(patterns) == 0 {
		return nil
	}
	exact, prefix := map[string]bool{}, []string{}
	for _, p := range patterns {
		if t, ok := strings.CutSuffix(p, "/*"); ok {
			prefix = append(prefix, t+"/")
		} else {
			exact[p] = true
		}
	}
	return func(mt string) bool {
		if mt == "" || exact[mt] {
			return true
		}
		for _, p := range prefix {
			if strings.HasPrefix(mt, p) {
				return true
			}
		}
		return false
	}
}

// FetchOne fetches a single URL with the harvester's client and limits
// (address policy and accepted media types included), without robots.txt
// or politeness: a debugging aid.
func FetchOne(ctx context.Context, cfg config.Config, rawURL string, log *slog.Logger) (*fetch.Response, error) {
	h := fetch.New(ClientConfig(cfg), log).NewHost()
	defer h.Close()
	return h.Do(ctx, fetch.Request{URL: rawURL, MaxBody: cfg.Harvester.MaxBodyBytes, Accept: Accept(cfg.Harvester.AcceptMIME)})
}

// RunCollection harvests batch id of the collection, or the oldest batch
// ready for the harvester (or for the shard) when id is 0, holding the
// collection's harvester lock (one per shard). It fails with
// collection.ErrNothingToDo when no batch is ready, collection.ErrAlreadyDone
// or ErrNotReady for a batch that cannot be harvested (unless
// opts.Force), collection.ErrLocked when another harvester runs.
func RunCollection(ctx context.Context, col *collection.Collection, id int, opts Options) (*Summary, error) {
	lock, err := col.Lock(opts.Shard.LockName())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var b *collection.Batch
	switch {
	case id != 0:
		b = col.Batch(id)
	case opts.Shard.Whole():
		if b, err = col.NextReady(collection.StageHarvested); err != nil {
			return nil, err
		}
	default:
		if b, err = nextForShard(col, opts.Shard); err != nil {
			return nil, err
		}
	}
	return harvestBatch(ctx, b, opts)
}

// nextForShard is the oldest batch ready for the harvester whose shard is
// not done yet.
func nextForShard(col *collection.Collection, s Shard) (*collection.Batch, error) {
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		b := col.Batch(id)
		if b.CheckReady(collection.StageHarvested) == nil && !shardDone(b.Dir, s) {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no batch is ready for harvester shard %s: %w", s, collection.ErrNothingToDo)
}

// RunDir harvests the bare batch directory dir (a batch.tsv, nothing
// else needed), e.g. on a machine without the collection. The lock is
// dir/harvester.lock (one per shard).
func RunDir(ctx context.Context, dir string, opts Options) (*Summary, error) {
	b := &collection.Batch{Dir: filepath.Clean(dir)}
	if id, err := strconv.Atoi(filepath.Base(b.Dir)); err == nil {
		b.ID = id
	}
	opts.KeepShards = true
	return harvestBatch(ctx, b, opts)
}

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

// harvest is the shared state of one run.
type harvest struct {
	cfg    config.Config
	log    *slog.Logger
	out    *output
	rank   Ranking
	prog   Progress
	every  time.Duration
	client *fetch.Client
	accept func(string) bool
	hosts  *hostTable
	// known holds the robots.txt lines of the batch's robots.jsonl and
	// of an earlier run; kept the sites already in the output.
	known    map[string]fetchlog.Robots
	knownMu  sync.Mutex
	kept     map[string]bool
	est      map[string]fetchlog.Server // the batch's servers.jsonl and an earlier run's
	finished map[string]fetchlog.Server // servers done in this run
	// logged holds the fetch log lines this run appended, in order
	// (written under the output's lock).
	logged []fetchlog.Record

	startCtx, fetchCtx context.Context
	stopAll            context.CancelFunc
	started            time.Time

	// end is the decision to end the batch early (deadline, tail);
	// batchDuration is the batch header's batch_duration (0: none).
	end           *batchEnd
	batchDuration time.Duration

	stats struct {
		total, logged, pages, errors, robots, requests atomic.Int64
		bytes                                          atomic.Int64
		active, waiting, done                          atomic.Int64
	}

	// outage is the network outage rule (outage.go).
	outage *outage
	// domains counts the servers not done of each registrable domain,
	// and domainsLeft the domains with any: the outage rule counts its
	// runs against them, as the names of one politeness unit (one
	// domain on one address) are asked one at a time and cannot all
	// fail at once. domains belongs to the scheduler's goroutine.
	domains     map[string]int
	domainsLeft atomic.Int64

	mu       sync.Mutex
	fatalErr error
}

func newHarvest(opts Options, log *slog.Logger, out *output, res *resumed, b *collection.Batch) (*harvest, error) {
	h := &harvest{
		cfg:      opts.Config,
		log:      log,
		out:      out,
		rank:     opts.Ranking,
		prog:     opts.Progress,
		every:    opts.ProgressEvery,
		accept:   Accept(opts.Config.Harvester.AcceptMIME),
		hosts:    newHostTable(opts.Config.Harvester.AddressWait.D()),
		known:    map[string]fetchlog.Robots{},
		kept:     map[string]bool{},
		est:      map[string]fetchlog.Server{},
		finished: map[string]fetchlog.Server{},
		end:      newBatchEnd(),
	}
	if h.every <= 0 {
		h.every = 250 * time.Millisecond
	}
	if h.rank == nil {
		r, err := RankingByName(opts.Config.Harvester.Ranking)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		h.rank = r
	}
	// The manager's sidecars first, then what an earlier run of this
	// harvest already wrote, which wins.
	if lines, err := fetchlog.ReadRobots(b.RobotsPath()); err == nil {
		for _, l := range lines {
			h.known[l.Site] = l
		}
		log.Info("robots.txt copies from the batch", "sites", len(lines))
	} else if !errors.Is(err, os.ErrNotExist) {
		log.Warn("batch robots.jsonl ignored after a bad line", "err", err, "kept", len(lines))
		for _, l := range lines {
			h.known[l.Site] = l
		}
	}
	if lines, err := fetchlog.ReadServers(b.ServersPath()); err == nil || !errors.Is(err, os.ErrNotExist) {
		if err != nil {
			log.Warn("batch servers.jsonl ignored after a bad line", "err", err, "kept", len(lines))
		}
		for _, l := range lines {
			host := strings.ToLower(l.Host)
			h.est[host] = l
			if l.UnitCrawlDelay > 0 {
				// A Crawl-delay of another name of the host's unit, which
				// may not be in this batch (the manager's, from graph.db).
				secs := min(l.UnitCrawlDelay, opts.Config.Harvester.MaxCrawlDelay.D().Seconds())
				h.hosts.crawlDelay(host, time.Duration(secs*float64(time.Second)))
			}
		}
	}
	for site, l := range res.robots {
		h.known[site] = l
		h.kept[site] = true
	}
	for host, l := range res.servers {
		h.est[host] = l
		h.finished[host] = l
	}
	out.onLine = h.counted
	return h, nil
}

// counted updates the statistics for a logged line and keeps the line
// (called under the output lock, so in the fetch log's order).
func (h *harvest) counted(r fetchlog.Record) {
	h.logged = append(h.logged, r)
	h.stats.logged.Add(1)
	switch {
	case r.OK():
		h.stats.pages.Add(1)
		h.stats.bytes.Add(r.Bytes)
	case fetch.KindOf(r.Err) == ErrRobots:
		h.stats.robots.Add(1)
	default:
		h.stats.errors.Add(1)
	}
}

// snapshot returns the run's statistics now.
func (h *harvest) snapshot() Stats {
	return Stats{
		Total:          int(h.stats.total.Load()),
		Logged:         int(h.stats.logged.Load()),
		Pages:          int(h.stats.pages.Load()),
		Bytes:          h.stats.bytes.Load(),
		Errors:         int(h.stats.errors.Load()),
		RobotsExcluded: int(h.stats.robots.Load()),
		Requests:       int(h.stats.requests.Load()),
		HostsActive:    int(h.stats.active.Load()),
		HostsWaiting:   int(h.stats.waiting.Load()),
		HostsDone:      int(h.stats.done.Load()),
		Elapsed:        time.Since(h.started),
	}
}

// estimates returns the starting estimates of a host.
func (h *harvest) estimates(host string) Estimates {
	e := defaultEstimates(h.cfg.Harvester.RequestsPerConnection)
	if r, ok := h.est[host]; ok {
		e.fromRecord(r)
	}
	return e
}

// todo marks the entries that still need a line, and sets each host's
// earliest next request from what the log says it was last asked.
func (h *harvest) todo(entries []batch.Entry, recs []fetchlog.Record) ([]bool, int) {
	logged := make(map[entryKey]int, len(recs))
	for _, r := range recs {
		logged[key(r.DocID, r.URL)]++
		if !requested(r) {
			continue
		}
		site := siteOf(r.URL)
		end := r.Fetched.Add(time.Duration(r.Millis) * time.Millisecond)
		h.hosts.later(hostOf(site), end.Add(h.delayOf(site)))
	}
	for site, rl := range h.known {
		// Every name of a unit waits the longest Crawl-delay of the
		// unit's sites, from its first request on.
		cd := min(h.rulesOf(rl).CrawlDelay(), h.cfg.Harvester.MaxCrawlDelay.D())
		h.hosts.crawlDelay(hostOf(site), cd)
		if h.kept[site] {
			h.hosts.later(hostOf(site), rl.Fetched.Add(max(h.cfg.Harvester.Wait.D(), cd)))
		}
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

// requested tells whether a logged URL was actually requested from its
// host (as opposed to skipped for robots.txt, a given-up host, or an
// address that was never dialled).
func requested(r fetchlog.Record) bool {
	if r.Status > 0 {
		return true
	}
	switch fetch.KindOf(r.Err) {
	case ErrRobots, ErrGaveUp, ErrDeferred, string(fetch.KindDNS), string(fetch.KindBlocked), string(fetch.KindBadURL), string(fetch.KindCancelled):
		return false
	}
	return true
}

// siteOf is scheme://host[:port] of a URL. A plain absolute URL (lower-
// case scheme, a host name or IPv4 address and maybe a port) is cut
// where its authority ends, without parsing; anything else goes through
// url.Parse.
func siteOf(rawURL string) string {
	if scheme, auth, ok := plainAuthority(rawURL); ok {
		return rawURL[:len(scheme)+3+len(auth)]
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return u.Scheme + "://" + u.Host
}

// delayOf is the pause between two requests to a site whose robots.txt is
// known from an earlier run; harvester.wait otherwise.
func (h *harvest) delayOf(site string) time.Duration {
	d := h.cfg.Harvester.Wait.D()
	if rl, ok := h.known[site]; ok {
		d = max(d, min(h.rulesOf(rl).CrawlDelay(), h.cfg.Harvester.MaxCrawlDelay.D()))
	}
	return d
}

// knownRobots returns the robots.txt of a site that the batch carries or
// an earlier run logged.
func (h *harvest) knownRobots(site string) (fetchlog.Robots, bool) {
	h.knownMu.Lock()
	defer h.knownMu.Unlock()
	rl, ok := h.known[site]
	return rl, ok
}

// keepRobots appends the site's robots.txt to the output's robots file,
// once per site.
func (h *harvest) keepRobots(rl fetchlog.Robots) error {
	h.knownMu.Lock()
	if h.kept[rl.Site] {
		h.knownMu.Unlock()
		return nil
	}
	h.kept[rl.Site] = true
	h.known[rl.Site] = rl
	h.knownMu.Unlock()
	if err := h.out.robots(rl); err != nil {
		return h.fatal(err)
	}
	return nil
}

// rulesOf turns a robots file line into rules.
func (h *harvest) rulesOf(rl fetchlog.Robots) *robots.Rules {
	return robots.ForFetch(rl.Status, rl.Body, rl.Err, h.cfg.Crawl.ProductToken)
}

// skip logs a URL that is not requested.
func (h *harvest) skip(srv *Server, e batch.Entry, why string) error {
	rec := fetchlog.Record{DocID: e.DocID, URL: e.URL, Fetched: time.Now().UTC(), Err: why}
	if err := h.out.page(nil, nil, rec); err != nil {
		return h.fatal(err)
	}
	return nil
}

// fatal records the first error that must stop the run (a disk error)
// and stops everything at once.
func (h *harvest) fatal(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fatalErr == nil {
		h.fatalErr = err
		if h.stopAll != nil {
			h.stopAll()
		}
	}
	return err
}

func (h *harvest) fatalError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fatalErr
}

// resolve looks the server's host up before it is scheduled; a name that
// does not resolve, or only to refused addresses, has every URL logged
// with that error (and a robots line per site), without a connection. A
// failure that may be the resolver's is held (outage.go).
func (h *harvest) resolve(ctx context.Context, srv *Server) {
	ip, err := h.client.Resolve(ctx, srv.Host)
	held := h.outage.lookup(srv.Host, err, ctx.Err() != nil)
	if err == nil {
		srv.ip = ip
		srv.unit = h.hosts.join(srv.Host, ip)
		return
	}
	var fe *fetch.Error
	if !errors.As(err, &fe) || ctx.Err() != nil {
		return // stopping
	}
	srv.dnsErr = fe.Text()
	if held {
		return // serve logs the URLs once the network is known up (outage.go)
	}
	h.log.Debug("host does not resolve", "host", srv.Host, "err", srv.dnsErr)
	now := time.Now().UTC()
	for {
		e, sq, ok := srv.next()
		if !ok {
			return
		}
		if _, known := h.knownRobots(sq.Site); !known {
			if err := h.keepRobots(fetchlog.Robots{Site: sq.Site, Fetched: now, Err: srv.dnsErr}); err != nil {
				return
			}
		}
		if err := h.skip(srv, e, srv.dnsErr); err != nil {
			return
		}
		srv.pop()
	}
}

// serverLine is what the servers file says of srv.
func serverLine(srv *Server) fetchlog.Server {
	l := fetchlog.Server{Host: srv.Host, DNSError: srv.dnsErr, GaveUp: srv.gaveUp, Measured: srv.Est.Measured.UTC(),
		Streak: srv.streak, Streaming: strings.HasPrefix(srv.gaveUp, GaveUpStreaming)}
	if srv.ip.IsValid() {
		l.IP = srv.ip.String()
	}
	if srv.Est.KnownConnect {
		l.ConnectMs = ms(srv.Est.ConnectTime)
	}
	if srv.Est.KnownResponse {
		l.ResponseMs = ms(srv.Est.ResponseTime)
	}
	if srv.Est.KnownRPC {
		l.RequestsPerConn = srv.Est.RequestsPerConn
	}
	return l
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// finalServers writes the servers file of the finished harvest: one line
// per host of the batch (latest estimates), with its pages, bytes and
// errors counted from the whole fetch log.
func (h *harvest) finalServers(dir string, recs []fetchlog.Record) error {
	type count struct {
		pages, errors int
		bytes         int64
	}
	counts := map[string]*count{}
	for _, r := range recs {
		host := hostOf(siteOf(r.URL))
		c := counts[host]
		if c == nil {
			c = &count{}
			counts[host] = c
		}
		switch {
		case r.OK():
			c.pages++
			c.bytes += r.Bytes
		case fetch.KindOf(r.Err) != ErrRobots && fetch.KindOf(r.Err) != ErrDeferred:
			c.errors++
		}
	}
	var lines []fetchlog.Server
	for host, l := range h.finished {
		if c := counts[host]; c != nil {
			l.Pages, l.Bytes, l.Errors = c.pages, c.bytes, c.errors
		}
		lines = append(lines, l)
	}
	return writeServers(filepath.Join(dir, fetchlog.ServersFile), lines)
}

// writeServers writes a servers file atomically: one line per host (the
// last given wins), sorted by host.
func writeServers(path string, lines []fetchlog.Server) error {
	byHost := map[string]fetchlog.Server{}
	for _, l := range lines {
		byHost[l.Host] = l
	}
	hosts := make([]string, 0, len(byHost))
	for host := range byHost {
		hosts = append(hosts, host)
	}
	sort.Strings(hosts)
	return collection.WriteAtomic(path, func(w io.Writer) error {
		for _, host := range hosts {
			b, err := fetchlog.FormatServer(byHost[host])
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

// run serves the servers with up to harvester.connections connections.
func (h *harvest) run(parent context.Context, b *collection.Batch, entries []batch.Entry, todo []bool, pending int, resuming bool) error {
	hc := h.cfg.Harvester
	servers := plan(entries, todo, h.rank, h.estimates)
	for _, srv := range servers {
		srv.streak = h.est[srv.Host].Streak // the count goes on across batches
	}
	h.started = time.Now()
	h.stats.total.Store(int64(pending))

	// Stopping: a cancelled parent stops new requests at once and lets
	// the ones in flight finish for up to stop_timeout; a fatal error
	// stops everything at once.
	startCtx, stopStart := context.WithCancel(parent)
	defer stopStart()
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(parent))
	defer stopFetch()
	h.startCtx, h.fetchCtx = startCtx, fetchCtx
	h.end.start(startCtx)
	defer h.end.cancel()
	h.mu.Lock()
	h.stopAll = func() { stopStart(); stopFetch() }
	h.mu.Unlock()
	h.domains = map[string]int{}
	for _, srv := range servers {
		h.domains[urlnorm.Registrable(srv.Host)]++
	}
	h.domainsLeft.Store(int64(len(h.domains)))
	h.outage = newOutage(hc.OutageHosts, len(h.domains), func() int { return int(h.domainsLeft.Load()) }, func(err error) { h.fatal(err) })
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-parent.Done():
		case <-runDone:
			return
		}
		t := time.NewTimer(hc.StopTimeout.D())
		defer t.Stop()
		select {
		case <-t.C:
			stopFetch()
		case <-runDone:
		}
	}()
	h.client = fetch.New(ClientConfig(h.cfg), h.log)

	// No host is asked before a full wait from now: a killed run may have
	// had requests in flight that it never logged, and the run of the
	// previous batch (or shard) may have asked the same host a moment ago,
	// from another process this one knows nothing of. The same holds for
	// an address (its floor, address_wait, is not carried over).
	floor := time.Now().Add(max(hc.Wait.D(), hc.AddressWait.D()))
	for _, srv := range servers {
		h.hosts.later(srv.Host, floor)
	}
	h.log.Info("harvesting", "batch", b.Name(), "urls", len(entries), "left", pending, "hosts", len(servers),
		"connections", hc.Connections, "per_ip", hc.ConnectionsPerIP, "ranking", h.rank.Name(), "wait", hc.Wait)
	if h.prog != nil {
		h.prog.Start(pending)
	}
	background := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		syncT := time.NewTicker(syncEvery)
		defer syncT.Stop()
		flushT := time.NewTicker(flushEvery)
		defer flushT.Stop()
		var progress <-chan time.Time
		if h.prog != nil {
			t := time.NewTicker(h.every)
			defer t.Stop()
			progress = t.C
		}
		for {
			select {
			case <-syncT.C:
				if err := h.out.tick(); err != nil {
					h.fatal(err)
				}
			case <-flushT.C:
				if err := h.out.flush(); err != nil {
					h.fatal(err)
				}
			case <-progress:
				h.prog.Update(h.snapshot())
			case <-background:
				return
			}
		}
	}()

	h.schedule(servers, len(entries))

	close(background)
	bg.Wait()
	if h.prog != nil {
		h.prog.Done(h.snapshot())
	}
	switch fatal := h.fatalError(); {
	case fatal != nil:
		return fmt.Errorf("harvest batch %s: %w", b.Name(), fatal)
	case parent.Err() != nil:
		return fmt.Errorf("harvest batch %s: %w: %w", b.Name(), ErrInterrupted, context.Cause(parent))
	}
	return nil
}

// schedule is the server level of the scheduler. Servers are resolved
// (harvester.dns_lookups at a time, best-ranked first); each time a
// connection is free it goes to the highest-ranked server whose turn has
// come, whose politeness unit (its site's names on its address, see
// hostTable) has no connection, and whose IP address has fewer than
// harvester.connections_per_ip connections; the server keeps it for its next P URLs and then goes back
// to the queue, re-ranked with what was measured.
func (h *harvest) schedule(servers []*Server, nextOrder int) {
	hc := h.cfg.Harvester
	ctx := h.startCtx
	// DNS lookups also end when the batch ends (deadline, tail).
	dnsCtx, stopDNS := context.WithCancel(ctx)
	defer stopDNS()
	for _, srv := range servers {
		srv.notBefore = h.hosts.notBefore(srv.Host)
		srv.rank = h.rank.Rank(srv)
	}
	rule := newEndRule(hc, h.started, len(servers), h.batchDuration)
	byRank := append([]*Server(nil), servers...)
	sort.SliceStable(byRank, func(i, j int) bool { return serverHeap(byRank).Less(i, j) })

	// Lookups go in rank order; a free connection waits a little
	// (dnsHold) for a better-ranked server whose lookup is under way,
	// so that the ranking, not the DNS, decides who goes first.
	pending := 0 // byRank[pending:] holds the first server not resolved yet
	resolvedSet := map[*Server]bool{}
	lookups := make(chan *Server)
	resolved := make(chan *Server)
	var dnsWG sync.WaitGroup
	go func() {
		defer close(lookups)
		for _, srv := range byRank {
			select {
			case lookups <- srv:
			case <-dnsCtx.Done():
				return
			}
		}
	}()
	for i := 0; i < min(hc.DNSLookups, len(servers)); i++ {
		dnsWG.Add(1)
		go func() {
			defer dnsWG.Done()
			for srv := range lookups {
				srv.lookupStart.Store(time.Now().UnixNano())
				h.resolve(dnsCtx, srv)
				select {
				case resolved <- srv:
				case <-dnsCtx.Done():
					return
				}
			}
		}()
	}

	ready := &serverHeap{}
	waiting := &timeHeap{}
	ipActive := map[netip.Addr]int{}
	ipParked := map[netip.Addr][]*Server{}
	unitActive := map[string]bool{}
	finished := make(chan *Server)
	remaining, active := len(servers), 0
	h.stats.waiting.Store(int64(remaining))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	enqueue := func(srv *Server, now time.Time) {
		srv.state = stateQueued
		if srv.notBefore.After(now) {
			heap.Push(waiting, srv)
			return
		}
		srv.rank = h.rank.Rank(srv)
		heap.Push(ready, srv)
	}
	done := func(srv *Server) {
		srv.state = stateDone
		remaining--
		if d := urlnorm.Registrable(srv.Host); h.domains[d] > 0 {
			if h.domains[d]--; h.domains[d] == 0 {
				h.domainsLeft.Add(-1)
			}
		}
		h.stats.done.Add(1)
		h.stats.waiting.Add(-1)
		l := serverLine(srv)
		if nb := h.hosts.notBefore(srv.Host); nb.After(time.Now()) {
			l.NotBefore = nb.UTC()
		}
		h.finished[srv.Host] = l
		if err := h.out.server(l); err != nil {
			h.fatal(err)
		}
	}
	stopping, ending := false, false
	for remaining > 0 && !((stopping || ending) && active == 0) {
		now := time.Now()
		endAt, why := rule.observe(now, remaining)
		if !ending && !endAt.IsZero() && !now.Before(endAt) {
			// No URL is started any more; the requests in flight finish
			// and the rest is deferred to the next batch.
			ending = true
			h.end.end(why)
			stopDNS()
			h.log.Info("ending the batch", "why", why, "hosts_left", remaining, "active", active, "elapsed", now.Sub(h.started).Round(time.Millisecond))
			if active == 0 {
				break
			}
		}
		for waiting.Len() > 0 && !(*waiting)[0].notBefore.After(now) {
			srv := heap.Pop(waiting).(*Server)
			srv.rank = h.rank.Rank(srv)
			heap.Push(ready, srv)
		}
		for pending < len(byRank) && resolvedSet[byRank[pending]] {
			pending++
		}
		var holdUntil time.Time
		for !stopping && !ending && active < hc.Connections && ready.Len() > 0 {
			if pending < len(byRank) {
				best := byRank[pending]
				if better(best, (*ready)[0]) {
					// Every better-ranked server is resolved, so best is
					// next in line for a lookup: one that has not
					// started yet starts at once (its goroutine has not
					// run), and the hold counts from now until it does.
					at := now
					if started := best.lookupStart.Load(); started != 0 {
						at = time.Unix(0, started)
					}
					if until := at.Add(dnsHold); until.After(now) {
						holdUntil = until
						break
					}
				}
			}
			srv := heap.Pop(ready).(*Server)
			// One connection per politeness unit (another name of its
			// site holds it), at most connections_per_ip per address:
			// the server waits on its address until one is given back.
			if srv.unit != "" && unitActive[srv.unit] ||
				hc.ConnectionsPerIP > 0 && srv.ip.IsValid() && ipActive[srv.ip] >= hc.ConnectionsPerIP {
				ipParked[srv.ip] = append(ipParked[srv.ip], srv)
				continue
			}
			if ok, retry := h.hosts.acquire(srv.Host, now); !ok {
				srv.notBefore = retry
				heap.Push(waiting, srv)
				continue
			}
			srv.state = stateActive
			active++
			ipActive[srv.ip]++
			if srv.unit != "" {
				unitActive[srv.unit] = true
			}
			h.stats.active.Add(1)
			h.stats.waiting.Add(-1)
			go func() {
				if err := h.serve(srv); err != nil && !errors.Is(err, errStopped) {
					h.fatal(err)
				}
				finished <- srv
			}()
		}
		var wake <-chan time.Time
		if !stopping && !ending && (waiting.Len() > 0 || !holdUntil.IsZero() || !endAt.IsZero()) {
			at := holdUntil
			if waiting.Len() > 0 && (at.IsZero() || (*waiting)[0].notBefore.Before(at)) {
				at = (*waiting)[0].notBefore
			}
			if !endAt.IsZero() && (at.IsZero() || endAt.Before(at)) {
				at = endAt
			}
			timer.Reset(time.Until(at))
			wake = timer.C
		}
		var stop <-chan struct{}
		if !stopping {
			stop = ctx.Done()
		}
		select {
		case srv := <-resolved:
			resolvedSet[srv] = true
			switch {
			case srv.left == 0:
				done(srv)
			case !ending:
				enqueue(srv, time.Now())
			}
		case srv := <-finished:
			active--
			h.stats.active.Add(-1)
			h.stats.waiting.Add(1)
			ipActive[srv.ip]--
			delete(unitActive, srv.unit)
			for _, p := range ipParked[srv.ip] {
				p.rank = h.rank.Rank(p)
				heap.Push(ready, p)
			}
			delete(ipParked, srv.ip)
			srv.notBefore = h.hosts.release(srv.Host)
			switch {
			case srv.left == 0:
				done(srv)
			case !stopping && !ending:
				srv.order = nextOrder
				nextOrder++
				enqueue(srv, time.Now())
			}
		case <-h.hosts.kick:
		case <-wake:
		case <-stop:
			stopping = true
		}
		timer.Stop()
	}
	dnsWG.Wait()
	if !ending || stopping || h.fatalError() != nil {
		return
	}
	// The batch ended early: every URL not requested is logged deferred,
	// and each server's line is written as for a finished one.
	why := h.end.reason()
	for _, srv := range servers {
		if srv.state == stateDone {
			continue
		}
		if err := h.deferRest(srv, why); err != nil {
			return
		}
		done(srv)
	}
}

// dnsHold is how long a free connection waits for a better-ranked server
// whose DNS lookup is under way before going to a lesser one.
const dnsHold = 100 * time.Millisecond

// writeMarker writes a shard's marker: its summary, JSON, atomically.
func writeMarker(path string, sum *Summary) error {
	data, err := jsonMarshal(sum)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return collection.WriteFileAtomic(path, data)
}

// plainAuthority splits a URL of the form scheme://authority[/?#...]
// whose scheme is lower-case letters, digits, '+', '-' or '.' (a letter
// first) and whose authority is a host name or IPv4 address of letters,
// digits, '.', '-' and '_', maybe followed by ':' and a decimal port. ok
// is false for anything else (user info, IPv6 literals, escapes, no
// scheme), which callers leave to url.Parse.
func plainAuthority(raw string) (scheme, auth string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", "", false
	}
	for k := 0; k < i; k++ {
		c := raw[k]
		if !('a' <= c && c <= 'z' || k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", false
		}
	}
	rest := raw[i+3:]
	end, colon := len(rest), -1
	for k := 0; k < len(rest); k++ {
		c := rest[k]
		switch {
		case c == '/' || c == '?' || c == '#':
			end = k
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-' || c == '_':
			if colon >= 0 {
				return "", "", false
			}
			continue
		case '0' <= c && c <= '9':
			continue
		case c == ':' && colon < 0:
			colon = k
			continue
		default:
			return "", "", false
		}
		break
	}
	if end == 0 || colon == 0 {
		return "", "", false
	}
	return raw[:i], rest[:end], true
}
