// Command crawlcheck checks crawls of the synthetic test web, for
// scripts/faults.sh and scripts/bench-crawl.sh:
//
//	crawlcheck faults   --bin DIR --dir DIR [--seed N] [--hosts N] ...
//	crawlcheck coverage --collection DIR --web web.json --seeds seeds.txt
//	crawlcheck batch    --collection DIR N
//	crawlcheck reachable --web web.json --seeds seeds.txt
//	crawlcheck timeline --web web.json --seeds seeds.txt --log requests.tsv --start TIME ...
//	crawlcheck discovery --web web.json --seeds seeds.txt --log requests.tsv --start TIME ...
//	crawlcheck targets  --crawl A.json --harvester B.json --polite C.json --cycle D
//	crawlcheck politeness --log requests.tsv --web web.json [--collection DIR] [--wait D] ...
//	crawlcheck freshness --web web.json --seeds seeds.txt --log requests.tsv --window-start T|N% ...
//	crawlcheck exchange --collection P1 --collection P2 ... [--exchange-log L1 ...] [--timeline T.json] [--base B.json]
//
// faults serves a test web in-process, crawls it with the stage binaries
// of --bin while killing them with SIGKILL at random moments (package
// scripts/faulttest), checks the collection and the server's records, and
// breaks the environment (full disk, read-only collection, bad config,
// truncated batch file); it exits 1 if anything is wrong. coverage
// compares a collection's fetch logs with the truth of the web that
// `testweb --config-out` described. batch prints one line of figures
// about a batch from its stage markers. reachable prints the reachable
// allowed pages of the web; timeline measures a crawl from the test web's
// request log (times to shares of the reachable pages, coverage against a
// polite bound, the crawl order's cumulative PageRank); discovery splits
// the time to fetch each page into discovery, politeness and value order;
// targets compares the timelines of scripts/bench-timeline.sh with the
// targets of issues 16 and 34 (docs/scale.md). politeness audits a crawl
// by server from the request log (package pkg/testweb/politeaudit) and
// exits 1 on any violation. freshness measures how fresh a recrawl kept
// a changing web over a window, against the refresh policies of Cho and
// Garcia-Molina on the same fetch budget (uniform, optimal, optimal per
// site, optimal under politeness). exchange measures a web crawled as
// K partitioned collections (scripts/bench-partitions.sh): pages fetched,
// URLs fetched by two partitions, the exchange files published and
// taken, lines sent against lines taken in, bytes, graph.db.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/scripts/faulttest"
)

// main runs the command the way the crawler's binaries do
// (command.Main: SIGINT and SIGTERM cancel it, errors exit non-zero).
func main() {
	command.Main(newApp(os.Stdout))
}

// newApp builds the command.
func newApp(stdout io.Writer) *cli.App {
	return &cli.App{
		Name:            "crawlcheck",
		Usage:           "check crawls of the synthetic test web (faults, coverage, batch figures, timeline, discovery, politeness, cycles, freshness, compare, partitions, exchange)",
		HideHelpCommand: true,
		Writer:          stdout,
		Commands: []*cli.Command{faultsCommand(), coverageCommand(), batchCommand(),
			reachableCommand(), timelineCommand(), discoveryCommand(), targetsCommand(), politenessCommand(), cyclesCommand(), freshnessCommand(), compareCommand(), partitionsCommand(), exchangeCommand(), balanceCommand()},
	}
}

