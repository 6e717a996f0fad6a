package manager

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Stats describe how a batch was chosen.
type Stats struct {
	Docs          int            // documents in graph.db
	Links         int            // links between known documents (self-links excluded); 0 if the strategy reads none
	Candidates    int            // documents that could be scheduled
	Skipped       map[string]int // documents not candidates, by reason (state, recent, deep, failures, bad_url, no_gain)
	SiteCapped    int            // candidates left out by max_pages_per_site
	SiteFull      int            // candidates left out by max_site_pages
	ScriptCapped  int            // candidates left out by max_fetches_per_script
	TimeCapped    int            // candidates left out by batch_duration: their host had no time left for them
	Filled        int            // candidates taken to fill the batch up to its makespan after batch_duration held them back (counted in the batch, not in TimeCapped)
	StreamingHeld int            // candidates of sites flagged as streaming left out (all but the probe)
	Left          int            // candidates left out because the batch was full
	Iterations    int            // PageRank iterations (0 if none was computed)
	Converged     bool           // PageRank converged within its iteration limit
	Notes         []string       // what the estimator did
}

// runCaches are the caches a run reads instead of graph.db (nil: none).
type runCaches struct {
	docs  *docCache
	links *linkCache
}

// plan is a batch chosen but not yet written.
type plan struct {
	entries []batch.Entry
	robots  []fetchlog.Robots // stored robots.txt young enough for the batch's sites
	servers []fetchlog.Server // known server estimates of the batch's sites
	save    func(*linkgraph.Tx) error
	stats   Stats
	view    *graphView
	est     *estimate
}

// makePlan chooses the next batch from graph.db: one pass over the
// documents, the passes over the links the strategy needs, the value
// function, then the batch limits in descending order of profit. With
// watch ≠ 0 it records everything about that document (explain). batch
// is the number the batch will have (streaming sites' probes count in
// batches). global, if not nil, weights the pages of a partition by
// their site's global rank (siterank.go). caches, if not nil, are the
// run's caches in step with tx, read instead of graph.db's records and
// out-link sets.
func makePlan(ctx context.Context, tx *linkgraph.Tx, cfg *config.Config, now time.Time, log *slog.Logger, watch uint64, batch int, global *globalSites, caches *runCaches) (*plan, error) {
	m := &cfg.Manager
	t0 := time.Now()
	if caches == nil {
		caches = &runCaches{}
	}
	v, err := readDocs(ctx, tx, m, now, watch, caches.docs)
	if err != nil {
		return nil, err
	}
	v.links = caches.links
	log.Debug("read documents", "docs", v.stats.Docs, "candidates", v.stats.Candidates, "skipped", v.stats.Skipped, "elapsed", time.Since(t0).Round(time.Millisecond))
	p := &plan{view: v}
	if len(v.cands) == 0 && watch == 0 {
		p.stats = v.stats
		return p, nil
	}
	t0 = time.Now()
	est, err := intrinsicQuality(ctx, tx, v, m)
	if err != nil {
		return nil, err
	}
	est = global.apply(v, est) // a partition's pages weighted by their site's global rank (siterank.go)
	p.est, p.save = est, est.save
	v.stats.Notes = est.notes
	log.Debug("intrinsic quality", "strategy", m.Strategy, "links", v.stats.Links, "iterations", v.stats.Iterations, "notes", est.notes, "elapsed", time.Since(t0).Round(time.Millisecond))
	if v.stats.Iterations > 0 && !v.stats.Converged {
		log.Warn("pagerank did not converge; using the last iteration", "iterations", v.stats.Iterations)
	}
	if err := mirrorSites(v, m); err != nil {
		return nil, err
	}
	score(v, est, m.Alpha)
	if err := applyRevisits(v, est, cfg); err != nil {
		return nil, err
	}
	for i := range v.cands {
		if v.cands[i].sitemap {
			// A sitemap goes ahead of pages: its profit is 1, above
			// any page's (docs/sitemaps.md).
			v.cands[i].logProfit = 0
		}
	}
	if w := v.watch; w != nil && w.pos >= 0 {
		w.iq = est.iq(w.pos)
		w.rawName = est.describe(w.pos)
		if w.cand >= 0 {
			w.rank = v.rankOf(int32(w.cand))
		}
	}
	if v.streaming, err = streamingSites(v, batch, now, m.Revisit()); err != nil {
		return nil, err
	}
	tb, err := newBudget(v, cfg, now)
	if err != nil {
		return nil, err
	}
	v.sites = nil // its last reader: let the collector have it before the batch is filled
	chosen := selectBatch(v, m, tb)
	p.stats = v.stats
	if err := p.fill(tx, chosen, m, cfg.Crawl.ProductToken, now); err != nil {
		return nil, err
	}
	if watch == 0 { // let the collector have the arrays before the batch is written
		p.view, p.est = nil, nil
	}
	return p, nil
}

// score adds α·ln(IQ) to the IQ-free part of every candidate's profit:
// ln(profit) = α·ln(IQ) + ln(1 − RQ^β·F^γ) [+ ln ½ if failed]. Logarithms
// keep the order exact where IQ^α would underflow (large α, tiny
// PageRank).
func score(v *graphView, est *estimate, alpha float64) {
	if alpha == 0 {
		return
	}
	for i := range v.cands {
		c := &v.cands[i]
		iq := est.iq(c.pos)
		if iq <= 0 {
			iq = math.SmallestNonzeroFloat64
		}
		c.logProfit += alpha * math.Log(iq)
	}
}

