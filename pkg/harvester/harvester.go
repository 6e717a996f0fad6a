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
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
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
	Total          int   // URLs this run has to log
	Logged         int   // of which logged so far
	Pages          int   // responses stored without error
	Bytes          int64 // their body bytes
	Errors         int   // URLs that failed (robots exclusions not counted)
	RobotsExcluded int   // URLs not requested because of robots.txt
	Requests       int   // requests made, robots.txt included
	HostsActive    int   // hosts holding a connection
	HostsWaiting   int   // hosts with URLs left, waiting for their turn, a connection or DNS
	HostsDone      int   // hosts with every URL logged
	// HostsGivenUp counts the hosts whose URLs were logged host-gave-up
	// (failures, Retry-After, streaming) so far in this run.
	HostsGivenUp int
	// Holding are the hosts holding the batch up: the HoldingHosts with
	// the most URLs left, most first.
	Holding []fetchlog.HostLeft
	Elapsed time.Duration // since the run started
	// Batch is the batch's id (0 for a bare directory without one): a
	// following harvester (Follow) reports several batches to one
	// Progress.
	Batch int
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

	// bare is set by RunDir: the batch directory is not in a collection,
	// so the harvests before it (on this machine or another) are not
	// known, and the run keeps its start floor (quietSince).
	bare bool
	// eng is the process's engine (engine.go): set by Follow for every
	// harvest it runs, made by harvestBatch for a plain run.
	eng *engine
	// followed is set by Follow for a harvest taken beside a running one.
	followed bool
}

// ClientConfig returns the HTTP client settings of a configuration; it
// reads harvester.ca_file.
func ClientConfig(cfg config.Config) (fetch.Config, error) {
	h := cfg.Harvester
	roots, err := fetch.LoadRoots(h.CAFile)
	if err != nil {
		return fetch.Config{}, fmt.Errorf("harvester.ca_file: %w", err)
	}
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
		DNSTTL:           fetch.TTLBounds{Min: h.DNSMinTTL.D(), Max: h.DNSMaxTTL.D(), Negative: h.DNSNegativeTime.D()},
		RootCAs:          roots,
		Raw:              h.WARCMode == config.WARCModeRaw,
	}, nil
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
// or politeness: a debugging aid. The URL is first spelt as the harvester
// would have it in a batch (the project's normaliser: user info dropped,
// spaces and other bytes escaped; the response's URL says what was
// requested); one the normaliser refuses is a *urlnorm.Error and nothing
// is sent.
func FetchOne(ctx context.Context, cfg config.Config, rawURL string, log *slog.Logger) (*fetch.Response, error) {
	u, err := cfg.Scope.Normalizer().Normalize(rawURL)
	if err != nil {
		return nil, err
	}
	fc, err := ClientConfig(cfg)
	if err != nil {
		return nil, err
	}
	h := fetch.New(fc, log).NewHost()
	defer h.Close()
	return h.Do(ctx, fetch.Request{URL: u, MaxBody: cfg.Harvester.MaxBodyBytes, Accept: Accept(cfg.Harvester.AcceptMIME)})
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
	opts.KeepShards, opts.bare = true, true
	return harvestBatch(ctx, b, opts)
}
