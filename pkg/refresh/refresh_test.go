package refresh

import (
	"math"
	"math/rand/v2"
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

// bisectPrice is Price by plain bisection on log μ over the whole range
// (what Price did before it interpolated): the reference Price must
// agree with.
func bisectPrice(lams, weights, floors []float64, budget float64) float64 {
	hi := 0.0
	for i, l := range lams {
		if l > 0 && weights[i] > 0 {
			hi = math.Max(hi, weights[i]/l)
		}
	}
	spend := func(mu float64) float64 {
		s := 0.0
		for i, l := range lams {
			m := mu
			if floors != nil {
				m = math.Max(m, floors[i])
			}
			if weights[i] > 0 {
				s += Rate(l, m/weights[i])
			}
		}
		return s
	}
	if hi == 0 || budget <= 0 {
		return hi
	}
	if spend(MinPrice) <= budget {
		return MinPrice
	}
	lo, up := math.Log(MinPrice), math.Log(hi)
	for range 200 {
		mid := (lo + up) / 2
		if spend(math.Exp(mid)) > budget {
			lo = mid
		} else {
			up = mid
		}
		if up-lo < 1e-12 {
			break
		}
	}
	return math.Exp(up)
}

// TestPriceAgreesWithBisection checks Price against bisection on
// populations shaped like a crawl's (rates over six orders of magnitude,
// weights over ten, some pages that never change or weigh nothing, some
// held by floors) and budgets from starved to lavish: the prices agree
// to 1e-11 relative and each spends the budget.
func TestPriceAgreesWithBisection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(500)
		lams, ws := make([]float64, n), make([]float64, n)
		var floors []float64
		if trial%3 == 0 {
			floors = make([]float64, n)
		}
		total := 0.0
		for i := range n {
			if r.IntN(10) > 0 {
				lams[i] = math.Pow(10, -4+6*r.Float64())
			}
			if r.IntN(20) > 0 {
				ws[i] = math.Pow(10, -10+10*r.Float64())
			}
			if floors != nil && r.IntN(4) == 0 {
				floors[i] = ws[i] / math.Max(lams[i], 1e-3) * r.Float64()
			}
			total += lams[i]
		}
		budget := total * math.Pow(10, -3+4*r.Float64())
		got, want := Price(lams, ws, floors, budget), bisectPrice(lams, ws, floors, budget)
		if !near(got, want, 1e-11*want) {
			t.Errorf("trial %d (%d pages, budget %g): price %g, bisection %g", trial, n, budget, got, want)
		}
	}
}

// BenchmarkPrice is one price over 65,536 pages (the manager's sample).
func BenchmarkPrice(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 1 << 16
	lams, ws := make([]float64, n), make([]float64, n)
	for i := range n {
		lams[i], ws[i] = math.Pow(10, -4+5*r.Float64()), math.Pow(10, -8+8*r.Float64())
	}
	for b.Loop() {
		Price(lams, ws, nil, float64(n)/7)
	}
}
