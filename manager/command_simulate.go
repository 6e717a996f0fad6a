package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/manager"
	"github.com/wirecrawl/wire/pkg/seeder"
	"github.com/wirecrawl/wire/pkg/simulate"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/testweb/crawlgraph"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// Generators of --generate.
const (
	genNational = "national" // pkg/webgraph's growth model
	genTestWeb  = "testweb"  // the test web's model (pkg/testweb)
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

` + command.ExitCodesHelp,
		Flags: command.WithSettings(simulateFlags()...),
		Action: func(c *cli.Context) error {
			return runSimulate(c)
		},
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

// source is the graph to simulate on and, if any, its previous crawl.
type source struct {
	graph, before *webgraph.Graph
	desc          string
}

func runSimulate(c *cli.Context) error {
	ctx := c.Context
	log := command.Logger(c)
	cfg, err := command.LoadConfig(c)
	if err != nil {
		return err
	}
	model := c.String("model")
	all := simulate.Strategies()
	switch model {
	case simulate.ModelPaper:
	case simulate.ModelBatch:
		all = simulate.BatchStrategies()
	default:
		return command.Usage("simulate: unknown --model %q (want paper or batch)", model)
	}
	var strategies []string
	if list := c.String("strategies"); list != "none" {
		if strategies, err = simulate.ParseStrategies(list, all); err != nil {
			return command.Usage("simulate: --strategies: %v", err)
		}
	}
	needHistory := false
	for _, s := range strategies {
		needHistory = needHistory || simulate.Historical(s)
	}

	t0 := time.Now()
	src, err := loadSource(ctx, c, needHistory)
	if err != nil {
		return err
	}
	g := src.graph
	if err := chooseSeeds(c, g); err != nil {
		return err
	}
	st := g.Stats()
	fmt.Fprintf(c.App.Writer, "graph\t%s: %d pages, %d sites, %d links (%.0f%% internal), %d seeds, largest site %d pages (loaded in %s)\n",
		src.desc, st.Pages, st.Sites, st.Links, 100*st.Internal, st.Seeds, st.MaxSite, time.Since(t0).Round(time.Millisecond))
	if f := c.String("write-graph"); f != "" {
		if err := writeGraph(f, g); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "wrote\t%s\n", f)
	}
	if len(strategies) == 0 {
		return nil
	}

	damping := cfg.Manager.Damping
	t0 = time.Now()
	pr, err := simulate.PageRank(ctx, g, damping)
	if err != nil {
		return err
	}
	in := simulate.Input{Graph: g, PageRank: pr, Damping: damping, Seed: c.Uint64("seed"),
		Points: c.Int("points"), TauSample: c.Int("tau-sample"), MaxFetch: c.Int("max-fetch")}
	log.Info("pagerank of the graph", "damping", damping, "elapsed", time.Since(t0).Round(time.Millisecond))
	ub := simulate.UpperBound(pr, 100)
	fmt.Fprintf(c.App.Writer, "pagerank\tthe top 1%% of the pages hold %.2f of it, the top 10%% %.2f, the top 50%% %.2f (damping %g)\n", ub[1], ub[10], ub[50], damping)
	if src.before != nil {
		var m simulate.HistoryMatch
		in.History, m, err = simulate.History(ctx, src.before, g, damping, pr)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "history\t%d pages (%.0f%%) were in the previous crawl and hold %.0f%% of the PageRank; %d pages of the previous crawl are gone\n",
			m.Known, 100*float64(m.Known)/float64(max(g.N(), 1)), 100*m.KnownRank, m.PreviousOnly)
	} else if needHistory {
		if !strings.Contains(","+c.String("strategies")+",", ",all,") {
			return command.Usage("simulate: historical strategies need --history (or --generate)")
		}
		var kept []string
		for _, s := range strategies {
			if !simulate.Historical(s) {
				kept = append(kept, s)
			}
		}
		log.Warn("no previous crawl (--history): historical strategies left out")
		strategies = kept
	}

	opt := simulate.Options{
		Model:  model,
		Logger: log,
		Paper: simulate.PaperOptions{Robots: c.Int("robots"), Wait: c.Duration("wait").Seconds(), FetchTime: c.Duration("fetch-time").Seconds(),
			PageRankEvery: c.Int("pagerank-every"), SydneyT: c.Int("sydney-t")},
		Batch: simulate.BatchOptions{Config: cfg, Stages: crawlerStages(), Dir: c.String("work-dir"), Keep: c.Bool("keep"),
			Robots: c.Int("robots"), Wait: c.Duration("wait").Seconds(), FetchTime: c.Duration("fetch-time").Seconds(),
			MaxBatches: c.Int("max-batches"), Logger: log},
	}
	results, err := simulate.Run(ctx, in, strategies, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer)
	if err := simulate.WriteTable(c.App.Writer, results); err != nil {
		return err
	}
	if dir := c.String("out"); dir != "" {
		title := c.String("title")
		if title == "" {
			title = fmt.Sprintf("%s, %s model", src.desc, model)
		}
		if err := simulate.WriteOutputs(dir, title, results, pr); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "\nwrote\t%s/{%s,%s,%s,%s,%s}\n", dir, simulate.FileCurves, simulate.FileTable, simulate.FilePageRank, simulate.FileTime, simulate.FileQueue)
	}
	return nil
}

// loadSource reads or generates the graph, and its previous crawl when
// a historical strategy needs one.
func loadSource(ctx context.Context, c *cli.Context, needHistory bool) (*source, error) {
	given := 0
	for _, f := range []string{"graph", "graph-db", "generate"} {
		if c.IsSet(f) {
			given++
		}
	}
	if given > 1 {
		return nil, command.Usage("simulate: give one of --graph, --graph-db and --generate")
	}
	src := &source{}
	var err error
	switch {
	case c.IsSet("graph"):
		f := c.String("graph")
		src.desc = filepath.Base(f)
		src.graph, err = webgraph.ReadFile(f)
	case c.IsSet("generate"):
		src, err = generate(ctx, c, needHistory)
	default:
		path := c.String("graph-db")
		if path == "" {
			path = c.String(command.FlagCollection)
		}
		src.desc = path
		src.graph, err = loadDB(ctx, path, c.Bool("all-docs"))
	}
	if err != nil {
		return nil, err
	}
	if h := c.String("history"); h != "" && needHistory {
		if src.before, err = loadAny(ctx, h, c.Bool("all-docs")); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	return src, nil
}

// loadDB reads a graph.db file or the graph.db of a collection directory.
func loadDB(ctx context.Context, path string, all bool) (*webgraph.Graph, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, collection.GraphFile)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("simulate: no graph: %w (give --graph, --graph-db or --generate)", err)
	}
	return webgraph.LoadLinkGraph(ctx, path, webgraph.DBOptions{All: all})
}

// loadAny reads an edge-list file, a graph.db or a collection.
func loadAny(ctx context.Context, path string, all bool) (*webgraph.Graph, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() || isBolt(path) {
		return loadDB(ctx, path, all)
	}
	return webgraph.ReadFile(path)
}

// isBolt tells a bbolt file by its magic number (byte 16 of the first
// page).
func isBolt(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [20]byte
	if n, _ := io.ReadFull(f, head[:]); n < len(head) {
		return false
	}
	return head[16] == 0xED && head[17] == 0xDA && head[18] == 0x0C && head[19] == 0xED
}

// generate makes the graph (and its previous crawl) with --generate.
func generate(ctx context.Context, c *cli.Context, needHistory bool) (*source, error) {
	src := &source{}
	var err error
	switch kind := c.String("generate"); kind {
	case genNational:
		p := webgraph.Params{Pages: c.Int("pages"), Seed: c.Uint64("gen-seed"), MaxSitePages: c.Int("max-site-pages"), OutDegree: c.Float64("out-degree")}
		h := webgraph.History{New: c.Float64("history-new"), Dead: c.Float64("history-dead"), Churn: c.Float64("history-churn")}
		src.before, src.graph, err = webgraph.GeneratePair(p, h)
		if err != nil {
			return nil, command.Usage("simulate: %v", err)
		}
		src.desc = fmt.Sprintf("national web of %d pages (seed %d)", c.Int("pages"), c.Uint64("gen-seed"))
	case genTestWeb:
		hosts := c.Int("hosts")
		load := func(hosts int) (*webgraph.Graph, error) {
			return crawlgraph.Load(ctx, crawlgraph.Options{Config: testweb.Config{Seed: int64(c.Uint64("gen-seed")), Hosts: hosts, MaxPages: c.Int("max-site-pages")}})
		}
		if src.graph, err = load(hosts); err != nil {
			return nil, err
		}
		src.desc = fmt.Sprintf("test web of %d hosts (seed %d)", hosts, c.Uint64("gen-seed"))
		if needHistory && c.String("history") == "" {
			old := c.Int("history-hosts")
			if old <= 0 {
				old = int(math.Round(0.55 * float64(hosts)))
			}
			if src.before, err = load(old); err != nil {
				return nil, fmt.Errorf("history: %w", err)
			}
		}
	default:
		return nil, command.Usage("simulate: unknown --generate %q (want %s or %s)", kind, genNational, genTestWeb)
	}
	return src, nil
}

// chooseSeeds applies --seeds and --random-seeds.
func chooseSeeds(c *cli.Context, g *webgraph.Graph) error {
	if f := c.String("seeds"); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("simulate: seeds: %w", err)
		}
		idx := g.Index()
		g.Seeds = g.Seeds[:0]
		seen := map[int32]bool{}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p, ok := idx[line]
			if !ok {
				return command.Usage("simulate: %s:%d: %s is not a page of the graph", f, i+1, excerpt.Quote(line))
			}
			if !seen[p] {
				seen[p] = true
				g.Seeds = append(g.Seeds, p)
			}
		}
	}
	if n := c.Int("random-seeds"); n > 0 {
		r := rand.New(rand.NewPCG(c.Uint64("seed"), 0x5eed5))
		perm := r.Perm(g.N())
		g.Seeds = g.Seeds[:0]
		for _, p := range perm[:min(n, len(perm))] {
			g.Seeds = append(g.Seeds, int32(p))
		}
	}
	if len(g.Seeds) == 0 {
		return command.Usage("simulate: the graph has no seeds: give --seeds FILE or --random-seeds N")
	}
	return nil
}

// writeGraph writes g as an edge-list file, gzip-compressed if the name
// ends in .gz.
func writeGraph(path string, g *webgraph.Graph) error {
	err := collection.WriteAtomic(path, func(w io.Writer) error {
		if !strings.HasSuffix(path, ".gz") {
			return webgraph.Write(w, g)
		}
		zw := gzip.NewWriter(w)
		if err := webgraph.Write(zw, g); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("write graph %s: %w", path, err)
	}
	return nil
}

// crawlerStages are the stages the batch model runs: the seeder's and
// the manager's own code.
func crawlerStages() simulate.Stages {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return simulate.Stages{
		Init: func(dir string, cfg config.Config) error {
			_, err := seeder.Init(dir, cfg)
			return err
		},
		AddSeeds: func(ctx context.Context, col *collection.Collection, cfg config.Config, urls []string) (int, error) {
			var problems strings.Builder
			s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg, Logger: quiet}, strings.NewReader(strings.Join(urls, "\n")), "seeds", &problems)
			if err != nil {
				return 0, err
			}
			if s.Added == 0 {
				return 0, fmt.Errorf("no seed was added: %s", firstLine(problems.String()))
			}
			return s.Added, nil
		},
		Manage: func(ctx context.Context, col *collection.Collection, cfg config.Config, now time.Time) (int, error) {
			r, err := manager.Run(ctx, col, manager.Options{Config: cfg, Logger: quiet, Now: func() time.Time { return now }})
			if err != nil {
				return 0, err
			}
			return r.Batch, nil
		},
		Seed: func(ctx context.Context, col *collection.Collection, cfg config.Config, id int) (int, error) {
			s, err := seeder.Run(ctx, seeder.RunOptions{Collection: col, Config: cfg, Batch: id, Logger: quiet})
			if err != nil {
				return 0, err
			}
			return s.NewURLs, nil
		},
		ImportHistory: func(ctx context.Context, col *collection.Collection, cfg config.Config, file string) error {
			_, err := manager.ImportHistory(ctx, col, file, manager.HistoryOptions{Config: cfg, Logger: quiet})
			return err
		},
	}
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if s == "" {
		return "the list was empty"
	}
	return s
}
