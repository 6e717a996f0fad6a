package simulate

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// ErrUsage marks the errors of Execute that come from its inputs (a
// choice that does not exist, inputs that exclude each other, a seed that
// is not a page): a command line reports them as usage errors. Test with
// errors.Is; the message is the cause's alone.
var ErrUsage = errors.New("simulate: bad input")

// usageError is an input error: it matches ErrUsage, its text is the
// cause's.
type usageError struct{ error }

func (e usageError) Is(target error) bool { return target == ErrUsage }

func (e usageError) Unwrap() error { return e.error }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// GeneratorNational is the name of the generator of GenerateNational.
const GeneratorNational = "national"

// Source is a graph to simulate on, with, if any, its previous crawl.
type Source struct {
	Graph  *webgraph.Graph
	Before *webgraph.Graph // the previous crawl, or nil
	Desc   string          // what the graph is, for the output and the charts' title
}

// GenerateParams are the inputs of a Generator; each generator reads the
// fields it needs.
type GenerateParams struct {
	Pages        int     // national: pages
	Hosts        int     // test web: in-scope hosts
	MaxSitePages int     // pages of the largest site
	OutDegree    float64 // national: mean links written per page
	Seed         uint64  // random seed of the generator
	// History is how the web changed since the previous crawl (national).
	History webgraph.History
	// HistoryHosts is the previous crawl's hosts (test web); 0 means 55 %
	// of Hosts.
	HistoryHosts int
}

// A Generator makes a graph and, when history is true, the same web at an
// earlier time (Source.Before). An error wrapping ErrUsage is a bad
// parameter.
type Generator func(ctx context.Context, p GenerateParams, history bool) (*Source, error)

// GenerateNational generates a web with pkg/webgraph's growth model, and
// always its previous crawl.
func GenerateNational(ctx context.Context, p GenerateParams, history bool) (*Source, error) {
	before, after, err := webgraph.GeneratePair(webgraph.Params{Pages: p.Pages, Seed: p.Seed, MaxSitePages: p.MaxSitePages, OutDegree: p.OutDegree}, p.History)
	if err != nil {
		return nil, usage("simulate: %v", err)
	}
	return &Source{Graph: after, Before: before, Desc: fmt.Sprintf("national web of %d pages (seed %d)", p.Pages, p.Seed)}, nil
}

// Setup is everything Execute needs: what `manager simulate` reads from
// its command line (docs/simulator.md).
type Setup struct {
	// Config holds the crawl's settings (damping, and the batch model's
	// manager and seeder settings).
	Config config.Config
	// The graph: at most one of GraphFile (edge-list file), GraphDB (a
	// graph.db or collection directory) and Generate (a name of
	// Generators); with none, Collection's graph.db.
	GraphFile, GraphDB, Generate, Collection string
	// AllDocs takes every document of a graph.db, not only those fetched
	// with a status below 400.
	AllDocs bool
	// Generators are the generators Generate may name.
	Generators map[string]Generator
	// GenerateParams are the generator's parameters.
	GenerateParams GenerateParams
	// WriteGraph, when set, also receives the graph as an edge-list file
	// (gzip if it ends in .gz).
	WriteGraph string

	// SeedsFile names seed pages, one per line; RandomSeeds > 0 draws
	// that many pages at random instead. Neither: the graph's seeds.
	SeedsFile   string
	RandomSeeds int
	// Strategies is a comma-separated list, all, history, or none (only
	// describe or write the graph).
	Strategies string
	// Model is ModelPaper or ModelBatch.
	Model string
	// History is the previous crawl for the historical strategies: an
	// edge-list file, a graph.db or a collection.
	History string
	// Politeness and limits of the crawl (PaperOptions, BatchOptions).
	Robots        int
	Wait          time.Duration
	FetchTime     time.Duration
	PageRankEvery int
	SydneyT       int
	MaxFetch      int
	MaxBatches    int
	// Batch model: the stages, where the temporary collections go and
	// whether they are kept.
	Stages  Stages
	WorkDir string
	Keep    bool
	// Seed is the random seed of the random strategy, random choices and
	// the tau sample.
	Seed uint64

	TauSample int
	Points    int
	// Out, when set, is a directory that receives curves.csv, table.txt
	// and the charts; Title is their title ("" means the graph's
	// description and the model).
	Out, Title string
	Logger     *slog.Logger
}

