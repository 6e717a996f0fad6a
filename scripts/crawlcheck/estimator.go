package main

import (
	"fmt"
	"io"
	"math"
	"sort"
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
}

// checkEstimator computes the check over the samples.
func checkEstimator(samples []rateSample) EstimatorCheck {
	e := EstimatorCheck{MinVisits: estimatorMinVisits, ByKind: map[string]float64{}, Untrusted: map[string]int{}}
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
		if r >= 0.5 && r <= 2 {
			e.Within2++
			kindIn[s.kind]++
		}
	}
	e.Changing, e.Static = len(ratios), len(static)
	if e.Changing > 0 {
		e.Share = float64(e.Within2) / float64(e.Changing)
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
