package main

import (
	"math"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/manager"
)

// TestCheckEstimator: pages under 8 visits are left out; of the
// changing ones, the share within a factor of 2 (both ends counted),
// the quantiles of estimated/true, the share by kind; the pages that
// never change give the median of their estimated intervals.
func TestCheckEstimator(t *testing.T) {
	samples := []rateSample{
		{visits: 8, estimated: 1, truth: 1, kind: "honest", trusted: true},     // 1
		{visits: 9, estimated: 2, truth: 1, kind: "honest", trusted: true},     // 2: within
		{visits: 16, estimated: 0.5, truth: 1, kind: "lying", trusted: false},  // 0.5: within
		{visits: 12, estimated: 3, truth: 1, kind: "lying", trusted: false},    // 3: out
		{visits: 8, estimated: 0.1, truth: 1, kind: "none", trusted: true},     // 0.1: out
		{visits: 7, estimated: 100, truth: 1, kind: "none", trusted: true},     // too few visits
		{visits: 10, estimated: 0.01, truth: 0, kind: "honest", trusted: true}, // never changes: interval 100 s
		{visits: 10, estimated: 0.001, truth: 0, kind: "none", trusted: true},  // 1,000 s
		{visits: 10, estimated: 0.1, truth: 0, kind: "none", trusted: true},    // 10 s
	}
	e := checkEstimator(samples, nil)
	if e.Pages != 8 || e.Changing != 5 || e.Static != 3 || e.Within2 != 3 || math.Abs(e.Share-0.6) > 1e-12 {
		t.Errorf("pages %d changing %d static %d within %d share %g, want 8 5 3 3 0.6", e.Pages, e.Changing, e.Static, e.Within2, e.Share)
	}
	want := []float64{0.1, 0.5, 1, 2, 3}
	for i, q := range e.Quantiles {
		if q != want[i] {
			t.Errorf("quantiles %v, want %v", e.Quantiles, want)
			break
		}
	}
	if e.ByKind["honest"] != 1 || e.ByKind["lying"] != 0.5 || e.ByKind["none"] != 0 {
		t.Errorf("by kind %v", e.ByKind)
	}
	if e.StaticInterval != 100 {
		t.Errorf("static median interval %g, want 100", e.StaticInterval)
	}
	if e.Untrusted["lying"] != 2 || len(e.Untrusted) != 1 {
		t.Errorf("untrusted %v, want lying 2", e.Untrusted)
	}
	var b strings.Builder
	e.Print(&b)
	if !strings.Contains(b.String(), "within 2x 3 (60.0%); honest 100.0%; lying 50.0%; none 0.0%") {
		t.Errorf("print:\n%s", b.String())
	}
}

// TestRatePriorBest: the Bayes estimate of a rate from a page's evidence
// and the web's distribution of rates (changes a day).
func TestRatePriorBest(t *testing.T) {
	var spread []float64 // 1,000 rates log-uniform over 1/16 to 64 a day
	for i := range 1000 {
		spread = append(spread, math.Exp2(-4+10*float64(i)/999))
	}
	tests := []struct {
		name  string
		rates []float64
		e     manager.Evidence
		want  float64
		tol   float64 // |log(best/want)|
	}{
		// One rate in the web: whatever the visits say, it is that one.
		{"one rate, no evidence", []float64{4, 4}, manager.Evidence{}, 4, 1e-9},
		{"one rate, contrary evidence", []float64{4}, manager.Evidence{Exposure: 100}, 4, 1e-9},
		// Two rates six factors of 2 apart: the evidence picks one.
		{"two rates, changes", []float64{1, 64}, manager.Evidence{Exact: 10, Exposure: 0.2}, 64, 1e-9},
		{"two rates, none", []float64{1, 64}, manager.Evidence{Exposure: 1}, 1, 1e-9},
		{"two rates, censored", []float64{1, 64}, manager.Evidence{Changed: []float64{0.1, 0.1, 0.1, 0.1}}, 64, 1e-9},
		// Many rates: 400 dated changes in 100 days put the posterior
		// at 4 a day, within a grid step (a factor 2^(1/16)).
		{"spread, much evidence", spread, manager.Evidence{Exact: 400, Exposure: 100}, 4, math.Ln2 / 16},
		// No evidence: the middle of the distribution's densest window,
		// anywhere between 1/8 and 32 for a log-uniform one.
		{"spread, no evidence", spread, manager.Evidence{}, 2, 4 * math.Ln2},
	}
	for _, tt := range tests {
		got := newRatePrior(tt.rates).best(tt.e)
		if d := math.Abs(math.Log(got / tt.want)); !(d <= tt.tol) {
			t.Errorf("%s: best %g, want %g (within a factor e^%g)", tt.name, got, tt.want, tt.tol)
		}
	}
	if newRatePrior(nil) != nil {
		t.Error("a prior of no rates is not nil")
	}
}

// TestCheckEstimatorBest: with the web's rates, the share the best
// estimate from the same evidence reaches, and both by true interval.
func TestCheckEstimatorBest(t *testing.T) {
	day := 86400.0
	prior := newRatePrior([]float64{day / 30, day / 30, day / 1800}) // pages changing every 30 s and 30 min
	samples := []rateSample{
		// Every 30 s, 20 dated changes in 10 minutes: both right.
		{visits: 10, estimated: 1.0 / 30, truth: 1.0 / 30, evidence: manager.Evidence{Exact: 20, Exposure: 600 / day}},
		// Every 30 min, one dated change then 10 minutes without: the
		// estimator says every 10 minutes (3x, out); the best estimate,
		// knowing the web holds only these two rates, says 30 minutes.
		{visits: 10, estimated: 1.0 / 600, truth: 1.0 / 1800, evidence: manager.Evidence{Exact: 1, Exposure: 600 / day}},
		// Never changes: not counted.
		{visits: 10, estimated: 1.0 / 900, truth: 0, evidence: manager.Evidence{Exposure: 600 / day}},
	}
	e := checkEstimator(samples, prior)
	if e.Changing != 2 || e.Within2 != 1 || e.BestWithin2 != 2 || e.BestShare != 1 {
		t.Errorf("changing %d within %d best %d (%g), want 2 1 2 (1)", e.Changing, e.Within2, e.BestWithin2, e.BestShare)
	}
	want := []IntervalShare{{60, 1, 1, 1}, {120, 0, 0, 0}, {300, 0, 0, 0}, {600, 0, 0, 0}, {1200, 0, 0, 0}, {3000, 1, 0, 1}}
	if len(e.ByInterval) != len(want) {
		t.Fatalf("by interval %+v, want %+v", e.ByInterval, want)
	}
	for i := range want {
		if e.ByInterval[i] != want[i] {
			t.Errorf("by interval %+v, want %+v", e.ByInterval, want)
			break
		}
	}
	var b strings.Builder
	e.Print(&b)
	for _, w := range []string{"<=1 min 1: 100%, 100%; 20-50 min 1: 0%, 100%", "(Bayes): within 2x 2 (100.0%)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("print lacks %q:\n%s", w, b.String())
		}
	}
}
