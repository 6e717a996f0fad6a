// Package manager is the crawler's long-term scheduler: it scores every
// known page with the value function V(p) = IQ^α·RQ^β·F^γ (Castillo,
// ch. 3), orders the pages by profit, applies the batch limits and writes
// the next batch file; it also cancels a batch and summarises one.
//
// The model, estimators, limits and crash behaviour are described in
// docs/manager.md; the file it writes in docs/format/batch.md.
package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// LockName is the collection lock the manager holds while it runs.
const LockName = collection.ManagerLock

// DefaultGraphTimeout is how long the manager waits for graph.db when
// another process (the seeder) has it open.
const DefaultGraphTimeout = 5 * time.Second

// Options configure Run.
type Options struct {
	Config       config.Config
	Logger       *slog.Logger     // nil discards
	Now          func() time.Time // clock; nil means time.Now
	GraphTimeout time.Duration    // 0 means DefaultGraphTimeout
	// MinSites, when positive, is the fewest sites a batch may have:
	// a smaller one is not written and Run returns an error wrapping
	// collection.ErrNothingToDo (ErrThinBatch). scripts/crawl.sh sets it
	// while another batch is being harvested, so that the manager waits
	// for that batch's links rather than write a thin batch of what the
	// time budget held back, which would keep the harvester on a few
	// hosts meanwhile (docs/architecture.md, "Overlapping cycles").
	MinSites int
	// Fits, if set, is asked, once the batch is chosen and before
	// anything is written, whether a batch of that many URLs fits on
	// the collection's disk (collection.min_free); its error is Run's,
	// and nothing is written (manager run: docs/operations.md, "A full
	// disk").
	Fits func(urls int) error
}

func (o *Options) logger() *slog.Logger { return orDiscard(o.Logger) }

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return l
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Result is what a run did.
type Result struct {
	Batch     int    // batch id
	File      string // its batch file
	Strategy  string
	URLs      int
	Sites     int
	New       int
	Revisits  int
	ScoreMin  float64
	ScoreMax  float64
	Robots    int  // sites whose stored robots.txt went into robots.jsonl
	Servers   int  // servers whose estimates went into servers.jsonl
	Recovered bool // an interrupted batch was completed instead of a new one written
	Elapsed   time.Duration
	Stats     Stats // how the batch was chosen (zero when Recovered)
	// BatchDuration is the batch's planned length (its header's
	// batch_duration) and BatchDurationWhy how it was chosen
	// (batchLength).
	BatchDuration    time.Duration
	BatchDurationWhy string
}

