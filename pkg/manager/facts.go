package manager

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// docFacts is what the plan needs of a document, computed once each time
// its record changes (factsOf) and kept in the documents cache
// (doccache.go): everything of the value function that does not depend
// on the time of the run or on the settings a run may change (α, β, γ,
// rq_*, the depth and failure limits, near_duplicate_weight). The time
// enters only through F = exp(−λ·age) and the min_revisit rule, computed
// per run from λ and the fetch time (assessFacts).
type docFacts struct {
	id, site     uint32
	found, depth int32
	visits       uint32 // max(Doc.Visits, 0)
	failures     int32
	state        uint8 // factState*
	flags        uint8 // fact*
	fetched      int64 // Doc.Fetched in Unix nanoseconds if factFetched
	script       uint64
	// lambda is λ while the site's dates are trusted: with the sitemap's
	// hint, or (a copy a sitemap says is stale) the estimate alone, as
	// Clock.freshness gives them; lambdaHash is λ from the text hash
	// alone, with the hint, for a site whose dates are not trusted
	// (linkgraph.Validators). Both 0 without a fetched copy.
	lambda, lambdaHash float64
	priority           float64 // the sitemap's priority factor on the profit
}

// factsSize is the encoded size of a docFacts.
const factsSize = 4*6 + 2 + 2 + 8*5

const (
	factStateOther uint8 = iota
	factStatePending
	factStateScheduled
	factStateFetched
	factStateFailed
	factStateExcluded
)

const (
	factCopy    uint8 = 1 << iota // HasFetchedCopy
	factAnchors                   // anchor text known
	factSitemap                   // a sitemap document
	factNear                      // a near-duplicate (NearDup ≠ 0)
	factDynamic                   // a dynamic URL (manager.dynamic_extensions)
	factBadURL                    // a URL a batch file cannot carry
	factStale                     // a sitemap lastmod after the fetch: F = 0
	factFetched                   // Doc.Fetched is set
)

var factStates = map[linkgraph.State]uint8{
	linkgraph.StatePending:   factStatePending,
	linkgraph.StateScheduled: factStateScheduled,
	linkgraph.StateFetched:   factStateFetched,
	linkgraph.StateFailed:    factStateFailed,
	linkgraph.StateExcluded:  factStateExcluded,
}

// factsOf computes the facts of d under the URL rules and clock of rules.
// The ids are truncated to 32 bits: checkIDs says whether they fit.
func factsOf(d *linkgraph.Doc, rules *limits) docFacts {
	i32 := func(x int) int32 { return int32(min(max(x, math.MinInt32), math.MaxInt32)) }
	f := docFacts{
		id: uint32(d.ID), site: uint32(d.Site),
		found: i32(d.Found), depth: i32(d.Depth),
		visits: uint32(min(max(d.Visits, 0), math.MaxUint32)), failures: i32(d.Failures),
		state:    factStates[d.State],
		script:   scriptHash(d.URL),
		priority: priorityFactor(d),
	}
	set := func(flag uint8, on bool) {
		if on {
			f.flags |= flag
		}
	}
	set(factAnchors, len(d.Anchors) > 0)
	set(factSitemap, d.Sitemap)
	set(factNear, d.NearDup != 0)
	set(factDynamic, rules.dynamic(d.URL))
	set(factBadURL, !batchURL(d.URL))
	if !d.Fetched.IsZero() {
		f.flags |= factFetched
		f.fetched = d.Fetched.UnixNano()
	}
	if d.HasFetchedCopy() {
		f.flags |= factCopy
		c := rules.clock
		h := c.historyWith(d, true)
		if sitemapStale(d) {
			f.flags |= factStale
			f.lambda = h.Lambda
		} else {
			f.lambda = c.hintedRate(d, h)
		}
		f.lambdaHash = f.lambda
		if datesMatter(d) {
			f.lambdaHash = c.hintedRate(d, c.historyWith(d, false))
		} else if f.has(factStale) {
			f.lambdaHash = c.hintedRate(d, h)
		}
	}
	return f
}

// datesMatter tells whether d's history holds a Last-Modified date, the
// only date the rate estimate reads.
func datesMatter(d *linkgraph.Doc) bool {
	for _, v := range d.History {
		if v.LastModified != "" {
			return true
		}
	}
	return false
}

// checkIDs tells whether the document and site ids of d fit the facts
// (and the view's arrays): 32 bits, the document's not 0.
func checkIDs(d *linkgraph.Doc) error {
	if d.ID > math.MaxUint32 || d.ID == 0 {
		return fmt.Errorf("doc %d: id out of range", d.ID)
	}
	if d.Site > math.MaxUint32 {
		return fmt.Errorf("doc %d: site id %d out of range", d.ID, d.Site)
	}
	return nil
}

func (f *docFacts) has(flag uint8) bool { return f.flags&flag != 0 }

// fetchedAt is Doc.Fetched.
func (f *docFacts) fetchedAt() time.Time {
	if !f.has(factFetched) {
		return time.Time{}
	}
	return time.Unix(0, f.fetched).UTC()
}

// holds is holdsSlot of the document.
func (f *docFacts) holds() bool {
	switch f.state {
	case factStateFetched, factStateFailed, factStateScheduled:
		return true
	}
	return f.visits > 0
}

// freshness is Clock.freshness's F of the document now and λ, the
// site's dates trusted or not.
func (f *docFacts) freshness(now time.Time, trusted bool) (float64, float64) {
	switch {
	case !f.has(factCopy):
		if f.state == factStateFetched {
			return 0, 0
		}
		return 1, 0
	case f.has(factStale) && trusted:
		return 0, f.lambda
	}
	lam := f.lambda
	if !trusted {
		lam = f.lambdaHash
	}
	age := max(now.Sub(f.fetchedAt()), 0)
	return math.Exp(-lam * days(age)), lam
}

