package simulate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/webgraph"
)

// build makes a graph from "from>to" links over named pages; site is the
// name before the first '.', or the page itself when it has none. The
// first page named is the only seed unless seeds are given.
func build(t testing.TB, links string, seeds ...string) *webgraph.Graph {
	t.Helper()
	b := webgraph.NewBuilder()
	var order []string
	page := func(name string) {
		site, _, _ := strings.Cut(name, ".")
		if _, err := b.Page(name, site); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	for _, l := range strings.Fields(links) {
		from, to, ok := strings.Cut(l, ">")
		page(from)
		if !ok {
			continue
		}
		page(to)
		if err := b.Link(from, to); err != nil {
			t.Fatal(err)
		}
	}
	if len(seeds) == 0 {
		seeds = order[:1]
	}
	for _, s := range seeds {
		b.Seed(s)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// crawlOrder runs a strategy with one robot and no wait and returns the
// pages in fetch order.
func crawlOrder(t *testing.T, g *webgraph.Graph, strategy string, history []float64, opt PaperOptions) []string {
	t.Helper()
	pr, err := PageRank(context.Background(), g, 0.85)
	if err != nil {
		t.Fatal(err)
	}
	s := &paperSim{in: Input{Graph: g, PageRank: pr, History: history, Damping: 0.85, Seed: 1}, opt: opt.withDefaults(g.N()), strategy: strategy, g: g, n: g.N(),
		rng: rand.New(rand.NewPCG(1, 0x5eed))}
	s.init()
	if err := s.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.rec.order {
		names = append(names, g.Names[p])
	}
	return names
}

// The example graph of the strategy tests, each page on its own site:
//
//	S → A, B, C;  A → D;  B → D, E;  C → D, E, F.
const example = "S>A S>B S>C A>D B>D B>E C>D C>E C>F"

// TestStrategiesHandChecked checks each strategy's order on the example,
// worked out by hand from its definition (docs/simulator.md).
func TestStrategiesHandChecked(t *testing.T) {
	g := build(t, example)
	nan := math.NaN()
	// Previous crawl: S .1, A .05, B .3, C .2, D .01; E and F are new.
	hist := []float64{0.1, 0.05, 0.3, 0.2, 0.01, nan, nan}
	tests := []struct {
		strategy string
		want     string
		why      string
	}{
		{BreadthFirst, "S A B C D E F", "order of discovery"},
		// In-links from fetched pages: A,B,C 1 each (A first found);
		// then D 1 ties B 1 and C 1, B found first; then D 2; then C,E
		// tie at 1 (C found first), C gives E 2, F 1.
		{Backlink, "S A B D C E F", "in-links from fetched pages"},
		// Cash: S gives 1/3 to A,B,C; A (1+1/3) gives 4/3 to D; D has
		// no out-link: its 7/3 go to the 5 known pages (7/15 each); B has
		// 1+1/3+7/15 = 1.8 and gives 0.9 to E, which was known after
		// the 7/15 and so has 0.9 > C's 1/3; C last finds F.
		{OPIC, "S A D B E C F", "cash received"},
		// K > pages: only the estimate before the first fetch (the seed);
		// pages found later have 0 and come in order of discovery.
		{BatchPageRank, "S A B C D E F", "one estimate, then breadth-first"},
		// S had a computed PageRank: A, B, C get 1/3 each; pages found
		// through them (no estimate) get (1−d)/1 = 0.15 < 1/3.
		{PartialPageRank, "S A B C D E F", "temporary PageRank below the parents'"},
		// Old pages by last PageRank, new pages (0) last in discovery
		// order: S; B .3; C .2; A .05; D .01; E, F.
		{HistoricalZero, "S B C A D E F", "previous PageRank, new pages last"},
		// E gets PR(B)/2 = .15 and F gets PR(C)/3 = .067: S; B .3; C .2;
		// E .15; F .067; A .05; D .01.
		{HistoricalParent, "S B C E F A D", "new pages get PR(parent)/out(parent)"},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			got := strings.Join(crawlOrder(t, g, tt.strategy, hist, PaperOptions{PageRankEvery: 100}), " ")
			if got != tt.want {
				t.Errorf("%s (%s): order %s, want %s", tt.strategy, tt.why, got, tt.want)
			}
		})
	}
}

// TestOmniscientIsGreedy checks omniscient against its definition: the
// page of highest true PageRank among those discovered, every time.
func TestOmniscientIsGreedy(t *testing.T) {
	g := build(t, example+" D>S E>B F>E F>A")
	pr, _ := PageRank(context.Background(), g, 0.85)
	got := crawlOrder(t, g, Omniscient, nil, PaperOptions{})
	var want []string
	frontier := map[int32]bool{g.Seeds[0]: true}
	done := map[int32]bool{}
	for len(frontier) > 0 {
		best := int32(-1)
		for p := range frontier {
			if best < 0 || pr[p] > pr[best] {
				best = p
			}
		}
		delete(frontier, best)
		done[best] = true
		want = append(want, g.Names[best])
		for _, t := range g.Links.Out(int(best)) {
			if !done[int32(t)] {
				frontier[int32(t)] = true
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("omniscient %v, greedy by PageRank %v (ranks %v)", got, want, pr)
	}
}

// TestLargerSitesFirst: two sites X and Y; the site with more pending
// pages goes first, ties to the site whose oldest pending page is older.
func TestLargerSitesFirst(t *testing.T) {
	g := build(t, "x.0>x.1 x.0>y.0 x.1>x.2 x.1>x.3 y.0>y.1 y.0>y.2 y.0>y.3")
	// x.0; X{x.1}=1 ties Y{y.0}=1, x.1 older; X{x.2,x.3}=2 > 1; X{x.3}=1
	// ties Y{y.0}=1, y.0 older; Y{y.1,y.2,y.3}=3, then 2 > 1; then X{x.3}
	// ties Y{y.3}, x.3 older.
	want := "x.0 x.1 x.2 y.0 y.1 y.2 x.3 y.3"
	if got := strings.Join(crawlOrder(t, g, LargerSitesFirst, nil, PaperOptions{}), " "); got != want {
		t.Errorf("larger-sites-first %s, want %s", got, want)
	}
	if got := strings.Join(crawlOrder(t, g, BreadthFirst, nil, PaperOptions{}), " "); got != "x.0 x.1 y.0 x.2 x.3 y.1 y.2 y.3" {
		t.Errorf("breadth-first %s", got)
	}
}

// TestHistoricalRandomDrawsOldValues: a new page gets one of the
// previous crawl's PageRank values.
func TestHistoricalRandomDrawsOldValues(t *testing.T) {
	g := build(t, example)
	nan := math.NaN()
	hist := []float64{0.1, 0.05, 0.3, 0.2, 0.01, nan, nan}
	pr, _ := PageRank(context.Background(), g, 0.85)
	s := &paperSim{in: Input{Graph: g, PageRank: pr, History: hist, Seed: 3}, strategy: HistoricalRandom, g: g, n: g.N()}
	s.opt = s.opt.withDefaults(g.N())
	s.init()
	for _, p := range []int32{5, 6} {
		if k := s.initialKey(p, 2); !slices.Contains(hist[:5], k) {
			t.Errorf("page %d got %v, not a previous value", p, k)
		}
	}
	if k := s.initialKey(2, 0); k != 0.3 {
		t.Errorf("an old page got %v, want its previous PageRank 0.3", k)
	}
}

// TestPoliteness checks the time model: one site of three pages in a
// chain, fetch 1 s, wait 15 s: downloads end at 1, 17 and 33 s. With a
// second site of one page and one robot, that page fills the first wait.
func TestPoliteness(t *testing.T) {
	ctx := context.Background()
	run := func(g *webgraph.Graph, opt PaperOptions) *Result {
		pr, _ := PageRank(ctx, g, 0.85)
		r, err := RunPaper(ctx, Input{Graph: g, PageRank: pr, Points: 100}, BreadthFirst, opt)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one := build(t, "a.0>a.1 a.1>a.2")
	if r := run(one, PaperOptions{Wait: 15}); r.Time != 33 {
		t.Errorf("one site: crawl ends at %v s, want 33", r.Time)
	}
	if r := run(one, PaperOptions{}); r.Time != 3 {
		t.Errorf("no wait: crawl ends at %v s, want 3", r.Time)
	}
	two := build(t, "a.0>a.1 a.0>b.0 a.1>a.2")
	if r := run(two, PaperOptions{Wait: 15}); r.Time != 33 {
		t.Errorf("two sites: crawl ends at %v s, want 33 (b.0 fits in a wait)", r.Time)
	}
	// Two robots, two sites of 3 pages each, seeds on both: both sites
	// are downloaded side by side, 1+15+1+15+1 s.
	par := build(t, "a.0>a.1 a.1>a.2 b.0>b.1 b.1>b.2", "a.0", "b.0")
	if r := run(par, PaperOptions{Wait: 15, Robots: 2}); r.Time != 33 || r.Fetched != 6 {
		t.Errorf("two robots: %d pages by %v s, want 6 by 33", r.Fetched, r.Time)
	}
	if r := run(par, PaperOptions{Wait: 15, Robots: 1}); r.Time != 34 {
		t.Errorf("one robot: ends at %v s, want 34", r.Time)
	}
}

// TestSydney: a seed with 10 new links and T = 3 takes 3 into the
// frontier and parks the other 7; they come back, 3 at a time, when the
// frontier empties, and the crawl still fetches every page.
func TestSydney(t *testing.T) {
	var links []string
	for i := 0; i < 10; i++ {
		links = append(links, fmt.Sprintf("s>p%d", i))
	}
	g := build(t, strings.Join(links, " "))
	pr, _ := PageRank(context.Background(), g, 0.85)
	r, err := RunPaper(context.Background(), Input{Graph: g, PageRank: pr, Points: 11}, BreadthFirst, PaperOptions{SydneyT: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fetched != 11 {
		t.Fatalf("fetched %d of 11", r.Fetched)
	}
	first := r.Curve[1]
	// The seed is parked with its 7 other links (the secondary queue
	// holds pages, as in the paper).
	if first.Pending != 3 || first.Parked != 1 {
		t.Errorf("after the seed: %d pending, %d parked, want 3 and 1", first.Pending, first.Parked)
	}
	if r.MaxQueue != 4 {
		t.Errorf("max queue %d, want 4", r.MaxQueue)
	}
	plain, _ := RunPaper(context.Background(), Input{Graph: g, PageRank: pr, Points: 11}, BreadthFirst, PaperOptions{})
	if plain.Curve[1].Pending != 10 || plain.Curve[1].Parked != 0 {
		t.Errorf("without Sydney: %+v", plain.Curve[1])
	}
}

func TestCumulativePageRankHandChecked(t *testing.T) {
	// A → B, A → C, B → C, C → A: ranks 686/1769, 380/1769, 703/1769
	// (pkg/pagerank's classic example). Breadth-first from A fetches A,
	// B, C: the curve is 686, 1066, 1769 (/1769).
	g := build(t, "A>B A>C B>C C>A")
	pr, _ := PageRank(context.Background(), g, 0.85)
	r, err := RunPaper(context.Background(), Input{Graph: g, PageRank: pr, Points: 3}, BreadthFirst, PaperOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 686.0 / 1769, 1066.0 / 1769, 1}
	if len(r.Curve) != 4 {
		t.Fatalf("curve %+v", r.Curve)
	}
	for i, p := range r.Curve {
		if math.Abs(p.PageRank-want[i]) > 1e-6 || p.Fetched != i {
			t.Errorf("point %d: %+v, want cumulative %v", i, p, want[i])
		}
	}
	if avg := (686.0 + 1066 + 1769) / 1769 / 3; math.Abs(r.AvgPageRank-avg) > 1e-6 {
		t.Errorf("average %v, want %v", r.AvgPageRank, avg)
	}
	// Fetch order A, B, C against PageRank order C, A, B: pairs (A,B)
	// concordant, (A,C) and (B,C) discordant: τ = −1/3.
	if math.Abs(r.Tau+1.0/3) > 1e-9 {
		t.Errorf("τ = %v, want −1/3", r.Tau)
	}
}

func TestRunPaperErrors(t *testing.T) {
	g := build(t, example)
	pr, _ := PageRank(context.Background(), g, 0.85)
	in := Input{Graph: g, PageRank: pr}
	if _, err := RunPaper(context.Background(), in, "depth-first", PaperOptions{}); err == nil {
		t.Error("unknown strategy accepted")
	}
	if _, err := RunPaper(context.Background(), in, HistoricalZero, PaperOptions{}); err == nil || !strings.Contains(err.Error(), "previous crawl") {
		t.Errorf("historical without history: %v", err)
	}
	g.Seeds = nil
	if _, err := RunPaper(context.Background(), in, BreadthFirst, PaperOptions{}); err == nil {
		t.Error("a graph without seeds accepted")
	}
}

// TestOmniscientFirstRandomDiagonal is the check: on a national
// graph omniscient has at least the cumulative PageRank of every other
// strategy early in the crawl, and on a large random graph (uniform
// links, nearly uniform PageRank) the random strategy follows the
// diagonal.
func TestOmniscientFirstRandomDiagonal(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 12 strategies on 20,000 pages")
	}
	ctx := context.Background()
	before, g, err := webgraph.GeneratePair(webgraph.Params{Pages: 20000, Seed: 5}, webgraph.History{})
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := PageRank(ctx, g, 0.85)
	hist, _, err := History(ctx, before, g, 0.85, pr)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Graph: g, PageRank: pr, History: hist, Seed: 1}
	res, err := Run(ctx, in, Strategies(), Options{Model: ModelPaper, Paper: PaperOptions{Wait: 15}})
	if err != nil {
		t.Fatal(err)
	}
	omni := res[len(res)-1]
	if omni.Strategy != Omniscient {
		t.Fatal("omniscient is not last")
	}
	for _, f := range []float64{0.01, 0.05, 0.1, 0.2} {
		for _, r := range res {
			if At(r, f) > At(omni, f)+1e-9 {
				t.Errorf("at %.0f%% of the pages %s has %.4f > omniscient %.4f", 100*f, r.Strategy, At(r, f), At(omni, f))
			}
		}
	}

	// A random graph: 20,000 pages on 200 sites, 10 random links each.
	rg := randomGraph(20000, 200, 10, 9)
	rpr, _ := PageRank(ctx, rg, 0.85)
	r, err := RunPaper(ctx, Input{Graph: rg, PageRank: rpr, Seed: 4}, Random, PaperOptions{Wait: 15})
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, p := range r.Curve {
		worst = math.Max(worst, math.Abs(p.PageRank-p.Fraction))
	}
	if worst > 0.03 || r.Fetched != rg.N() {
		t.Errorf("random strategy strays %.3f from the diagonal (fetched %d of %d)", worst, r.Fetched, rg.N())
	}
	if math.Abs(r.AvgPageRank-0.5) > 0.02 {
		t.Errorf("random: average cumulative PageRank %.3f, want about 0.5", r.AvgPageRank)
	}
}

// randomGraph has n pages spread evenly over sites, each with k links to
// pages drawn uniformly, and 10 seeds.
func randomGraph(n, sites, k int, seed uint64) *webgraph.Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	g := &webgraph.Graph{Names: make([]string, n), Site: make([]int32, n), SiteNames: make([]string, sites)}
	for s := range g.SiteNames {
		g.SiteNames[s] = fmt.Sprint("site", s)
	}
	var src, dst []int32
	for p := 0; p < n; p++ {
		g.Names[p] = fmt.Sprint("p", p)
		g.Site[p] = int32(p % sites)
		for range k {
			src = append(src, int32(p))
			dst = append(dst, r.Int32N(int32(n)))
		}
	}
	g.Links = webgraph.CSR(n, src, dst)
	for i := 0; i < 10; i++ {
		g.Seeds = append(g.Seeds, int32(i*n/10))
	}
	return g
}