// Execute loads or generates the graph, prints its description, and
// replays a crawl of it under each strategy, printing the table to w (and
// writing the files of Setup.Out). It is `manager simulate`.
func Execute(ctx context.Context, s Setup, w io.Writer) error {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	all := Strategies()
	switch s.Model {
	case ModelPaper:
	case ModelBatch:
		all = BatchStrategies()
	default:
		return usage("simulate: unknown --model %q (want paper or batch)", s.Model)
	}
	var strategies []string
	if s.Strategies != "none" {
		var err error
		if strategies, err = ParseStrategies(s.Strategies, all); err != nil {
			return usage("simulate: --strategies: %v", err)
		}
	}
	needHistory := false
	for _, st := range strategies {
		needHistory = needHistory || Historical(st)
	}

	t0 := time.Now()
	src, err := loadSource(ctx, s, needHistory)
	if err != nil {
		return err
	}
	g := src.Graph
	if err := chooseSeeds(s, g); err != nil {
		return err
	}
	st := g.Stats()
	fmt.Fprintf(w, "graph\t%s: %d pages, %d sites, %d links (%.0f%% internal), %d seeds, largest site %d pages (loaded in %s)\n",
		src.Desc, st.Pages, st.Sites, st.Links, 100*st.Internal, st.Seeds, st.MaxSite, time.Since(t0).Round(time.Millisecond))
	if f := s.WriteGraph; f != "" {
		if err := WriteGraphFile(f, g); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote\t%s\n", f)
	}
	if len(strategies) == 0 {
		return nil
	}

	damping := s.Config.Manager.Damping
	t0 = time.Now()
	pr, err := PageRank(ctx, g, damping)
	if err != nil {
		return err
	}
	in := Input{Graph: g, PageRank: pr, Damping: damping, Seed: s.Seed,
		Points: s.Points, TauSample: s.TauSample, MaxFetch: s.MaxFetch}
	log.Info("pagerank of the graph", "damping", damping, "elapsed", time.Since(t0).Round(time.Millisecond))
	ub := UpperBound(pr, 100)
	fmt.Fprintf(w, "pagerank\tthe top 1%% of the pages hold %.2f of it, the top 10%% %.2f, the top 50%% %.2f (damping %g)\n", ub[1], ub[10], ub[50], damping)
	if src.Before != nil {
		var m HistoryMatch
		in.History, m, err = History(ctx, src.Before, g, damping, pr)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "history\t%d pages (%.0f%%) were in the previous crawl and hold %.0f%% of the PageRank; %d pages of the previous crawl are gone\n",
			m.Known, 100*float64(m.Known)/float64(max(g.N(), 1)), 100*m.KnownRank, m.PreviousOnly)
	} else if needHistory {
		if !strings.Contains(","+s.Strategies+",", ",all,") {
			return usage("simulate: historical strategies need --history (or --generate)")
		}
		var kept []string
		for _, st := range strategies {
			if !Historical(st) {
				kept = append(kept, st)
			}
		}
		log.Warn("no previous crawl (--history): historical strategies left out")
		strategies = kept
	}

	opt := Options{
		Model:  s.Model,
		Logger: log,
		Paper: PaperOptions{Robots: s.Robots, Wait: s.Wait.Seconds(), FetchTime: s.FetchTime.Seconds(),
			PageRankEvery: s.PageRankEvery, SydneyT: s.SydneyT},
		Batch: BatchOptions{Config: s.Config, Stages: s.Stages, Dir: s.WorkDir, Keep: s.Keep,
			Robots: s.Robots, Wait: s.Wait.Seconds(), FetchTime: s.FetchTime.Seconds(),
			MaxBatches: s.MaxBatches, Logger: log},
	}
	results, err := Run(ctx, in, strategies, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := WriteTable(w, results); err != nil {
		return err
	}
	if dir := s.Out; dir != "" {
		title := s.Title
		if title == "" {
			title = fmt.Sprintf("%s, %s model", src.Desc, s.Model)
		}
		if err := WriteOutputs(dir, title, results, pr); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nwrote\t%s/{%s,%s,%s,%s,%s}\n", dir, FileCurves, FileTable, FilePageRank, FileTime, FileQueue)
	}
	return nil
}

