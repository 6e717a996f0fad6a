package main

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// freshPage is what the freshness measure knows of one page: the web's
// truth about it. Times are seconds from time zero (the web's origin).
type freshPage struct {
	// site is the page's site (its host name), unit its politeness
	// unit, addr the address that serves it.
	site, unit, addr string
	// kind is its site's validator policy: honest, none or lying.
	kind string
	// rate is its true change rate λ (per second; 0: never changes).
	rate float64
	// changes are the times its versions 1, 2, ... go live, ascending
	// (changes[k-1]: version k), up to the end of the measure.
	changes []float64
	// weight is its PageRank among the reachable pages.
	weight float64
}

// version is the version of p live at t: its changes up to t.
func (p *freshPage) version(t float64) int {
	return sort.Search(len(p.changes), func(k int) bool { return p.changes[k] > t })
}

// freshFetch is one request for a page that got a response.
type freshFetch struct {
	// at is when the request started (seconds from time zero).
	at float64
	// status is the HTTP status; 200 stores the version live at `at`,
	// 304 keeps the stored copy, any other leaves it as it was.
	status int
	// conditional tells whether it carried a validator.
	conditional bool
}

// freshnessInput is what computeFreshness measures: the pages, each
// page's fetches in time order, the window, and per politeness unit the
// most revisits a second the rules allow.
type freshnessInput struct {
	pages   []freshPage
	fetches [][]freshFetch
	// start and end bound the window (seconds from time zero).
	start, end float64
	// unitCap is 1/max(wait, Crawl-delay, response time) of each unit.
	unitCap map[string]float64
	// addrCap is each address's most requests a second:
	// 1/address_wait, and connections_per_ip times the largest cap of
	// its units, whichever is less (absent: no cap).
	addrCap map[string]float64
	// scale is the crawl's manager.time_scale, for the Nutch schedule
	// (0: not simulated), minRevisit its min_revisit at that scale in
	// seconds (0: no second run from it).
	scale, minRevisit float64
}

// Freshness is `crawlcheck freshness`'s report. Times are seconds.
type Freshness struct {
	// WindowStart and WindowEnd are the window, from the crawl's start.
	WindowStart float64 `json:"window_start_s"`
	WindowEnd   float64 `json:"window_end_s"`
	// All are the reachable pages that answer 200; Known those of them
	// fetched before the window.
	All   FreshnessGroup `json:"all"`
	Known FreshnessGroup `json:"known"`
	// ByKind splits Known by validator policy (honest, none, lying).
	ByKind map[string]FreshnessGroup `json:"by_kind"`
	// Fetches counts the responses (200 or 304) for the pages in the
	// window; NewVersion those 200s that brought a version other than the
	// stored one, FirstFetches the 200s of pages without a copy,
	// UnchangedWhole the 200s that brought the stored version again,
	// NotModified the 304s.
	Fetches        int `json:"fetches"`
	NewVersion     int `json:"new_version"`
	FirstFetches   int `json:"first_fetches"`
	UnchangedWhole int `json:"unchanged_whole"`
	NotModified    int `json:"not_modified"`
	// HonestRevisits counts the window's requests for pages of honest
	// sites that had a stored copy; HonestConditional those of them that
	// carried If-None-Match or If-Modified-Since.
	HonestRevisits    int     `json:"honest_revisits"`
	HonestConditional int     `json:"honest_conditional"`
	ConditionalShare  float64 `json:"conditional_share"`
	// Estimator compares the manager's change-rate estimates with the
	// truth (with --collection only).
	Estimator *EstimatorCheck `json:"estimator,omitempty"`
	// Nutch is the same budget spent by Nutch's adaptive schedule,
	// simulated on the known pages: from its default interval, and from
	// the crawl's min_revisit.
	Nutch []NutchSim `json:"nutch,omitempty"`
}

