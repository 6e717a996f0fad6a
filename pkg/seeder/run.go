package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// RunOptions are the inputs of Run.
type RunOptions struct {
	Collection *collection.Collection
	Config     config.Config
	// Batch is the batch to take in; 0 means the oldest batch that is
	// gathered and not yet seeded.
	Batch int
	// Force takes the batch in again even if it is already seeded. Taking
	// a batch in twice changes nothing the first time did not (a visit is
	// counted once per fetch time). Needs Batch.
	Force bool
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
	// Logger receives progress messages; nil discards them.
	Logger *slog.Logger
	// Progress, if set, is called with the number of records read since
	// its last call.
	Progress func(n int)
}

// Summary is what Run did to a batch. It is printed, and stored as the
// content of the batch's seeded.done marker.
type Summary struct {
	Batch int `json:"batch"`
	// Recovered is set when graph.db already recorded the batch as seeded
	// (a run that committed and then died before writing its marker):
	// only the marker was written, and the counts below are zero.
	Recovered bool `json:"recovered,omitempty"`
	Forced    bool `json:"forced,omitempty"`

	Scheduled int `json:"scheduled"` // URLs in batch.tsv
	Docs      int `json:"docs"`      // parsed records taken in
	Fetched   int `json:"fetched"`   // records with a response
	Failed    int `json:"failed"`    // records with no response
	Excluded  int `json:"excluded"`  // records the harvester did not fetch because of robots.txt
	Pending   int `json:"pending"`   // records the harvester did not attempt (back to pending)
	Missing   int `json:"missing"`   // URLs of batch.tsv without a record (back to pending)
	Changed   int `json:"changed"`   // fetched records whose text hash changed since the last visit
	// NotModified counts the fetched records that brought nothing new: a
	// 304, or a 2xx the harvester stored as a revisit of the page's
	// stored capture (parsed.Doc.NotModified); kept as stored, unchanged.
	NotModified int `json:"notModified,omitempty"`
	// Captures counts the stored captures recorded (2xx responses stored
	// whole, docs.jsonl's recordId); BadCaptures the records whose
	// capture fields were malformed (ignored, the page taken in).
	Captures    int `json:"captures,omitempty"`
	BadCaptures int `json:"badCaptures,omitempty"`
	Stale       int `json:"stale"` // records older than what graph.db holds (ignored)
	// NearDuplicates are fetched pages whose simhash is within
	// simhash.Distance of a page fingerprinted before; Canonical those
	// whose rel=canonical names another fetched page (docs/seeder.md,
	// "Near-duplicates").
	NearDuplicates int `json:"nearDuplicates"`
	Canonical      int `json:"canonical"`
	// Mirrors are the sites this batch found to mirror another (newly
	// flagged, linkgraph.Site.MirrorOf); MirrorsCleared those no longer
	// found to.
	Mirrors        int `json:"mirrors"`
	MirrorsCleared int `json:"mirrorsCleared"`
	// OldSimhashes are fetched pages whose simhash is of another version
	// than pkg/simhash's (a batch gathered before the scheme changed):
	// stored with its version, not compared. OldTable counts the
	// fingerprints of such a version that the near-duplicate table held
	// (a table of version 1), set aside (docs/seeder.md,
	// "Near-duplicates").
	OldSimhashes int `json:"oldSimhashes,omitempty"`
	OldTable     int `json:"oldTable,omitempty"`
	Duplicate    int `json:"duplicate"` // second records of one doc id (ignored)

	Links       int            `json:"links"`       // links read (with redirects and canonicals)
	OutLinks    uint64         `json:"outLinks"`    // links stored in the graph (distinct targets per page)
	NewURLs     int            `json:"newURLs"`     // URLs given an id
	NewSites    int            `json:"newSites"`    // sites given an id
	NewExcluded int            `json:"newExcluded"` // new URLs that known robots.txt rules forbid
	Parked      int            `json:"parked"`      // links to new URLs parked on disk (Sydney strategy, budget)
	Rejected    map[string]int `json:"rejected"`    // links kept out, by reason
	Updated     int            `json:"updated"`     // link targets whose depth or anchors changed

	RobotsSites    int `json:"robotsSites"`    // robots.txt records read
	RobotsChanged  int `json:"robotsChanged"`  // sites whose rules changed
	RobotsExcluded int `json:"robotsExcluded"` // known URLs newly forbidden by changed rules
	RobotsRestored int `json:"robotsRestored"` // excluded URLs that changed rules allow again
	ServerSites    int `json:"serverSites"`    // sites whose server estimates were updated
	// StreamingSet and StreamingCleared count the sites flagged as
	// streaming by this batch's harvest, and those whose flag it cleared
	// (a whole response).
	StreamingSet     int `json:"streamingSet,omitempty"`
	StreamingCleared int `json:"streamingCleared,omitempty"`
	// Upgraded and Downgraded count the http sites this batch found
	// redirecting to https (Site.Upgrade set), and those found serving
	// pages again (cleared).
	Upgraded   int `json:"upgraded,omitempty"`
	Downgraded int `json:"downgraded,omitempty"`
	// Folded counts the pending documents of upgraded sites excluded in
	// favour of their https twins.
	Folded int `json:"folded,omitempty"`
	// Untrusted counts the sites whose dates this batch found wrong
	// often enough that the manager stops reading them
	// (linkgraph.Validators.Trusted).
	Untrusted int `json:"untrusted,omitempty"`

	// Sitemaps (docs/sitemaps.md): sites whose robots.txt names one,
	// sitemap URLs new to graph.db, sitemap records read (and of them with
	// a problem: bad XML, a limit), their entries, and known documents
	// whose sitemap hints (flag, lastmod, changefreq, priority) changed.
	SitemapSites   int `json:"sitemapSites,omitempty"`
	SitemapsFound  int `json:"sitemapsFound,omitempty"`
	SitemapsRead   int `json:"sitemapsRead,omitempty"`
	SitemapErrors  int `json:"sitemapErrors,omitempty"`
	SitemapEntries int `json:"sitemapEntries,omitempty"`
	SitemapHinted  int `json:"sitemapHinted,omitempty"`

	// Frontier is the number of frontier documents after the batch.
	Frontier uint64 `json:"frontier"`
	// Release is what the release of parked links after the batch did,
	// if the frontier was below seeder.frontier_low_water.
	Release *ReleaseSummary `json:"release,omitempty"`
	// Sent counts the links and URLs written for other partitions
	// (crawl.partition, exchange.go); HandedOver the sites handed over;
	// Located the new URLs routed by their name's address, which the
	// seeder looked up (crawl.partition_lookup), Lookups and
	// LookupFailures those lookups, and LookupWaitMs the time the
	// batch's transaction waited for them; Exchange is what the intake
	// of other partitions' files did.
	Sent           int              `json:"sent,omitempty"`
	HandedOver     int              `json:"handedOver,omitempty"`
	Located        int              `json:"located,omitempty"`
	Lookups        int64            `json:"lookups,omitempty"`
	LookupFailures int64            `json:"lookupFailures,omitempty"`
	LookupWaitMs   int64            `json:"lookupWaitMs,omitempty"`
	Exchange       *ExchangeSummary `json:"exchange,omitempty"`

	Started time.Time `json:"started"`
	Elapsed string    `json:"elapsed"`
}

