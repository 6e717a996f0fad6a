package seeder

import (
	"fmt"
	"net/http"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// batchRun is the state of one batch's transaction.
type batchRun struct {
	in           *intake
	s            *Summary
	near         *nearDups         // fingerprints of fetched pages
	scheduled    map[uint64]string // doc id → URL, from batch.tsv
	seen         *roaring.Bitmap   // doc ids with a parsed record
	updates      targetUpdates
	unreachable  map[string]bool // sites whose robots.txt was unreachable in this batch
	reapply      bool            // graph.db already records the batch as seeded (forced run)
	maxStreaming int             // harvester.max_streaming: the streak of a streaming site
	snapshot     bool            // links were looked up in graph.db as it was before the batch
	// rewritten holds the documents known before the batch whose records
	// the transaction rewrote before their parsed record came (robots.txt
	// rechecks): their prepared snapshot copy is out of date.
	rewritten *roaring.Bitmap
	// upgrades are the http sites whose Upgrade the batch changed, to
	// the https site key ("" when cleared): foldUpgrades moves their
	// pending URLs once every record is in.
	upgrades map[string]string

	// Sitemaps (sitemaps.go): hints for known documents, applied at the
	// end; each site's robots.txt Sitemap: lines, normalised; whether to
	// try /sitemap.xml of sites whose robots.txt names none.
	hints      map[uint64]sitemapHint
	robotsMaps map[string][]string
	probe      bool
	sitemaps   bool // seeder.sitemaps: take robots.txt Sitemap: lines

	// Reused for each page's links.
	targets []linkgraph.Target
	newURLs []candidate
	cands   map[string]int // URL → index in newURLs
}

// robots stores each site's robots.txt record and, where the known rules
// changed, re-checks the site's URLs (docs/seeder.md, "robots.txt"). A
// record means what robots.ForFetch says it means: the rules the
// harvester obeyed.
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
		if !site.rec.RobotsFetched.IsZero() && rec.Fetched.Before(site.rec.RobotsFetched) {
			continue // graph.db knows a newer fetch (a batch taken in again)
		}
		oldBody := site.rec.RobotsBody
		site.rec.RobotsStatus = rec.Status
		site.rec.RobotsErr = rec.Err
		site.rec.RobotsFetched = rec.Fetched
		site.dirty = true
		var newBody string
		obeyed := robots.ForFetch(rec.Status, rec.Body, rec.Err, r.in.token)
		switch obeyed.Mode() {
		case robots.ModeRules:
			newBody = rec.Body
		case robots.ModeAllowAll:
			newBody = ""
		default:
			// 5xx, 429, no response or a fetch cut short: the harvester
			// fetched nothing of the site and retries next batch; what was
			// known stays.
			r.unreachable[key] = true
			continue
		}
		if newBody != oldBody {
			oldRules := r.in.rules(site)
			site.rec.RobotsBody = newBody
			site.rules = nil
			if newBody != "" {
				site.rules = obeyed
			}
			newRules := r.in.rules(site)
			r.s.RobotsChanged++
			if err := r.recheck(site, oldRules, newRules); err != nil {
				return err
			}
		}
		// After the rules: a sitemap the new robots.txt forbids is taken
		// in excluded.
		if r.sitemaps {
			if err := r.robotsSitemaps(key, rec, obeyed.Mode() == robots.ModeRules); err != nil {
				return err
			}
		}
	}
	return nil
}