// faultsCommand is `crawlcheck faults`.
func faultsCommand() *cli.Command {
	return &cli.Command{
		Name:  "faults",
		Usage: "crawl the test web while killing the stages, then check everything",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bin", Required: true, Usage: "directory of the stage binaries"},
			&cli.StringFlag{Name: "dir", Required: true, Usage: "scratch directory (must not exist or be empty)"},
			&cli.Uint64Flag{Name: "seed", Usage: "kill schedule seed (default: from the clock, printed)"},
			&cli.IntFlag{Name: "hosts", Value: 300, Usage: "test web hosts"},
			&cli.IntFlag{Name: "max-pages", Value: 400, Usage: "pages of the largest site"},
			&cli.BoolFlag{Name: "hostile", Usage: "include the hostile hosts"},
			&cli.Float64Flag{Name: "https-share", Value: 0.85, Usage: "share of the test web's sites served over TLS (0: plain HTTP only); the harvester trusts its CA"},
			&cli.IntFlag{Name: "addresses", Value: 30, Usage: "loopback addresses the test web's hosts are spread over (a site's names share one)"},
			&cli.DurationFlag{Name: "address-wait", Value: 5 * time.Millisecond, Usage: "harvester address_wait (the audit checks it)"},
			&cli.IntFlag{Name: "cycles", Value: 12, Usage: "serial crawl cycles (at least; exactly when --overlap-cycles is set)"},
			&cli.IntFlag{Name: "overlap-cycles", Value: 12, Usage: "overlapped crawl cycles after the serial ones, at least (0: none)"},
			&cli.IntFlag{Name: "min-overlap-kills", Value: 3, Usage: "kills of a harvester beside a seeder, and of a seeder beside a harvester, that must land"},
			&cli.IntFlag{Name: "min-kills", Value: 40, Usage: "kills that must land"},
			&cli.IntFlag{Name: "min-per-stage", Value: 5, Usage: "kills that must land in each stage"},
			&cli.IntFlag{Name: "batch", Value: 400, Usage: "batch size"},
			&cli.DurationFlag{Name: "wait", Value: 20 * time.Millisecond, Usage: "harvester wait"},
			&cli.DurationFlag{Name: "total-timeout", Value: 5 * time.Second, Usage: "harvester total time limit"},
			&cli.IntFlag{Name: "cat-sample", Value: 200, Usage: "pages read back through `gatherer cat`"},
			&cli.BoolFlag{Name: "skip-env", Usage: "skip the environment faults"},
		},
		Action: func(c *cli.Context) error {
			seed := c.Uint64("seed")
			if !c.IsSet("seed") {
				seed = uint64(time.Now().UnixNano())
			}
			return runFaults(c.Context, c.App.Writer, faultsOptions{
				bin: c.String("bin"), dir: c.String("dir"), seed: seed,
				web: testweb.Config{Seed: int64(seed % 1000), Hosts: c.Int("hosts"), MaxPages: c.Int("max-pages"), Hostile: c.Bool("hostile"),
					Addresses: c.Int("addresses"), HTTPSShare: c.Float64("https-share")},
				settings: faulttest.Settings{Wait: c.Duration("wait"), TotalTimeout: c.Duration("total-timeout"), AddressWait: c.Duration("address-wait"),
					BatchSize: c.Int("batch"), Seeds: 10},
				kill: faulttest.KillOptions{Seed: seed, Cycles: c.Int("cycles"), OverlapCycles: c.Int("overlap-cycles"),
					MinKills: c.Int("min-kills"), MinPerStage: c.Int("min-per-stage"), MinOverlapKills: c.Int("min-overlap-kills")},
				catSample: c.Int("cat-sample"), skipEnv: c.Bool("skip-env"),
			})
		},
	}
}

// faultsOptions are the settings of runFaults.
type faultsOptions struct {
	bin, dir  string
	seed      uint64
	web       testweb.Config
	settings  faulttest.Settings
	kill      faulttest.KillOptions
	catSample int
	skipEnv   bool
}

