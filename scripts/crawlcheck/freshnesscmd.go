package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
	"github.com/wirecrawl/wire/pkg/pagerank"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// freshnessCommand is `crawlcheck freshness`.
func freshnessCommand() *cli.Command {
	return &cli.Command{
		Name:  "freshness",
		Usage: "how fresh a recrawl kept the changing test web, against the refresh policies of Cho and Garcia-Molina",
		Description: `Reads the request log of scripts/testweb --log and the truth of a
changing web (--web from testweb --change --config-out, --seeds): the
reachable allowed pages that answer 200, each page's change times
(Web.ChangeTimes) and mean change interval, its site's validator policy.
Replaying the log, a 200 stores the version live when the request started,
a 304 keeps the stored copy, any other answer leaves it as it was. Over the
window [--window-start, --window-end] it prints, for all the pages and for
those fetched before the window ("known"), and for the known ones by
validator policy (honest, none, lying):

  - freshness: the time-averaged share of the pages whose stored copy is
    the live version, (1/W) ∫ (1/N) Σ fresh_i(t) dt; weighted: the same
    with each page weighted by its PageRank (damping 0.85 on the links
    among the reachable pages);
  - mean age: (1/W) ∫ (1/N) Σ age_i(t) dt, age_i(t) = 0 while the copy is
    live, else t minus the time the stored version stopped being live (a
    page never fetched counts from the web's time origin);
  - budget: the responses (200 or 304) the crawl got for those pages in
    the window; and the expected freshness of the same budget, B/W
    fetches a second, under four policies, with F(λ, f) = (f/λ)(1 −
    e^(−λ/f)) the freshness of a page changing at the Poisson rate λ
    (1/its mean change interval) revisited every 1/f (Cho and
    Garcia-Molina, "Effective page refresh policies for Web crawlers",
    ACM TODS 2003):
      uniform:  every page at f = B/(W·N);
      optimal:  max Σ F(λ_i, f_i) subject to Σ f_i = B/W (the Lagrange
                condition ∂F/∂f_i = μ, solved by bisection on μ; a page
                with λ ≥ 1/μ gets no visit);
      per_site: the same within each site (host) on the site's own share,
                its fetches in the window over W;
      polite:   the optimum with no politeness unit (the host names on
                one address that share a registrable domain) revisited
                more often than 1/max(wait, its largest Crawl-delay, the
                median response time of its requests in the log), and
                no address more often than 1/address_wait nor than
                connections_per_ip times its fastest unit's rate.

With --collection it also reads the manager's change-rate estimates
(manager.ChangeEstimates, as its next run would compute them) and checks
them against the true rates, for the pages visited 8 times or more
(estimated/true quantiles, the share within a factor of 2, by validator
policy), and it simulates Nutch's adaptive fetch schedule on the known
pages with the same budget (interval ×1.4 after an unchanged fetch, ×0.8
after a changed one, between 60 s and a year, from 30 days, all times the
collection's manager.time_scale; the most overdue page first at each of
the budget's fetches spread evenly over the window), and again from the
crawl's min_revisit.

It also counts the fetches in the window (those that found a new version,
first fetches, unchanged pages fetched whole, 304s) and the revisits to
honest sites (requests for a page with a stored copy) that were
conditional (the log's cond field: If-None-Match or If-Modified-Since).

--window-start is a time (RFC 3339) or N% (when the crawl had fetched N %
of the reachable pages, a page counting at the end of its first request
that got a response, as crawlcheck timeline counts it); --window-end a
time (default: the end of the log's last request). Seconds in the report
are from --start (default: the start of the log's first request).
--targets adds issue 35's targets: over the known pages, freshness at
least 0.95 of the polite optimum and at least 0.77; PageRank-weighted at
least plain; sites without validators or lying ones at least 0.8 of
honest ones, honest ones at least 0.64; at least 95 % of the revisits to
honest sites conditional; the estimator within 2x of the truth for at
least 80 % of the changing pages visited 8 times or more.`,
		Flags: append(append(webFlags(),
			&cli.StringFlag{Name: "log", Required: true, Usage: "request log (TSV) of testweb --log"},
			&cli.StringFlag{Name: "window-start", Required: true, Usage: "start of the window: RFC 3339 time, or N% (when the crawl reached N % of the reachable pages)"},
			&cli.TimestampFlag{Name: "window-end", Layout: time.RFC3339Nano, Usage: "end of the window, RFC 3339 (default: the end of the log's last request)"},
			&cli.TimestampFlag{Name: "start", Layout: time.RFC3339Nano, Usage: "time zero of the report's seconds, RFC 3339 (default: the log's first request)"},
			&cli.BoolFlag{Name: "targets", Usage: "after the text report, print issue 35's targets with their verdicts"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"},
			&cli.StringFlag{Name: "json-out", Usage: "also write the JSON to this file"},
		), serverRuleFlags()...),
		Action: func(c *cli.Context) error {
			web, cfg, seeds, err := loadCrawl(c)
			if err != nil {
				return err
			}
			rules, err := rulesOf(c, cfg)
			if err != nil {
				return err
			}
			log, err := readRequestLogFile(c.String("log"))
			if err != nil {
				return err
			}
			if len(log) == 0 {
				return fmt.Errorf("request log %s: no requests", c.String("log"))
			}
			truth, err := buildTruth(web, cfg, seeds)
			if err != nil {
				return err
			}
			var o freshnessOptions
			o.start = log[0].start
			if s := c.Timestamp("start"); s != nil {
				o.start = *s
			}
			for _, l := range log {
				if l.end.After(o.end) {
					o.end = l.end
				}
			}
			if e := c.Timestamp("window-end"); e != nil {
				o.end = *e
			}
			if o.windowStart, err = windowStart(c.String("window-start"), truth, log); err != nil {
				return err
			}
			if !o.windowStart.Before(o.end) {
				return command.Usage("--window-start %s is not before the window's end %s",
					o.windowStart.Format(time.RFC3339Nano), o.end.Format(time.RFC3339Nano))
			}
			o.rules = rules
			o.scale, o.minRevisit = cfg.Manager.TimeScale, cfg.Manager.Revisit().Seconds()
			f, err := measureFreshness(c.Context, web, truth, log, o)
			if err != nil {
				return err
			}
			if dir := c.String("collection"); dir != "" {
				if f.Estimator, err = estimatorCheck(c.Context, dir, &cfg.Manager, web, truth); err != nil {
					return err
				}
			}
			print := f.Print
			if c.Bool("targets") {
				print = func(w io.Writer) {
					f.Print(w)
					f.PrintTargets(w)
				}
			}
			return writeReport(c, "freshness", f, print)
		},
	}
}

// windowStart reads --window-start: an RFC 3339 time, or N% for the
// moment the crawl had fetched N % of the reachable pages.
func windowStart(s string, t *webTruth, log []requestLine) (time.Time, error) {
	if pc, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.ParseFloat(pc, 64)
		if err != nil || !(p > 0 && p <= 100) {
			return time.Time{}, command.Usage("--window-start %q: want a share from 0 (excluded) to 100%%", s)
		}
		first := make([]time.Time, len(t.pages))
		var ends []time.Time
		for _, l := range log {
			if l.status == 0 {
				continue
			}
			if i, ok := t.logPage(l); ok && first[i].IsZero() {
				first[i] = l.end
				ends = append(ends, l.end)
			}
		}
		sort.Slice(ends, func(a, b int) bool { return ends[a].Before(ends[b]) })
		need := int(math.Ceil(p / 100 * float64(len(t.pages))))
		if need < 1 || need > len(ends) {
			return time.Time{}, fmt.Errorf("--window-start %s: the crawl fetched %d of the %d reachable pages, never %s", s, len(ends), len(t.pages), s)
		}
		return ends[need-1], nil
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, command.Usage("--window-start %q: want an RFC 3339 time or N%%", s)
	}
	return ts, nil
}