// fill reads the URLs, validators and stored captures of the chosen
// documents and the robots.txt copies and server estimates of their
// sites.
func (p *plan) fill(tx *linkgraph.Tx, chosen []int32, m *config.Manager, token string, now time.Time) error {
	v := p.view
	p.entries = make([]batch.Entry, len(chosen))
	sites := map[uint64]bool{}
	for i, ci := range chosen {
		c := &v.cands[ci]
		d, err := tx.Doc(uint64(v.ids[c.pos]))
		if err != nil {
			return err
		}
		e := batch.Entry{
			DocID: d.ID,
			Site:  urlnorm.SiteKey(d.URL),
			Score: math.Exp(c.logProfit),
			Depth: d.Depth,
			Kind:  batch.KindNew,
			URL:   d.URL,
		}
		switch {
		case d.Sitemap:
			e.Kind = batch.KindSitemap
		case c.revisit:
			e.Kind, e.LastModified, e.ETag = batch.KindRevisit, d.LastModified, d.ETag
			if d.Capture.Check() == nil {
				// The stored capture the harvester's revisit record will
				// refer to (batch version 4); one graph.db could not
				// hold well formed is left out, as none.
				e.Capture = d.Capture
			}
		}
		p.entries[i] = e
		sites[d.Site] = true
	}
	ids := make([]uint64, 0, len(sites))
	for id := range sites {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	servers := map[string]fetchlog.Server{}
	batchSites := make([]*linkgraph.Site, 0, len(ids))
	for _, id := range ids {
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		batchSites = append(batchSites, s)
		if r, ok := robotsCopy(s, now, m.RobotsMaxAge.D()); ok {
			p.robots = append(p.robots, r)
		}
		if srv, ok := serverEstimate(s); ok {
			if old, seen := servers[srv.Host]; !seen || srv.Measured.After(old.Measured) {
				servers[srv.Host] = srv
			}
		}
	}
	delays, err := crawlDelaySites(tx, batchSites, token)
	if err != nil {
		return err
	}
	for _, d := range delays {
		srv, ok := servers[d.Host]
		if !ok {
			srv = fetchlog.Server{Host: d.Host}
		}
		srv.IP, srv.CrawlDelay = d.IP, max(srv.CrawlDelay, d.CrawlDelay)
		servers[d.Host] = srv
	}
	for _, h := range slices.Sorted(maps.Keys(servers)) {
		p.servers = append(p.servers, servers[h])
	}
	return nil
}

// header describes a batch in its file.
func header(id int, created time.Time, m *config.Manager, p *plan) batch.Header {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	h := batch.Header{
		Batch:    id,
		Created:  created,
		Strategy: m.Strategy,
		Params: map[string]string{
			"alpha":                  f(m.Alpha),
			"beta":                   f(m.Beta),
			"gamma":                  f(m.Gamma),
			"rq_url":                 f(m.RQURL),
			"rq_anchors":             f(m.RQAnchors),
			"batch_size":             strconv.Itoa(m.BatchSize),
			"max_pages_per_site":     strconv.Itoa(m.MaxPagesPerSite),
			"batch_duration":         m.BatchDuration.String(),
			"max_site_pages":         strconv.Itoa(m.MaxSitePages),
			"max_depth_static":       strconv.Itoa(m.MaxDepthStatic),
			"max_depth_dynamic":      strconv.Itoa(m.MaxDepthDynamic),
			"max_fetches_per_script": strconv.Itoa(m.MaxFetchesPerScript),
			"min_revisit":            m.MinRevisit.String(),
			"robots_max_age":         m.RobotsMaxAge.String(),
		},
		Counts: map[string]int{},
	}
	switch m.Strategy {
	case StrategyPageRank:
		h.Params["damping"] = f(m.Damping)
	case StrategyPartialPageRank:
		h.Params["damping"] = f(m.Damping)
		h.Params["pagerank_interval"] = strconv.Itoa(m.PageRankInterval)
	case StrategyHistorical:
		h.Params["historical_new_pages"] = m.HistoricalNewPages
	}
	if s := m.Scale().Factor(); s != 1 {
		h.Params["time_scale"] = f(s) // min_revisit is as configured, before it
	}
	c := count(p.entries)
	h.Counts["urls"], h.Counts["sites"], h.Counts["new"], h.Counts["revisits"] = len(p.entries), c.sites, c.new, c.revisits
	if c.sitemaps > 0 {
		h.Counts["sitemaps"] = c.sitemaps
	}
	h.Counts["robots"], h.Counts["servers"] = len(p.robots), len(p.servers)
	return h
}

type counts struct {
	sites, new, revisits int
	sitemaps             int
	scoreMin, scoreMax   float64
}

func count(entries []batch.Entry) counts {
	var c counts
	sites := map[string]bool{}
	for i, e := range entries {
		sites[e.Site] = true
		switch e.Kind {
		case batch.KindRevisit:
			c.revisits++
		case batch.KindSitemap:
			c.sitemaps++
		default:
			c.new++
		}
		if i == 0 || e.Score < c.scoreMin {
			c.scoreMin = e.Score
		}
		if i == 0 || e.Score > c.scoreMax {
			c.scoreMax = e.Score
		}
	}
	c.sites = len(sites)
	return c
}

// hostOf returns the host of a site key ("https://a.cl:8443" → "a.cl").
func hostOf(siteKey string) string {
	h := siteKey[strings.Index(siteKey, "://")+3:]
	if strings.HasPrefix(h, "[") { // IPv6 literal
		if i := strings.IndexByte(h, ']'); i >= 0 {
			return h[1:i]
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}
