package manager

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/timescale"
)

// The value of a page in the index (Castillo, ch. 3, eq. 3.3) is
//
//	V(p) = IQ(p)^α · RQ(p)^β · F(p)^γ
//
// and the manager schedules pages by profit, the value a visit adds:
//
//	profit(p) = V_after(p) − V_now(p) = IQ^α · (1 − RQ^β · F^γ)
//
// because a visit brings the page's representation to full text (RQ = 1)
// and makes the copy fresh (F = 1). docs/manager.md explains each factor.

// RQFull is the representational quality of a fetched page (its full
// text is stored); every visit brings a page there. The levels below it,
// URL only and URL + anchor text, are manager.rq_url and
// manager.rq_anchors (Castillo ch. 3, §3.4).
const RQFull = 1.0

// Freshness prior and failure handling. The durations are at time scale
// 1; the estimator takes them through its Clock (manager.time_scale).
const (
	// PriorChangeInterval is the mean time between changes assumed for a
	// page before its history says otherwise: one change per 30 days.
	PriorChangeInterval = 30 * 24 * time.Hour
	// priorChanges is the weight of the prior, in observed changes.
	priorChanges = 0.5
	// MaxLastModifiedAge caps the span a Last-Modified date adds to a
	// page's history: a page that says it has not changed for ten years
	// counts as unchanged for one.
	MaxLastModifiedAge = 365 * 24 * time.Hour
	// MaxFailures is the number of attempts in a row without a response
	// (Doc.Failures) after which a failed page is no longer scheduled.
	MaxFailures = 3
	// FailedFactor multiplies the profit of a page whose last attempt got
	// no response.
	FailedFactor = 0.5
)

// RepresentationalQuality is RQ(p) as the index holds the page now: 1
// once fetched (full text), rq_anchors when anchor text of links to it is
// known, rq_url when only its URL is.
func RepresentationalQuality(d *linkgraph.Doc, m *config.Manager) float64 {
	switch {
	case d.HasFetchedCopy():
		return RQFull
	case len(d.Anchors) > 0:
		return m.RQAnchors
	}
	return m.RQURL
}

// History is what the change-rate estimator reads of a page's visits.
type History struct {
	Visits    int     // visits with a response the estimate uses
	Changed   int     // intervals between visits in which the text changed (censored: one or more changes)
	Unchanged int     // intervals in which it did not
	Exact     int     // changes whose time is known from Last-Modified
	Span      float64 // days observed
	Lambda    float64 // the estimate, changes per day
	FromDoc   bool    // no visit history: built from Visits, Changes and FirstFetched
}

// Evidence is what a page's visits say about its rate of change: the
// likelihood the estimator combines with its prior (EstimateHistory).
// Durations are in days.
type Evidence struct {
	Exact    int       // changes dated by Last-Modified
	Changed  []float64 // lengths of the intervals that held at least one change (censored)
	Exposure float64   // days known to hold no change
}

// LogLikelihood is the log of the probability of the evidence for a page
// changing as a Poisson process of rate λ (changes a day), up to a
// constant that does not depend on λ:
//
//	K·log λ − λ·Exposure + Σ_changed log(1 − e^(−λΔᵢ))
//
// with K the dated changes. The estimator's λ is where the derivative of
// this plus the log of its Gamma prior is zero; `crawlcheck freshness`
// uses it to find the best estimate the same evidence allows when the
// true distribution of rates is known. −Inf for λ ≤ 0 with a change.
func (e Evidence) LogLikelihood(lambda float64) float64 {
	if lambda <= 0 {
		if e.Exact > 0 || len(e.Changed) > 0 {
			return math.Inf(-1)
		}
		return 0
	}
	l := float64(e.Exact)*math.Log(lambda) - lambda*e.Exposure
	for _, dt := range e.Changed {
		l += math.Log(-math.Expm1(-lambda * dt))
	}
	return l
}

