package simulate

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// Stages are the crawler's own stages, which the batch model runs. A
// library does not import the stage packages (pkg/layers_test.go), so the
// caller passes them: the manager binary gives pkg/seeder's Init, AddSeeds
// and Run and pkg/manager's Run and ImportHistory
// (pkg/manager/simstages); the tests build the same.
type Stages struct {
	// Init creates a collection in dir with the settings cfg.
	Init func(dir string, cfg config.Config) error
	// AddSeeds injects seed URLs and returns how many were new.
	AddSeeds func(ctx context.Context, col *collection.Collection, cfg config.Config, urls []string) (int, error)
	// Manage writes the next batch at time now and returns its id; an
	// error wrapping collection.ErrNothingToDo ends the crawl.
	Manage func(ctx context.Context, col *collection.Collection, cfg config.Config, now time.Time) (int, error)
	// Seed takes batch id, harvested and gathered, into graph.db and
	// returns the number of new URLs.
	Seed func(ctx context.Context, col *collection.Collection, cfg config.Config, id int) (int, error)
	// ImportHistory gives the collection the PageRank of a previous crawl
	// from a PageRank file (historical strategies).
	ImportHistory func(ctx context.Context, col *collection.Collection, cfg config.Config, file string) error
}

// BatchOptions configure the batch model.
type BatchOptions struct {
	// Config holds the crawl's settings: the manager's (batch size, limits,
	// value function) and the seeder's (scope caps). The strategy is set
	// per run; scope.domains is replaced by the top-level domains of the
	// graph's URLs so that every page of the graph is in scope.
	Config config.Config
	Stages Stages
	// Dir is where the temporary collections are made ("" means the
	// system's temporary directory). Each run's collection is removed at
	// the end unless Keep.
	Dir  string
	Keep bool
	// Politeness model that times each batch's download, as in the paper
	// model: Robots downloads at once, Wait seconds between two visits to
	// a site, FetchTime seconds per download (defaults 1, 0, 1).
	Robots    int
	Wait      float64
	FetchTime float64
	// MaxBatches stops the crawl after this many batches (0: no limit).
	MaxBatches int
	Logger     *slog.Logger // progress, one line per batch; nil discards
}

// BatchStrategies are the strategies of the batch model: every estimator
// of the manager (the historical one once per way of valuing new pages),
// then omniscient and random, whose batches the simulator picks itself
// under the same batch limits.
func BatchStrategies() []string {
	var out []string
	for _, s := range config.Strategies() {
		if s == "historical" {
			for _, k := range config.HistoricalNewPages() {
				out = append(out, "historical-"+k)
			}
			continue
		}
		out = append(out, s)
	}
	return append(out, Omniscient, Random)
}

// Start is the simulated time at which every crawl of the batch model
// begins (a fixed instant, so runs are reproducible).
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// RunBatch simulates a crawl of in.Graph in which the manager writes each
// batch. For omniscient and random the simulator picks the batches from
// the pages discovered so far, in order of true PageRank or at random,
// within manager.batch_size and manager.max_pages_per_site (no depth
// limits, no graph.db).
func RunBatch(ctx context.Context, in Input, strategy string, opt BatchOptions) (*Result, error) {
	if !slices.Contains(BatchStrategies(), strategy) {
		return nil, fmt.Errorf("simulate: unknown strategy %q for the batch model (want one of %s)", strategy, strings.Join(BatchStrategies(), ", "))
	}
	if len(in.PageRank) != in.Graph.N() {
		return nil, fmt.Errorf("simulate: %d PageRank values for %d pages", len(in.PageRank), in.Graph.N())
	}
	if len(in.Graph.Seeds) == 0 {
		return nil, errors.New("simulate: the graph has no seeds")
	}
	if opt.Robots <= 0 {
		opt.Robots = 1
	}
	if opt.FetchTime <= 0 {
		opt.FetchTime = 1
	}
	opt.Wait = max(opt.Wait, 0)
	// The model times the downloads itself and its oracle strategies
	// fill batches by batch_size and max_pages_per_site alone: the
	// manager's time budget (sized from measured servers the model does
	// not have) is off, so that every strategy is limited the same way.
	opt.Config.Manager.BatchDuration = 0
	if strategy == Omniscient || strategy == Random {
		return runOracleBatches(ctx, in, strategy, opt)
	}
	if opt.Stages.Init == nil || opt.Stages.AddSeeds == nil || opt.Stages.Manage == nil || opt.Stages.Seed == nil {
		return nil, errors.New("simulate: the batch model needs the crawler's stages")
	}
	b, err := newBatchSim(in, strategy, opt)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if err := b.run(ctx); err != nil {
		return nil, fmt.Errorf("simulate %s (batch model, collection %s): %w", strategy, b.dir, err)
	}
	r := b.rec.result(strategy, "batch", in.TauSample, in.Seed)
	r.Batches = b.batches
	return r, nil
}

