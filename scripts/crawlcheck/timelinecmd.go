package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// webFlags are the flags that name the web and where the crawl started.
func webFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "web", Required: true, Usage: "the web's configuration, as written by testweb --config-out"},
		&cli.StringFlag{Name: "seeds", Required: true, Usage: "the seed file the crawl started from"},
		&cli.StringFlag{Name: "collection", Usage: "take the scope, product token and harvester settings (max_crawl_delay; wait, address_wait, connections_per_ip where used) from this collection's wire.toml (default: the built-in defaults, scope the web's suffix)"},
	}
}

// loadWeb rebuilds the web testweb --config-out described.
func loadWeb(path string) (*testweb.Web, testweb.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, testweb.Config{}, fmt.Errorf("read web configuration: %w", err)
	}
	var wc testweb.Config
	if err := json.Unmarshal(data, &wc); err != nil {
		return nil, wc, fmt.Errorf("decode web configuration %s: %w", path, err)
	}
	web, err := testweb.New(wc)
	return web, wc, err
}

// readSeeds reads a seed file (URLs separated by white space).
func readSeeds(path string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read seeds: %w", err)
	}
	return strings.Fields(string(text)), nil
}

// crawlConfig is the configuration of collection col, or without one the
// defaults with the web's suffix in scope.
func crawlConfig(col string, wc testweb.Config) (config.Config, error) {
	if col != "" {
		return config.Load(config.Sources{File: filepath.Join(col, config.FileName), NoEnv: true})
	}
	cfg := config.Defaults()
	if wc.Suffix != "" {
		cfg.Scope.Domains = []string{wc.Suffix}
	}
	return cfg, nil
}

// loadCrawl loads what webFlags name.
func loadCrawl(c *cli.Context) (*testweb.Web, config.Config, []string, error) {
	web, wc, err := loadWeb(c.String("web"))
	if err != nil {
		return nil, config.Config{}, nil, err
	}
	cfg, err := crawlConfig(c.String("collection"), wc)
	if err != nil {
		return nil, cfg, nil, err
	}
	seeds, err := readSeeds(c.String("seeds"))
	return web, cfg, seeds, err
}

// reachableCommand is `crawlcheck reachable`.
func reachableCommand() *cli.Command {
	return &cli.Command{
		Name:  "reachable",
		Usage: "print the reachable allowed pages of the test web (normalised, in scope), one URL a line",
		Flags: webFlags(),
		Action: func(c *cli.Context) error {
			web, cfg, seeds, err := loadCrawl(c)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, u := range reachablePages(web, cfg, seeds) {
				b.WriteString(u + "\n")
			}
			if _, err := io.WriteString(c.App.Writer, b.String()); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			return nil
		},
	}
}