// FreshnessGroup is the measure over one set of pages, and what the
// same budget would give under the four policies.
type FreshnessGroup struct {
	Pages int `json:"pages"`
	// Freshness is the time-averaged share of the pages whose stored
	// copy is the live version; Weighted the same weighted by PageRank.
	Freshness float64 `json:"freshness"`
	Weighted  float64 `json:"weighted_freshness"`
	// MeanAge is the time-averaged mean age (0 while fresh, else the time
	// since the stored version stopped being live; a page without a copy
	// counts from time zero).
	MeanAge float64 `json:"mean_age_s"`
	// Budget is the fetches the crawl made to these pages in the window.
	Budget int `json:"budget"`
	// Uniform, Optimal, PerSite and Polite are the expected freshness of
	// the same budget under uniform revisiting, the optimum for known
	// rates, the optimum within each site on the site's own fetches, and
	// the optimum with no politeness unit revisited more often than its
	// rules allow.
	Uniform float64 `json:"uniform"`
	Optimal float64 `json:"optimal"`
	PerSite float64 `json:"per_site"`
	Polite  float64 `json:"polite"`
}

// computeFreshness measures the window: each page's stored copy follows
// its fetches (a 200 stores the version live when it started, a 304
// keeps the copy), and is fresh while that version is live.
func computeFreshness(in freshnessInput) Freshness {
	f := Freshness{WindowStart: in.start, WindowEnd: in.end, ByKind: map[string]FreshnessGroup{}}
	w := in.end - in.start
	n := len(in.pages)
	fresh, age := make([]float64, n), make([]float64, n)
	known := make([]bool, n)
	budget := make([]int, n)
	for i := range in.pages {
		p := &in.pages[i]
		has, v := false, 0
		cur := in.start
		for _, e := range in.fetches[i] {
			if e.at >= in.end {
				break
			}
			if e.at >= in.start {
				fr, ag := copyOver(p, has, v, cur, e.at)
				fresh[i] += fr
				age[i] += ag
				cur = e.at
				f.count(p, e, has, v)
				if e.status == 200 || e.status == 304 {
					budget[i]++
				}
			}
			if e.status == 200 {
				if e.at < in.start {
					known[i] = true
				}
				has, v = true, p.version(e.at)
			}
		}
		fr, ag := copyOver(p, has, v, cur, in.end)
		fresh[i] += fr
		age[i] += ag
		if w > 0 {
			fresh[i] /= w
			age[i] /= w
		}
	}
	if f.HonestRevisits > 0 {
		f.ConditionalShare = float64(f.HonestConditional) / float64(f.HonestRevisits)
	}
	all := make([]int, n)
	var kn []int
	byKind := map[string][]int{}
	for i := range all {
		all[i] = i
		if known[i] {
			kn = append(kn, i)
			byKind[in.pages[i].kind] = append(byKind[in.pages[i].kind], i)
		}
	}
	f.All = in.group(all, fresh, age, budget, w)
	f.Known = in.group(kn, fresh, age, budget, w)
	if in.scale > 0 {
		f.Nutch = append(f.Nutch, in.simulateNutch(kn, f.Known.Budget, in.scale, 0))
		if in.minRevisit > 0 {
			f.Nutch = append(f.Nutch, in.simulateNutch(kn, f.Known.Budget, in.scale, in.minRevisit))
		}
	}
	for k, idx := range byKind {
		f.ByKind[k] = in.group(idx, fresh, age, budget, w)
	}
	return f
}

// count adds a fetch inside the window to the counts; has and v are the
// stored copy before it.
func (f *Freshness) count(p *freshPage, e freshFetch, has bool, v int) {
	if has && p.kind == testweb.ValidatorsHonest.String() {
		f.HonestRevisits++
		if e.conditional {
			f.HonestConditional++
		}
	}
	switch {
	case e.status == 304:
		f.Fetches++
		f.NotModified++
	case e.status == 200:
		f.Fetches++
		switch {
		case !has:
			f.FirstFetches++
		case p.version(e.at) == v:
			f.UnchangedWhole++
		default:
			f.NewVersion++
		}
	}
}

// copyOver returns ∫ fresh dt and ∫ age dt over [a, b] for a page whose
// stored copy (has) is version v: fresh until version v+1 goes live,
// then stale with an age growing from that moment; without a copy never
// fresh, its age counted from time zero.
func copyOver(p *freshPage, has bool, v int, a, b float64) (fresh, age float64) {
	if b <= a {
		return 0, 0
	}
	stale := 0.0
	if has {
		stale = math.Inf(1)
		if v < len(p.changes) {
			stale = p.changes[v]
		}
	}
	if has {
		fresh = math.Max(0, math.Min(b, stale)-a)
	}
	if stale < b {
		lo := math.Max(a, stale)
		age = ((b-stale)*(b-stale) - (lo-stale)*(lo-stale)) / 2
	}
	return fresh, age
}

