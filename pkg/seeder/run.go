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
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/urlnorm"
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
	Stale     int `json:"stale"`     // records older than what graph.db holds (ignored)
	Duplicate int `json:"duplicate"` // second records of one doc id (ignored)

	Links       int            `json:"links"`       // links read (with redirects and canonicals)
	OutLinks    uint64         `json:"outLinks"`    // links stored in the graph (distinct targets per page)
	NewURLs     int            `json:"newURLs"`     // URLs given an id
	NewSites    int            `json:"newSites"`    // sites given an id
	NewExcluded int            `json:"newExcluded"` // new URLs that known robots.txt rules forbid
	Rejected    map[string]int `json:"rejected"`    // links kept out, by reason
	Updated     int            `json:"updated"`     // link targets whose depth or anchors changed

	RobotsSites    int `json:"robotsSites"`    // robots.txt records read
	RobotsChanged  int `json:"robotsChanged"`  // sites whose rules changed
	RobotsExcluded int `json:"robotsExcluded"` // known URLs newly forbidden by changed rules
	RobotsRestored int `json:"robotsRestored"` // excluded URLs that changed rules allow again

	Started time.Time `json:"started"`
	Elapsed string    `json:"elapsed"`
}

// WriteText prints the summary for people.
func (s *Summary) WriteText(w io.Writer) {
	if s.Recovered {
		fmt.Fprintf(w, "batch %06d: graph.db already records it as seeded; wrote the missing seeded.done marker only\n", s.Batch)
		return
	}
	fmt.Fprintf(w, "batch %06d seeded in %s", s.Batch, s.Elapsed)
	if s.Forced {
		fmt.Fprint(w, " (forced)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  docs        %d of %d scheduled: %d fetched, %d failed, %d excluded by robots, %d not attempted, %d missing (changed %d, stale %d, duplicate %d)\n",
		s.Docs, s.Scheduled, s.Fetched, s.Failed, s.Excluded, s.Pending, s.Missing, s.Changed, s.Stale, s.Duplicate)
	fmt.Fprintf(w, "  links       %d read, %d stored, %d targets updated\n", s.Links, s.OutLinks, s.Updated)
	fmt.Fprintf(w, "  new         %d urls (%d excluded by robots), %d sites\n", s.NewURLs, s.NewExcluded, s.NewSites)
	fmt.Fprintf(w, "  rejected    %s\n", formatCounts(s.Rejected))
	fmt.Fprintf(w, "  robots.txt  %d sites, %d changed: %d urls excluded, %d restored\n", s.RobotsSites, s.RobotsChanged, s.RobotsExcluded, s.RobotsRestored)
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
// with which the harvester says it did not try a URL; such URLs go back to
// pending rather than failed.
var notAttempted = []string{"not-attempted", "host-gave-up", "robots-unavailable", "cancelled"}

func isNotAttempted(e string) bool {
	head, _, _ := strings.Cut(e, ":")
	return slices.Contains(notAttempted, strings.TrimSpace(head))
}

// Run takes one gathered batch into graph.db (docs/seeder.md): robots.txt
// records, document records, links and new URLs, all in one transaction,
// then marks the batch seeded.
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

	var state linkgraph.BatchState
	if err := g.View(func(tx *linkgraph.Tx) error {
		state, _, err = tx.Batch(b.ID)
		return err
	}); err != nil {
		return nil, err
	}
	if !state.Seeded.IsZero() && !opts.Force {
		// The transaction committed but the marker was never written:
		// taking the batch in again would count its visits twice.
		log.Warn("graph.db already records the batch as seeded; writing its marker only", "batch", b.Name(), "seeded", state.Seeded)
		s := &Summary{Batch: b.ID, Recovered: true, Started: time.Now().UTC(), Elapsed: "0s"}
		if err := b.MarkDone(collection.StageSeeded, s); err != nil {
			return nil, err
		}
		return s, nil
	}

	s, err := seedBatch(ctx, g, b, opts, !state.Seeded.IsZero(), log)
	if err != nil {
		return nil, fmt.Errorf("seed batch %s: %w", b.Name(), err)
	}
	if err := b.MarkDone(collection.StageSeeded, s); err != nil {
		return nil, err
	}
	log.Debug("batch seeded", "batch", b.Name(), "docs", s.Docs, "new_urls", s.NewURLs, "elapsed", s.Elapsed)
	return s, nil
}

// seedBatch reads the batch's inputs and applies them in one transaction.
func seedBatch(ctx context.Context, g *linkgraph.Graph, b *collection.Batch, opts RunOptions, reapply bool, log *slog.Logger) (*Summary, error) {
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

	robotsPath := filepath.Join(b.HarvestPath(), fetchlog.RobotsFile)
	robotsRecs, err := fetchlog.ReadRobots(robotsPath)
	if errors.Is(err, os.ErrNotExist) {
		log.Debug("no robots file", "path", robotsPath)
		robotsRecs, err = nil, nil
	}
	if err != nil {
		return nil, err
	}

	docsPath := filepath.Join(b.ParsedPath(), parsed.DocsFile)
	f, err := os.Open(docsPath)
	if err != nil {
		return nil, fmt.Errorf("open parsed docs: %w", err)
	}
	defer f.Close()
	reader := parsed.NewReader(f, docsPath)

	res := newResolver(opts.Config)
	prepCtx, cancel := context.WithCancel(ctx)
	chunks := make(chan chunk, 2)
	go prepareDocs(prepCtx, reader, res, chunks)
	defer func() {
		cancel()
		for range chunks {
			// Wait for prepareDocs to stop reading before f closes.
		}
	}()

	err = g.Update(func(tx *linkgraph.Tx) error {
		in := newIntake(tx, opts.Config, b.ID, res)
		run := &batchRun{in: in, s: s, scheduled: scheduled, seen: roaring.New(), updates: targetUpdates{}, out: roaring.New(), unreachable: map[string]bool{}, reapply: reapply}
		if err := run.robots(robotsRecs); err != nil {
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
		if err := run.missing(entries); err != nil {
			return err
		}
		if s.Updated, err = run.updates.apply(tx); err != nil {
			return err
		}
		if err := in.flushSites(); err != nil {
			return err
		}
		s.NewURLs, s.NewSites, s.NewExcluded = in.counts.newURLs, in.counts.newSites, in.counts.newExcluded
		for k, n := range in.counts.rejected {
			s.Rejected[k] += n
		}
		st, _, err := tx.Batch(b.ID)
		if err != nil {
			return err
		}
		if st.URLs == 0 {
			st.URLs = len(entries)
		}
		st.Seeded = time.Now().UTC()
		return tx.PutBatch(st)
	})
	if err != nil {
		return nil, err
	}
	s.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return s, nil
}

// batchRun is the state of one batch's transaction.
type batchRun struct {
	in          *intake
	s           *Summary
	scheduled   map[uint64]string // doc id → URL, from batch.tsv
	seen        *roaring.Bitmap   // doc ids with a parsed record
	updates     targetUpdates
	out         *roaring.Bitmap // reused out-link set
	unreachable map[string]bool // sites whose robots.txt was unreachable in this batch
	reapply     bool            // graph.db already records the batch as seeded (forced run)
}

// robots stores each site's robots.txt record and, where the known rules
// changed, re-checks the site's URLs (docs/seeder.md, "robots.txt").
func (r *batchRun) robots(recs []fetchlog.Robots) error {
	for _, rec := range recs {
		r.s.RobotsSites++
		key := rec.Site
		if n, err := r.in.norm.Normalize(rec.Site); err == nil {
			key = urlnorm.SiteKey(n)
		}
		site, err := r.in.site(key, true)
		if err != nil {
			return err
		}
		oldBody := site.rec.RobotsBody
		site.rec.RobotsStatus = rec.Status
		site.rec.RobotsErr = rec.Err
		site.rec.RobotsFetched = rec.Fetched
		site.dirty = true
		var newBody string
		switch robots.ForStatus(rec.Status, nil, r.in.token).Mode() {
		case robots.ModeRules:
			newBody = rec.Body
		case robots.ModeAllowAll:
			newBody = ""
		default:
			// 5xx, 429 or no response: the harvester fetched nothing of
			// the site and retries next batch; what was known stays.
			r.unreachable[key] = true
			continue
		}
		if newBody == oldBody {
			continue
		}
		oldRules := r.in.rules(site)
		site.rec.RobotsBody = newBody
		site.rules = nil
		newRules := r.in.rules(site)
		r.s.RobotsChanged++
		if err := r.recheck(site, oldRules, newRules); err != nil {
			return err
		}
	}
	return nil
}

// recheck applies changed robots.txt rules to the known URLs of a site.
// It scans the site's URLs in the urls bucket (a key range: every URL of
// the site starts with its key) and decodes only the documents whose
// verdict changed: pending and failed ones that the new rules forbid
// become excluded, and ones excluded by robots that the new rules allow
// come back.
func (r *batchRun) recheck(site *siteEntry, oldRules, newRules *robots.Rules) error {
	tx := r.in.tx
	return tx.ForEachSiteURL(site.rec.Key, func(u string, id uint64) error {
		allowed := newRules.Allowed(u)
		if allowed == oldRules.Allowed(u) {
			return nil
		}
		d, err := tx.Doc(id)
		if err != nil {
			return err
		}
		switch {
		case !allowed && (d.State == linkgraph.StatePending || d.State == linkgraph.StateFailed):
			d.State, d.Reason = linkgraph.StateExcluded, ExcludedRobots
			r.s.RobotsExcluded++
		case allowed && d.State == linkgraph.StateExcluded && d.Reason == ExcludedRobots:
			d.Reason = ""
			rest(d)
			r.s.RobotsRestored++
		default:
			return nil
		}
		return tx.PutDoc(d)
	})
}

// rest puts a document that is no longer scheduled or excluded back in
// the state its history gives (as the manager does when it cancels a
// batch): failed if its last attempts failed, fetched if it has been
// fetched, else pending.
func rest(d *linkgraph.Doc) {
	switch {
	case d.Failures > 0:
		d.State = linkgraph.StateFailed
	case d.Visits > 0:
		d.State, d.Reason = linkgraph.StateFetched, ""
	default:
		d.State, d.Reason = linkgraph.StatePending, ""
	}
}

// doc takes in one parsed record: the document's own fields, then its
// links.
func (r *batchRun) doc(p *preparedDoc) error {
	tx := r.in.tx
	pd := p.doc
	want, ok := r.scheduled[pd.DocID]
	if !ok {
		return fmt.Errorf("%w: parsed record for doc %d (%s) which batch.tsv does not schedule", ErrMismatch, pd.DocID, pd.URL)
	}
	if pd.URL != want {
		return fmt.Errorf("%w: parsed record for doc %d has url %s, batch.tsv has %s", ErrMismatch, pd.DocID, pd.URL, want)
	}
	if pd.DocID > 1<<32-1 || r.seen.Contains(uint32(pd.DocID)) {
		r.s.Duplicate++
		return nil
	}
	r.seen.Add(uint32(pd.DocID))
	d, err := tx.Doc(pd.DocID)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	if d.URL != pd.URL {
		return fmt.Errorf("%w: doc %d is %s in graph.db, %s in the batch", ErrMismatch, pd.DocID, d.URL, pd.URL)
	}
	r.s.Docs++

	response := pd.Status > 0
	if (response && !d.Fetched.IsZero() && pd.Fetched.Before(d.Fetched)) || (r.reapply && d.Batch > r.in.batch) {
		// An older visit than the one graph.db holds, or a document that a
		// later batch has scheduled since: it must not overwrite the newer
		// state.
		r.s.Stale++
		return nil
	}
	// Counters grow once per visit: not when a forced run takes the
	// batch in again, nor for a visit graph.db already holds.
	count := !r.reapply && !(response && !d.Fetched.IsZero() && pd.Fetched.Equal(d.Fetched))
	d.Batch = r.in.batch
	siteKey := urlnorm.SiteKey(d.URL)
	switch {
	case response:
		r.s.Fetched++
		d.State, d.Reason = linkgraph.StateFetched, pd.Err
		d.Status = pd.Status
		d.Fetched = pd.Fetched
		if d.FirstFetched.IsZero() {
			d.FirstFetched = pd.Fetched
		}
		d.Failures = 0
		if pd.Status != 304 {
			if count && d.Visits > 0 && pd.Hash != "" && d.Hash != "" && pd.Hash != d.Hash {
				d.Changes++
				r.s.Changed++
			}
			d.MIME, d.Title, d.Hash = pd.MIME, pd.Title, pd.Hash
			d.Redirect, d.NoIndex, d.Canonical = pd.Redirect, pd.NoIndex, pd.Canonical
		}
		if count {
			d.Visits++
		}
	case pd.Err == ExcludedRobots && !r.unreachable[siteKey]:
		r.s.Excluded++
		d.State, d.Reason = linkgraph.StateExcluded, ExcludedRobots
	case pd.Err == ExcludedRobots || isNotAttempted(pd.Err):
		r.s.Pending++
		rest(d)
	default:
		r.s.Failed++
		d.State, d.Reason = linkgraph.StateFailed, pd.Err
		if d.Reason == "" {
			d.Reason = "no response"
		}
		if count {
			d.Failures++
		}
	}
	if err := tx.PutDoc(d); err != nil {
		return err
	}
	if !hasLinks(pd) {
		return nil // the stored out-links stay as they were
	}
	return r.links(d, p.links, siteKey)
}

// links takes in a fetched page's resolved links (with its redirect and
// canonical): new in-scope URLs get ids, and the page's out-link set is
// replaced.
func (r *batchRun) links(d *linkgraph.Doc, links []preparedLink, siteKey string) error {
	r.out.Clear()
	for _, l := range links {
		r.s.Links++
		if l.rej != nil {
			r.in.reject(l.rej)
			continue
		}
		depth := 0
		if urlnorm.SiteKey(l.url) == siteKey {
			depth = d.Depth + 1
		}
		id, created, rej, err := r.in.take(l.url, depth, !l.nofollow)
		if err != nil {
			return err
		}
		if rej != nil {
			r.in.reject(rej)
			continue
		}
		r.out.Add(uint32(id))
		if id == d.ID {
			continue
		}
		if !created {
			r.updates.proposeDepth(id, depth)
		}
		if l.anchor != "" {
			r.updates.addAnchor(id, l.anchor)
		}
	}
	r.s.OutLinks += r.out.GetCardinality()
	return r.in.tx.SetOutLinks(d.ID, r.out)
}

// missing puts the scheduled URLs that got no parsed record back.
func (r *batchRun) missing(entries []batch.Entry) error {
	tx := r.in.tx
	for _, e := range entries {
		if e.DocID <= 1<<32-1 && r.seen.Contains(uint32(e.DocID)) {
			continue
		}
		d, err := tx.Doc(e.DocID)
		if err != nil {
			return fmt.Errorf("%w: batch.tsv schedules doc %d: %w", ErrMismatch, e.DocID, err)
		}
		if d.URL != e.URL {
			return fmt.Errorf("%w: doc %d is %s in graph.db, %s in batch.tsv", ErrMismatch, e.DocID, d.URL, e.URL)
		}
		r.s.Missing++
		if d.State != linkgraph.StateScheduled {
			continue
		}
		rest(d)
		if err := tx.PutDoc(d); err != nil {
			return err
		}
	}
	return nil
}
