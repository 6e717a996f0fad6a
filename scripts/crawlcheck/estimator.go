package main

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/wirecrawl/wire/pkg/manager"
)

// The change-rate estimator checked against the truth (issue 35): for the
// pages the crawl visited at least estimatorMinVisits times, the
// manager's estimate of λ (manager.ChangeEstimates, as its next run would
// compute it) over the page's true rate.

// estimatorMinVisits is the least number of visits (with a response) of
// a page whose estimate is checked.
const estimatorMinVisits = 8

// targetWithin2 is issue 35's target: the share of the changing pages
// visited estimatorMinVisits times or more whose estimate is within a
// factor of 2 of the true rate.
const targetWithin2 = 0.8

// rateSample is one page's estimate beside its truth.
type rateSample struct {
	visits    int
	estimated float64 // changes a second
	truth     float64 // changes a second; 0: the page never changes
	kind      string  // its site's validator policy
	trusted   bool    // the manager read its site's dates
	// evidence is what the page's visits say about its rate (durations
	// in days, as the manager reads them).
	evidence manager.Evidence
}

// EstimatorCheck is the distribution of estimated/true rates.
type EstimatorCheck struct {
	// MinVisits is the visits a page needs to be checked; Pages the
	// pages checked, Changing those of them that change.
	MinVisits int `json:"min_visits"`
	Pages     int `json:"pages"`
	Changing  int `json:"changing"`
	// Within2 counts the changing pages whose estimate is within a
	// factor of 2 of the truth; Share is Within2/Changing.
	Within2 int     `json:"within_2x"`
	Share   float64 `json:"within_2x_share"`
	// Quantiles are the 10, 25, 50, 75 and 90 % quantiles of
	// estimated/true over the changing pages.
	Quantiles []float64 `json:"ratio_quantiles"`
	// ByKind is Share by validator policy (honest, none, lying).
	ByKind map[string]float64 `json:"within_2x_by_kind"`
	// Static counts the checked pages that never change and
	// StaticInterval is the median of their estimated mean change
	// interval (1/λ, seconds): the longer, the less they cost.
	Static         int     `json:"static"`
	StaticInterval float64 `json:"static_median_interval_s"`
	// Untrusted counts the checked pages whose site's dates the
	// estimator did not read, by validator policy.
	Untrusted map[string]int `json:"untrusted_by_kind"`
	// BestWithin2 counts the changing pages checked whose best estimate
	// from the same evidence is within a factor of 2 of the truth, and
	// BestShare is BestWithin2/Changing: the estimate of a Bayes
	// estimator that knows the web's distribution of true rates (its
	// prior) and, from each page's evidence, picks the factor-2 window
	// of rates with the largest posterior probability. No estimator can
	// expect to do better on the same visits (see ratePrior); absent
	// without the web's rates.
	BestWithin2 int     `json:"best_within_2x,omitempty"`
	BestShare   float64 `json:"best_within_2x_share,omitempty"`
	// ByInterval splits the changing pages checked by their true mean
	// change interval.
	ByInterval []IntervalShare `json:"by_interval,omitempty"`
}

// IntervalShare is the estimator's accuracy over the changing pages whose
// true mean change interval is at most MaxSeconds (and above the
// previous class's).
type IntervalShare struct {
	MaxSeconds  float64 `json:"max_s"` // 0: no bound (the last class)
	Pages       int     `json:"pages"`
	Within2     int     `json:"within_2x"`
	BestWithin2 int     `json:"best_within_2x"`
}

// intervalClasses are the upper bounds, in seconds, of the classes of
// true mean change interval the check reports: 1, 2, 5, 10, 20 and 50
// minutes, and longer.
var intervalClasses = [...]float64{60, 120, 300, 600, 1200, 3000}