// Clock is the time of the freshness machinery: min_revisit and the
// estimator's durations at the time scale manager.time_scale
// (docs/manager.md, "Time scale"). The estimator, the revisit rule and
// the streaming probes ask it for every duration they use, so each is
// scaled here and nowhere else. The zero value's scale is 1.
type Clock struct {
	// MinRevisit is manager.min_revisit, scaled: no page is fetched again
	// sooner.
	MinRevisit time.Duration
	// Scale is manager.time_scale.
	Scale timescale.Scale
	// untrusted holds the sites whose dates the estimator does not read
	// (linkgraph.Validators.Trusted): for their pages a Last-Modified
	// date and a sitemap's lastmod count for nothing, and the text hash
	// alone says whether a page changed (loaded by trustSites).
	untrusted *siteSet
}

// siteSet is a set of site ids (a pointer in Clock keeps Clock
// comparable).
type siteSet struct{ ids map[uint64]bool }

// has tells whether the set holds site id; a nil set holds none.
func (s *siteSet) has(id uint64) bool { return s != nil && s.ids[id] }

// trustsDates tells whether the estimator reads d's dates: its site's
// validators are not known to lie.
func (c Clock) trustsDates(d *linkgraph.Doc) bool { return !c.untrusted.has(d.Site) }

// NewClock returns the clock of the settings m.
func NewClock(m *config.Manager) Clock {
	return Clock{MinRevisit: m.Revisit(), Scale: m.Scale()}
}

// PriorChangeInterval is PriorChangeInterval scaled: the mean time
// between changes the estimator assumes for a page seen once.
func (c Clock) PriorChangeInterval() time.Duration { return c.Scale.D(PriorChangeInterval) }

// MaxLastModifiedAge is MaxLastModifiedAge scaled: the longest span a
// Last-Modified date adds to a page's history.
func (c Clock) MaxLastModifiedAge() time.Duration { return c.Scale.D(MaxLastModifiedAge) }

// ChangeFreqRate is the rate, in changes per day, a sitemap's
// <changefreq> names at the time scale ("daily" is one change per scaled
// day); false for a value it does not know.
func (c Clock) ChangeFreqRate(changeFreq string) (float64, bool) {
	r, ok := changeFreqRates[changeFreq]
	return c.Scale.Rate(r), ok
}

// ChangeRate estimates λ, the page's rate of change in changes per day.
// See EstimateHistory.
func ChangeRate(d *linkgraph.Doc, minRevisit time.Duration) float64 {
	return EstimateHistory(d, minRevisit).Lambda
}

// EstimateHistory estimates the page's rate of change from its visit
// history (docs/manager.md, "F, freshness").
//
// Changes are a Poisson process of rate λ (Cho and Garcia-Molina,
// "Estimating frequency of change", 2003). Each interval between two
// visits says only whether the text changed at least once (a censored
// count); a Last-Modified date inside an interval that changed, or before
// the first visit, gives the time of the last change exactly. With a
// Gamma prior whose mode is one change per 30 days (shape 3/2, rate
// 15 days), λ is the posterior mode, the root of
//
//	½ + K + Σ_changed g(λΔᵢ) = λ · (15 days + Σ_all Δᵢ + Σ Aⱼ)
//
// where Δᵢ are the interval lengths, g(x) = x / (1 − e^(−x)) the expected
// number of changes in an interval known to hold at least one, K the
// changes dated by Last-Modified and Aⱼ the spans after them known to hold
// none. When λΔ is small, g ≈ 1 and λ = (½ + changes)/(15 days + span):
// one change per 30 days for a page seen once, the observed rate as the
// history grows. Newton's method from that value converges in a few
// steps (the left side is convex in λ).
//
// Without a visit history (History empty) the estimate uses Visits − 1
// intervals of equal length spanning FirstFetched to Fetched (or
// min_revisit each if FirstFetched is unknown), Changes of them changed.
//
// It runs at time scale 1 with min_revisit minRevisit; Clock.History runs
// at any.
func EstimateHistory(d *linkgraph.Doc, minRevisit time.Duration) History {
	return Clock{MinRevisit: minRevisit}.History(d)
}

