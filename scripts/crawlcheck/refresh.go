package main

import (
	"math"

	"github.com/wirecrawl/wire/pkg/refresh"
)

// This file is the refresh policies of Cho and Garcia-Molina ("Effective
// page refresh policies for Web crawlers", ACM TODS 28(4), 2003), which
// `crawlcheck freshness` compares a crawl with: a page that changes as a
// Poisson process of rate λ, revisited at regular intervals 1/f, is fresh
// on average for the share F(λ, f) = (f/λ)(1 − e^(−λ/f)) of the time
// (their equation for the freshness of a page, §4); the optimal policy
// for known rates maximises Σ F(λᵢ, fᵢ) subject to Σ fᵢ = budget (§5).

// optimalRates returns the revisit rates that maximise Σ F(λᵢ, fᵢ) under
// Σ fᵢ = budget (Cho and Garcia-Molina's optimum for known rates).
func optimalRates(lams []float64, budget float64) []float64 {
	mu := refresh.Price(lams, nil, nil, budget)
	out := make([]float64, len(lams))
	for i, l := range lams {
		out[i] = refresh.Rate(l, mu)
	}
	return out
}

// politeRates returns the optimum under caps: the same budget, with the
// pages of each group (a site, a politeness unit) revisited together no
// more than caps[group] times a second, and the groups of each address
// (addrOf[group], nil: no addresses) together no more than
// addrCaps[address] (0 or +Inf: no cap). The Lagrangian has a
// multiplier per capped group: a group whose unconstrained share would
// exceed its cap pays its own price μ_g (the price at which its pages
// spend exactly the cap), the others the common μ; μ_g does not depend
// on μ, so it is computed once per group and serves as the floor of its
// pages' price. An address is the same one level up: the price at which
// its pages, each at least at its group's floor, spend exactly its cap
// raises the floors of all of them. If the caps together allow less than
// budget, every group is at its cap and the rest is unspent.
func politeRates(lams []float64, group []int, caps []float64, addrOf []int, addrCaps []float64, budget float64) []float64 {
	capped := func(c float64) bool { return c > 0 && !math.IsInf(c, 1) }
	members := make([][]int, len(caps))
	for i, g := range group {
		members[g] = append(members[g], i)
	}
	floors := make([]float64, len(lams))
	for g, idx := range members {
		if !capped(caps[g]) || len(idx) == 0 {
			continue
		}
		sub := make([]float64, len(idx))
		for k, i := range idx {
			sub[k] = lams[i]
		}
		mg := refresh.Price(sub, nil, nil, caps[g])
		for _, i := range idx {
			floors[i] = mg
		}
	}
	if addrOf != nil {
		pages := make([][]int, len(addrCaps))
		for i, g := range group {
			a := addrOf[g]
			pages[a] = append(pages[a], i)
		}
		for a, idx := range pages {
			if !capped(addrCaps[a]) || len(idx) == 0 {
				continue
			}
			sub, fl := make([]float64, len(idx)), make([]float64, len(idx))
			for k, i := range idx {
				sub[k], fl[k] = lams[i], floors[i]
			}
			ma := refresh.Price(sub, nil, fl, addrCaps[a])
			for _, i := range idx {
				floors[i] = math.Max(floors[i], ma)
			}
		}
	}
	mu := refresh.Price(lams, nil, floors, budget)
	out := make([]float64, len(lams))
	for i, l := range lams {
		out[i] = refresh.Rate(l, math.Max(mu, floors[i]))
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
		s += refresh.Freshness(l, rates[i])
	}
	return s / float64(len(lams))
}
