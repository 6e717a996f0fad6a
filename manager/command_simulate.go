package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager/simstages"
	"github.com/wirecrawl/wire/pkg/simulate"
	"github.com/wirecrawl/wire/pkg/testweb/simweb"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:  "simulate",
		Usage: "compare page-ordering strategies on a known graph (your last crawl, a file or a generated web)",
		Description: `Replays a crawl of a known web graph under each strategy and measures
how early it downloads the valuable pages (Baeza-Yates et al. 2005):
cumulative PageRank of the full graph against the fraction of pages
fetched and against simulated time, its average over the crawl, Kendall's
tau between fetch order and PageRank on a sample, and the pending queue.

The graph: --graph FILE (edge-list file, docs/simulator.md), --graph-db
PATH (a graph.db or collection directory: its fetched pages), --generate
national|testweb, or by default the graph.db of --collection.

--model paper: a heap of sites and a heap of pages per site, --robots
downloads at once, --wait between two visits to a site, pages found only
through links. Strategies: ` + wrapList(simulate.Strategies(), 72) + `.
--model batch: the manager itself (with this collection's settings and
the setting flags below) writes every batch in a temporary collection,
the seeder takes it in; strategies: every manager.strategy (historical
once per manager.historical_new_pages), omniscient and random.

Historical strategies need the PageRank of a previous crawl: --history
PATH (edge-list file, graph.db or collection), or with --generate the
same web generated at an earlier time (--history-new, --history-hosts).

Prints the table; --out DIR also writes curves.csv, table.txt and the
charts pagerank.svg, time.svg and queue.svg. See docs/simulator.md.

` + command.ExitCodes(command.ExitOK),
		Flags:  command.WithSettings(simulateFlags()...),
		Action: command.Action(parseSimulate, runSimulate),
	}
}

func simulateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "graph", Category: "Graph", Usage: "edge-list `FILE` (plain or gzip)"},
		&cli.StringFlag{Name: "graph-db", Category: "Graph", Usage: "graph.db file or collection directory `PATH`"},
		&cli.BoolFlag{Name: "all-docs", Category: "Graph", Usage: "with a graph.db: every document, not only those fetched with a status below 400"},
		&cli.StringFlag{Name: "generate", Category: "Graph", Usage: "generate the graph: `KIND` national (webgraph growth model) or testweb"},
		&cli.IntFlag{Name: "pages", Category: "Graph", Value: 100000, Usage: "national: pages"},
		&cli.IntFlag{Name: "hosts", Category: "Graph", Value: 5500, Usage: "testweb: in-scope hosts (5,500 give about 85,000 pages)"},
		&cli.IntFlag{Name: "max-site-pages", Category: "Graph", Value: 25000, Usage: "generated: pages of the largest site"},
		&cli.Float64Flag{Name: "out-degree", Category: "Graph", Value: webgraph.DefaultParams.OutDegree, Usage: "national: mean links written per page"},
		&cli.Uint64Flag{Name: "gen-seed", Category: "Graph", Value: 1, Usage: "generated: random seed"},
		&cli.StringFlag{Name: "write-graph", Category: "Graph", Usage: "also write the graph as an edge-list `FILE` (gzip if it ends in .gz)"},

		&cli.StringFlag{Name: "seeds", Category: "Crawl", Usage: "seed page names, one per line, from `FILE` (default: the graph's seeds)"},
		&cli.IntFlag{Name: "random-seeds", Category: "Crawl", Usage: "use `N` pages drawn at random as seeds"},
		&cli.StringFlag{Name: "strategies", Category: "Crawl", Value: "all", Usage: "comma-separated `LIST`, all, history, or none (only describe or write the graph)"},
		&cli.StringFlag{Name: "model", Category: "Crawl", Value: simulate.ModelPaper, Usage: "paper or batch"},
		&cli.IntFlag{Name: "robots", Category: "Crawl", Value: 1, Usage: "downloads at the same time (r)"},
		&cli.DurationFlag{Name: "wait", Category: "Crawl", Value: 15 * time.Second, Usage: "wait between two visits to one site (w)"},
		&cli.DurationFlag{Name: "fetch-time", Category: "Crawl", Value: time.Second, Usage: "time one download takes"},
		&cli.IntFlag{Name: "pagerank-every", Category: "Crawl", Usage: "paper model: fetches between PageRank computations of pagerank and partial-pagerank (default pages/30)"},
		&cli.IntFlag{Name: "sydney-t", Category: "Crawl", Usage: "paper model: at most `T` new links per page into the frontier, the rest parked (0: no limit)"},
		&cli.IntFlag{Name: "max-fetch", Category: "Crawl", Usage: "stop each crawl after `N` pages"},
		&cli.IntFlag{Name: "max-batches", Category: "Crawl", Usage: "batch model: stop after `N` batches"},
		&cli.BoolFlag{Name: "keep", Category: "Crawl", Usage: "batch model: keep each strategy's temporary collection"},
		&cli.StringFlag{Name: "work-dir", Category: "Crawl", Usage: "batch model: where the temporary collections go (default: the system's)"},
		&cli.Uint64Flag{Name: "seed", Category: "Crawl", Value: 1, Usage: "random seed of the random strategy, random choices and the tau sample"},

		&cli.StringFlag{Name: "history", Category: "History", Usage: "previous crawl for the historical strategies: edge-list file, graph.db or collection `PATH`"},
		&cli.Float64Flag{Name: "history-new", Category: "History", Value: webgraph.DefaultHistory.New, Usage: "national: fraction of the pages that the previous crawl did not have"},
		&cli.Float64Flag{Name: "history-dead", Category: "History", Value: webgraph.DefaultHistory.Dead, Usage: "national: fraction of the previous crawl's pages that are gone"},
		&cli.Float64Flag{Name: "history-churn", Category: "History", Value: webgraph.DefaultHistory.Churn, Usage: "national: fraction of the previous crawl's links that pointed elsewhere"},
		&cli.IntFlag{Name: "history-hosts", Category: "History", Usage: "testweb: hosts of the previous crawl (default 55% of --hosts)"},

		&cli.IntFlag{Name: "tau-sample", Category: "Output", Value: 5000, Usage: "pages Kendall's tau is computed on"},
		&cli.IntFlag{Name: "points", Category: "Output", Value: 1000, Usage: "points per curve"},
		&cli.StringFlag{Name: "out", Category: "Output", Usage: "write curves.csv, table.txt and the SVG charts into `DIR`"},
		&cli.StringFlag{Name: "title", Category: "Output", Usage: "title of the charts (default: the graph's description)"},
	}
}