// Run writes the next batch: it brings the documents and links caches in
// step with graph.db (doccache.go, linkcache.go), reads them and graph.db,
// scores the candidates,
// writes batches/NNNNNN/robots.jsonl, servers.jsonl and batch.tsv and
// then marks the batch's documents scheduled and, in the last of those
// transactions, stores the estimator's state (OPIC cash, partial
// PageRank) and records the batch in graph.db.
//
// If a previous run was killed between the file and the transaction, Run
// completes that batch instead (Result.Recovered). If no page can be
// scheduled it returns an error wrapping collection.ErrNothingToDo.
func Run(ctx context.Context, col *collection.Collection, opts Options) (*Result, error) {
	start := time.Now()
	log := opts.logger()
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	g, err := openGraph(col, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()

	if err := finishCancels(ctx, col, g, log); err != nil {
		return nil, err
	}
	res, err := completeInterrupted(ctx, col, g, log)
	if err != nil || res != nil {
		if res != nil {
			res.Elapsed = time.Since(start)
		}
		return res, err
	}
	if err := removeUnwritten(col, log); err != nil {
		return nil, err
	}

	m := &opts.Config.Manager
	now := opts.now().UTC().Truncate(time.Second)
	id, err := col.NextBatchID()
	if err != nil {
		return nil, err
	}
	length, why := batchLength(col, &opts.Config, id)
	m.BatchDuration = config.Duration(length) // the budget's, the header's and so the harvester's deadline
	log.Info("batch length", "batch", id, "batch_duration", length, "why", why)
	var p *plan
	for attempt := 0; ; attempt++ {
		caches, err := refreshCaches(ctx, col, g, m, log)
		if err != nil {
			return nil, err
		}
		err = g.View(func(tx *linkgraph.Tx) error {
			global, err := loadGlobalSites(tx, col.Dir, &opts.Config, now, log)
			if err != nil {
				return err
			}
			p, err = makePlan(ctx, tx, &opts.Config, now, log, 0, id, global, caches)
			return err
		})
		if attempt == 0 && errors.Is(err, errCache) {
			// A cache damaged since it was last written (its checksums
			// are checked as the plan reads it): rebuilt, and the plan
			// made again.
			log.Warn("a cache is damaged: rebuilding it", "err", err)
			for _, path := range []string{col.DocsCachePath(), col.LinksCachePath()} {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("remove damaged cache: %w", err)
				}
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("plan batch: %w", err)
		}
		break
	}
	if len(p.entries) == 0 {
		return nil, emptyFrontier(p.stats, m)
	}
	if opts.MinSites > 0 {
		if c := count(p.entries); c.sites < opts.MinSites {
			return nil, fmt.Errorf("plan batch: %d URLs on %d sites, fewer than the %d sites asked for (--min-sites): %w: %w",
				len(p.entries), c.sites, opts.MinSites, ErrThinBatch, collection.ErrNothingToDo)
		}
	}
	if opts.Fits != nil {
		if err := opts.Fits(len(p.entries)); err != nil {
			return nil, fmt.Errorf("batch %s of %d URLs: %w", collection.BatchName(id), len(p.entries), err)
		}
	}

	b := col.Batch(id)
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("write batch %s: %w", b.Name(), err)
	}
	if err := writeSidecars(b, p); err != nil {
		return nil, fmt.Errorf("write batch %s: %w", b.Name(), err)
	}
	h := header(id, now, m, p)
	if err := collection.WriteAtomic(b.File(), func(w io.Writer) error { return batch.Write(w, h, p.entries) }); err != nil {
		return nil, fmt.Errorf("write batch %s: %w", b.Name(), err)
	}
	marked, err := markScheduled(g, id, p.entries, now, p.save)
	if err != nil {
		return nil, fmt.Errorf("record batch %s in graph.db (the next run completes it): %w", b.Name(), err)
	}
	if marked != len(p.entries) {
		log.Warn("some documents changed state while the batch was written", "batch", id, "urls", len(p.entries), "marked", marked)
	}
	c := count(p.entries)
	res = &Result{
		Batch: id, File: b.File(), Strategy: m.Strategy,
		URLs: len(p.entries), Sites: c.sites, New: c.new, Revisits: c.revisits,
		ScoreMin: c.scoreMin, ScoreMax: c.scoreMax,
		Robots: len(p.robots), Servers: len(p.servers),
		Elapsed: time.Since(start), Stats: p.stats,
		BatchDuration: length, BatchDurationWhy: why,
	}
	log.Info("wrote batch", "batch", id, "urls", res.URLs, "sites", res.Sites, "new", res.New, "revisits", res.Revisits,
		"candidates", p.stats.Candidates, "site_capped", p.stats.SiteCapped, "site_full", p.stats.SiteFull,
		"script_capped", p.stats.ScriptCapped, "time_capped", p.stats.TimeCapped, "filled", p.stats.Filled, "streaming_held", p.stats.StreamingHeld, "left", p.stats.Left, "robots", res.Robots)
	return res, nil
}

// refreshCaches brings the run's caches in step with graph.db
// (doccache.go, linkcache.go): the documents cache always, the links
// cache for the strategies that read links.
func refreshCaches(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, m *config.Manager, log *slog.Logger) (*runCaches, error) {
	caches := &runCaches{}
	var r cacheRefresh
	var err error
	if caches.docs, r, err = refreshDocs(ctx, col, g, newLimits(m), factsFingerprint(m), log); err != nil {
		return nil, err
	}
	log.Info("documents cache "+r.how, "records_read", r.read, "segments", r.segments, "bytes", r.bytes, "why", r.why, "elapsed", r.elapsed.Round(time.Millisecond))
	if readsLinks(m.Strategy) {
		if caches.links, r, err = refreshLinks(ctx, col, g, log); err != nil {
			return nil, err
		}
		log.Info("links cache "+r.how, "out_link_sets_read", r.read, "segments", r.segments, "bytes", r.bytes, "why", r.why, "elapsed", r.elapsed.Round(time.Millisecond))
	}
	return caches, nil
}

// readsLinks tells whether a strategy reads the links: its runs keep the
// links cache (linkcache.go).
func readsLinks(strategy string) bool {
	switch strategy {
	case StrategyBacklink, StrategyPageRank, StrategyPartialPageRank, StrategyHistorical:
		return true
	}
	return false
}

// openGraph opens graph.db for writing, waiting at most timeout.
func openGraph(col *collection.Collection, timeout time.Duration) (*linkgraph.Graph, error) {
	if timeout <= 0 {
		timeout = DefaultGraphTimeout
	}
	g, err := linkgraph.OpenExisting(col.GraphPath(), false, timeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, fmt.Errorf("%w (waited %s; the seeder or another manager is using it, run again when it is done)", err, timeout)
	}
	return g, err
}

