package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// webTruth is what the timeline needs to know of the test web: the
// reachable allowed pages (normalised and kept in scope as the seeder
// would, as `crawlcheck coverage` counts them), their hosts and links,
// and the Crawl-delay of each host.
type webTruth struct {
	// pages are the normalised URLs, sorted; a page is its index.
	pages []string
	// index maps a normalised URL to its page.
	index map[string]int
	// host is the host name of each page.
	host []string
	// links are the out-links of each page among the reachable pages
	// (the Location of a redirect counts as one), without repeats.
	links [][]uint32
	// crawlDelay is the Crawl-delay of each host of a page (absent: none).
	crawlDelay map[string]time.Duration
	// port is the web's HTTP port, which the log's host names lack (0:
	// none in the URLs).
	port int
	// httpsPort is the web's TLS port (0: none, or not known).
	httpsPort int
	norm      *urlnorm.Normalizer
	// serverOf names the server that answers a host in the web's own
	// configuration (testweb.Web.ServerOf); nil in a truth built by hand,
	// where the request log's addresses stand for it (servers).
	serverOf func(host string) string
	// responseOf is how long the web makes a host wait before each
	// response (testweb.Web.ResponseTime), for a unit the log never
	// asked; nil in a truth built by hand.
	responseOf func(host string) time.Duration
}

