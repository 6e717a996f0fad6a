package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/timescale"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// ErrUnknownURL means explain was asked about a URL graph.db does not
// know.
var ErrUnknownURL = errors.New("URL not in graph.db")

// Explanation is every factor of one page's value and what the next run
// would do with it.
type Explanation struct {
	URL      string
	Doc      *linkgraph.Doc
	Site     string
	Strategy string
	Alpha    float64
	Beta     float64
	Gamma    float64

	IQ     float64 // intrinsic quality, (0, 1]
	IQWhy  string  // the estimator's own value
	RQ     float64 // representational quality now
	RQWhy  string
	F      float64 // freshness now
	FWhy   string
	Change History // the change-rate estimate (fetched pages)
	// TimeScale is manager.time_scale, the factor on the durations of
	// the freshness estimate and min_revisit.
	TimeScale timescale.Scale
	VNow      float64 // IQ^α·RQ^β·F^γ
	VAfter    float64 // IQ^α: a visit brings RQ and F to 1
	Profit    float64 // (VAfter − VNow), halved for a page whose last attempt failed, times manager.near_duplicate_weight for a near-duplicate

	// NearDup is the URL of the fetched page this one is a near-duplicate
	// of (or that its rel=canonical names), "" for none; NearDupWeight is
	// the factor its profit got (manager.near_duplicate_weight).
	NearDup       string
	NearDupWeight float64
	// Mirror is the site key of the site the page's site mirrors
	// (linkgraph.Site.MirrorOf), "" for none; a page of a mirror that is
	// not a near-duplicate itself gets the same weight.
	Mirror string

	Dynamic    bool
	DepthLimit int
	Script     string // for a query URL, the script it belongs to

	Candidate  bool
	Rank       int // candidates before it in profit order (0 = first)
	Candidates int
	InBatch    bool
	Position   int    // 0-based position in the next batch, when in it
	Verdict    string // in the next batch or why not

	// SiteStreaming is the site's streaming flag (nil when it is not
	// flagged) and Streaming says what it means for the next batch, ""
	// when the site's host streamed nothing.
	SiteStreaming *linkgraph.Streaming
	Streaming     string
	// Revisit is what the revisit policy (manager.revisits = optimal)
	// gives a fetched page, nil otherwise.
	Revisit *RevisitAllocation
	// DatesTrusted tells whether the estimator reads the site's
	// Last-Modified and sitemap lastmod dates, and TrustWhy why
	// (linkgraph.Validators).
	DatesTrusted bool
	TrustWhy     string
	Notes        []string
}

