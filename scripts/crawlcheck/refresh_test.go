package main

import (
	"math"
	"testing"
)

// near reports whether a and b agree to within tol.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestOptimalRates: two pages, known rates, known budget, worked by hand.
func TestOptimalRates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lams      []float64
		budget    float64
		wantRates []float64
		wantF     float64
	}{
		// Symmetry: equal rates share the budget equally.
		{"equal", []float64{1, 1}, 2, []float64{1, 1}, 1 - math.Exp(-1)},
		// A page that never changes needs no visit: the other takes all.
		{"static", []float64{1, 0}, 1, []float64{1, 0}, (1 - math.Exp(-1) + 1) / 2},
		// Cho and Garcia-Molina's lesson: a page changing too often gets
		// nothing. With page 1 alone at f = 1, μ = g(1)/1 = 1 − 2/e =
		// 0.264 ≥ 1/100, so page 2 (λ 100) is not worth a visit.
		{"too fast", []float64{1, 100}, 1, []float64{1, 0}, (1 - math.Exp(-1)) / 2},
		{"no budget", []float64{1, 2}, 0, []float64{0, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := optimalRates(tc.lams, tc.budget)
			for i := range got {
				if !near(got[i], tc.wantRates[i], 1e-6) {
					t.Errorf("rates %v, want %v", got, tc.wantRates)
				}
			}
			if f := meanFreshness(tc.lams, got); !near(f, tc.wantF, 1e-6) {
				t.Errorf("freshness %.6f, want %.6f", f, tc.wantF)
			}
		})
	}
}

// TestOptimalBeatsEverySplit: for two pages of different rates the
// optimum spends the budget and no other split of it does better.
func TestOptimalBeatsEverySplit(t *testing.T) {
	lams, budget := []float64{1, 4}, 3.0
	r := optimalRates(lams, budget)
	if !near(r[0]+r[1], budget, 1e-9) {
		t.Fatalf("rates %v spend %g, want %g", r, r[0]+r[1], budget)
	}
	best := meanFreshness(lams, r)
	for k := 0; k <= 1000; k++ {
		f1 := budget * float64(k) / 1000
		if f := meanFreshness(lams, []float64{f1, budget - f1}); f > best+1e-9 {
			t.Errorf("split %g/%g gives %.9f > optimum %v: %.9f", f1, budget-f1, f, r, best)
		}
	}
}

// TestPoliteRates: caps per group, worked by hand.
func TestPoliteRates(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name      string
		lams      []float64
		group     []int
		caps      []float64
		addrOf    []int
		addrCaps  []float64
		budget    float64
		wantRates []float64
		wantF     float64
	}{
		// Page 0's site may be visited every 2 s: page 1 takes the rest.
		// F = (0.5(1 − e^-2) + 1.5(1 − e^-2/3)) / 2 = 0.581103.
		{"one capped", []float64{1, 1}, []int{0, 1}, []float64{0.5, inf}, nil, nil, 2, []float64{0.5, 1.5},
			(0.5*(1-math.Exp(-2)) + 1.5*(1-math.Exp(-2.0/3))) / 2},
		// Both capped below the budget: both at their caps, the rest unspent.
		{"caps below budget", []float64{1, 1}, []int{0, 1}, []float64{0.5, 0.5}, nil, nil, 2, []float64{0.5, 0.5}, 0.5 * (1 - math.Exp(-2))},
		// A cap above the unconstrained optimum changes nothing.
		{"loose cap", []float64{1, 1}, []int{0, 1}, []float64{5, 5}, nil, nil, 2, []float64{1, 1}, 1 - math.Exp(-1)},
		// Two pages in one capped site share its cap equally.
		{"shared cap", []float64{1, 1, 1}, []int{0, 0, 1}, []float64{1, inf}, nil, nil, 3, []float64{0.5, 0.5, 2},
			(2*0.5*(1-math.Exp(-2)) + 2*(1-math.Exp(-0.5))) / 3},
		// Two uncapped units on one address capped at 1 a second (an
		// address_wait of 1 s), a third unit on its own: the address's
		// two pages share its 1, the third takes the rest.
		{"address cap", []float64{1, 1, 1}, []int{0, 1, 2}, []float64{inf, inf, inf}, []int{0, 0, 1}, []float64{1, inf}, 3, []float64{0.5, 0.5, 2},
			(2*0.5*(1-math.Exp(-2)) + 2*(1-math.Exp(-0.5))) / 3},
		// The unit cap binds first: unit 0 at 0.25, its address-mate
		// takes the address's remaining 0.75, the third page the rest.
		{"unit within address", []float64{1, 1, 1}, []int{0, 1, 2}, []float64{0.25, inf, inf}, []int{0, 0, 1}, []float64{1, inf}, 3, []float64{0.25, 0.75, 2},
			(0.25*(1-math.Exp(-4)) + 0.75*(1-math.Exp(-1.0/0.75)) + 2*(1-math.Exp(-0.5))) / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := politeRates(tc.lams, tc.group, tc.caps, tc.addrOf, tc.addrCaps, tc.budget)
			for i := range got {
				if !near(got[i], tc.wantRates[i], 1e-6) {
					t.Errorf("rates %v, want %v", got, tc.wantRates)
				}
			}
			if f := meanFreshness(tc.lams, got); !near(f, tc.wantF, 1e-6) {
				t.Errorf("freshness %.6f, want %.6f", f, tc.wantF)
			}
		})
	}
}