// loadSource reads or generates the graph, and its previous crawl when
// a historical strategy needs one.
func loadSource(ctx context.Context, s Setup, needHistory bool) (*Source, error) {
	given := 0
	for _, f := range []string{s.GraphFile, s.GraphDB, s.Generate} {
		if f != "" {
			given++
		}
	}
	if given > 1 {
		return nil, usage("simulate: give one of --graph, --graph-db and --generate")
	}
	src := &Source{}
	var err error
	switch {
	case s.GraphFile != "":
		src.Desc = filepath.Base(s.GraphFile)
		src.Graph, err = webgraph.ReadFile(s.GraphFile)
	case s.Generate != "":
		gen, ok := s.Generators[s.Generate]
		if !ok {
			return nil, usage("simulate: unknown --generate %q (want %s)", s.Generate, generatorNames(s.Generators))
		}
		src, err = gen(ctx, s.GenerateParams, needHistory && s.History == "")
	default:
		path := s.GraphDB
		if path == "" {
			path = s.Collection
		}
		src.Desc = path
		src.Graph, err = loadDB(ctx, path, s.AllDocs)
	}
	if err != nil {
		return nil, err
	}
	if h := s.History; h != "" && needHistory {
		if src.Before, err = LoadGraph(ctx, h, s.AllDocs); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	return src, nil
}

// generatorNames lists the generators' names in the order "a or b", or
// "a, b or c", sorted with GeneratorNational first.
func generatorNames(gens map[string]Generator) string {
	var names []string
	if _, ok := gens[GeneratorNational]; ok {
		names = append(names, GeneratorNational)
	}
	var rest []string
	for n := range gens {
		if n != GeneratorNational {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)
	switch len(names) {
	case 0:
		return "none is available"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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

// LoadGraph reads an edge-list file, a graph.db or a collection directory
// (its graph.db); with a graph.db, all takes every document, not only
// those fetched with a status below 400.
func LoadGraph(ctx context.Context, path string, all bool) (*webgraph.Graph, error) {
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

// chooseSeeds applies Setup.SeedsFile and Setup.RandomSeeds.
func chooseSeeds(s Setup, g *webgraph.Graph) error {
	if f := s.SeedsFile; f != "" {
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
				return usage("simulate: %s:%d: %s is not a page of the graph", f, i+1, excerpt.Quote(line))
			}
			if !seen[p] {
				seen[p] = true
				g.Seeds = append(g.Seeds, p)
			}
		}
	}
	if n := s.RandomSeeds; n > 0 {
		r := rand.New(rand.NewPCG(s.Seed, 0x5eed5))
		perm := r.Perm(g.N())
		g.Seeds = g.Seeds[:0]
		for _, p := range perm[:min(n, len(perm))] {
			g.Seeds = append(g.Seeds, int32(p))
		}
	}
	if len(g.Seeds) == 0 {
		return usage("simulate: the graph has no seeds: give --seeds FILE or --random-seeds N")
	}
	return nil
}

// WriteGraphFile writes g as an edge-list file, gzip-compressed if the
// name ends in .gz, atomically.
func WriteGraphFile(path string, g *webgraph.Graph) error {
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