// CrawlURLs returns the URL of each page for a crawl in a collection: the
// page names when they all are normalised http(s) URLs, otherwise
// "http://sS.sim/pP" for page P of site S.
func CrawlURLs(g *webgraph.Graph) []string {
	norm := urlnorm.New(0)
	urls := make([]string, g.N())
	for p, name := range g.Names {
		if u, err := norm.Normalize(name); err != nil || u != name {
			for q := range urls {
				urls[q] = "http://s" + strconv.Itoa(int(g.Site[q])) + ".sim/p" + strconv.Itoa(q)
			}
			return urls
		}
		urls[p] = name
	}
	return urls
}

// topDomains returns the last label of every URL's host, sorted: the
// scope.domains that keep every page in scope.
func topDomains(urls []string) []string {
	set := map[string]bool{}
	for _, u := range urls {
		h := urlnorm.Host(u)
		if i := strings.LastIndexByte(h, '.'); i >= 0 {
			h = h[i+1:]
		}
		if h != "" {
			set[h] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// batchSim is one crawl of the batch model.
type batchSim struct {
	in       Input
	opt      BatchOptions
	strategy string
	cfg      config.Config
	dir      string
	col      *collection.Collection
	log      *slog.Logger
	urls     []string
	byURL    map[string]int32
	fetched  []bool
	known    int // URLs the collection holds
	batches  int
	now      time.Time
	rec      *recorder
}

func newBatchSim(in Input, strategy string, opt BatchOptions) (*batchSim, error) {
	b := &batchSim{in: in, opt: opt, strategy: strategy, cfg: opt.Config, log: opt.Logger, now: Start}
	if b.log == nil {
		b.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b.cfg.Manager.Strategy = strategy
	if k, ok := strings.CutPrefix(strategy, "historical-"); ok {
		b.cfg.Manager.Strategy = "historical"
		b.cfg.Manager.HistoricalNewPages = k
	}
	b.urls = CrawlURLs(in.Graph)
	b.cfg.Scope.Domains = topDomains(b.urls)
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("simulate: settings: %w", err)
	}
	b.byURL = make(map[string]int32, len(b.urls))
	for p, u := range b.urls {
		b.byURL[u] = int32(p)
	}
	b.fetched = make([]bool, in.Graph.N())
	b.rec = newRecorder(in.PageRank, in.Points)
	return b, nil
}

func (b *batchSim) close() {
	if b.dir != "" && !b.opt.Keep {
		os.RemoveAll(b.dir)
	}
}

func (b *batchSim) run(ctx context.Context) error {
	dir, err := os.MkdirTemp(b.opt.Dir, "wire-simulate-"+b.strategy+"-")
	if err != nil {
		return fmt.Errorf("make collection: %w", err)
	}
	b.dir = dir
	st := b.opt.Stages
	if err := st.Init(dir, b.cfg); err != nil {
		return err
	}
	if b.col, err = collection.Open(dir); err != nil {
		return err
	}
	if Historical(b.strategy) {
		if err := b.importHistory(ctx); err != nil {
			return err
		}
	}
	seeds := make([]string, len(b.in.Graph.Seeds))
	for i, p := range b.in.Graph.Seeds {
		seeds[i] = b.urls[p]
	}
	if b.known, err = st.AddSeeds(ctx, b.col, b.cfg, seeds); err != nil {
		return fmt.Errorf("add seeds: %w", err)
	}
	for b.opt.MaxBatches == 0 || b.batches < b.opt.MaxBatches {
		if b.in.MaxFetch > 0 && len(b.rec.order) >= b.in.MaxFetch {
			break
		}
		t0 := time.Now()
		id, err := st.Manage(ctx, b.col, b.cfg, b.now)
		if errors.Is(err, collection.ErrNothingToDo) {
			break
		}
		if err != nil {
			return err
		}
		b.batches++
		_, entries, err := batch.ReadFile(b.col.Batch(id).File())
		if err != nil {
			return err
		}
		tManage := time.Since(t0)
		end, err := b.download(id, entries)
		if err != nil {
			return err
		}
		t1 := time.Now()
		added, err := st.Seed(ctx, b.col, b.cfg, id)
		if err != nil {
			return err
		}
		b.known += added
		b.log.Info("batch", "strategy", b.strategy, "batch", id, "urls", len(entries), "fetched", len(b.rec.order),
			"known", b.known, "manage", tManage.Round(time.Millisecond), "seed", time.Since(t1).Round(time.Millisecond))
		b.now = end.Add(time.Second)
	}
	return nil
}

// importHistory writes the previous crawl's PageRank (Input.History) as
// a PageRank file and imports it.
func (b *batchSim) importHistory(ctx context.Context) error {
	if len(b.in.History) != len(b.urls) || b.opt.Stages.ImportHistory == nil {
		return fmt.Errorf("strategy %s needs the PageRank of a previous crawl (--history)", b.strategy)
	}
	file := filepath.Join(b.dir, "history.pagerank")
	err := collection.WriteAtomic(file, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString("# wire-pagerank 1\n")
		for p, v := range b.in.History {
			if !math.IsNaN(v) {
				bw.WriteString(b.urls[p] + "\t" + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return b.opt.Stages.ImportHistory(ctx, b.col, b.cfg, file)
}

// download plays the harvester and the gatherer for batch id: it times
// the downloads, records the first fetch of each page, and writes the
// harvest marker and the parsed records (status 200, the page's
// out-links) for the seeder. It returns when the last download ended.
func (b *batchSim) download(id int, entries []batch.Entry) (time.Time, error) {
	bt := b.col.Batch(id)
	pages := make([]int32, len(entries))
	for i, e := range entries {
		p, ok := b.byURL[e.URL]
		if !ok {
			return time.Time{}, fmt.Errorf("batch %d: %s is not a page of the graph", id, e.URL)
		}
		pages[i] = p
	}
	offsets, span := harvestTimes(b.in.Graph, pages, b.opt.Robots, b.opt.Wait, b.opt.FetchTime)
	order := make([]int, len(pages))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(offsets[x], offsets[y]) })
	base := b.now.Sub(Start).Seconds()
	for _, i := range order {
		if p := pages[i]; !b.fetched[p] {
			b.fetched[p] = true
			pend := b.known - len(b.rec.order) - 1
			b.rec.fetched(p, base+offsets[i], max(pend, 0), 0)
		}
	}
	if err := os.MkdirAll(bt.HarvestPath(), 0o755); err != nil {
		return time.Time{}, err
	}
	summary := map[string]any{"simulated": true, "urls": len(entries)}
	if err := bt.MarkDone(collection.StageHarvested, summary); err != nil {
		return time.Time{}, err
	}
	if err := os.MkdirAll(bt.ParsedPath(), 0o755); err != nil {
		return time.Time{}, err
	}
	file := filepath.Join(bt.ParsedPath(), parsed.DocsFile)
	err := collection.WriteAtomic(file, func(w io.Writer) error {
		pw := parsed.NewWriter(w)
		for i, e := range entries {
			p := pages[i]
			d := &parsed.Doc{
				V:         parsed.Version,
				DocID:     e.DocID,
				URL:       e.URL,
				Status:    200,
				Fetched:   b.now.Add(time.Duration(offsets[i] * float64(time.Second))).UTC(),
				MIME:      "text/html",
				Bytes:     10000,
				TextBytes: 2000,
				Hash:      strconv.FormatUint(uint64(p)*0x9e3779b97f4a7c15, 16), // fixed per page: revisits find it unchanged
			}
			for _, t := range b.in.Graph.Links.Out(int(p)) {
				d.Links = append(d.Links, parsed.Link{URL: b.urls[t]})
			}
			if err := pw.Write(d); err != nil {
				return err
			}
		}
		return pw.Flush()
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("write parsed records of batch %d: %w", id, err)
	}
	if err := bt.MarkDone(collection.StageGathered, summary); err != nil {
		return time.Time{}, err
	}
	return b.now.Add(time.Duration(span * float64(time.Second))), nil
}

// harvestTimes times the download of a batch, pages in batch order, with
// the politeness model of the paper: r downloads at once, one per site at
// a time, wait seconds between two downloads from a site, fetch seconds
// each; a free robot takes the site whose next page comes first in the
// batch. It returns when each download ends (seconds from the start of
// the batch) and when the last one ends.
func harvestTimes(g *webgraph.Graph, pages []int32, robots int, wait, fetch float64) ([]float64, float64) {
	bySite := map[int32][]int32{} // site → indexes into pages, in batch order
	var sites []int32
	for i, p := range pages {
		s := g.Site[p]
		if _, ok := bySite[s]; !ok {
			sites = append(sites, s)
		}
		bySite[s] = append(bySite[s], int32(i))
	}
	queues := make([][]int32, len(sites))
	for i, s := range sites {
		queues[i] = bySite[s]
	}
	pos := make([]int32, len(sites))
	for i := range pos {
		pos[i] = -1
	}
	ready := iheap{pos: pos, less: func(a, b int32) bool { return queues[a][0] < queues[b][0] }}
	for i := range sites {
		ready.Push(int32(i))
	}
	var busy, cooling eventQueue
	ends := make([]float64, len(pages))
	free := robots
	now, last := 0.0, 0.0
	for ready.Len() > 0 || busy.Len() > 0 || cooling.Len() > 0 {
		for free > 0 && ready.Len() > 0 {
			s := ready.Pop()
			i := queues[s][0]
			queues[s] = queues[s][1:]
			ends[i] = now + fetch
			busy.push(event{at: now + fetch, id: s})
			free--
		}
		switch {
		case busy.Len() > 0:
			now = busy.min().at
			if free > 0 && cooling.Len() > 0 {
				now = math.Min(now, cooling.min().at)
			}
		case cooling.Len() > 0:
			now = cooling.min().at
		}
		for busy.Len() > 0 && busy.min().at <= now {
			e := busy.pop()
			last = math.Max(last, e.at)
			free++
			if len(queues[e.id]) > 0 {
				cooling.push(event{at: now + wait, id: e.id})
			}
		}
		for cooling.Len() > 0 && cooling.min().at <= now {
			ready.Push(cooling.pop().id)
		}
	}
	return ends, last
}

// runOracleBatches is the batch model for omniscient and random: batches
// of manager.batch_size pages, at most manager.max_pages_per_site per
// site, chosen from the pages discovered so far by true PageRank or at
// random, downloaded with the same timing.
func runOracleBatches(ctx context.Context, in Input, strategy string, opt BatchOptions) (*Result, error) {
	g := in.Graph
	n := g.N()
	m := opt.Config.Manager
	if m.BatchSize <= 0 || m.MaxPagesPerSite <= 0 {
		return nil, errors.New("simulate: batch size and pages per site must be positive")
	}
	key := in.PageRank
	if strategy == Random {
		s := &paperSim{in: in}
		key = make([]float64, n)
		for p := range key {
			key[p] = s.hash01(int32(p), 1)
		}
	}
	known := make([]bool, n)
	var frontier []int32
	for _, p := range g.Seeds {
		if !known[p] {
			known[p] = true
			frontier = append(frontier, p)
		}
	}
	rec := newRecorder(in.PageRank, in.Points)
	nKnown := len(frontier)
	now := 0.0
	batches := 0
	for len(frontier) > 0 && (opt.MaxBatches == 0 || batches < opt.MaxBatches) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.MaxFetch > 0 && len(rec.order) >= in.MaxFetch {
			break
		}
		slices.SortFunc(frontier, func(a, b int32) int {
			if c := cmp.Compare(key[b], key[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		perSite := map[int32]int{}
		var chosen, rest []int32
		for _, p := range frontier {
			if len(chosen) < m.BatchSize && perSite[g.Site[p]] < m.MaxPagesPerSite {
				perSite[g.Site[p]]++
				chosen = append(chosen, p)
			} else {
				rest = append(rest, p)
			}
		}
		frontier = rest
		batches++
		offsets, span := harvestTimes(g, chosen, opt.Robots, opt.Wait, opt.FetchTime)
		order := make([]int, len(chosen))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(offsets[x], offsets[y]) })
		for _, i := range order {
			rec.fetched(chosen[i], now+offsets[i], max(nKnown-len(rec.order)-1, 0), 0)
		}
		for _, p := range chosen {
			for _, t := range g.Links.Out(int(p)) {
				if !known[t] {
					known[t] = true
					nKnown++
					frontier = append(frontier, int32(t))
				}
			}
		}
		now += span + 1
	}
	r := rec.result(strategy, "batch", in.TauSample, in.Seed)
	r.Batches = batches
	return r, nil
}