// group sums the measure over the pages idx and computes the four
// policies on the fetches the crawl made to them in the window.
func (in freshnessInput) group(idx []int, fresh, age []float64, budget []int, w float64) FreshnessGroup {
	g := FreshnessGroup{Pages: len(idx)}
	if len(idx) == 0 {
		return g
	}
	var wsum, wfresh float64
	lams := make([]float64, len(idx))
	siteOf, unitOf, addrIndex := map[string]int{}, map[string]int{}, map[string]int{}
	var addrOf []int
	var addrCaps []float64
	site, unit := make([]int, len(idx)), make([]int, len(idx))
	var siteBudget []float64
	var caps []float64
	for k, i := range idx {
		p := in.pages[i]
		g.Freshness += fresh[i]
		g.MeanAge += age[i]
		wsum += p.weight
		wfresh += p.weight * fresh[i]
		g.Budget += budget[i]
		lams[k] = p.rate
		s, ok := siteOf[p.site]
		if !ok {
			s = len(siteBudget)
			siteOf[p.site] = s
			siteBudget = append(siteBudget, 0)
		}
		site[k] = s
		siteBudget[s] += float64(budget[i])
		u, ok := unitOf[p.unit]
		if !ok {
			u = len(caps)
			unitOf[p.unit] = u
			c, known := in.unitCap[p.unit]
			if !known {
				c = math.Inf(1)
			}
			caps = append(caps, c)
			a, ok := addrIndex[p.addr]
			if !ok {
				a = len(addrCaps)
				addrIndex[p.addr] = a
				c, known := in.addrCap[p.addr]
				if !known {
					c = math.Inf(1)
				}
				addrCaps = append(addrCaps, c)
			}
			addrOf = append(addrOf, a)
		}
		unit[k] = u
	}
	g.Freshness /= float64(len(idx))
	g.MeanAge /= float64(len(idx))
	if wsum > 0 {
		g.Weighted = wfresh / wsum
	}
	if w <= 0 {
		return g
	}
	rate := float64(g.Budget) / w
	uniform := make([]float64, len(idx))
	for k := range uniform {
		uniform[k] = rate / float64(len(idx))
	}
	g.Uniform = meanFreshness(lams, uniform)
	g.Optimal = meanFreshness(lams, optimalRates(lams, rate))
	g.PerSite = perSiteFreshness(lams, site, siteBudget, w)
	g.Polite = meanFreshness(lams, politeRates(lams, unit, caps, addrOf, addrCaps, rate))
	return g
}

// perSiteFreshness is the mean expected freshness when each site spends
// its own fetches (siteBudget over w seconds) optimally on its pages.
func perSiteFreshness(lams []float64, site []int, siteBudget []float64, w float64) float64 {
	members := make([][]float64, len(siteBudget))
	for k, s := range site {
		members[s] = append(members[s], lams[k])
	}
	sum := 0.0
	for s, l := range members {
		sum += meanFreshness(l, optimalRates(l, siteBudget[s]/w)) * float64(len(l))
	}
	return sum / float64(len(lams))
}

// Print writes the report as text.
func (f Freshness) Print(w io.Writer) {
	fmt.Fprintf(w, "window: %.1f s to %.1f s (%.1f s)\n", f.WindowStart, f.WindowEnd, f.WindowEnd-f.WindowStart)
	fmt.Fprintf(w, "fetches in the window: %d (new version %d, first fetch %d, unchanged fetched whole %d, 304 %d)\n",
		f.Fetches, f.NewVersion, f.FirstFetches, f.UnchangedWhole, f.NotModified)
	fmt.Fprintf(w, "revisits to honest sites: %d, conditional %d (%.1f%%)\n", f.HonestRevisits, f.HonestConditional, 100*f.ConditionalShare)
	fmt.Fprintf(w, "%-22s %7s %9s %9s %9s %8s %8s %8s %8s %8s\n", "pages", "count", "fresh", "weighted", "age_s", "budget", "uniform", "optimal", "per_site", "polite")
	row := func(name string, g FreshnessGroup) {
		fmt.Fprintf(w, "%-22s %7d %9.4f %9.4f %9.1f %8d %8.4f %8.4f %8.4f %8.4f\n", name, g.Pages, g.Freshness, g.Weighted, g.MeanAge,
			g.Budget, g.Uniform, g.Optimal, g.PerSite, g.Polite)
	}
	row("known before window", f.Known)
	row("all", f.All)
	kinds := make([]string, 0, len(f.ByKind))
	for k := range f.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		row("known, "+k, f.ByKind[k])
	}
	for _, n := range f.Nutch {
		n.Print(w)
	}
	if f.Estimator != nil {
		f.Estimator.Print(w)
	}
}