// timelineCommand is `crawlcheck timeline`.
func timelineCommand() *cli.Command {
	return &cli.Command{
		Name:  "timeline",
		Usage: "the crawl as its user feels it, from the test web's request log",
		Description: `Reads the request log of scripts/testweb --log and the truth of the web
(--web, --seeds: the reachable allowed pages, as crawlcheck coverage counts
them; a collection with manager.max_fetches_per_script = 0, as the
benchmark's, may fetch every one of them). A reachable page counts as
fetched at the end of its first request that got a response. Prints:

  - the time from --start to 50, 90, 99 and 100 % of the reachable pages;
  - at each --at time T, the coverage (reachable pages fetched by then)
    against the polite bound: the reachable pages a crawler keeping every
    rule could have fetched by T, serving them from time zero in a greedy
    schedule that never leaves a server idle. The rules: per politeness
    unit (the host names on one address, the one the web serves them
    from, that share a registrable domain) one request at a time, each
    taking the median response time of the unit's requests in the log
    (the web's own for a unit never asked), and after each end
    max(wait, the unit's largest Crawl-delay); per address at most
    connections_per_ip requests in flight and starts address_wait apart.
    Beside it, the per-host bound of before issue 34: the sum over hosts
    of min(reachable pages of the host, floor(T / max(wait, Crawl-delay,
    median response time of the host))), which ignores units and
    addresses. wait, address_wait and connections_per_ip are the
    harvester settings of --collection's wire.toml (default: the
    built-in defaults), each overridden by its flag;
  - the crawl order's cumulative PageRank against the sorted-PageRank
    bound: sum over k = 1..N of the PageRank of the first k pages fetched,
    over the same sum for the pages in decreasing PageRank (PageRank with
    damping 0.85 on the links among the N reachable pages);
  - pages and requests in all, and the slowest host's own polite time
    (its reachable pages x its polite interval).`,
		Flags: append(append(webFlags(),
			&cli.StringFlag{Name: "log", Required: true, Usage: "request log (TSV) of testweb --log"},
			&cli.TimestampFlag{Name: "start", Required: true, Layout: time.RFC3339Nano, Usage: "time zero (RFC 3339, e.g. 2024-01-02T15:04:05.123456789Z)"},
			&cli.TimestampFlag{Name: "end", Layout: time.RFC3339Nano, Usage: "when the run ended or was stopped (RFC 3339); coverage points after it are marked"},
			&cli.StringFlag{Name: "at", Value: "60s,120s,300s", Usage: "times of the coverage points, comma-separated"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"},
			&cli.StringFlag{Name: "json-out", Usage: "also write the JSON to this file"},
			&cli.StringFlag{Name: "pages-out", Usage: "also write, per reachable page, its URL, host, PageRank and the seconds to its first fetch (TSV, \"-\": never) to this file"},
		), serverRuleFlags()...),
		Action: func(c *cli.Context) error {
			at, err := parseDurations(c.String("at"))
			if err != nil {
				return fmt.Errorf("--at: %w", err)
			}
			o := timelineOptions{start: *c.Timestamp("start"), at: at, damping: 0.85}
			if e := c.Timestamp("end"); e != nil {
				o.end = *e
			}
			m, err := loadMeasure(c)
			if err != nil {
				return err
			}
			o.rules = m.rules
			var pages *collection.AtomicFile
			if p := c.String("pages-out"); p != "" {
				if pages, err = collection.CreateAtomic(p); err != nil {
					return fmt.Errorf("--pages-out: %w", err)
				}
				defer pages.Abort()
				o.pages = pages
			}
			tl, err := computeTimeline(c.Context, m.truth, m.log, o)
			if err != nil {
				return err
			}
			if pages != nil {
				if err := pages.Commit(); err != nil {
					return fmt.Errorf("--pages-out: %w", err)
				}
			}
			return writeReport(c, "timeline", tl, tl.Print)
		},
	}
}

// measure is what timeline and discovery read: the web's truth from
// the seeds, the crawl's request log (--log) and the politeness rules.
type measure struct {
	truth *webTruth
	seeds []string
	log   []requestLine
	rules serverRules
}

// loadMeasure loads what webFlags, --log and serverRuleFlags name.
func loadMeasure(c *cli.Context) (measure, error) {
	var m measure
	web, cfg, seeds, err := loadCrawl(c)
	if err != nil {
		return m, err
	}
	m.seeds = seeds
	if m.rules, err = rulesOf(c, cfg); err != nil {
		return m, err
	}
	if m.log, err = readRequestLogFile(c.String("log")); err != nil {
		return m, err
	}
	m.truth, err = buildTruth(web, cfg, seeds)
	return m, err
}

// writeReport writes a report (name: what it is, for errors) as JSON to
// --json-out if given, and to the command's output as JSON with --json,
// else as text (print).
func writeReport(c *cli.Context, name string, v any, print func(io.Writer)) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	data = append(data, '\n')
	if p := c.String("json-out"); p != "" {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if c.Bool("json") {
		_, err = c.App.Writer.Write(data)
		return err
	}
	print(c.App.Writer)
	return nil
}

// targetsCommand is `crawlcheck targets`.
func targetsCommand() *cli.Command {
	return &cli.Command{
		Name:  "targets",
		Usage: "compare the timelines of bench-timeline.sh with the targets of issues 16 and 34",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "crawl", Required: true, Usage: "timeline (--json) of the whole crawl at wait 0"},
			&cli.StringFlag{Name: "harvester", Required: true, Usage: "timeline (--json) of the harvester alone"},
			&cli.StringFlag{Name: "polite", Required: true, Usage: "timeline (--json) of the crawl at wait 1s"},
			&cli.StringFlag{Name: "discovery", Usage: "crawlcheck discovery --json of the whole crawl at wait 0 (optional)"},
			&cli.DurationFlag{Name: "cycle", Usage: "one cycle of the whole crawl (its time over its batches)"},
		},
		Action: func(c *cli.Context) error {
			var tls [3]Timeline
			for i, name := range []string{"crawl", "harvester", "polite"} {
				data, err := os.ReadFile(c.String(name))
				if err != nil {
					return fmt.Errorf("read timeline: %w", err)
				}
				if err := json.Unmarshal(data, &tls[i]); err != nil {
					return fmt.Errorf("decode timeline %s: %w", c.String(name), err)
				}
			}
			var disc *Discovery
			if p := c.String("discovery"); p != "" {
				data, err := os.ReadFile(p)
				if err != nil {
					return fmt.Errorf("read discovery: %w", err)
				}
				disc = new(Discovery)
				if err := json.Unmarshal(data, disc); err != nil {
					return fmt.Errorf("decode discovery %s: %w", p, err)
				}
			}
			printTargets(c.App.Writer, tls[0], tls[1], tls[2], disc, c.Duration("cycle"))
			return nil
		},
	}
}