// History is EstimateHistory at the clock's time scale: the prior is one
// change per PriorChangeInterval·s and a Last-Modified date adds at most
// MaxLastModifiedAge·s.
func (c Clock) History(d *linkgraph.Doc) History {
	return c.historyWith(d, c.trustsDates(d))
}

// historyWith is History reading d's Last-Modified dates if dates is set
// (the changed intervals' lengths in a buffer on the stack).
func (c Clock) historyWith(d *linkgraph.Doc, dates bool) History {
	var buf [linkgraph.MaxHistory]float64
	h, _ := c.history(d, dates, buf[:0])
	return h
}

// Evidence returns what the page's visits say about its rate of change at
// the clock's time scale, as History reads them (the estimate is the
// posterior mode given this evidence and the prior).
func (c Clock) Evidence(d *linkgraph.Doc) Evidence {
	_, e := c.history(d, c.trustsDates(d), nil)
	return e
}

// history is History and the evidence it solves for, reading d's
// Last-Modified dates if dates is set; the lengths of the changed
// intervals are appended to changed (a buffer of the caller's).
func (c Clock) history(d *linkgraph.Doc, dates bool, changed []float64) (History, Evidence) {
	var h History
	exposure := 0.0 // days known to hold no change
	lastModified := func(v linkgraph.Visit) string {
		if !dates {
			return ""
		}
		return v.LastModified
	}
	if len(d.History) > 0 {
		visits := d.History // oldest first, as the seeder keeps it
		byTime := func(a, b linkgraph.Visit) int { return a.Time.Compare(b.Time) }
		if !slices.IsSortedFunc(visits, byTime) {
			visits = slices.Clone(visits)
			slices.SortStableFunc(visits, byTime)
		}
		h.Visits = 1
		if a, ok := c.lastModifiedAge(lastModified(visits[0]), visits[0].Time, time.Time{}); ok {
			h.Exact++
			exposure += a
			h.Span += a
		}
		for i := 1; i < len(visits); i++ {
			prev, cur := visits[i-1], visits[i]
			if !cur.Time.After(prev.Time) {
				continue
			}
			h.Visits++
			dt := days(cur.Time.Sub(prev.Time))
			h.Span += dt
			switch a, ok := c.lastModifiedAge(lastModified(cur), cur.Time, prev.Time); {
			case !cur.Changed:
				h.Unchanged++
				exposure += dt
			case ok:
				h.Exact++
				exposure += a
			default:
				h.Changed++
				changed = append(changed, dt)
			}
		}
	} else {
		h.FromDoc = true
		n := max(d.Visits-1, 0)
		h.Visits = max(d.Visits, 0)
		x := min(max(d.Changes, 0), n)
		var span time.Duration
		switch {
		case n == 0:
		case !d.FirstFetched.IsZero() && d.Fetched.After(d.FirstFetched):
			span = d.Fetched.Sub(d.FirstFetched)
		default:
			span = time.Duration(n) * c.MinRevisit
		}
		h.Span = days(span)
		if n > 0 {
			each := h.Span / float64(n)
			h.Changed, h.Unchanged = x, n-x
			for range x {
				changed = append(changed, each)
			}
			exposure = each * float64(n-x)
		}
	}
	h.Lambda = solveRate(days(c.PriorChangeInterval()/2), float64(h.Exact), changed, exposure)
	return h, Evidence{Exact: h.Exact, Changed: changed, Exposure: exposure}
}

// lastModifiedAge parses a Last-Modified value sent at time t and returns
// the days from it to t, if it is a valid date not after t and after
// since (when since is set), capped at the clock's MaxLastModifiedAge.
func (c Clock) lastModifiedAge(lm string, t, since time.Time) (float64, bool) {
	if lm == "" {
		return 0, false
	}
	m, err := http.ParseTime(strings.TrimSpace(lm))
	if err != nil || m.After(t) || (!since.IsZero() && !m.After(since)) {
		return 0, false
	}
	return days(min(t.Sub(m), c.MaxLastModifiedAge())), true
}