// runFaults is `crawlcheck faults`.
func runFaults(ctx context.Context, out io.Writer, o faultsOptions) error {
	if ents, err := os.ReadDir(o.dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("--dir %s is not empty", o.dir)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.dir, err)
	}
	fmt.Fprintf(out, "fault injection: seed %d (rerun with --seed %d), web %d hosts (max %d pages, hostile %v, HTTPS share %v), batch %d, wait %v\n",
		o.seed, o.seed, o.web.Hosts, o.web.MaxPages, o.web.Hostile, o.web.HTTPSShare, o.settings.BatchSize, o.settings.Wait)
	web, err := testweb.New(o.web)
	if err != nil {
		return err
	}
	if err := web.Start(); err != nil {
		return err
	}
	defer web.Close()

	r := &faulttest.Runner{Bin: o.bin, Collection: filepath.Join(o.dir, "col")}
	ca, err := faulttest.CAFlags(web, o.dir)
	if err != nil {
		return err
	}
	o.settings.Extra = append(o.settings.Extra, ca...)
	if err := faulttest.InitCollection(ctx, r, web, o.settings); err != nil {
		return err
	}
	o.kill.Log = out
	start := time.Now()
	rep, err := faulttest.CrawlWithKills(ctx, r, o.kill)
	if err != nil {
		return fmt.Errorf("crawl with kills (seed %d): %w", o.seed, err)
	}
	fmt.Fprintf(out, "crawl: %d serial and %d overlapped cycles, %d stage runs, %d kills %v (during overlap: %v; %d attempts too late), %v\n",
		rep.Cycles, rep.OverlapCycles, rep.Runs, len(rep.Kills), rep.KillsByStage(), rep.OverlapKills(), rep.Missed, time.Since(start).Round(time.Millisecond))

	for _, n := range rep.Notes {
		fmt.Fprintln(out, "note:", n)
	}
	var problems []string
	check, err := faulttest.CheckCollection(ctx, r, faulttest.CheckOptions{CatSample: o.catSample, Seed: o.seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "collection: seeder check, %d batches, %d entries, %d fetched, %d documents, %d texts (%d empty, %d read back with gatherer cat): %d problems\n",
		check.Batches, check.Entries, check.Fetched, check.Docs, check.Texts, check.EmptyTexts, check.CatChecked, len(check.Problems))
	problems = append(problems, check.Problems...)
	cfg, err := config.Load(config.Sources{File: filepath.Join(r.Collection, config.FileName), NoEnv: true})
	if err != nil {
		return err
	}
	pol := faulttest.CheckPoliteness(web, cfg.Harvester, rep.Deaths("harvester"))
	fmt.Fprintf(out, "politeness: %d requests to %d hosts (%d units, %d addresses) on %d connections, shortest gap %v (%s), %d URLs requested again after a kill: %d violations\n",
		pol.Requests, pol.Hosts, pol.Audit.Units, pol.Audit.Addresses, pol.Conns, pol.MinGap.Round(time.Microsecond), pol.MinGapHost,
		pol.Refetched, pol.Audit.Violations())
	for _, p := range pol.Problems {
		problems = append(problems, "politeness: "+p)
	}
	if o.web.Hostile && o.web.HTTPSShare > 0 {
		got, tlsProblems := faulttest.CheckHostileTLS(r.Collection, web, cfg.Harvester)
		fmt.Fprintf(out, "hostile TLS hosts: %d fetch log lines %v, %d connections, the longest %v: %d problems\n",
			got.Lines, got.Kinds, got.Conns, got.LongestConn.Round(time.Millisecond), len(tlsProblems))
		for _, p := range tlsProblems {
			problems = append(problems, "hostile TLS: "+p)
		}
	}
	if !o.skipEnv {
		small := testweb.Config{Seed: o.web.Seed + 1, Hosts: 40, MaxPages: 150}
		envWeb, err := testweb.New(small)
		if err != nil {
			return err
		}
		if err := envWeb.Start(); err != nil {
			return err
		}
		defer envWeb.Close()
		fmt.Fprintln(out, "environment faults:")
		s := faulttest.Settings{Wait: 10 * time.Millisecond, TotalTimeout: 5 * time.Second, BatchSize: 40, Seeds: 3}
		cases, err := faulttest.EnvironmentFaults(ctx, o.bin, filepath.Join(o.dir, "env"), envWeb, s, prefixed{out, "  "})
		if err != nil {
			return err
		}
		for _, c := range cases {
			if c.Problem != "" {
				problems = append(problems, c.Name+": "+c.Problem)
			}
		}
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(out, "PROBLEM", p)
		}
		return fmt.Errorf("%d problems (seed %d)", len(problems), o.seed)
	}
	fmt.Fprintf(out, "fault injection passed (seed %d)\n", o.seed)
	return nil
}

