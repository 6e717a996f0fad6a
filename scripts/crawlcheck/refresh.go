package main

import (
	"math"
)

// This file is the refresh policies of Cho and Garcia-Molina ("Effective
// page refresh policies for Web crawlers", ACM TODS 28(4), 2003), which
// `crawlcheck freshness` compares a crawl with: a page that changes as a
// Poisson process of rate λ, revisited at regular intervals 1/f, is fresh
// on average for the share F(λ, f) = (f/λ)(1 − e^(−λ/f)) of the time
// (their equation for the freshness of a page, §4); the optimal policy
// for known rates maximises Σ F(λᵢ, fᵢ) subject to Σ fᵢ = budget (§5).

// expectedFreshness is F(λ, f): the time-averaged freshness of a page of
// change rate lam revisited every 1/f. A page that never changes (lam 0)
// is always fresh once fetched (1); a changing page never revisited (f 0)
// is never fresh in the long run (0).
func expectedFreshness(lam, f float64) float64 {
	if lam <= 0 {
		return 1
	}
	if f <= 0 {
		return 0
	}
	x := lam / f
	return -math.Expm1(-x) / x
}

// marginal is g(x) = 1 − (1 + x)e^(−x) for x = λ/f: λ ∂F/∂f. It rises
// from 0 (x = 0: f infinite) to 1 (x → ∞: f → 0), so ∂F/∂f falls from
// 1/λ to 0 as f grows and F is concave in f.
func marginal(x float64) float64 {
	if x < 1e-2 {
		// The series x²/2 − x³/3 + x⁴/8 − x⁵/30: the closed form
		// cancels to noise for small x.
		return x * x * (0.5 - x*(1.0/3-x*(1.0/8-x/30)))
	}
	return -math.Expm1(-x) - x*math.Exp(-x)
}

// rateAt returns the revisit rate f at which a page of change rate lam
// has ∂F/∂f = mu (the Lagrange condition of the optimum): 0 for a page
// that never changes, and 0 when lam ≥ 1/mu (a page changing too often
// to be worth any visit at that price); else f = lam/x with g(x) = mu·lam,
// x found by Newton's method kept inside a bracket (bisection when a step
// leaves it).
func rateAt(lam, mu float64) float64 {
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
	for marginal(hi) < c {
		lo, hi = hi, 2*hi
	}
	x := math.Min(math.Max(math.Sqrt(2*c), lo), hi)
	for range 100 {
		g := marginal(x) - c
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

// muFloor is the least price muFor looks at: there a page's rate (f ≈
// sqrt(λ/2μ)) exceeds any budget a crawl can spend. Above 1/λ a page gets
// no visit, so the highest price is 1/λ of the slowest changing page.
const muFloor = 1e-40

// muFor returns the price μ at which the pages of rates lams, each
// revisited at rateAt(λᵢ, max(μ, floors[i])) (floors nil: μ alone),
// together spend budget revisits per second: the Lagrange multiplier of
// max Σ F(λᵢ, fᵢ) subject to Σ fᵢ = budget, found by bisection on log μ
// (the spending falls as μ rises). A floor holds a page's price up, so
// that a group of pages (a site under a politeness cap) spends no more
// than its own optimum would at its floor. When even the least price
// spends no more than budget (every page held by its floor), muFor
// returns muFloor; with no changing page or a budget of 0 or less, the
// highest price (every rate 0).
func muFor(lams, floors []float64, budget float64) float64 {
	hi := 0.0
	for _, l := range lams {
		if l > 0 {
			hi = math.Max(hi, 1/l)
		}
	}
	if hi == 0 || budget <= 0 {
		return hi
	}
	spend := func(mu float64) float64 {
		s := 0.0
		for i, l := range lams {
			m := mu
			if floors != nil {
				m = math.Max(m, floors[i])
			}
			s += rateAt(l, m)
		}
		return s
	}
	if spend(muFloor) <= budget {
		return muFloor
	}
	lo, up := math.Log(muFloor), math.Log(hi)
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

// optimalRates returns the revisit rates that maximise Σ F(λᵢ, fᵢ) under
// Σ fᵢ = budget (Cho and Garcia-Molina's optimum for known rates).
func optimalRates(lams []float64, budget float64) []float64 {
	mu := muFor(lams, nil, budget)
	out := make([]float64, len(lams))
	for i, l := range lams {
		out[i] = rateAt(l, mu)
	}
	return out
}

// politeRates returns the optimum under caps: the same budget, with the
// pages of each group (a site, a politeness unit) revisited together no
// more than caps[group] times a second (0 or +Inf: no cap). The
// Lagrangian has a multiplier per capped group: a group whose
// unconstrained share would exceed its cap pays its own price μ_g (the
// price at which its pages spend exactly the cap), the others the common
// μ; μ_g does not depend on μ, so it is computed once per group and
// serves as the floor of its pages' price. If the caps together allow
// less than budget, every group is at its cap and the rest is unspent.
func politeRates(lams []float64, group []int, caps []float64, budget float64) []float64 {
	members := make([][]int, len(caps))
	for i, g := range group {
		members[g] = append(members[g], i)
	}
	floors := make([]float64, len(lams))
	for g, idx := range members {
		if c := caps[g]; c <= 0 || math.IsInf(c, 1) || len(idx) == 0 {
			continue
		}
		sub := make([]float64, len(idx))
		for k, i := range idx {
			sub[k] = lams[i]
		}
		mg := muFor(sub, nil, caps[g])
		for _, i := range idx {
			floors[i] = mg
		}
	}
	mu := muFor(lams, floors, budget)
	out := make([]float64, len(lams))
	for i, l := range lams {
		out[i] = rateAt(l, math.Max(mu, floors[i]))
	}
	return out
}

// meanFreshness is the mean of F(λᵢ, fᵢ) over the pages (0 for none).
func meanFreshness(lams, rates []float64) float64 {
	if len(lams) == 0 {
		return 0
	}
	s := 0.0
	for i, l := range lams {
		s += expectedFreshness(l, rates[i])
	}
	return s / float64(len(lams))
}