// quantile returns the time to pc % of a timeline, nil if not reached or
// not measured.
func (tl Timeline) quantile(pc int) *float64 {
	for _, q := range tl.Quantiles {
		if q.Percent == pc {
			return q.Seconds
		}
	}
	return nil
}

// printTargets writes the figures issues 16 and 34 set targets for;
// disc, the whole crawl's discovery, may be nil.
func printTargets(w io.Writer, crawl, harv, polite Timeline, disc *Discovery, cycle time.Duration) {
	c99, h99, c100 := crawl.quantile(99), harv.quantile(99), crawl.quantile(100)
	fmt.Fprintln(w, "targets (issues 16 and 34):")
	if c99 != nil && h99 != nil && *h99 > 0 {
		fmt.Fprintf(w, "  crawl t99 / harvester t99: %.1f s / %.1f s = %.2f (target <= 5)\n", *c99, *h99, *c99 / *h99)
	} else {
		fmt.Fprintf(w, "  crawl t99 / harvester t99: %s / %s: no ratio (target <= 5)\n", seconds(c99), seconds(h99))
	}
	bound := fmt.Sprintf("the slowest host's polite time %.1f s (%s) + one cycle %.1f s = %.1f s",
		crawl.Slowest.Seconds, crawl.Slowest.Host, cycle.Seconds(), crawl.Slowest.Seconds+cycle.Seconds())
	if c99 != nil && c100 != nil {
		fmt.Fprintf(w, "  crawl t100 - t99: %.1f s; against %s\n", *c100-*c99, bound)
	} else {
		fmt.Fprintf(w, "  crawl t100 - t99: not reached (t99 %s, t100 %s); against %s\n", seconds(c99), seconds(c100), bound)
	}
	for _, at := range []float64{60, 120, 300} {
		found := false
		for _, p := range polite.Coverage {
			if p.At == at {
				note := ""
				if p.AfterEnd {
					note = ", after the run ended"
				}
				fmt.Fprintf(w, "  coverage / polite bound at %.0f s (wait %s): %.3f (%d / %d pages; target >= 0.9%s); per-host bound %d: %.3f\n",
					at, secondsDur(polite.Wait), p.Ratio, p.Fetched, p.Bound, note, p.HostBound, p.HostRatio)
				found = true
			}
		}
		if !found {
			fmt.Fprintf(w, "  coverage / polite bound at %.0f s: not measured\n", at)
		}
	}
	fmt.Fprintf(w, "  cumulative PageRank, crawl order / sorted bound: %.3f (whole crawl)\n", crawl.PageRank)
	if disc != nil {
		fmt.Fprintf(w, "  found to fetched, median over %d pages (wait %s): %.2f s (target <= 3 s); p90 %.2f s; discovery %.1f%%, politeness %.1f%%, value order %.1f%% of the summed time to fetch\n",
			disc.Pages, secondsDur(disc.Wait), disc.Median, disc.P90, 100*disc.DiscoveryShare, 100*disc.PolitenessShare, 100*disc.ValueOrderShare)
	}
}