// simulateOptions is what `manager simulate` needs: the simulator's
// setup, with the crawler's stages and the generators.
type simulateOptions = simulate.Setup

func parseSimulate(c *cli.Context) (simulateOptions, error) {
	cfg, err := command.LoadConfig(c)
	if err != nil {
		return simulateOptions{}, err
	}
	return simulate.Setup{
		Config:     cfg,
		GraphFile:  c.String("graph"),
		GraphDB:    c.String("graph-db"),
		Generate:   c.String("generate"),
		Collection: c.String(command.FlagCollection),
		AllDocs:    c.Bool("all-docs"),
		Generators: map[string]simulate.Generator{simulate.GeneratorNational: simulate.GenerateNational, simweb.Name: simweb.Generate},
		GenerateParams: simulate.GenerateParams{
			Pages: c.Int("pages"), Hosts: c.Int("hosts"), MaxSitePages: c.Int("max-site-pages"), OutDegree: c.Float64("out-degree"), Seed: c.Uint64("gen-seed"),
			History:      webgraph.History{New: c.Float64("history-new"), Dead: c.Float64("history-dead"), Churn: c.Float64("history-churn")},
			HistoryHosts: c.Int("history-hosts"),
		},
		WriteGraph:    c.String("write-graph"),
		SeedsFile:     c.String("seeds"),
		RandomSeeds:   c.Int("random-seeds"),
		Strategies:    c.String("strategies"),
		Model:         c.String("model"),
		History:       c.String("history"),
		Robots:        c.Int("robots"),
		Wait:          c.Duration("wait"),
		FetchTime:     c.Duration("fetch-time"),
		PageRankEvery: c.Int("pagerank-every"),
		SydneyT:       c.Int("sydney-t"),
		MaxFetch:      c.Int("max-fetch"),
		MaxBatches:    c.Int("max-batches"),
		Stages:        simstages.Crawler(),
		WorkDir:       c.String("work-dir"),
		Keep:          c.Bool("keep"),
		Seed:          c.Uint64("seed"),
		TauSample:     c.Int("tau-sample"),
		Points:        c.Int("points"),
		Out:           c.String("out"),
		Title:         c.String("title"),
		Logger:        command.Logger(c),
	}, nil
}

// runSimulate runs the simulation and prints its table on out; the
// simulator's usage errors (a bad --model, …) are the command's.
func runSimulate(ctx context.Context, o simulateOptions, out io.Writer) error {
	err := simulate.Execute(ctx, o, out)
	if errors.Is(err, simulate.ErrUsage) {
		return command.Usage("%w", err)
	}
	return err
}

// wrapList joins items with commas, breaking lines at about width.
func wrapList(items []string, width int) string {
	var b strings.Builder
	col := 28 // after "through links. Strategies: "
	for i, it := range items {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+len(it)+1 > width {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(it)
		col += len(it)
	}
	return b.String()
}