// solveRate finds the root of ½ + exact + Σ g(λΔᵢ) − λ·T with T = prior +
// Σ Δᵢ + exposure (prior: the Gamma prior's rate, half the prior change
// interval, in days), by Newton's method from the left.
func solveRate(prior, exact float64, changed []float64, exposure float64) float64 {
	total := prior + exposure
	for _, dt := range changed {
		total += dt
	}
	lambda := (priorChanges + exact + float64(len(changed))) / total
	for range 100 {
		s := priorChanges + exact - lambda*total
		ds := -total
		for _, dt := range changed {
			g, dg := censored(lambda * dt)
			s += g
			ds += dt * dg
		}
		step := s / ds
		lambda -= step
		if math.Abs(step) <= 1e-12*lambda {
			break
		}
	}
	return lambda
}

// censored returns g(x) = x/(1 − e^(−x)), the expected number of Poisson
// events in an interval of mean x known to hold at least one, and g'(x).
func censored(x float64) (g, dg float64) {
	if x < 1e-8 {
		return 1 + x/2, 0.5
	}
	em := -math.Expm1(-x) // 1 − e^(−x)
	return x / em, (em - x*(1-em)) / (em * em)
}

// Freshness is F(p) now: the probability that the stored copy is still
// the page's content, exp(−λ·age) with age the time since the last fetch.
// A page never fetched has no copy that could be stale: F = 1 (the index
// holds its URL and anchor text, as current as the links that gave them).
// A copy whose fetch time is unknown has F = 0. It runs at time scale 1;
// Clock.Freshness runs at any.
func Freshness(d *linkgraph.Doc, now time.Time, minRevisit time.Duration) float64 {
	return Clock{MinRevisit: minRevisit}.Freshness(d, now)
}

// Freshness is F(p) now at the clock's time scale (see Freshness).
func (c Clock) Freshness(d *linkgraph.Doc, now time.Time) float64 {
	f, _ := c.freshness(d, now)
	return f
}

func (c Clock) freshness(d *linkgraph.Doc, now time.Time) (float64, History) {
	if !d.HasFetchedCopy() {
		if d.State == linkgraph.StateFetched {
			return 0, History{}
		}
		return 1, History{}
	}
	h := c.History(d)
	if sitemapStale(d) && c.trustsDates(d) {
		// A sitemap's lastmod after the fetch: the copy is out of date
		// now (min_revisit still applies).
		return 0, h
	}
	h.Lambda = c.hintedRate(d, h)
	age := max(now.Sub(d.Fetched), 0)
	return math.Exp(-h.Lambda * days(age)), h
}

func days(d time.Duration) float64 { return d.Hours() / 24 }

// skip says why a document is not a candidate.
type skip int

const (
	candidate    skip = iota
	skipState         // scheduled or excluded
	skipRecent        // fetched less than min_revisit ago
	skipDeep          // deeper than its depth limit
	skipFailures      // failed MaxFailures times in a row
	skipBadURL        // URL the batch file cannot carry
	skipNoGain        // a visit would add no value (RQ^β·F^γ = 1)
	skipCount         // number of skip kinds
)

var skipNames = [skipCount]string{"", "state", "recent", "deep", "failures", "bad_url", "no_gain"}

// assessment is what the value function says of one document, before its
// intrinsic quality is known.
type assessment struct {
	skip    skip
	revisit bool    // batch entry kind
	holds   bool    // already counted against its site's and its script's limits (fetched or tried before)
	dynamic bool    // dynamic URL (depth limit max_depth_dynamic)
	rq, f   float64 // factors now
	logGain float64 // ln(1 − RQ^β·F^γ) + ln(FailedFactor if failed) + ln(near_duplicate_weight if a near-duplicate)
	track   bool    // a fetched page in the revisit budget (manager.revisits = optimal)
	lam     float64 // its estimated change rate, changes per day
}

// holdsSlot tells whether d already counts against its site's collection
// limit and its script's limit: it was fetched, tried or is scheduled.
func holdsSlot(d *linkgraph.Doc) bool {
	switch d.State {
	case linkgraph.StateFetched, linkgraph.StateFailed, linkgraph.StateScheduled:
		return true
	}
	return d.Visits > 0
}