// freshnessOptions are the settings of measureFreshness.
type freshnessOptions struct {
	// start is time zero of the report; the window is [windowStart, end].
	start, windowStart, end time.Time
	rules                   serverRules
	// scale is the crawl's manager.time_scale and minRevisit its
	// min_revisit at that scale, seconds (the Nutch schedule's).
	scale, minRevisit float64
}

// measureFreshness builds the freshness input from the web's truth and
// the log, and measures it. Times inside are seconds from the web's
// origin; the report's from o.start.
func measureFreshness(ctx context.Context, web *testweb.Web, t *webTruth, log []requestLine, o freshnessOptions) (Freshness, error) {
	origin := web.Origin()
	secs := func(x time.Time) float64 { return x.Sub(origin).Seconds() }
	in := freshnessInput{start: secs(o.windowStart), end: secs(o.end), unitCap: map[string]float64{}, addrCap: map[string]float64{}, scale: o.scale, minRevisit: o.minRevisit}

	// The pages: the reachable ones that answer 200.
	ok := make([]bool, len(t.pages))
	if err := web.ForEachPage(func(info testweb.PageInfo) error {
		if i, found := t.page(info.URL); found && info.Status == 200 {
			ok[i] = true
		}
		return nil
	}); err != nil {
		return Freshness{}, fmt.Errorf("pages of the web: %w", err)
	}
	rank, err := reachableRank(ctx, t, 0.85)
	if err != nil {
		return Freshness{}, err
	}
	srv := newServers(log, t.serverOf)
	index := make([]int, len(t.pages)) // page of the truth → page of the input, -1 if none
	for i, u := range t.pages {
		index[i] = -1
		if !ok[i] {
			continue
		}
		h := t.host[i]
		p := freshPage{site: h, unit: srv.unit(h), addr: srv.address(h), kind: web.Validators(h).String(), weight: rank[i]}
		if mean, _ := web.ChangeInterval(u); mean > 0 {
			p.rate = 1 / mean.Seconds()
		}
		for _, c := range web.ChangeTimes(u, o.end) {
			p.changes = append(p.changes, secs(c))
		}
		index[i] = len(in.pages)
		in.pages = append(in.pages, p)
	}

	// The fetches, and per unit the durations and Crawl-delay.
	in.fetches = make([][]freshFetch, len(in.pages))
	durs := map[string][]time.Duration{}
	delay := map[string]time.Duration{}
	for _, l := range log {
		u := srv.unit(l.host)
		durs[u] = append(durs[u], l.duration())
		if l.status == 0 {
			continue
		}
		if i, found := t.logPage(l); found && index[i] >= 0 {
			k := index[i]
			in.fetches[k] = append(in.fetches[k], freshFetch{at: secs(l.start), status: l.status, conditional: l.conditional})
		}
	}
	for _, fs := range in.fetches {
		sort.SliceStable(fs, func(a, b int) bool { return fs[a].at < fs[b].at })
	}
	for _, h := range t.host {
		u := srv.unit(h)
		delay[u] = max(delay[u], t.crawlDelay[h])
	}
	for u, d := range delay {
		iv := max(o.rules.wait, d, median(durs[u]))
		in.unitCap[u] = math.Inf(1)
		if iv > 0 {
			in.unitCap[u] = 1 / iv.Seconds()
		}
	}
	// An address: no two request starts closer than address_wait, at
	// most connections_per_ip of its units served at once.
	unitsOf := map[string][]string{}
	for _, h := range t.host {
		a, u := srv.address(h), srv.unit(h)
		if !slices.Contains(unitsOf[a], u) {
			unitsOf[a] = append(unitsOf[a], u)
		}
	}
	for a, units := range unitsOf {
		c := math.Inf(1)
		if o.rules.addressWait > 0 {
			c = 1 / o.rules.addressWait.Seconds()
		}
		if k := o.rules.connectionsPerIP; k > 0 {
			most := 0.0
			for _, u := range units {
				most = math.Max(most, in.unitCap[u])
			}
			c = math.Min(c, float64(min(k, len(units)))*most)
		}
		in.addrCap[a] = c
	}

	f := computeFreshness(in)
	shift := o.start.Sub(origin).Seconds()
	f.WindowStart -= shift
	f.WindowEnd -= shift
	return f, nil
}