// reachablePages returns the reachable allowed pages of the web from
// seeds, normalised and in scope for cfg, sorted: the pages `crawlcheck
// coverage` counts.
func reachablePages(web *testweb.Web, cfg config.Config, seeds []string) []string {
	norm := cfg.Scope.Normalizer()
	sc := scope.MustNew(cfg.Scope) // cfg is the defaults or passed config.Load (crawlConfig)
	seen := map[string]bool{}
	var out []string
	for _, u := range web.Reachable(seeds, cfg.Crawl.ProductToken) {
		n, err := norm.Normalize(u)
		if err != nil || sc.Check(n) != nil || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// buildTruth reads the truth of the web: the reachable pages, their links
// (rendering every page of the model once, in parallel) and the hosts'
// Crawl-delay (cut to harvester.max_crawl_delay, as the harvester cuts
// it).
func buildTruth(web *testweb.Web, cfg config.Config, seeds []string) (*webTruth, error) {
	t := newTruth(reachablePages(web, cfg, seeds), cfg.Scope.Normalizer(), web.Port())
	t.httpsPort = web.HTTPSPort()
	t.serverOf, t.responseOf = web.ServerOf, web.ResponseTime
	for _, h := range t.host {
		if _, done := t.crawlDelay[h]; done {
			continue
		}
		t.crawlDelay[h] = 0
		if s := web.CrawlDelay(h); s != "" {
			if secs, err := strconv.ParseFloat(s, 64); err == nil && secs > 0 {
				t.crawlDelay[h] = min(time.Duration(secs*float64(time.Second)), cfg.Harvester.MaxCrawlDelay.D())
			}
		}
	}
	err := web.ForEachPage(func(info testweb.PageInfo) error {
		n, err := t.norm.Normalize(info.URL)
		if err != nil {
			return nil
		}
		src, ok := t.index[n]
		if !ok {
			return nil
		}
		links := info.Links
		if info.Location != "" {
			links = append([]string{info.Location}, links...)
		}
		for _, l := range links {
			if d, ok := t.page(l); ok {
				t.links[src] = append(t.links[src], uint32(d))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("links of the web: %w", err)
	}
	for i := range t.links {
		t.links[i] = dedupe(t.links[i])
	}
	return t, nil
}

// newTruth makes a webTruth of the normalised, sorted pages, without links
// or Crawl-delays.
func newTruth(pages []string, norm *urlnorm.Normalizer, port int) *webTruth {
	t := &webTruth{pages: pages, index: make(map[string]int, len(pages)), host: make([]string, len(pages)),
		links: make([][]uint32, len(pages)), crawlDelay: map[string]time.Duration{}, port: port, norm: norm}
	hosts := map[string]string{}
	for i, p := range pages {
		t.index[p] = i
		h := ""
		if u, err := url.Parse(p); err == nil {
			h = u.Hostname()
		}
		if s, ok := hosts[h]; ok {
			h = s
		} else {
			hosts[h] = h
		}
		t.host[i] = h
	}
	return t
}

// page returns the page a URL names, after normalisation.
func (t *webTruth) page(raw string) (int, bool) {
	n, err := t.norm.Normalize(raw)
	if err != nil {
		return 0, false
	}
	i, ok := t.index[n]
	return i, ok
}

// logPage returns the page a request of the log asked for: the log has
// the host without the port and the request URI; over TLS the page is
// the https one.
func (t *webTruth) logPage(l requestLine) (int, bool) {
	if l.tls {
		origin := "https://" + l.host
		if t.httpsPort > 0 {
			origin += ":" + strconv.Itoa(t.httpsPort)
		}
		return t.page(origin + l.path)
	}
	origin := "http://" + l.host
	if t.port > 0 {
		origin += ":" + strconv.Itoa(t.port)
	}
	return t.page(origin + l.path)
}

// dedupe sorts v and removes repeats.
func dedupe(v []uint32) []uint32 {
	sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// timelineOptions are the settings of computeTimeline.
type timelineOptions struct {
	// start is time zero; end, when not zero, is when the run ended or
	// was stopped (coverage points after it are marked).
	start, end time.Time
	// rules are the harvester's politeness settings the polite bound
	// counts.
	rules serverRules
	// at are the times of the coverage points, from start.
	at []time.Duration
	// damping is the PageRank damping factor.
	damping float64
	// pages, when not nil, gets a line per reachable page (writePages).
	pages io.Writer
}

// Timeline is the crawl as its user feels it, measured from the test
// web's request log. Times are seconds from the start.
type Timeline struct {
	Start time.Time `json:"start"`
	// Wait, AddressWait and ConnectionsPerIP are the harvester settings
	// the polite bound counts (see serverRules).
	Wait             float64 `json:"wait_s"`
	AddressWait      float64 `json:"address_wait_s"`
	ConnectionsPerIP int     `json:"connections_per_ip"`
	// Reachable counts the reachable allowed pages, Hosts their hosts.
	Reachable int `json:"reachable"`
	Hosts     int `json:"hosts"`
	// Fetched counts the reachable pages with a response.
	Fetched int `json:"fetched"`
	// FetchedURLs counts the distinct host and path pairs with a
	// response, reachable or not (robots.txt, broken links ...).
	FetchedURLs int `json:"fetched_urls"`
	// Requests counts the lines of the log.
	Requests int `json:"requests"`
	// LastEnd is when the last request of the log ended.
	LastEnd float64 `json:"last_end_s"`
	// RunEnd is when the run ended or was stopped, if known.
	RunEnd *float64 `json:"run_end_s,omitempty"`
	// Quantiles are the times to 50, 90, 99 and 100 % of the reachable
	// pages.
	Quantiles []Quantile `json:"quantiles"`
	// Units and Addresses count the politeness units and addresses of
	// the reachable pages' hosts the polite bound serves.
	Units     int `json:"units"`
	Addresses int `json:"addresses"`
	// Coverage are the coverage points against the polite bound.
	Coverage []CoverageAt `json:"coverage"`
	// PageRank is the crawl order's sum of cumulative PageRank over the
	// sorted-PageRank bound's (1: the best order possible).
	PageRank float64 `json:"pagerank_ratio"`
	// PageRankByTime is the same by time: ∫ cumPR_crawl(t) dt over ∫
	// cumPR_sorted(n(t)) dt from the start to the last page fetched, n(t)
	// being the pages fetched by t (the sorted order at the crawl's own
	// pace).
	PageRankByTime float64 `json:"pagerank_ratio_by_time"`
	// Slowest is the host with the longest polite time of its own.
	Slowest SlowestHost `json:"slowest"`
}

// Quantile is the time to a share of the reachable pages.
type Quantile struct {
	Percent int `json:"percent"`
	// Pages is how many pages that share is (rounded up).
	Pages int `json:"pages"`
	// Seconds is nil when the crawl did not get there.
	Seconds *float64 `json:"seconds"`
}

// CoverageAt is the coverage at one time against the polite bound.
type CoverageAt struct {
	At float64 `json:"at_s"`
	// Fetched counts the reachable pages fetched by then.
	Fetched int `json:"fetched"`
	// Bound is the polite bound: the pages a crawler that never leaves a
	// server idle could have fetched by then, keeping every rule per
	// politeness unit and per address (see serverBound).
	Bound int `json:"bound"`
	// Coverage is Fetched/Reachable, BoundCoverage Bound/Reachable and
	// Ratio Fetched/Bound.
	Coverage      float64 `json:"coverage"`
	BoundCoverage float64 `json:"bound_coverage"`
	Ratio         float64 `json:"ratio"`
	// HostBound is the per-host bound the timeline gave before issue 34
	// (see politeBound), which ignores the units and the addresses;
	// HostRatio is Fetched/HostBound.
	HostBound int     `json:"host_bound"`
	HostRatio float64 `json:"host_ratio"`
	// AfterEnd marks a point after the run ended.
	AfterEnd bool `json:"after_end,omitempty"`
}

// SlowestHost is the host that needs the longest on its own.
type SlowestHost struct {
	Host string `json:"host"`
	// Pages are its reachable pages; Interval is the time one of its
	// requests takes politely: max(wait, Crawl-delay, median response
	// time); Seconds = Pages × Interval.
	Pages    int     `json:"pages"`
	Interval float64 `json:"interval_s"`
	Seconds  float64 `json:"seconds"`
}

// timelinePercents are the shares of the reachable pages timed.
var timelinePercents = [...]int{50, 90, 99, 100}

// computeTimeline measures a log against the web's truth. A reachable page
// counts as fetched at the end of its first request (in the log's arrival
// order) that got a response (status not 0).
func computeTimeline(ctx context.Context, t *webTruth, log []requestLine, o timelineOptions) (Timeline, error) {
	n := len(t.pages)
	tl := Timeline{Start: o.start, Wait: o.rules.wait.Seconds(), AddressWait: o.rules.addressWait.Seconds(),
		ConnectionsPerIP: o.rules.connectionsPerIP, Reachable: n, Requests: len(log)}
	if !o.end.IsZero() {
		e := o.end.Sub(o.start).Seconds()
		tl.RunEnd = &e
	}
	const never = time.Duration(math.MaxInt64)
	fetchedAt := make([]time.Duration, n)
	for i := range fetchedAt {
		fetchedAt[i] = never
	}
	seenURL := map[[2]string]bool{}
	durations := map[string][]time.Duration{}
	var last time.Time
	for _, l := range log {
		if l.end.After(last) {
			last = l.end
		}
		durations[l.host] = append(durations[l.host], l.duration())
		if l.status == 0 {
			continue
		}
		seenURL[[2]string{l.host, l.path}] = true
		if p, ok := t.logPage(l); ok && fetchedAt[p] == never {
			fetchedAt[p] = l.end.Sub(o.start)
			tl.Fetched++
		}
	}
	tl.FetchedURLs = len(seenURL)
	if !last.IsZero() {
		tl.LastEnd = last.Sub(o.start).Seconds()
	}

	// The crawl order: the fetched pages by fetch time.
	order := make([]int, 0, tl.Fetched)
	for p, at := range fetchedAt {
		if at != never {
			order = append(order, p)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return fetchedAt[order[a]] < fetchedAt[order[b]] })
	for _, pc := range timelinePercents {
		q := Quantile{Percent: pc, Pages: (pc*n + 99) / 100}
		if q.Pages <= len(order) && n > 0 {
			s := fetchedAt[order[max(q.Pages, 1)-1]].Seconds()
			q.Seconds = &s
		}
		tl.Quantiles = append(tl.Quantiles, q)
	}

	// Per host: reachable pages and the polite interval.
	pages := map[string]int{}
	for _, h := range t.host {
		pages[h]++
	}
	tl.Hosts = len(pages)
	interval := map[string]time.Duration{}
	for h, k := range pages {
		iv := max(o.rules.wait, t.crawlDelay[h], median(durations[h]))
		interval[h] = iv
		secs := float64(k) * iv.Seconds()
		if secs > tl.Slowest.Seconds || tl.Slowest.Host == "" || (secs == tl.Slowest.Seconds && h < tl.Slowest.Host) {
			tl.Slowest = SlowestHost{Host: h, Pages: k, Interval: iv.Seconds(), Seconds: secs}
		}
	}
	units := boundUnits(t, log, o.rules)
	tl.Units = len(units)
	addrs := map[string]bool{}
	for _, u := range units {
		addrs[u.addr] = true
	}
	tl.Addresses = len(addrs)
	bounds := serverBound(units, o.rules, o.at)
	for i, at := range o.at {
		c := CoverageAt{At: at.Seconds(), Bound: bounds[i], HostBound: politeBound(pages, interval, at)}
		for _, p := range order {
			if fetchedAt[p] > at {
				break
			}
			c.Fetched++
		}
		if n > 0 {
			c.Coverage = float64(c.Fetched) / float64(n)
			c.BoundCoverage = float64(c.Bound) / float64(n)
		}
		if c.Bound > 0 {
			c.Ratio = float64(c.Fetched) / float64(c.Bound)
		}
		if c.HostBound > 0 {
			c.HostRatio = float64(c.Fetched) / float64(c.HostBound)
		}
		c.AfterEnd = tl.RunEnd != nil && c.At > *tl.RunEnd
		tl.Coverage = append(tl.Coverage, c)
	}

	at := make([]time.Duration, len(order))
	for k, p := range order {
		at[k] = fetchedAt[p]
	}
	ratio, byTime, err := pageRankRatio(ctx, t, order, at, o.damping)
	if err != nil {
		return tl, err
	}
	tl.PageRank, tl.PageRankByTime = ratio, byTime
	if o.pages != nil {
		if err := writePages(ctx, o.pages, t, fetchedAt, never, o.damping); err != nil {
			return tl, err
		}
	}
	return tl, nil
}

// writePages writes, per reachable page in URL order, a tab-separated
// line: URL, host, PageRank (on the links among the reachable pages) and
// the seconds from the start to its first fetch ("-" if never fetched),
// under a header line: what two crawls' orders are compared with, page
// by page (which pages one fetched later than the other).
func writePages(ctx context.Context, w io.Writer, t *webTruth, fetchedAt []time.Duration, never time.Duration, damping float64) error {
	rank, err := reachableRank(ctx, t, damping)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "url\thost\tpagerank\tfetched_s")
	for p, u := range t.pages {
		at := "-"
		if fetchedAt[p] != never {
			at = strconv.FormatFloat(fetchedAt[p].Seconds(), 'f', 3, 64)
		}
		fmt.Fprintf(bw, "%s\t%s\t%.6g\t%s\n", u, t.host[p], rank[p], at)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write the pages' fetch times: %w", err)
	}
	return nil
}

// boundUnits groups the reachable pages' hosts into politeness units
// (servers: the names on one address that share a registrable domain,
// the address being the one the web serves the name from): each unit's
// pages, its response time (the median duration of the log's requests
// to its names; for a unit the log never asked, the web's own response
// time of its slowest name) and its gap (max(wait, the largest Crawl-delay of its
// names)). Sorted by unit.
func boundUnits(t *webTruth, log []requestLine, r serverRules) []boundUnit {
	srv := newServers(log, t.serverOf)
	durs := map[string][]time.Duration{}
	for _, l := range log {
		k := srv.unit(l.host)
		durs[k] = append(durs[k], l.duration())
	}
	byKey := map[string]*boundUnit{}
	var keys []string
	for _, h := range t.host {
		k := srv.unit(h)
		u, ok := byKey[k]
		if !ok {
			u = &boundUnit{addr: srv.address(h), resp: median(durs[k]), gap: r.wait}
			byKey[k] = u
			keys = append(keys, k)
		}
		if len(durs[k]) == 0 && t.responseOf != nil {
			u.resp = max(u.resp, t.responseOf(h)) // a unit the crawl never asked: the web's own time
		}
		u.pages++
		u.gap = max(u.gap, t.crawlDelay[h])
	}
	sort.Strings(keys)
	out := make([]boundUnit, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
}

// politeBound is the per-host bound of before issue 34: Σ over hosts of
// min(pages of the host, floor(at / interval of the host)), what a
// crawler could have fetched by then if every host were asked as often
// as politeness allows from time zero on, ignoring that names share a
// server (a unit) and servers an address. A host whose interval is 0
// counts all its pages.
func politeBound(pages map[string]int, interval map[string]time.Duration, at time.Duration) int {
	b := 0
	for h, k := range pages {
		iv := interval[h]
		if iv <= 0 {
			b += k
			continue
		}
		b += int(min(int64(k), int64(at/iv)))
	}
	return b
}

// median returns the median of d (the mean of the two middle values for
// an even count), 0 for none. It sorts d.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	m := len(d) / 2
	if len(d)%2 == 1 {
		return d[m]
	}
	return d[m-1] + (d[m]-d[m-1])/2
}

// pageRankRatio is Σ_{k=1..N} cumPR_crawl(k) / Σ_{k=1..N} cumPR_sorted(k)
// over the N reachable pages: cumPR_crawl(k) is the PageRank of the first
// k pages of the crawl order (pages never fetched adding nothing),
// cumPR_sorted(k) that of the k pages of highest PageRank. PageRank is
// computed on the link graph of the reachable pages. The second result
// weighs each k by the time the crawl held k pages (at[k] is when the
// k-th page of order was fetched, ascending): the ratio by time, from
// time zero to the last page fetched.
func pageRankRatio(ctx context.Context, t *webTruth, order []int, at []time.Duration, damping float64) (float64, float64, error) {
	n := len(t.pages)
	if n == 0 {
		return 0, 0, nil
	}
	rank, err := reachableRank(ctx, t, damping)
	if err != nil {
		return 0, 0, err
	}
	sorted := append([]float64(nil), rank...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	var cumCrawl, cumSorted, sumCrawl, sumSorted, timeCrawl, timeSorted float64
	for k := 0; k < n; k++ {
		if k < len(order) {
			cumCrawl += rank[order[k]]
		}
		cumSorted += sorted[k]
		sumCrawl += cumCrawl
		sumSorted += cumSorted
		if k+1 < len(order) {
			// k+1 pages held from at[k] to at[k+1].
			dt := (at[k+1] - at[k]).Seconds()
			timeCrawl += cumCrawl * dt
			timeSorted += cumSorted * dt
		}
	}
	var byOrder, byTime float64
	if sumSorted > 0 {
		byOrder = sumCrawl / sumSorted
	}
	if timeSorted > 0 {
		byTime = timeCrawl / timeSorted
	}
	return byOrder, byTime, nil
}

// Print writes the timeline as text.
func (tl Timeline) Print(w io.Writer) {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	fmt.Fprintf(w, "timeline: %d reachable allowed pages on %d hosts, %d fetched (%.1f%%); %d URLs fetched in all, %d requests; the last request ended %.1f s after the start",
		tl.Reachable, tl.Hosts, tl.Fetched, pct(tl.Fetched, tl.Reachable), tl.FetchedURLs, tl.Requests, tl.LastEnd)
	if tl.RunEnd != nil {
		fmt.Fprintf(w, ", the run ended at %.1f s", *tl.RunEnd)
	}
	fmt.Fprintln(w)
	for _, q := range tl.Quantiles {
		fmt.Fprintf(w, "  time to %3d%% (%d pages): %s\n", q.Percent, q.Pages, seconds(q.Seconds))
	}
	for _, c := range tl.Coverage {
		note := ""
		if c.AfterEnd {
			note = " (after the run ended)"
		}
		fmt.Fprintf(w, "  at %6.0f s: %d pages fetched (%.1f%%), polite bound %d (%.1f%%): coverage/bound %.3f; per-host bound %d: %.3f%s\n",
			c.At, c.Fetched, 100*c.Coverage, c.Bound, 100*c.BoundCoverage, c.Ratio, c.HostBound, c.HostRatio, note)
	}
	if len(tl.Coverage) > 0 {
		fmt.Fprintf(w, "  polite bound: %d units on %d addresses; per unit one request at a time, max(wait %s, Crawl-delay) after each end; per address at most %d in flight (0: no cap), starts %s apart\n",
			tl.Units, tl.Addresses, secondsDur(tl.Wait), tl.ConnectionsPerIP, secondsDur(tl.AddressWait))
	}
	fmt.Fprintf(w, "  cumulative PageRank of the crawl order / of the sorted-PageRank order: %.3f by page order, %.3f by time\n", tl.PageRank, tl.PageRankByTime)
	fmt.Fprintf(w, "  slowest host alone: %s, %d pages x %.3f s = %.1f s (interval max(wait %s, Crawl-delay, median response time))\n",
		tl.Slowest.Host, tl.Slowest.Pages, tl.Slowest.Interval, tl.Slowest.Seconds, secondsDur(tl.Wait))
}

// secondsDur is a time in seconds as a duration.
func secondsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// seconds renders a time that may not have been reached.
func seconds(s *float64) string {
	if s == nil {
		return "not reached"
	}
	return fmt.Sprintf("%.1f s", *s)
}

// parseDurations parses a comma-separated list of durations ("60s,2m").
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("duration %q: want a non-negative Go duration such as 60s", f)
		}
		out = append(out, d)
	}
	return out, nil
}