// servers stores the harvester's server estimates (servers.jsonl, one
// record per host) in the records of the batch's sites on that host,
// unless a site already holds newer ones.
func (r *batchRun) servers(recs []fetchlog.Server, entries []batch.Entry) error {
	if len(recs) == 0 {
		return nil
	}
	byHost := map[string][]string{}
	seen := map[string]bool{}
	for _, e := range entries {
		key := urlnorm.SiteKey(e.URL)
		if seen[key] {
			continue
		}
		seen[key] = true
		host := urlnorm.Host(e.URL)
		byHost[host] = append(byHost[host], key)
	}
	for _, rec := range recs {
		for _, key := range byHost[rec.Host] {
			site, err := r.in.site(key, false)
			if err != nil {
				return err
			}
			if site != nil && !r.reapply {
				r.streaming(site, rec)
			}
			if site != nil && rec.IP != "" && rec.IP != site.rec.IP {
				// The address the harvester dialled or resolved now,
				// whatever the age of its estimates: a name that moved is
				// split and paced by its new address in the next batch
				// (the harvester's shards, docs/harvester.md).
				site.rec.IP = rec.IP
				site.dirty = true
			}
			if site == nil || (!site.rec.EstimatesAt.IsZero() && rec.Measured.Before(site.rec.EstimatesAt)) {
				continue
			}
			site.rec.ConnectMs, site.rec.ResponseMs, site.rec.RequestsPerConn = rec.ConnectMs, rec.ResponseMs, rec.RequestsPerConn
			site.rec.EstimatesAt = rec.Measured
			site.dirty = true
			r.s.ServerSites++
		}
	}
	return nil
}

// measuredAt is when a servers.jsonl line was measured, or now for a line
// without the time.
func measuredAt(rec fetchlog.Server) time.Time {
	if rec.Measured.IsZero() {
		return time.Now().UTC()
	}
	return rec.Measured.UTC()
}

// streaming keeps the site's streak of cut responses and its streaming
// flag up to date with its host's servers.jsonl line (docs/seeder.md,
// "Streaming sites"): the flag is set when the harvest gave the host up as
// streaming; a flagged site's probe cut again is counted; the flag is
// cleared when the streak fell below harvester.max_streaming, which only
// a whole response does.
func (r *batchRun) streaming(site *siteEntry, rec fetchlog.Server) {
	s := site.rec
	batch := r.in.batch
	changed := s.Streak != rec.Streak
	switch {
	case rec.Streaming || (s.Streaming != nil && rec.Streak >= r.maxStreaming):
		switch {
		case s.Streaming == nil:
			s.Streaming = &linkgraph.Streaming{Since: batch, Last: batch, At: measuredAt(rec), Reason: rec.GaveUp}
			r.s.StreamingSet++
			changed = true
		case rec.Streak > s.Streak && batch > s.Streaming.Last:
			// The probe was cut too.
			s.Streaming.Last, s.Streaming.At = batch, measuredAt(rec)
			s.Streaming.Probes++
			if rec.GaveUp != "" {
				s.Streaming.Reason = rec.GaveUp
			}
			changed = true
		}
	case s.Streaming != nil:
		s.Streaming = nil
		r.s.StreamingCleared++
		changed = true
	}
	if changed {
		s.Streak = rec.Streak
		site.dirty = true
	}
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
		r.rewritten.Add(uint32(id))
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
	// The record as it was before the batch, read ahead on another core,
	// is the record now unless the transaction rewrote it: each document
	// is taken in once (seen), and only robots.txt rechecks rewrite known
	// documents before that.
	d := p.stored
	if d == nil || !r.snapshot || r.rewritten.Contains(uint32(pd.DocID)) {
		var err error
		if d, err = tx.Doc(pd.DocID); err != nil {
			return fmt.Errorf("%w: %w", ErrMismatch, err)
		}
	}
	if d.URL != pd.URL {
		return fmt.Errorf("%w: doc %d is %s in graph.db, %s in the batch", ErrMismatch, pd.DocID, d.URL, pd.URL)
	}
	r.s.Docs++

	// A record a gatherer before issue 18 could not read kept its status:
	// it is not a response either (nothing of it was stored).
	oldUnread := unreadByOldGatherer(pd.Status, pd.Err)
	response := pd.Status > 0 && !oldUnread
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
		prev, prevHash, sitemapLM := d.Fetched, d.Hash, d.SitemapLastMod
		r.s.Fetched++
		d.State, d.Reason = linkgraph.StateFetched, pd.Err
		d.Status = pd.Status
		d.Fetched = pd.Fetched
		if d.FirstFetched.IsZero() {
			d.FirstFetched = pd.Fetched
		}
		d.Failures = 0
		changed := false
		if !pd.NotModified() {
			changed = d.Visits > 0 && pd.Hash != "" && d.Hash != "" && pd.Hash != d.Hash
			if count && changed {
				d.Changes++
				r.s.Changed++
			}
			if count && d.Visits > 0 && pd.Hash != "" && prevHash != "" {
				if err := r.checkValidators(siteKey, prev, sitemapLM, pd, changed); err != nil {
					return err
				}
			}
			d.MIME, d.Title, d.Hash = pd.MIME, pd.Title, pd.Hash
			d.Redirect, d.NoIndex, d.Canonical = pd.Redirect, pd.NoIndex, pd.Canonical
			d.LastModified, d.ETag = pd.LastModified, pd.ETag
			r.capture(d, pd)
			if r.near != nil {
				if err := r.near.check(r.in.tx, d, pd, r.s); err != nil {
					return err
				}
			}
		} else {
			// A 304, or a 2xx the harvester stored as a revisit of the
			// stored capture: nothing new, the page stays as stored
			// (its capture too), unchanged. It may repeat or update the
			// validators; absent ones stay.
			r.s.NotModified++
			if count && d.Visits > 0 && pd.Status != http.StatusNotModified {
				// A 2xx with the stored payload: the text did not change,
				// whatever its dates say.
				if err := r.checkValidators(siteKey, prev, sitemapLM, pd, false); err != nil {
					return err
				}
			}
			if pd.LastModified != "" {
				d.LastModified = pd.LastModified
			}
			if pd.ETag != "" {
				d.ETag = pd.ETag
			}
		}
		if count {
			d.Visits++
			d.AddVisit(linkgraph.Visit{Time: pd.Fetched, Status: pd.Status, Changed: changed, LastModified: pd.LastModified})
		}
		if err := r.upgrade(siteKey, d.URL, pd); err != nil {
			return err
		}
	case pd.Err == ExcludedRobots && !r.unreachable[siteKey]:
		r.s.Excluded++
		d.State, d.Reason = linkgraph.StateExcluded, ExcludedRobots
	case pd.Err == deferredPartition && !r.in.part.Whole():
		if err := r.handOver(d, siteKey); err != nil {
			return err
		}
	case pd.Err == ExcludedRobots || isNotAttempted(pd.Err) || oldUnread:
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
	if d.Sitemap || pd.Sitemap != nil {
		return r.sitemapLinks(d, p)
	}
	return r.links(d, p.links)
}

