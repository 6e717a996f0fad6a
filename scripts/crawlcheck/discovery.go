package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Discovery splits the time the crawl took to fetch each reachable page
// into the time until the page was found (discovery), the time its
// server's rules held it back once found (politeness) and the rest (value
// order: the crawler fetched other pages first). Times are seconds from
// the start. See computeDiscovery for the definitions.
type Discovery struct {
	Start time.Time `json:"start"`
	// Wait, AddressWait and ConnectionsPerIP are the rules the politeness
	// part counts.
	Wait             float64 `json:"wait_s"`
	AddressWait      float64 `json:"address_wait_s"`
	ConnectionsPerIP int     `json:"connections_per_ip"`
	// SeedsAt is when the seeds count as found: the first request's
	// start.
	SeedsAt float64 `json:"seeds_at_s"`
	// Reachable counts the reachable allowed pages, Seeds those among
	// the seed URLs.
	Reachable int `json:"reachable"`
	Seeds     int `json:"seeds"`
	// Found counts the reachable pages found (seeds, and pages linked
	// from a page with a successful request); Fetched those with a
	// successful request; FoundNotFetched those found and never fetched.
	Found           int `json:"found"`
	Fetched         int `json:"fetched"`
	FoundNotFetched int `json:"found_not_fetched"`
	// FetchedUnfound counts the pages fetched before any page linking to
	// them was (by a link the truth does not hold, or a sitemap): they
	// are left out of the split.
	FetchedUnfound int `json:"fetched_unfound"`
	// Pages counts the pages of the split: found, and fetched at or after.
	Pages int `json:"pages"`
	// Median and P90 are of fetched − found over those pages.
	Median float64 `json:"median_s"`
	P90    float64 `json:"p90_s"`
	// Total is Σ (fetched − start) over the split's pages; Discovery Σ
	// (found − start), Politeness Σ politeness part and ValueOrder Σ
	// (fetched − found − politeness part): Total is their sum.
	Total      float64 `json:"total_s"`
	Discovery  float64 `json:"discovery_s"`
	Politeness float64 `json:"politeness_s"`
	ValueOrder float64 `json:"value_order_s"`
	// The shares of Total.
	DiscoveryShare  float64 `json:"discovery_share"`
	PolitenessShare float64 `json:"politeness_share"`
	ValueOrderShare float64 `json:"value_order_share"`
	// ByDepth is the median of fetched − found per link depth from the
	// seeds (in the web's truth).
	ByDepth []DepthDelay `json:"by_depth"`
}

// DepthDelay is the delay from found to fetched of the split's pages at
// one link depth.
type DepthDelay struct {
	Depth  int     `json:"depth"`
	Pages  int     `json:"pages"`
	Median float64 `json:"median_s"`
	P90    float64 `json:"p90_s"`
}

// okStatus tells whether a status is a successful fetch: 2xx, or 3xx (a
// redirect, whose Location the truth holds as its one link).
func okStatus(s int) bool { return s >= 200 && s < 400 }