// ratePrior is the distribution of the true change rates of a web's
// changing pages, on a grid of log λ (λ in changes a day, as the manager
// counts them): the prior of the best estimator of issue 35's measure.
// For a page with evidence E, the posterior of log λ is the prior times
// the likelihood of E (manager.Evidence.LogLikelihood); the estimate
// most likely to be within a factor of 2 of the truth is the middle of
// the window of width log 4 with the largest posterior mass. Since which
// pages are checked depends only on their visits, this is the Bayes
// decision for each checked page, and its share the most any estimator
// can expect from the same visits.
type ratePrior struct {
	logRate []float64 // grid of log λ, increasing, step log(2)/priorSteps
	weight  []float64 // the share of the pages at each grid point
}

// priorSteps is the grid points per factor of 2 of ratePrior.
const priorSteps = 16

// newRatePrior makes the prior of the rates (changes a day, > 0); nil
// without any.
func newRatePrior(rates []float64) *ratePrior {
	if len(rates) == 0 {
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rates {
		lo, hi = min(lo, math.Log(r)), max(hi, math.Log(r))
	}
	step := math.Ln2 / priorSteps
	n := int(math.Floor((hi-lo)/step)) + 1
	p := &ratePrior{logRate: make([]float64, n), weight: make([]float64, n)}
	for i := range n {
		p.logRate[i] = lo + float64(i)*step
	}
	for _, r := range rates {
		i := min(int(math.Round((math.Log(r)-lo)/step)), n-1)
		p.weight[i] += 1 / float64(len(rates))
	}
	return p
}

// best returns the rate (changes a day) at the middle of the window of
// width log 4 (a factor of 2 either side) with the largest posterior mass
// given evidence e; when several windows tie (a posterior narrower than
// the window), the middle of their centres.
func (p *ratePrior) best(e manager.Evidence) float64 {
	n := len(p.logRate)
	logPost := make([]float64, n)
	top := math.Inf(-1)
	for i, u := range p.logRate {
		logPost[i] = math.Inf(-1)
		if p.weight[i] > 0 {
			logPost[i] = math.Log(p.weight[i]) + e.LogLikelihood(math.Exp(u))
		}
		top = max(top, logPost[i])
	}
	prefix := make([]float64, n+1) // prefix[i]: the posterior mass of points < i
	for i, l := range logPost {
		prefix[i+1] = prefix[i] + math.Exp(l-top)
	}
	const width = 2 * priorSteps  // log 4 in grid steps
	mass := func(k int) float64 { // of the window of points k to k+width
		return prefix[min(max(k+width+1, 0), n)] - prefix[min(max(k, 0), n)]
	}
	most := 0.0
	for k := -width; k < n; k++ {
		most = max(most, mass(k))
	}
	first, last := 0, 0
	for k, found := -width, false; k < n; k++ {
		if mass(k) >= most*(1-1e-9) {
			if !found {
				first, found = k, true
			}
			last = k
		}
	}
	step := math.Ln2 / priorSteps
	mid := p.logRate[0] + (float64(first+last)/2+width/2)*step
	return math.Exp(mid)
}

// within2 tells whether estimated/true is within a factor of 2.
func within2(r float64) bool { return r >= 0.5 && r <= 2 }

// checkEstimator computes the check over the samples; with prior (the
// web's true rates), also the best share the same evidence allows.
func checkEstimator(samples []rateSample, prior *ratePrior) EstimatorCheck {
	e := EstimatorCheck{MinVisits: estimatorMinVisits, ByKind: map[string]float64{}, Untrusted: map[string]int{}}
	e.ByInterval = make([]IntervalShare, len(intervalClasses)+1)
	for i, m := range intervalClasses {
		e.ByInterval[i].MaxSeconds = m
	}
	var ratios, static []float64
	kindN, kindIn := map[string]int{}, map[string]int{}
	for _, s := range samples {
		if s.visits < estimatorMinVisits || !(s.estimated > 0) {
			continue
		}
		e.Pages++
		if !s.trusted {
			e.Untrusted[s.kind]++
		}
		if s.truth <= 0 {
			static = append(static, 1/s.estimated)
			continue
		}
		r := s.estimated / s.truth
		ratios = append(ratios, r)
		kindN[s.kind]++
		c := &e.ByInterval[sort.SearchFloat64s(intervalClasses[:], 1/s.truth)]
		c.Pages++
		if within2(r) {
			e.Within2++
			kindIn[s.kind]++
			c.Within2++
		}
		if prior != nil && within2(prior.best(s.evidence)/86400/s.truth) {
			e.BestWithin2++
			c.BestWithin2++
		}
	}
	for len(e.ByInterval) > 0 && e.ByInterval[len(e.ByInterval)-1].Pages == 0 {
		e.ByInterval = e.ByInterval[:len(e.ByInterval)-1]
	}
	e.Changing, e.Static = len(ratios), len(static)
	if e.Changing > 0 {
		e.Share = float64(e.Within2) / float64(e.Changing)
		if prior != nil {
			e.BestShare = float64(e.BestWithin2) / float64(e.Changing)
		}
		sort.Float64s(ratios)
		for _, q := range []float64{0.1, 0.25, 0.5, 0.75, 0.9} {
			e.Quantiles = append(e.Quantiles, quantile(ratios, q))
		}
	}
	for k, n := range kindN {
		e.ByKind[k] = float64(kindIn[k]) / float64(n)
	}
	if len(static) > 0 {
		sort.Float64s(static)
		e.StaticInterval = quantile(static, 0.5)
	}
	return e
}

// quantile is the q-quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// Print writes the check.
func (e *EstimatorCheck) Print(w io.Writer) {
	fmt.Fprintf(w, "estimator: %d pages visited >= %d times, %d changing, %d never changing (median estimated interval %.0f s)\n",
		e.Pages, e.MinVisits, e.Changing, e.Static, e.StaticInterval)
	if e.Changing == 0 {
		return
	}
	q := e.Quantiles
	fmt.Fprintf(w, "  estimated/true rate, changing pages: 10%% %.2f, 25%% %.2f, median %.2f, 75%% %.2f, 90%% %.2f; within 2x %d (%.1f%%)",
		q[0], q[1], q[2], q[3], q[4], e.Within2, 100*e.Share)
	kinds := make([]string, 0, len(e.ByKind))
	for k := range e.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "; %s %.1f%%", k, 100*e.ByKind[k])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  within 2x by true mean interval (pages: estimator")
	if e.BestShare > 0 {
		fmt.Fprintf(w, ", best from the same visits")
	}
	fmt.Fprintf(w, "):")
	lo, sep := 0.0, ""
	for _, c := range e.ByInterval {
		if c.Pages == 0 {
			lo = c.MaxSeconds
			continue
		}
		fmt.Fprint(w, sep)
		sep = ";"
		switch {
		case c.MaxSeconds == 0:
			fmt.Fprintf(w, " over %g min", lo/60)
		case lo == 0:
			fmt.Fprintf(w, " <=%g min", c.MaxSeconds/60)
		default:
			fmt.Fprintf(w, " %g-%g min", lo/60, c.MaxSeconds/60)
		}
		fmt.Fprintf(w, " %d: %.0f%%", c.Pages, 100*float64(c.Within2)/float64(c.Pages))
		if e.BestShare > 0 {
			fmt.Fprintf(w, ", %.0f%%", 100*float64(c.BestWithin2)/float64(c.Pages))
		}
		lo = c.MaxSeconds
	}
	fmt.Fprintln(w)
	if e.BestShare > 0 {
		fmt.Fprintf(w, "  best estimate from the same visits, knowing the web's distribution of rates (Bayes): within 2x %d (%.1f%%)\n",
			e.BestWithin2, 100*e.BestShare)
	}
	if len(e.Untrusted) > 0 {
		kinds = kinds[:0]
		for k := range e.Untrusted {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		fmt.Fprintf(w, "  pages of sites whose dates the manager does not trust:")
		for _, k := range kinds {
			fmt.Fprintf(w, " %s %d", k, e.Untrusted[k])
		}
		fmt.Fprintln(w)
	}
}
