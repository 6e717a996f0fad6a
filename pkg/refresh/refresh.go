// Package refresh is the refresh policy of Cho and Garcia-Molina
// ("Effective page refresh policies for Web crawlers", ACM TODS 28(4),
// 2003): a page that changes as a Poisson process of rate λ, revisited at
// regular intervals 1/f, is fresh on average for the share F(λ, f) =
// (f/λ)(1 − e^(−λ/f)) of the time (their §4); the optimal policy for
// known rates maximises Σ wᵢ·F(λᵢ, fᵢ) subject to Σ fᵢ = budget (§5),
// where wᵢ is the page's weight (its value). The manager allocates its
// revisits with it (docs/manager.md, "Revisits"), and `crawlcheck
// freshness` compares a crawl with it (docs/results.md). Rates and
// budgets are in any one unit of time, the same for all.
package refresh

import "math"

// Freshness is F(λ, f): the time-averaged freshness of a page of
// change rate lam revisited every 1/f. A page that never changes (lam 0)
// is always fresh once fetched (1); a changing page never revisited (f 0)
// is never fresh in the long run (0).
func Freshness(lam, f float64) float64 {
	if lam <= 0 {
		return 1
	}
	if f <= 0 {
		return 0
	}
	x := lam / f
	return -math.Expm1(-x) / x
}

// Marginal is g(x) = 1 − (1 + x)e^(−x) for x = λ/f: λ ∂F/∂f. It rises
// from 0 (x = 0: f infinite) to 1 (x → ∞: f → 0), so ∂F/∂f falls from
// 1/λ to 0 as f grows and F is concave in f.
func Marginal(x float64) float64 {
	if x < 1e-2 {
		// The series x²/2 − x³/3 + x⁴/8 − x⁵/30: the closed form
		// cancels to noise for small x.
		return x * x * (0.5 - x*(1.0/3-x*(1.0/8-x/30)))
	}
	return -math.Expm1(-x) - x*math.Exp(-x)
}

// Rate returns the revisit rate f at which a page of change rate lam
// has ∂F/∂f = mu (the Lagrange condition of the optimum): 0 for a page
// that never changes, and 0 when lam ≥ 1/mu (a page changing too often
// to be worth any visit at that price); else f = lam/x with g(x) = mu·lam,
// x found by Newton's method kept inside a bracket (bisection when a step
// leaves it).
func Rate(lam, mu float64) float64 {
	if lam <= 0 {
		return 0
	}
	c := mu * lam
	if c >= 1 {
		return 0
	}
	if c <= 0 {
		return math.Inf(1)
	}
	// g(x) ≈ x²/2 near 0, and g(x) ≥ c once (1 + x)e^(−x) ≤ 1 − c.
	lo, hi := 0.0, 1.0
	for Marginal(hi) < c {
		lo, hi = hi, 2*hi
	}
	x := math.Min(math.Max(math.Sqrt(2*c), lo), hi)
	for range 100 {
		g := Marginal(x) - c
		if g == 0 {
			break
		}
		if g > 0 {
			hi = x
		} else {
			lo = x
		}
		next := x - g/(x*math.Exp(-x))
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-x) <= 1e-14*x {
			x = next
			break
		}
		x = next
	}
	return lam / x
}

// MinPrice is the least price Price looks at: there a page's rate (f ≈
// sqrt(λ/2μ)) exceeds any budget a crawl can spend. Above w/λ a page of
// weight w gets no visit, so the highest price is w/λ of the page with
// the largest.
const MinPrice = 1e-40

// Price returns the price μ at which the pages of rates lams and weights
// weights (nil: all 1), each revisited at Rate(λᵢ, max(μ, floors[i])/wᵢ)
// (floors nil: μ alone), together spend budget revisits per unit of
// time: the Lagrange multiplier of max Σ wᵢ·F(λᵢ, fᵢ) subject to Σ fᵢ =
// budget (Cho and Garcia-Molina §5: ∂F/∂fᵢ = μ/wᵢ). A floor holds a
// page's price up, so that a group of pages (a site under a politeness
// cap) spends no more than its own optimum would at its floor. When even
// the least price spends no more than budget (every page held by its
// floor), Price returns MinPrice; with no changing page of positive
// weight or a budget of 0 or less, the highest price (every rate 0).
//
// The spending falls as μ rises; the root is bracketed in log μ and
// found by the Illinois method (regula falsi on log spending − log
// budget, which is nearly linear in log μ: a page's rate goes as
// μ^(−½) at low prices), falling back to bisection where that does not
// narrow the bracket, until the bracket is narrower than 1e-12 in log
// μ; the upper end is returned. Each step evaluates the spending once,
// over every page, so the method's 10–20 steps, against bisection's
// 45–50 from the whole range, are most of the cost saved.
func Price(lams, weights, floors []float64, budget float64) float64 {
	weight := func(i int) float64 {
		if weights == nil {
			return 1
		}
		return weights[i]
	}
	hi := 0.0
	for i, l := range lams {
		if w := weight(i); l > 0 && w > 0 {
			hi = math.Max(hi, w/l)
		}
	}
	if hi == 0 || budget <= 0 {
		return hi
	}
	spend := func(mu float64) float64 {
		s := 0.0
		for i, l := range lams {
			w := weight(i)
			if w <= 0 {
				continue
			}
			m := mu
			if floors != nil {
				m = math.Max(m, floors[i])
			}
			s += Rate(l, m/w)
		}
		return s
	}
	s := spend(MinPrice)
	if s <= budget {
		return MinPrice
	}
	// lo spends more than budget, up no more; fLo and fUp are log
	// spending − log budget there (−Inf where nothing is spent).
	lb := math.Log(budget)
	lo, up := math.Log(MinPrice), math.Log(hi)
	fLo, fUp := math.Log(s)-lb, math.Inf(-1)
	const tol = 1e-12
	side, slow := 0, 0
	mark := up - lo // the bracket's width when it last halved
	for range 400 {
		if up-lo < tol {
			break
		}
		t := (lo + up) / 2
		if slow < 2 && !math.IsInf(fUp, 0) && fLo > fUp {
			if x := lo + fLo*(up-lo)/(fLo-fUp); x >= lo && x <= up {
				// At least half the tolerance inside the bracket, so
				// that a step landing on the root from one side closes
				// the bracket from the other at the next.
				t = min(max(x, lo+tol/2), up-tol/2)
			}
		}
		s := spend(math.Exp(t))
		if s > budget {
			lo, fLo = t, math.Log(s)-lb
			if side > 0 {
				fUp /= 2 // Illinois: an end kept twice counts half
			}
			side = 1
		} else {
			up, fUp = t, math.Log(s)-lb
			if side < 0 {
				fLo /= 2
			}
			side = -1
		}
		// Two steps that did not halve the bracket between them: the
		// next is a bisection.
		if up-lo <= mark/2 {
			mark, slow = up-lo, 0
		} else {
			slow++
		}
	}
	return math.Exp(up)
}