// Explain computes, without writing anything, the batch the next run
// would write and reports everything about rawURL in it: every factor of
// its value, and why it is or is not in the batch. rawURL is looked up as
// given, then normalised.
func Explain(ctx context.Context, col *collection.Collection, rawURL string, opts Options) (*Explanation, error) {
	timeout := opts.GraphTimeout
	if timeout <= 0 {
		timeout = DefaultGraphTimeout
	}
	g, err := linkgraph.Open(col.GraphPath(), true, timeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	now := opts.now().UTC().Truncate(time.Second)
	next, err := col.NextBatchID()
	if err != nil {
		return nil, err
	}
	length, _ := batchLength(col, &opts.Config, next)
	opts.Config.Manager.BatchDuration = config.Duration(length)
	var ex *Explanation
	err = g.View(func(tx *linkgraph.Tx) error {
		id, ok := tx.LookupURL(rawURL)
		u := rawURL
		if !ok {
			n, err := opts.Config.Scope.Normalizer().Normalize(rawURL)
			if err != nil {
				return fmt.Errorf("explain %s: %w", rawURL, err)
			}
			if id, ok = tx.LookupURL(n); !ok {
				return fmt.Errorf("explain %s: %w", rawURL, ErrUnknownURL)
			}
			u = n
		}
		global, err := loadGlobalSites(tx, col.Dir, &opts.Config, now, opts.logger())
		if err != nil {
			return err
		}
		p, err := makePlan(ctx, tx, &opts.Config, now, opts.logger(), id, next, global, nil)
		if err != nil {
			return err
		}
		ex = explanation(u, p, opts, now)
		site, err := tx.Site(ex.Doc.Site)
		if err != nil {
			return fmt.Errorf("explain %s: %w", rawURL, err)
		}
		ex.DatesTrusted, ex.TrustWhy = trustWhy(site.Validators)
		ex.SiteStreaming, ex.Streaming = site.Streaming, describeStreaming(site, next, opts.Config.Harvester.MaxStreaming, now, opts.Config.Manager.Revisit())
		if site.MirrorOf != 0 {
			of, err := tx.Site(site.MirrorOf)
			if err != nil {
				return fmt.Errorf("explain %s: mirrored site: %w", rawURL, err)
			}
			ex.Mirror = of.Key
			if ex.Doc.NearDup == 0 && opts.Config.Manager.NearDuplicateWeight < 1 {
				ex.NearDupWeight = opts.Config.Manager.NearDuplicateWeight
				ex.Profit *= ex.NearDupWeight
			}
		}
		if id := ex.Doc.NearDup; id != 0 {
			nd, err := tx.Doc(id)
			if err != nil {
				return fmt.Errorf("explain %s: near-duplicate: %w", rawURL, err)
			}
			ex.NearDup = nd.URL
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ex, nil
}

func explanation(u string, p *plan, opts Options, now time.Time) *Explanation {
	m := &opts.Config.Manager
	v, w := p.view, p.view.watch
	d := w.doc
	ex := &Explanation{
		URL: u, Doc: d, Site: urlnorm.SiteKey(d.URL), Strategy: m.Strategy,
		Alpha: m.Alpha, Beta: m.Beta, Gamma: m.Gamma,
		IQ: w.iq, IQWhy: w.rawName,
		Dynamic: w.a.dynamic, Script: ScriptOf(d.URL),
		Candidates: len(v.cands), Notes: p.stats.Notes,
	}
	ex.DepthLimit = m.MaxDepthStatic
	if ex.Dynamic {
		ex.DepthLimit = m.MaxDepthDynamic
	}
	ex.RQ = RepresentationalQuality(d, m)
	switch {
	case d.HasFetchedCopy():
		ex.RQWhy = "fetched: the full text is stored"
	case len(d.Anchors) > 0:
		ex.RQWhy = fmt.Sprintf("not fetched, anchor text known (%q…): rq_anchors", d.Anchors[0])
	default:
		ex.RQWhy = "not fetched, only the URL is known: rq_url"
	}
	ex.F, ex.Change = w.clock.freshness(d, now)
	ex.Revisit = w.revisit
	ex.TimeScale = m.Scale()
	switch {
	case !d.HasFetchedCopy() && d.State == linkgraph.StateFetched:
		ex.FWhy = "fetched, but the time of the fetch is unknown"
	case !d.HasFetchedCopy():
		ex.FWhy = "never fetched: no stored copy can be stale"
	case sitemapStale(d) && w.clock.trustsDates(d):
		ex.FWhy = fmt.Sprintf("stale: its sitemap's lastmod %s is after the fetch %s", d.SitemapLastMod.UTC().Format(time.RFC3339), d.Fetched.UTC().Format(time.RFC3339))
	default:
		ex.FWhy = fmt.Sprintf("exp(−λ·age), λ = %s changes/day, age %s", g4(ex.Change.Lambda), shownAge(now.Sub(d.Fetched), m))
	}
	iqa := math.Pow(ex.IQ, m.Alpha)
	ex.VAfter = iqa
	ex.VNow = iqa * math.Pow(ex.RQ, m.Beta) * math.Pow(ex.F, m.Gamma)
	ex.Profit = ex.VAfter - ex.VNow
	if d.State == linkgraph.StateFailed {
		ex.Profit *= FailedFactor
	}
	ex.Profit *= priorityFactor(d)
	if d.NearDup != 0 && m.NearDuplicateWeight < 1 {
		ex.NearDupWeight = m.NearDuplicateWeight
		ex.Profit *= m.NearDuplicateWeight
	}
	if d.Sitemap {
		ex.Profit = 1 // a sitemap goes ahead of pages
	}
	ex.Candidate = w.cand >= 0
	switch {
	case !ex.Candidate && w.a.skip == candidate && w.revisit != nil:
		ex.Verdict = fmt.Sprintf("not due: the revisit policy gives it one visit every %s (a candidate again from %s)",
			w.revisit.Interval.Round(time.Second), w.revisit.Due.UTC().Format(time.RFC3339))
	case !ex.Candidate:
		ex.Verdict = "not a candidate: " + skipReason(w, m, now)
	case w.batchAt >= 0:
		ex.InBatch, ex.Position, ex.Rank = true, w.batchAt, w.rank
		ex.Verdict = fmt.Sprintf("in the next batch, at position %d of %d (profit rank %d of %d candidates)", w.batchAt+1, len(p.entries), w.rank+1, len(v.cands))
	default:
		ex.Rank = w.rank
		ex.Verdict = fmt.Sprintf("not in the next batch (profit rank %d of %d candidates): %s", w.rank+1, len(v.cands), w.fate)
	}
	return ex
}

// shownAge rounds an age for explain: to the minute, or to the second
// when manager.time_scale compresses time (a scaled day may last a
// minute).
func shownAge(age time.Duration, m *config.Manager) time.Duration {
	if m.Scale().Factor() < 1 {
		return age.Round(time.Second)
	}
	return age.Round(time.Minute)
}

// skipReason says why the watched document is not a candidate.
func skipReason(w *watched, m *config.Manager, now time.Time) string {
	d := w.doc
	switch w.a.skip {
	case skipState:
		switch d.State {
		case linkgraph.StateScheduled:
			return fmt.Sprintf("it is scheduled in batch %d, which has not been seeded yet", d.Batch)
		case linkgraph.StateExcluded:
			return fmt.Sprintf("it is excluded (%s)", orNone(d.Reason))
		}
		return fmt.Sprintf("its state is %q", d.State)
	case skipRecent:
		if m.Revisits == config.RevisitsOptimal {
			floor := m.Revisit() / RevisitFloorDivisor
			return fmt.Sprintf("fetched %s ago, less than min_revisit/%d = %s, the least revisit interval (a candidate again from %s)",
				shownAge(now.Sub(d.Fetched), m), RevisitFloorDivisor, floor, d.Fetched.Add(floor).UTC().Format(time.RFC3339))
		}
		return fmt.Sprintf("fetched %s ago, less than min_revisit %s (a candidate again from %s)",
			shownAge(now.Sub(d.Fetched), m), m.Revisit(), d.Fetched.Add(m.Revisit()).UTC().Format(time.RFC3339))
	case skipDeep:
		kind, limit := "static", m.MaxDepthStatic
		if w.a.dynamic {
			kind, limit = "dynamic", m.MaxDepthDynamic
		}
		return fmt.Sprintf("depth %d is beyond the limit for %s pages (%d)", d.Depth, kind, limit)
	case skipFailures:
		return fmt.Sprintf("its last %d attempts got no response (the limit is %d)", d.Failures, MaxFailures)
	case skipBadURL:
		return "its URL cannot be written in a batch file"
	case skipNoGain:
		return fmt.Sprintf("a visit would add no value: RQ^beta·F^gamma = 1 (beta=%g, gamma=%g)", m.Beta, m.Gamma)
	}
	return "unknown"
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

// Print writes the explanation as aligned text.
func (ex *Explanation) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	d := ex.Doc
	fmt.Fprintf(tw, "url\t%s\n", ex.URL)
	fmt.Fprintf(tw, "doc\t%d (site %s)\n", d.ID, ex.Site)
	state := string(d.State)
	if d.State == linkgraph.StateScheduled {
		state += fmt.Sprintf(" in batch %d", d.Batch)
	}
	if d.Reason != "" {
		state += " (" + d.Reason + ")"
	}
	fmt.Fprintf(tw, "state\t%s\n", state)
	kind := "static"
	if ex.Dynamic {
		kind = "dynamic"
	}
	fmt.Fprintf(tw, "depth\t%d (%s page, limit %d)\n", d.Depth, kind, ex.DepthLimit)
	if ex.Script != "" {
		fmt.Fprintf(tw, "script\t%s\n", ex.Script)
	}
	fmt.Fprintf(tw, "found\tbatch %d\n", d.Found)
	if sm := sitemapSource(d); sm != "" {
		fmt.Fprintf(tw, "source\tfound in sitemap %s\n", sm)
	} else if d.Source != "" {
		fmt.Fprintf(tw, "source\t%s\n", d.Source)
	}
	if d.Sitemap {
		fmt.Fprintf(tw, "sitemap\tthis URL is a sitemap: scheduled ahead of pages, read by the gatherer\n")
	}
	if !d.SitemapLastMod.IsZero() || d.ChangeFreq != "" || d.Priority != 0 {
		hints := []string{}
		if !d.SitemapLastMod.IsZero() {
			hints = append(hints, "lastmod "+d.SitemapLastMod.UTC().Format(time.RFC3339))
		}
		if d.ChangeFreq != "" {
			hints = append(hints, "changefreq "+d.ChangeFreq)
		}
		if p, ok := d.SitemapPriority(); ok {
			hints = append(hints, fmt.Sprintf("priority %g (profit ×%g)", p, priorityFactor(d)))
		}
		fmt.Fprintf(tw, "sitemap says\t%s\n", strings.Join(hints, ", "))
	}
	if ex.Streaming != "" {
		fmt.Fprintf(tw, "streaming\t%s\n", ex.Streaming)
	}
	if d.Visits > 0 || !d.Fetched.IsZero() {
		fmt.Fprintf(tw, "visits\t%d, last %s (status %d), %d failures in a row\n", d.Visits, d.Fetched.UTC().Format(time.RFC3339), d.Status, d.Failures)
	}
	fmt.Fprintf(tw, "\n")
	fmt.Fprintf(tw, "strategy\t%s\n", ex.Strategy)
	fmt.Fprintf(tw, "IQ\t%s\t%s\n", g4(ex.IQ), ex.IQWhy)
	fmt.Fprintf(tw, "RQ\t%s\t%s\n", g4(ex.RQ), ex.RQWhy)
	fmt.Fprintf(tw, "F\t%s\t%s\n", g4(ex.F), ex.FWhy)
	if ex.TimeScale.Factor() != 1 {
		fmt.Fprintf(tw, "time scale\t%s\tmanager.time_scale: the prior, min_revisit and the other freshness durations are scaled\n", ex.TimeScale)
	}
	if h := ex.Change; h.Visits > 0 {
		src := "visit history"
		if h.FromDoc {
			src = "visit counts (no history)"
		}
		fmt.Fprintf(tw, "changes\t%d visits over %s days: %d intervals changed, %d unchanged, %d dated by Last-Modified (%s)\n",
			h.Visits, g4(h.Span), h.Changed, h.Unchanged, h.Exact, src)
	}
	if ex.TrustWhy != "" && (d.Visits > 0 || !ex.DatesTrusted) {
		fmt.Fprintf(tw, "validators\t%s\n", ex.TrustWhy)
	}
	if ex.Revisit != nil {
		fmt.Fprintf(tw, "revisit rate\t%s\n", ex.Revisit.describe())
	}
	fmt.Fprintf(tw, "V now\t%s\tIQ^%g · RQ^%g · F^%g\n", g4(ex.VNow), ex.Alpha, ex.Beta, ex.Gamma)
	fmt.Fprintf(tw, "V after\t%s\tIQ^%g (a visit brings RQ and F to 1)\n", g4(ex.VAfter), ex.Alpha)
	profit := "V after − V now"
	if d.State == linkgraph.StateFailed {
		profit += ", halved: the last attempt failed"
	}
	if d.NearDup != 0 {
		fmt.Fprintf(tw, "near-duplicate of\t%s\t(simhash within 3 bits, or rel=canonical)\n", orNone(ex.NearDup))
	}
	if ex.Mirror != "" {
		fmt.Fprintf(tw, "mirror of\t%s\t(its site copies that site's pages)\n", ex.Mirror)
	}
	if ex.NearDupWeight > 0 {
		why := "a near-duplicate of a fetched page"
		if d.NearDup == 0 {
			why = "a page of a mirror site"
		}
		profit += fmt.Sprintf(", times %g: %s (manager.near_duplicate_weight)", ex.NearDupWeight, why)
	}
	fmt.Fprintf(tw, "profit\t%s\t%s\n", g4(ex.Profit), profit)
	fmt.Fprintf(tw, "\n")
	fmt.Fprintf(tw, "next batch\t%s\n", ex.Verdict)
	for _, n := range ex.Notes {
		fmt.Fprintf(tw, "note\t%s\n", n)
	}
	return tw.Flush()
}
