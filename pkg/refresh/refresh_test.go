package refresh

import (
	"math"
	"testing"
)

// near reports whether a and b agree to within tol.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestFreshness: F(λ, f) = (f/λ)(1 − e^(−λ/f)), Cho and
// Garcia-Molina (TODS 2003) §4, at hand-computed points.
func TestFreshness(t *testing.T) {
	for _, tc := range []struct {
		lam, f, want float64
	}{
		{1, 1, 1 - math.Exp(-1)},         // 0.632121
		{1, 2, 2 * (1 - math.Exp(-0.5))}, // 0.786939
		{2, 1, (1 - math.Exp(-2)) / 2},   // 0.432332
		{0, 0, 1},                        // never changes: fresh once fetched
		{0, 5, 1},
		{1, 0, 0},            // never revisited
		{1e-9, 1, 1 - 5e-10}, // slow page, frequent visits: almost always fresh
	} {
		if got := Freshness(tc.lam, tc.f); !near(got, tc.want, 1e-9) {
			t.Errorf("F(%g, %g) = %.9f, want %.9f", tc.lam, tc.f, got, tc.want)
		}
	}
}

// TestRate: the rate meets the Lagrange condition ∂F/∂f = μ, and a page
// with λ ≥ 1/μ gets none.
func TestRate(t *testing.T) {
	for _, lam := range []float64{1e-4, 0.03, 1, 30} {
		for _, mu := range []float64{1e-9, 1e-3, 0.1, 0.9 / lam} {
			if mu >= 1/lam {
				continue
			}
			f := Rate(lam, mu)
			if f <= 0 {
				t.Fatalf("Rate(%g, %g) = %g", lam, mu, f)
			}
			// ∂F/∂f numerically.
			h := f * 1e-5
			d := (Freshness(lam, f+h) - Freshness(lam, f-h)) / (2 * h)
			if !near(d, mu, 1e-5*math.Max(mu, 1e-6)+1e-12) {
				t.Errorf("λ %g, μ %g: f %g has ∂F/∂f %g", lam, mu, f, d)
			}
		}
		if f := Rate(lam, 1/lam); f != 0 {
			t.Errorf("λ %g at μ = 1/λ: rate %g, want 0", lam, f)
		}
	}
	if f := Rate(0, 0.5); f != 0 {
		t.Errorf("a page that never changes gets rate %g", f)
	}
}

// TestPriceWeighted: the price spends the budget, each page's rate meets
// ∂F/∂f = μ/w, and a heavier page gets the larger rate of two pages that
// change alike; weights nil are weights 1.
func TestPriceWeighted(t *testing.T) {
	lams := []float64{1, 1, 0.1, 10}
	weights := []float64{1, 0.25, 1, 1}
	const budget = 3.0
	mu := Price(lams, weights, nil, budget)
	spent := 0.0
	rates := make([]float64, len(lams))
	for i, l := range lams {
		rates[i] = Rate(l, mu/weights[i])
		spent += rates[i]
		if rates[i] == 0 {
			continue
		}
		h := rates[i] * 1e-5
		d := (Freshness(l, rates[i]+h) - Freshness(l, rates[i]-h)) / (2 * h)
		if !near(d*weights[i], mu, 1e-5*mu) {
			t.Errorf("page %d: w·∂F/∂f = %g, want μ %g", i, d*weights[i], mu)
		}
	}
	if !near(spent, budget, 1e-6) {
		t.Errorf("spent %g, want %g", spent, budget)
	}
	if !(rates[0] > rates[1]) {
		t.Errorf("weight 1 gets %g, weight ¼ %g: want the heavier more", rates[0], rates[1])
	}
	if got, want := Price(lams, nil, nil, budget), Price(lams, []float64{1, 1, 1, 1}, nil, budget); got != want {
		t.Errorf("weights nil: price %g, weights 1: %g", got, want)
	}
	// Too fast for the price: the page changing 10 times a unit gets
	// nothing on a budget of 0.5 (Cho and Garcia-Molina's Figure 6: the
	// optimum gives the fastest pages no visit).
	mu = Price(lams, nil, nil, 0.5)
	if f := Rate(10, mu); f != 0 {
		t.Errorf("budget 0.5: λ 10 gets rate %g, want 0 (μ %g)", f, mu)
	}
}