// reachableRank is the PageRank of the reachable pages on their links
// (crawlcheck timeline and freshness use damping 0.85).
func reachableRank(ctx context.Context, t *webTruth, damping float64) ([]float64, error) {
	b := pagerank.NewBuilder(len(t.pages))
	for i, l := range t.links {
		if err := b.Add(i, l); err != nil {
			return nil, fmt.Errorf("link graph: %w", err)
		}
	}
	res, err := pagerank.Compute(ctx, b.Graph(), pagerank.Options{Damping: damping})
	if err != nil {
		return nil, fmt.Errorf("pagerank of the reachable pages: %w", err)
	}
	return res.Rank, nil
}

// estimatorCheck reads the manager's change-rate estimates of the
// collection in dir and checks them against the web's true rates.
func estimatorCheck(ctx context.Context, dir string, m *config.Manager, web *testweb.Web, t *webTruth) (*EstimatorCheck, error) {
	col, err := collection.Open(dir)
	if err != nil {
		return nil, err
	}
	var samples []rateSample
	err = manager.ChangeEstimates(ctx, col, m, func(e manager.ChangeEstimate) error {
		i, ok := t.page(e.URL)
		if !ok {
			return nil
		}
		s := rateSample{visits: e.Visits, estimated: e.Lambda / 86400, kind: web.Validators(t.host[i]).String(), trusted: e.DatesTrusted}
		if mean, _ := web.ChangeInterval(t.pages[i]); mean > 0 {
			s.truth = 1 / mean.Seconds()
		}
		samples = append(samples, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("change estimates of %s: %w", dir, err)
	}
	e := checkEstimator(samples)
	return &e, nil
}