// prefixed writes every line with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" {
			if _, err := io.WriteString(p.w, p.prefix+line); err != nil {
				return 0, err
			}
		}
	}
	return len(b), nil
}

// coverageCommand is `crawlcheck coverage`.
func coverageCommand() *cli.Command {
	return &cli.Command{
		Name:  "coverage",
		Usage: "how much of the reachable, allowed test web a collection fetched",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "collection", Required: true, Usage: "collection directory"},
			&cli.StringFlag{Name: "web", Required: true, Usage: "the web's configuration, as written by testweb --config-out"},
			&cli.StringFlag{Name: "seeds", Required: true, Usage: "the seed file the crawl started from"},
		},
		Action: func(c *cli.Context) error {
			col := c.String("collection")
			web, _, err := loadWeb(c.String("web"))
			if err != nil {
				return err
			}
			cfg, err := config.Load(config.Sources{File: filepath.Join(col, config.FileName), NoEnv: true})
			if err != nil {
				return err
			}
			seeds, err := readSeeds(c.String("seeds"))
			if err != nil {
				return err
			}
			cov, err := faulttest.MeasureCoverage(col, web, cfg, seeds)
			if err != nil {
				return err
			}
			cov.Print(c.App.Writer)
			return nil
		},
	}
}

// batchCommand is `crawlcheck batch`.
func batchCommand() *cli.Command {
	return &cli.Command{
		Name:      "batch",
		Usage:     "print figures of one batch from its stage markers: urls fetched bytes links new_urls",
		ArgsUsage: "N",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "collection", Required: true, Usage: "collection directory"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("want one batch number")
			}
			n, err := strconv.Atoi(c.Args().First())
			if err != nil || n < 1 {
				return fmt.Errorf("batch number %q", c.Args().First())
			}
			dir := filepath.Join(c.String("collection"), collection.BatchesDir, collection.BatchName(n))
			f, err := batchFigures(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "urls=%d fetched=%d bytes=%d links=%d new_urls=%d\n", f.urls, f.fetched, f.bytes, f.links, f.newURLs)
			return nil
		},
	}
}

// figures are the counts batch prints.
type figures struct {
	urls, fetched, bytes, links, newURLs int64
}

// batchFigures reads the figures of a batch from its markers; a missing
// marker gives zeros.
func batchFigures(dir string) (figures, error) {
	var f figures
	if _, err := os.Stat(dir); err != nil {
		return f, fmt.Errorf("batch: %w", err)
	}
	read := func(stage collection.Stage, fields map[string]*int64) error {
		data, err := os.ReadFile(filepath.Join(dir, collection.MarkerFile(stage)))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read marker: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("decode marker %s: %w", filepath.Join(dir, collection.MarkerFile(stage)), err)
		}
		for k, p := range fields {
			if v, ok := m[k].(float64); ok {
				*p = int64(v)
			}
		}
		return nil
	}
	if err := read(collection.StageHarvested, map[string]*int64{"urls": &f.urls, "fetched": &f.fetched, "bytes": &f.bytes}); err != nil {
		return f, err
	}
	if err := read(collection.StageGathered, map[string]*int64{"links": &f.links}); err != nil {
		return f, err
	}
	return f, read(collection.StageSeeded, map[string]*int64{"newURLs": &f.newURLs})
}
