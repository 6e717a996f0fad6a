package main

import (
	"math"
	"strings"
	"testing"
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
	e := checkEstimator(samples)
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