// computeDiscovery measures, for every reachable page p of the truth:
//
//   - fetched(p): the start of its first successful request (2xx or 3xx)
//     in the log;
//   - found(p): the end of the first successful request of the first
//     page linking to p (a link of the web's truth, a redirect's Location
//     included) to end; a seed (seeds are page indexes) is found at the
//     first request's start;
//   - allowed(p): earliestAllowed from found(p) on p's unit and address
//     (by the log's address of p's host name), with gap max(wait, the
//     largest Crawl-delay of the unit's names among the truth's hosts);
//
// and over the pages found and fetched no earlier than found: delay =
// fetched − found, politeness part = max(0, min(allowed, fetched) −
// found), value order = delay − politeness part, discovery = found −
// start.
func computeDiscovery(t *webTruth, log []requestLine, seeds []int, start time.Time, r serverRules) Discovery {
	n := len(t.pages)
	d := Discovery{Start: start, Wait: r.wait.Seconds(), AddressWait: r.addressWait.Seconds(), ConnectionsPerIP: r.connectionsPerIP, Reachable: n}
	const never = time.Duration(math.MaxInt64)
	okStart, okEnd := make([]time.Duration, n), make([]time.Duration, n)
	for i := range okStart {
		okStart[i], okEnd[i] = never, never
	}
	srv := newServers(log, t.serverOf)
	units, addrs := map[string]*reqSeq{}, map[string]*reqSeq{}
	seedsAt := never
	for _, l := range log {
		s, e := l.start.Sub(start), l.end.Sub(start)
		seedsAt = min(seedsAt, s)
		u := units[srv.unit(l.host)]
		if u == nil {
			u = &reqSeq{}
			units[srv.unit(l.host)] = u
		}
		u.add(s, e)
		if l.addr != "" {
			a := addrs[l.addr]
			if a == nil {
				a = &reqSeq{}
				addrs[l.addr] = a
			}
			a.add(s, e)
		}
		if !okStatus(l.status) {
			continue
		}
		if p, ok := t.logPage(l); ok && s < okStart[p] {
			okStart[p], okEnd[p] = s, e
		}
	}
	for _, q := range units {
		q.sort()
	}
	for _, q := range addrs {
		q.sort()
	}
	if seedsAt == never {
		seedsAt = 0
	}
	d.SeedsAt = seedsAt.Seconds()

	found := make([]time.Duration, n)
	for i := range found {
		found[i] = never
	}
	for _, s := range seeds {
		if found[s] == never {
			d.Seeds++
		}
		found[s] = seedsAt
	}
	for q, links := range t.links {
		if okEnd[q] == never {
			continue
		}
		for _, p := range links {
			found[p] = min(found[p], okEnd[q])
		}
	}

	// The unit's gap: max(wait, the largest Crawl-delay of its names).
	gap := map[string]time.Duration{}
	for h, cd := range t.crawlDelay {
		k := srv.unit(h)
		gap[k] = max(gap[k], r.wait, cd)
	}
	depth := linkDepths(t, seeds)
	var delays []time.Duration
	byDepth := map[int][]time.Duration{}
	var total, disc, pol time.Duration
	for p := 0; p < n; p++ {
		if found[p] != never {
			d.Found++
		}
		if okStart[p] == never {
			if found[p] != never {
				d.FoundNotFetched++
			}
			continue
		}
		d.Fetched++
		if found[p] > okStart[p] {
			d.FetchedUnfound++
			continue
		}
		d.Pages++
		f, fe := found[p], okStart[p]
		k := srv.unit(t.host[p])
		g, ok := gap[k]
		if !ok {
			g = r.wait
		}
		var addr *reqSeq
		if a := srv.addr[t.host[p]]; a != "" {
			addr = addrs[a]
		}
		allowed := earliestAllowed(f, units[k], addr, g, r)
		total += fe
		disc += f
		pol += max(0, min(allowed, fe)-f)
		delays = append(delays, fe-f)
		if depth[p] >= 0 {
			byDepth[depth[p]] = append(byDepth[depth[p]], fe-f)
		}
	}
	d.Median, d.P90 = median(delays).Seconds(), percentile(delays, 90).Seconds()
	d.Total, d.Discovery, d.Politeness = total.Seconds(), disc.Seconds(), pol.Seconds()
	d.ValueOrder = (total - disc - pol).Seconds()
	if total > 0 {
		d.DiscoveryShare, d.PolitenessShare, d.ValueOrderShare = d.Discovery/d.Total, d.Politeness/d.Total, d.ValueOrder/d.Total
	}
	var ds []int
	for k := range byDepth {
		ds = append(ds, k)
	}
	sort.Ints(ds)
	for _, k := range ds {
		v := byDepth[k]
		d.ByDepth = append(d.ByDepth, DepthDelay{Depth: k, Pages: len(v), Median: median(v).Seconds(), P90: percentile(v, 90).Seconds()})
	}
	return d
}

// linkDepths is each page's link distance from the seeds in the truth
// (-1: not reached by links).
func linkDepths(t *webTruth, seeds []int) []int {
	depth := make([]int, len(t.pages))
	for i := range depth {
		depth[i] = -1
	}
	var level []int
	for _, s := range seeds {
		if depth[s] < 0 {
			depth[s] = 0
			level = append(level, s)
		}
	}
	for k := 1; len(level) > 0; k++ {
		var next []int
		for _, q := range level {
			for _, p := range t.links[q] {
				if depth[p] < 0 {
					depth[p] = k
					next = append(next, int(p))
				}
			}
		}
		level = next
	}
	return depth
}

// percentile returns the nearest-rank pc-th percentile of d, 0 for none.
// It sorts d.
func percentile(d []time.Duration, pc int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	k := (pc*len(d) + 99) / 100
	return d[max(k, 1)-1]
}

// seedPages returns the reachable pages among the seed URLs.
func seedPages(t *webTruth, seeds []string) []int {
	var out []int
	for _, s := range seeds {
		if p, ok := t.page(s); ok {
			out = append(out, p)
		}
	}
	return out
}

// Print writes the split as text.
func (d Discovery) Print(w io.Writer) {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Fprintf(w, "discovery: %d reachable allowed pages, %d found (%.1f%%; %d seeds, found at %.1f s), %d fetched (%.1f%%); %d found and not fetched, %d fetched before a page linking to them (left out)\n",
		d.Reachable, d.Found, pct(d.Found, d.Reachable), d.Seeds, d.SeedsAt, d.Fetched, pct(d.Fetched, d.Reachable), d.FoundNotFetched, d.FetchedUnfound)
	fmt.Fprintf(w, "  found to fetched, over %d pages: median %.2f s, p90 %.2f s (target: median <= 3 s at wait 0)\n", d.Pages, d.Median, d.P90)
	fmt.Fprintf(w, "  summed from the start to fetched: %.1f s = discovery %.1f s (%.1f%%) + politeness %.1f s (%.1f%%) + value order %.1f s (%.1f%%)\n",
		d.Total, d.Discovery, 100*d.DiscoveryShare, d.Politeness, 100*d.PolitenessShare, d.ValueOrder, 100*d.ValueOrderShare)
	fmt.Fprintf(w, "  rules: wait %s (or the unit's Crawl-delay), address_wait %s, connections_per_ip %d (0: no cap)\n",
		secondsDur(d.Wait), secondsDur(d.AddressWait), d.ConnectionsPerIP)
	if len(d.ByDepth) > 0 {
		var b strings.Builder
		for i, x := range d.ByDepth {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d: %.2f s (%d)", x.Depth, x.Median, x.Pages)
		}
		fmt.Fprintf(w, "  median found to fetched by link depth (pages): %s\n", b.String())
	}
}
