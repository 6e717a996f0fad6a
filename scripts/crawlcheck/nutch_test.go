package main

import (
	"math"
	"testing"
)

// TestSimulateNutch: one page fetched at 0 before a window [10, 110] at
// time scale 1/100 (intervals: 0.6 s to 315,360 s, from 25,920 s):
// changes live at 50 and 60. Two pages, the second never changing and
// fetched at 5. With 4 fetches (slots at 22.5, 47.5, 72.5, 97.5) and the
// initial interval long past the window, no page is ever due: no fetch,
// the first page fresh until 50 (40 of 100 s), the second always.
// With the initial interval shortened by a scale of 1/1e5 (25.92 s), the
// first page is due at 25.92 and taken at 47.5 (unchanged: ×1.4 →
// 36.3 s, due at 83.8), the second due at 30.92 and taken at 72.5, the
// first again at 97.5 (changed): fresh 10→50 and 97.5→110.
func TestSimulateNutch(t *testing.T) {
	in := freshnessInput{
		pages: []freshPage{
			{site: "a", rate: 0.05, changes: []float64{50, 60}, weight: 3},
			{site: "b", weight: 1},
		},
		fetches: [][]freshFetch{{{at: 0, status: 200}}, {{at: 5, status: 200}}},
		start:   10, end: 110,
	}
	s := in.simulateNutch([]int{0, 1}, 4, 1.0/100, 0)
	if s.Fetches != 0 || math.Abs(s.Freshness-(0.4+1)/2) > 1e-12 || math.Abs(s.Weighted-(3*0.4+1)/4) > 1e-12 {
		t.Errorf("scale 1/100: %+v, want no fetch, fresh 0.7, weighted 0.55", s)
	}
	s = in.simulateNutch([]int{0, 1}, 4, 1e-5, 0)
	first := (40 + 12.5) / 100.0
	if s.Fetches != 3 || s.Changed != 1 || math.Abs(s.Freshness-(first+1)/2) > 1e-12 {
		t.Errorf("scale 1e-5: %+v, want 3 fetches, 1 changed, fresh %g", s, (first+1)/2)
	}
	// The same from an initial interval of 25.92 s given at scale 1/100.
	if g := in.simulateNutch([]int{0, 1}, 4, 1.0/100, 25.92); g.Fetches != s.Fetches || g.Freshness != s.Freshness || g.Initial != 25.92 {
		t.Errorf("initial 25.92 s: %+v, want as %+v", g, s)
	}
}