// The targets of issue 35 ("Recrawls keep a changing web fresh").
const (
	// targetPoliteRatio: measured freshness of the known pages over the
	// optimum under politeness.
	targetPoliteRatio = 0.95
	// targetKnown and targetHonest: today's freshness of the known pages
	// and of honest sites, not to fall below.
	targetKnown, targetHonest = 0.77, 0.64
	// targetOtherRatio: sites without validators or with lying ones, over
	// honest sites.
	targetOtherRatio = 0.8
	// targetConditional: share of the revisits to honest sites that are
	// conditional.
	targetConditional = 0.95
)

// PrintTargets writes the figures issue 35 sets targets for, each with
// its verdict.
func (f Freshness) PrintTargets(w io.Writer) {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return math.NaN()
		}
		return a / b
	}
	k, a := f.Known, f.All
	fmt.Fprintln(w, "targets (issue 35), over the pages known before the window:")
	fmt.Fprintf(w, "  freshness / polite optimum: %.3f / %.3f = %.3f (target >= %.2f): %s\n",
		k.Freshness, k.Polite, ratio(k.Freshness, k.Polite), targetPoliteRatio, verdict(k.Polite > 0 && k.Freshness >= targetPoliteRatio*k.Polite))
	fmt.Fprintf(w, "  freshness: %.3f (target >= %.2f, today's): %s\n", k.Freshness, targetKnown, verdict(k.Freshness >= targetKnown))
	fmt.Fprintf(w, "  uniform %.3f, optimal %.3f, per site %.3f: allocation across sites loses %.3f, within sites %.3f\n",
		k.Uniform, k.Optimal, k.PerSite, k.Optimal-k.PerSite, k.PerSite-k.Freshness)
	fmt.Fprintf(w, "  PageRank-weighted %.3f >= plain %.3f: %s\n", k.Weighted, k.Freshness, verdict(k.Weighted >= k.Freshness))
	honest := f.ByKind[testweb.ValidatorsHonest.String()]
	fmt.Fprintf(w, "  honest sites: %.3f (target >= %.2f, today's): %s\n", honest.Freshness, targetHonest,
		verdict(honest.Pages > 0 && honest.Freshness >= targetHonest))
	for _, p := range []testweb.ValidatorPolicy{testweb.ValidatorsNone, testweb.ValidatorsLying} {
		g := f.ByKind[p.String()]
		fmt.Fprintf(w, "  %s sites: %.3f, %.3f of honest (target >= %.1f): %s\n", p, g.Freshness, ratio(g.Freshness, honest.Freshness),
			targetOtherRatio, verdict(g.Pages > 0 && honest.Pages > 0 && g.Freshness >= targetOtherRatio*honest.Freshness))
	}
	fmt.Fprintf(w, "  conditional revisits to honest sites: %d of %d = %.1f%% (target >= %.0f%%): %s\n", f.HonestConditional, f.HonestRevisits,
		100*f.ConditionalShare, 100*targetConditional, verdict(f.HonestRevisits > 0 && f.ConditionalShare >= targetConditional))
	if e := f.Estimator; e != nil {
		fmt.Fprintf(w, "  estimator within 2x of the true rate: %d of %d changing pages visited >= %d times = %.1f%% (target >= %.0f%%): %s\n",
			e.Within2, e.Changing, e.MinVisits, 100*e.Share, 100*targetWithin2, verdict(e.Changing > 0 && e.Share >= targetWithin2))
	}
	for _, n := range f.Nutch {
		fmt.Fprintf(w, "  Nutch's adaptive schedule from %.0f s on the same budget: %.3f (the crawl %.3f)\n", n.Initial, n.Freshness, k.Freshness)
	}
	fmt.Fprintf(w, "all pages (discovery too): freshness %.3f, weighted %.3f, mean age %.1f s; uniform %.3f, optimal %.3f, per site %.3f, polite %.3f\n",
		a.Freshness, a.Weighted, a.MeanAge, a.Uniform, a.Optimal, a.PerSite, a.Polite)
}