// WriteText prints the summary for people.
func (s *Summary) WriteText(w io.Writer) {
	if s.Recovered {
		fmt.Fprintf(w, "batch %06d: graph.db already records it as seeded; wrote the missing seeded.done marker only\n", s.Batch)
		if s.Release != nil {
			s.Release.WriteText(w)
		}
		return
	}
	fmt.Fprintf(w, "batch %06d seeded in %s", s.Batch, s.Elapsed)
	if s.Forced {
		fmt.Fprint(w, " (forced)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  docs        %d of %d scheduled: %d fetched, %d failed, %d excluded by robots, %d not attempted, %d missing (changed %d, stale %d, duplicate %d)\n",
		s.Docs, s.Scheduled, s.Fetched, s.Failed, s.Excluded, s.Pending, s.Missing, s.Changed, s.Stale, s.Duplicate)
	if s.NotModified > 0 || s.Captures > 0 || s.BadCaptures > 0 {
		fmt.Fprintf(w, "  revisits    %d not modified (304 or the stored payload), %d captures recorded", s.NotModified, s.Captures)
		if s.BadCaptures > 0 {
			fmt.Fprintf(w, ", %d malformed (ignored)", s.BadCaptures)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  links       %d read, %d stored, %d targets updated\n", s.Links, s.OutLinks, s.Updated)
	if s.NearDuplicates > 0 || s.Canonical > 0 {
		fmt.Fprintf(w, "  near-dups   %d pages near-duplicates of a page fetched before, %d with rel=canonical to a fetched page; %d sites found to mirror another, %d no longer\n",
			s.NearDuplicates, s.Canonical, s.Mirrors, s.MirrorsCleared)
	}
	if s.OldSimhashes > 0 || s.OldTable > 0 {
		fmt.Fprintf(w, "  simhashes   %d pages with a fingerprint of another version, %d set aside from the near-duplicate table: not compared\n", s.OldSimhashes, s.OldTable)
	}
	fmt.Fprintf(w, "  new         %d urls (%d excluded by robots), %d sites, %d links parked\n", s.NewURLs, s.NewExcluded, s.NewSites, s.Parked)
	fmt.Fprintf(w, "  rejected    %s\n", formatCounts(s.Rejected))
	fmt.Fprintf(w, "  robots.txt  %d sites, %d changed: %d urls excluded, %d restored\n", s.RobotsSites, s.RobotsChanged, s.RobotsExcluded, s.RobotsRestored)
	fmt.Fprintf(w, "  frontier    %d urls waiting; server estimates for %d sites\n", s.Frontier, s.ServerSites)
	if s.Upgraded > 0 || s.Downgraded > 0 {
		fmt.Fprintf(w, "  https       %d http sites found redirecting to https (their new links go there, %d pending URLs moved to https), %d serving pages again\n", s.Upgraded, s.Folded, s.Downgraded)
	}
	if s.Untrusted > 0 {
		fmt.Fprintf(w, "  validators  %d sites whose Last-Modified or sitemap lastmod the text hash contradicts: no longer trusted\n", s.Untrusted)
	}
	if s.SitemapSites > 0 || s.SitemapsFound > 0 || s.SitemapsRead > 0 {
		fmt.Fprintf(w, "  sitemaps    %d sites name one, %d new sitemaps, %d read (%d with a problem): %d entries, %d urls given their hints\n",
			s.SitemapSites, s.SitemapsFound, s.SitemapsRead, s.SitemapErrors, s.SitemapEntries, s.SitemapHinted)
	}
	if s.StreamingSet > 0 || s.StreamingCleared > 0 {
		fmt.Fprintf(w, "  streaming   %d sites flagged, %d cleared\n", s.StreamingSet, s.StreamingCleared)
	}
	if s.Release != nil {
		s.Release.WriteText(w)
	}
	if s.Sent > 0 || s.HandedOver > 0 || s.Lookups > 0 {
		fmt.Fprintf(w, "  partitions  %d links and urls written for other partitions, %d sites handed over; %d new urls routed by their address (%d names looked up, %d failed, %d ms waited for)\n", s.Sent, s.HandedOver, s.Located, s.Lookups, s.LookupFailures, s.LookupWaitMs)
	}
	if s.Exchange != nil {
		s.Exchange.WriteText(w)
	}
}

func formatCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	total := 0
	for k, n := range m {
		keys = append(keys, k)
		total += n
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// notAttempted are the fetch errors (whole value, or prefix before ':')
// with which the harvester says it did not try a URL, and the gatherer
// that it could not read the URL's record back from its WARC file
// (parsed.Unread, gatherer run --salvage); such URLs go back to where
// they were before the batch (pending for a new page) rather than failed.
var notAttempted = []string{"not-attempted", "host-gave-up", "robots-unavailable", "cancelled", "deferred", parsed.Unread}

func isNotAttempted(e string) bool {
	head, _, _ := strings.Cut(e, ":")
	return slices.Contains(notAttempted, strings.TrimSpace(head))
}

// Run takes one gathered batch into graph.db (docs/seeder.md): robots.txt
// records, server estimates, document records, links and new URLs, all in
// one transaction; then releases parked links if the frontier runs low
// (a second transaction) and marks the batch seeded.
func Run(ctx context.Context, opts RunOptions) (*Summary, error) {
	log := logger(opts.Logger)
	col := opts.Collection
	if opts.Force && opts.Batch == 0 {
		return nil, ErrForceNeedsBatch
	}
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	var b *collection.Batch
	if opts.Batch == 0 {
		if b, err = col.NextReady(collection.StageSeeded); err != nil {
			return nil, err
		}
	} else {
		b = col.Batch(opts.Batch)
		if err := b.CheckReady(collection.StageSeeded); err != nil {
			if !opts.Force || !errors.Is(err, collection.ErrAlreadyDone) {
				return nil, err
			}
		}
	}

	g, err := openGraph(col, false, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := removeOrphanParks(g, col, log); err != nil {
		return nil, err
	}

	var state linkgraph.BatchState
	if err := g.View(func(tx *linkgraph.Tx) error {
		state, _, err = tx.Batch(b.ID)
		return err
	}); err != nil {
		return nil, err
	}
	var s *Summary
	if !state.Seeded.IsZero() && !opts.Force {
		// The transaction committed but the marker was never written:
		// taking the batch in again would count its visits twice.
		log.Warn("graph.db already records the batch as seeded; writing its marker only", "batch", b.Name(), "seeded", state.Seeded)
		s = &Summary{Batch: b.ID, Recovered: true, Started: time.Now().UTC(), Elapsed: "0s"}
	} else {
		s, err = seedBatch(ctx, g, col, b, opts, !state.Seeded.IsZero())
		if err != nil {
			return nil, fmt.Errorf("seed batch %s: %w", b.Name(), err)
		}
	}
	if s.Release, err = release(ctx, g, col, opts.Config, false, log); err != nil {
		return nil, fmt.Errorf("seed batch %s: %w", b.Name(), err)
	}
	if s.Exchange, err = exchange(ctx, g, col, opts.Config, log); err != nil {
		return nil, fmt.Errorf("seed batch %s: %w", b.Name(), err)
	}
	switch {
	case s.Release.Files > 0:
		s.Frontier = s.Release.FrontierAfter
	case s.Release.Left == 0:
		s.Release = nil // nothing parked: nothing to say
	}
	if err := b.MarkDone(collection.StageSeeded, s); err != nil {
		return nil, err
	}
	maybeBackup(g, col, opts.Config, b.ID, log)
	log.Debug("batch seeded", "batch", b.Name(), "docs", s.Docs, "new_urls", s.NewURLs, "elapsed", s.Elapsed)
	return s, nil
}

// harvestInputs reads the robots.txt records and the server estimates of
// a batch's harvest; either file may be absent (older harvests have no
// servers.jsonl).
func harvestInputs(b *collection.Batch) ([]fetchlog.Robots, []fetchlog.Server, error) {
	dir := b.HarvestPath()
	robotsRecs, err := fetchlog.ReadRobots(filepath.Join(dir, fetchlog.RobotsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	servers, err := fetchlog.ReadServers(filepath.Join(dir, fetchlog.ServersFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	return robotsRecs, servers, nil
}

// seedBatch reads the batch's inputs and applies them in one transaction.
func seedBatch(ctx context.Context, g *linkgraph.Graph, col *collection.Collection, b *collection.Batch, opts RunOptions, reapply bool) (*Summary, error) {
	start := time.Now()
	s := &Summary{Batch: b.ID, Forced: opts.Force, Started: start.UTC(), Rejected: map[string]int{}}

	h, entries, err := batch.ReadFile(b.File())
	if err != nil {
		return nil, err
	}
	if h.Batch != 0 && h.Batch != b.ID {
		return nil, fmt.Errorf("%w: %s says batch %d", ErrMismatch, b.File(), h.Batch)
	}
	s.Scheduled = len(entries)
	scheduled := make(map[uint64]string, len(entries))
	for _, e := range entries {
		scheduled[e.DocID] = e.URL
	}
	robotsRecs, servers, err := harvestInputs(b)
	if err != nil {
		return nil, err
	}

	docsPath := filepath.Join(b.ParsedPath(), parsed.DocsFile)
	f, err := os.Open(docsPath)
	if err != nil {
		return nil, fmt.Errorf("open parsed docs: %w", err)
	}
	defer f.Close()

	res, err := newResolver(opts.Config)
	if err != nil {
		return nil, err
	}
	if res.loc, err = newLocator(opts.Config); err != nil {
		return nil, err
	}
	defer res.loc.close()
	prepCtx, cancel := context.WithCancel(ctx)
	chunks := make(chan chunk, 2)
	go prepareDocs(prepCtx, f, docsPath, g, res, chunks)
	defer func() {
		cancel()
		for range chunks {
			// Wait for prepareDocs to stop reading before f closes.
		}
	}()

	near, err := loadNearDups(filepath.Join(col.Dir, NearDupFile))
	if err != nil {
		return nil, err
	}
	s.OldTable = near.discarded
	err = g.Update(func(tx *linkgraph.Tx) error {
		in := newIntake(tx, opts.Config, b.ID, res, filepath.Join(col.Dir, FrontierDir))
		defer in.abortPark()
		defer in.abortExchange()
		run := &batchRun{in: in, s: s, near: near, scheduled: scheduled, seen: roaring.New(), rewritten: roaring.New(), unreachable: map[string]bool{}, reapply: reapply, maxStreaming: opts.Config.Harvester.MaxStreaming, snapshot: true, cands: map[string]int{}, probe: opts.Config.Seeder.SitemapProbe, sitemaps: opts.Config.Seeder.Sitemaps}
		if err := run.robots(robotsRecs); err != nil {
			return err
		}
		if err := run.servers(servers, entries); err != nil {
			return err
		}
		for c := range chunks {
			for i := range c.docs {
				if err := run.doc(&c.docs[i]); err != nil {
					return err
				}
			}
			if c.err != nil {
				return c.err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if opts.Progress != nil {
				opts.Progress(len(c.docs))
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := run.foldUpgrades(); err != nil {
			return err
		}
		// Mirrors, from the batch's near-duplicates: site records are read
		// and marked for flushSites before the flush starts.
		if err := near.mirrors(in, s); err != nil {
			return err
		}
		// No URL is created and no out-link changes from here on: the
		// sorting of the new URLs and the new in-link sets are computed on
		// the other core while the targets are updated.
		tx.PrepareFlush()
		if err := run.missing(entries); err != nil {
			return err
		}
		if s.Updated, err = run.updates.apply(tx); err != nil {
			return err
		}
		if s.SitemapHinted, err = run.applyHints(); err != nil {
			return err
		}
		if err := in.flushSites(); err != nil {
			return err
		}
		s.NewURLs, s.NewSites, s.NewExcluded, s.Parked = in.counts.newURLs, in.counts.newSites, in.counts.newExcluded, in.counts.parked
		for k, n := range in.counts.rejected {
			s.Rejected[k] += n
		}
		if s.Frontier, err = tx.FrontierSize(); err != nil {
			return err
		}
		st, _, err := tx.Batch(b.ID)
		if err != nil {
			return err
		}
		if st.URLs == 0 {
			st.URLs = len(entries)
		}
		st.Seeded = time.Now().UTC()
		if err := tx.PutBatch(st); err != nil {
			return err
		}
		// The near-duplicate table goes first: if the commit then fails,
		// the batch is taken in again and finds its pages there, which
		// changes nothing (each page keeps its rank).
		if err := near.save(); err != nil {
			return err
		}
		// Last: the park file is published just before the commit; if the
		// commit fails, the next run removes it (no record names it).
		if err := in.finishExchange(); err != nil {
			return err
		}
		s.Sent, s.Located = in.counts.sent, in.counts.located
		return in.finishPark(b.ID)
	})
	if err != nil {
		return nil, err
	}
	if res.loc != nil {
		s.Lookups, s.LookupFailures = res.loc.lookups.Load(), res.loc.failures.Load()
		s.LookupWaitMs = time.Duration(res.loc.waited.Load()).Milliseconds()
	}
	s.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return s, nil
}