// capture records the stored capture a response record is (docs.jsonl's
// recordId, recordDate, payloadDigest), for the revisit records of the
// next visits; a record without one (an old gatherer's, a status whose
// record the gatherer does not read) leaves the stored one, which still
// names a record holding an earlier payload. Malformed fields are
// counted and ignored: the page is taken in all the same.
func (r *batchRun) capture(d *linkgraph.Doc, pd *parsed.Doc) {
	c, err := pd.Capture()
	switch {
	case err != nil:
		r.s.BadCaptures++
	case !c.IsZero():
		d.Capture = c
		r.s.Captures++
	}
}

// candidate is a new URL a page links to.
type candidate struct {
	url     string
	depth   int
	anchors []string // the page's anchor texts for it, at most MaxAnchors
}

// links takes in a fetched page's resolved links (with its redirect and
// canonical) and replaces its out-link set. Known targets are linked at
// once; new URLs go through the frontier limits (docs/frontier.md): the
// depth limit and site cap first, then the Sydney strategy (at most
// seeder.new_links_per_page of them, a pseudo-random sample, enter the
// frontier now; the others are parked) and the budget (over
// seeder.frontier_budget they are parked or dropped). New URLs that the
// site's robots.txt forbids are taken in as excluded: they never enter
// the frontier and count against neither limit.
func (r *batchRun) links(d *linkgraph.Doc, links []preparedLink) error {
	in := r.in
	r.targets = r.targets[:0]
	r.newURLs = r.newURLs[:0]
	clear(r.cands)
	for _, l := range links {
		r.s.Links++
		if l.rej != nil {
			in.reject(l.rej)
			continue
		}
		depth := 0
		if l.sameSite {
			depth = d.Depth + 1
		}
		id, site := l.known, l.site
		if id == 0 {
			var ok bool
			if r.snapshot {
				// Not known before the batch: known only if an earlier
				// record of the batch created it.
				id, ok = in.tx.CreatedURLKey(l.key)
			} else {
				id, ok = in.tx.LookupURL(l.url)
			}
			if ok {
				var err error
				if site, err = in.siteOf(l.url); err != nil {
					return err
				}
			}
		}
		if id != 0 {
			r.targets = append(r.targets, linkgraph.Target{Doc: id, Site: site})
			if id == d.ID {
				continue
			}
			r.updates.propose(id, depth, l.anchor)
			continue
		}
		if to, err := in.route(l.url); err != nil {
			return err
		} else if to != 0 {
			// A URL of another partition: the link goes there
			// (exchange.go), as nofollow links go nowhere.
			if l.nofollow {
				in.reject(&rejection{reason: ReasonNoFollow})
				continue
			}
			if err := in.send(to, exchangeLine{Kind: ExchangeLink, Depth: depth, Batch: in.batch, URL: l.url, Anchor: l.anchor}); err != nil {
				return err
			}
			continue
		}
		if i, ok := r.cands[l.url]; ok {
			c := &r.newURLs[i]
			c.depth = min(c.depth, depth)
			c.addAnchor(l.anchor)
			continue
		}
		if l.nofollow {
			in.reject(&rejection{reason: ReasonNoFollow})
			continue
		}
		r.cands[l.url] = len(r.newURLs)
		c := candidate{url: l.url, depth: depth}
		c.addAnchor(l.anchor)
		r.newURLs = append(r.newURLs, c)
	}

	// Screen the new URLs: the ones that would enter the frontier are
	// subject to the limits.
	eligible := r.newURLs[:0]
	for _, c := range r.newURLs {
		forbidden, rej, err := in.screen(c.url, c.depth)
		if err != nil {
			return err
		}
		switch {
		case rej != nil:
			in.reject(rej)
		case forbidden:
			if err := r.create(d, c); err != nil {
				return err
			}
		default:
			eligible = append(eligible, c)
		}
	}
	now, later := sydney(d.ID, eligible, in.frontier.NewLinksPerPage)
	for _, c := range now {
		full, err := in.budgetFull()
		if err != nil {
			return err
		}
		if full {
			if in.frontier.FrontierOverflow == config.OverflowDrop {
				in.reject(&rejection{reason: ReasonBudget})
				continue
			}
			later = append(later, c)
			continue
		}
		if err := r.create(d, c); err != nil {
			return err
		}
	}
	for _, c := range later {
		anchor := ""
		if len(c.anchors) > 0 {
			anchor = c.anchors[0]
		}
		if err := in.parkLink(parkedLink{Src: d.ID, Fetched: d.Fetched, Depth: c.depth, Batch: in.batch, URL: c.url, Anchor: anchor}); err != nil {
			return err
		}
	}
	n, err := in.tx.ReplaceOutLinks(d.ID, d.Site, r.targets)
	r.s.OutLinks += n
	return err
}

// create takes a new URL in as a link target of d.
func (r *batchRun) create(d *linkgraph.Doc, c candidate) error {
	first := ""
	if len(c.anchors) > 0 {
		first = c.anchors[0]
	}
	r.in.known = r.snapshot // c.url was looked up in the snapshot and CreatedURL
	id, site, rej, err := r.in.create(c.url, c.depth, first)
	r.in.known = false
	if err != nil {
		return err
	}
	if rej != nil {
		r.in.reject(rej)
		return nil
	}
	r.targets = append(r.targets, linkgraph.Target{Doc: id, Site: site})
	for _, a := range c.anchors[min(1, len(c.anchors)):] {
		r.updates.addAnchor(id, a)
	}
	return nil
}

// addAnchor keeps a cleaned anchor text of a candidate (distinct, at most
// MaxAnchors).
func (c *candidate) addAnchor(text string) {
	text = cleanAnchor(text)
	if text == "" || len(c.anchors) >= MaxAnchors {
		return
	}
	for _, a := range c.anchors {
		if a == text {
			return
		}
	}
	c.anchors = append(c.anchors, text)
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