// emptyFrontier explains why nothing could be scheduled.
func emptyFrontier(st Stats, m *config.Manager) error {
	why := "graph.db has no documents (inject seeds with the seeder)"
	if st.Docs > 0 {
		why = fmt.Sprintf("%d documents, none can be scheduled", st.Docs)
		for _, k := range skipNames[1:] {
			n := st.Skipped[k]
			switch {
			case n == 0:
				continue
			case k == "recent" && m.Revisits == config.RevisitsOptimal:
				why += fmt.Sprintf("; %s: %d (min_revisit/%d = %s)", skipHelp[k], n, RevisitFloorDivisor, m.Revisit()/RevisitFloorDivisor)
			case k == "recent":
				why += fmt.Sprintf("; %s: %d (min_revisit %s)", skipHelp[k], n, m.Revisit())
			case k == "no_gain":
				why += fmt.Sprintf("; %s: %d (beta=%g, gamma=%g)", skipHelp[k], n, m.Beta, m.Gamma)
			default:
				why += fmt.Sprintf("; %s: %d", skipHelp[k], n)
			}
		}
		if n := st.Skipped["not_due"]; n > 0 {
			why += fmt.Sprintf("; %s: %d (manager.revisits %s, budget one revisit per page per min_revisit %s)", skipHelp["not_due"], n, m.Revisits, m.Revisit())
		}
		if st.SiteFull > 0 {
			why += fmt.Sprintf("; of sites at max_site_pages (%d): %d", m.MaxSitePages, st.SiteFull)
		}
		if st.ScriptCapped > 0 {
			why += fmt.Sprintf("; of scripts at max_fetches_per_script (%d): %d", m.MaxFetchesPerScript, st.ScriptCapped)
		}
	}
	return fmt.Errorf("plan batch: frontier is empty: %s: %w", why, collection.ErrNothingToDo)
}

var skipHelp = map[string]string{
	"state":    "scheduled or excluded",
	"recent":   "fetched too recently",
	"not_due":  "not due under the revisit policy",
	"deep":     "beyond the depth limits",
	"failures": "failed too often",
	"bad_url":  "with a URL a batch cannot carry",
	"no_gain":  "would gain no value from a visit",
}

// markChunk is the number of documents markScheduled writes per
// transaction. bbolt holds every page a transaction touches in memory,
// a whole leaf page per scattered document, so one transaction for a
// batch of 100,000 would hold hundreds of megabytes.
const markChunk = 10_000

// markScheduled records batch id in graph.db: every entry's document
// that is still a candidate (pending, fetched or failed) becomes
// scheduled in batch id, in transactions of markChunk documents in id
// order, and the last one stores the estimator's state (save, if not nil)
// and the batch state. Until that last transaction graph.db has no record
// of the batch, so a crash in between leaves a batch file without a
// record, which the next run completes; running it twice changes nothing
// the second time. It returns the number of documents now scheduled in
// the batch.
func markScheduled(g *linkgraph.Graph, id int, entries []batch.Entry, managed time.Time, save func(*linkgraph.Tx) error) (int, error) {
	return markInChunks(g, id, entries, managed, save, markChunk)
}

func markInChunks(g *linkgraph.Graph, id int, entries []batch.Entry, managed time.Time, save func(*linkgraph.Tx) error, chunk int) (int, error) {
	ids := make([]uint64, len(entries))
	for i, e := range entries {
		ids[i] = e.DocID
	}
	slices.Sort(ids) // write in key order
	ids = slices.Compact(ids)
	marked := 0
	for lo := 0; ; lo += chunk {
		hi := min(lo+chunk, len(ids))
		last := hi == len(ids)
		err := g.Update(func(tx *linkgraph.Tx) error {
			for _, docID := range ids[lo:hi] {
				d, err := tx.Doc(docID)
				if err != nil {
					return fmt.Errorf("%w: %w", ErrBatchMismatch, err)
				}
				switch {
				case d.State == linkgraph.StateScheduled && d.Batch == id:
					marked++
					continue
				case d.State != linkgraph.StatePending && d.State != linkgraph.StateFetched && d.State != linkgraph.StateFailed:
					continue
				}
				d.State, d.Batch = linkgraph.StateScheduled, id
				if err := tx.PutDoc(d); err != nil {
					return err
				}
				marked++
			}
			if !last {
				return nil
			}
			if save != nil {
				if err := save(tx); err != nil {
					return fmt.Errorf("store estimator state: %w", err)
				}
			}
			return tx.PutBatch(linkgraph.BatchState{ID: id, URLs: len(entries), Managed: managed})
		})
		if err != nil || last {
			return marked, err
		}
	}
}