// assess decides whether d may be scheduled and, if so, the part of its
// profit that does not depend on intrinsic quality (docs/manager.md,
// "Candidates and limits").
func assess(d *linkgraph.Doc, m *config.Manager, rules *limits, now time.Time) assessment {
	f := factsOf(d, rules)
	return assessFacts(&f, m, rules, now)
}

// assessFacts is assess from a document's facts.
func assessFacts(f *docFacts, m *config.Manager, rules *limits, now time.Time) assessment {
	a := assessment{holds: f.holds(), dynamic: f.has(factDynamic)}
	switch f.state {
	case factStatePending:
	case factStateFailed:
		if f.failures >= MaxFailures {
			a.skip = skipFailures
			return a
		}
		a.logGain = math.Log(FailedFactor)
	case factStateFetched:
		floor := rules.revisitFloor
		if f.has(factSitemap) {
			floor = rules.clock.MinRevisit // a sitemap document: min_revisit, whatever the policy
		}
		if f.has(factFetched) && now.Sub(f.fetchedAt()) < floor {
			a.skip = skipRecent
			if rules.optimal && f.has(factCopy) && !f.has(factSitemap) {
				// In the revisit budget, though not a candidate.
				_, a.lam = f.freshness(now, !rules.clock.untrusted.has(uint64(f.site)))
				a.track = true
			}
			return a
		}
	default:
		a.skip = skipState
		return a
	}
	a.revisit = f.state == factStateFetched || f.visits > 0
	limit := m.MaxDepthStatic
	if a.dynamic {
		limit = m.MaxDepthDynamic
	}
	if int(f.depth) > limit {
		a.skip = skipDeep
		return a
	}
	if f.has(factBadURL) {
		a.skip = skipBadURL
		return a
	}
	switch {
	case f.has(factCopy):
		a.rq = RQFull
	case f.has(factAnchors):
		a.rq = m.RQAnchors
	default:
		a.rq = m.RQURL
	}
	trusted := !rules.clock.untrusted.has(uint64(f.site))
	var lam float64
	a.f, lam = f.freshness(now, trusted)
	if rules.optimal && f.state == factStateFetched && f.has(factCopy) && f.has(factFetched) && !f.has(factSitemap) &&
		!(f.has(factStale) && trusted && now.Sub(f.fetchedAt()) >= rules.clock.MinRevisit) {
		// A revisit the policy times; a page a trusted sitemap says
		// changed is due anyway once min_revisit has passed, as under
		// the uniform rule (docs/sitemaps.md).
		a.track, a.lam = true, lam
	}
	now1 := math.Pow(a.rq, m.Beta) * math.Pow(a.f, m.Gamma)
	if now1 >= 1 {
		a.skip = skipNoGain
		return a
	}
	a.logGain += math.Log1p(-now1) + math.Log(f.priority)
	if f.has(factNear) && m.NearDuplicateWeight < 1 {
		a.logGain += math.Log(m.NearDuplicateWeight)
	}
	return a
}

// factsFingerprint identifies the settings facts depend on: the dynamic
// extensions, min_revisit and the time scale. A documents cache made
// under others is rebuilt.
func factsFingerprint(m *config.Manager) uint64 {
	exts := make([]string, len(m.DynamicExtensions))
	for i, e := range m.DynamicExtensions {
		exts[i] = strings.ToLower(e)
	}
	slices.Sort(exts)
	exts = slices.Compact(exts)
	c := NewClock(m)
	return xxhash.Sum64String(fmt.Sprintf("facts 2|%s|%d|%x", strings.Join(exts, ","), c.MinRevisit, math.Float64bits(c.Scale.Factor())))
}

// appendFacts appends the encoding of f (factsSize bytes, little endian).
func appendFacts(b []byte, f *docFacts) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, f.id)
	b = le.AppendUint32(b, f.site)
	b = le.AppendUint32(b, uint32(f.found))
	b = le.AppendUint32(b, uint32(f.depth))
	b = le.AppendUint32(b, f.visits)
	b = le.AppendUint32(b, uint32(f.failures))
	b = append(b, f.state, f.flags)
	b = append(b, 0, 0)
	b = le.AppendUint64(b, uint64(f.fetched))
	b = le.AppendUint64(b, f.script)
	b = le.AppendUint64(b, math.Float64bits(f.lambda))
	b = le.AppendUint64(b, math.Float64bits(f.lambdaHash))
	return le.AppendUint64(b, math.Float64bits(f.priority))
}

// decodeFacts decodes factsSize bytes of b into f.
func decodeFacts(b []byte, f *docFacts) {
	le := binary.LittleEndian
	f.id, f.site = le.Uint32(b[0:]), le.Uint32(b[4:])
	f.found, f.depth = int32(le.Uint32(b[8:])), int32(le.Uint32(b[12:]))
	f.visits, f.failures = le.Uint32(b[16:]), int32(le.Uint32(b[20:]))
	f.state, f.flags = b[24], b[25]
	f.fetched = int64(le.Uint64(b[28:]))
	f.script = le.Uint64(b[36:])
	f.lambda = math.Float64frombits(le.Uint64(b[44:]))
	f.lambdaHash = math.Float64frombits(le.Uint64(b[52:]))
	f.priority = math.Float64frombits(le.Uint64(b[60:]))
}
