package manager

import (
	"math"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
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

// Representational quality levels, after the ordering of Castillo ch. 3,
// §3.4 (URL < URL + anchor text < URL + anchor text + full text).
const (
	RQURL     = 0.5  // only the URL is known
	RQAnchors = 0.75 // the URL and the anchor text of links to it
	RQFull    = 1.0  // fetched, full text stored; every visit brings a page here
)

// Freshness prior and failure handling.
const (
	// PriorChangeInterval is the mean time between changes assumed for a
	// page before its history says otherwise: one change per 30 days.
	PriorChangeInterval = 30 * 24 * time.Hour
	// priorChanges is the weight of the prior, in observed changes.
	priorChanges = 0.5
	// MaxFailures is the number of attempts in a row without a response
	// (Doc.Failures) after which a failed page is no longer scheduled.
	MaxFailures = 3
	// FailedFactor multiplies the profit of a page whose last attempt got
	// no response: it is scheduled like a new page, at half the profit.
	FailedFactor = 0.5
)

// RepresentationalQuality is RQ(p) as the index holds the page now.
func RepresentationalQuality(d *linkgraph.Doc) float64 {
	switch {
	case d.State == linkgraph.StateFetched:
		return RQFull
	case len(d.Anchors) > 0:
		return RQAnchors
	}
	return RQURL
}

// ChangeRate estimates λ, the page's rate of change in changes per day,
// from its visit history. Changes are modelled as a Poisson process (Cho
// and Garcia-Molina, "Estimating frequency of change", 2003); with a
// Gamma prior of mean one change per PriorChangeInterval and the weight
// of half a change, the posterior mean after X changes detected over an
// observed span E is
//
//	λ = (X + 1/2) / (E + PriorChangeInterval/2)
//
// so a page visited once has λ = 1/30 per day, and the estimate tends to
// X/E as the history grows. X is Doc.Changes (at most Visits−1: a change
// is detected between two visits); E is Fetched − FirstFetched, or, when
// FirstFetched is not recorded, (Visits−1)·minRevisit, a lower bound since
// no page is revisited sooner.
func ChangeRate(d *linkgraph.Doc, minRevisit time.Duration) float64 {
	n := max(d.Visits-1, 0)
	x := min(max(d.Changes, 0), n)
	var span time.Duration
	switch {
	case n == 0:
	case !d.FirstFetched.IsZero() && d.Fetched.After(d.FirstFetched):
		span = d.Fetched.Sub(d.FirstFetched)
	default:
		span = time.Duration(n) * minRevisit
	}
	return (float64(x) + priorChanges) / days(span+PriorChangeInterval/2)
}

// Freshness is F(p) now: the probability that the stored copy is still
// the page's content, exp(−λ·age) with age the time since the last
// fetch. A page never fetched (or with an unknown fetch time) has F = 0.
func Freshness(d *linkgraph.Doc, now time.Time, minRevisit time.Duration) float64 {
	if d.State != linkgraph.StateFetched || d.Fetched.IsZero() {
		return 0
	}
	age := max(now.Sub(d.Fetched), 0)
	return math.Exp(-ChangeRate(d, minRevisit) * days(age))
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
	logGain float64 // ln(1 − RQ^β·F^γ) + ln(FailedFactor if failed)
}

// assess decides whether d may be scheduled and, if so, the part of its
// profit that does not depend on intrinsic quality.
func assess(d *linkgraph.Doc, m *config.Manager, now time.Time) assessment {
	var a assessment
	switch d.State {
	case linkgraph.StatePending:
	case linkgraph.StateFailed:
		if d.Failures >= MaxFailures {
			return assessment{skip: skipFailures}
		}
		a.logGain = math.Log(FailedFactor)
	case linkgraph.StateFetched:
		if !d.Fetched.IsZero() && now.Sub(d.Fetched) < m.MinRevisit.D() {
			return assessment{skip: skipRecent}
		}
	default:
		return assessment{skip: skipState}
	}
	a.revisit = d.State == linkgraph.StateFetched || d.Visits > 0
	limit := m.MaxDepthStatic
	if urlnorm.IsDynamic(d.URL) {
		limit = m.MaxDepthDynamic
	}
	if d.Depth > limit {
		return assessment{skip: skipDeep}
	}
	if !batchURL(d.URL) {
		return assessment{skip: skipBadURL}
	}
	now1 := math.Pow(RepresentationalQuality(d), m.Beta) * math.Pow(Freshness(d, now, m.MinRevisit.D()), m.Gamma)
	if now1 >= 1 {
		return assessment{skip: skipNoGain}
	}
	a.logGain += math.Log1p(-now1)
	return a
}

// batchURL tells whether u can be an entry of a batch file (see
// pkg/batch): an http(s) URL on its site, without tabs or newlines. The
// seeder only stores such URLs; this keeps one bad record from making
// every batch unwritable.
func batchURL(u string) bool {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return false
	}
	return !strings.ContainsAny(u, "\t\n\r") && strings.HasPrefix(u, urlnorm.SiteKey(u)+"/")
}
