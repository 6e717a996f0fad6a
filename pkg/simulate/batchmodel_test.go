package simulate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager/simstages"
	"github.com/wirecrawl/wire/pkg/simulate"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// TestBatchModelBreadthFirst follows the manager's breadth-first batches
// of two pages on the example graph (each page its own site): {S}, then
// the pages found in batch 1 by doc id {A, B}, then {C, D}, then {E, F}.
func TestBatchModelBreadthFirst(t *testing.T) {
	g := simulate.Build(t, simulate.Example)
	pr, _ := simulate.PageRank(context.Background(), g, 0.85)
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 2
	r, err := simulate.RunBatch(context.Background(), simulate.Input{Graph: g, PageRank: pr, Points: 7}, simulate.BreadthFirst,
		simulate.BatchOptions{Config: cfg, Stages: simstages.Crawler(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Batches != 4 || r.Fetched != 7 {
		t.Fatalf("%d batches, %d pages, want 4 and 7", r.Batches, r.Fetched)
	}
	// The curve follows the order S A B C D E F.
	want := 0.0
	for i, name := range strings.Fields("S A B C D E F") {
		want += pr[g.Index()[name]]
		if got := r.Curve[i+1].PageRank; got-want > 1e-12 || want-got > 1e-12 {
			t.Fatalf("after %d pages cumulative PageRank %v, want %v (through %s)", i+1, got, want, name)
		}
	}
	// One robot, no wait, 1 s per page: batch k starts a second after
	// the previous ends.
	if r.Time != 7+3 {
		t.Errorf("crawl ends at %v s, want 10", r.Time)
	}
}

// TestBatchModelAllStrategies runs every strategy of the batch model,
// the historical ones through the manager's history import, on a small
// national graph.
func TestBatchModelAllStrategies(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls 3,000 pages 11 times through the manager and the seeder")
	}
	ctx := context.Background()
	before, g, err := webgraph.GeneratePair(webgraph.Params{Pages: 3000, Seed: 2, Seeds: 5}, webgraph.History{})
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := simulate.PageRank(ctx, g, 0.85)
	hist, _, _ := simulate.History(ctx, before, g, 0.85, pr)
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 300
	cfg.Manager.PageRankInterval = 600
	in := simulate.Input{Graph: g, PageRank: pr, History: hist, Seed: 1}
	res, err := simulate.Run(ctx, in, simulate.BatchStrategies(), simulate.Options{Model: simulate.ModelBatch,
		Batch: simulate.BatchOptions{Config: cfg, Stages: simstages.Crawler(), Dir: t.TempDir(), Robots: 10, Wait: 15}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*simulate.Result{}
	for _, r := range res {
		byName[r.Strategy] = r
		if r.Fetched < g.N()*9/10 || r.Batches < 10 {
			t.Errorf("%s: %d of %d pages in %d batches", r.Strategy, r.Fetched, g.N(), r.Batches)
		}
		for i := 1; i < len(r.Curve); i++ {
			a, b := r.Curve[i-1], r.Curve[i]
			if b.Fetched < a.Fetched || b.PageRank < a.PageRank-1e-12 || b.Time < a.Time {
				t.Fatalf("%s: curve goes back at point %d: %+v then %+v", r.Strategy, i, a, b)
			}
		}
	}
	if o, r := byName[simulate.Omniscient], byName[simulate.Random]; o.AvgPageRank <= r.AvgPageRank {
		t.Errorf("omniscient %.4f not above random %.4f", o.AvgPageRank, r.AvgPageRank)
	}
}

func TestBatchModelErrors(t *testing.T) {
	g := simulate.Build(t, simulate.Example)
	pr, _ := simulate.PageRank(context.Background(), g, 0.85)
	in := simulate.Input{Graph: g, PageRank: pr}
	if _, err := simulate.RunBatch(context.Background(), in, "historical-omniscient", simulate.BatchOptions{}); err == nil {
		t.Error("a strategy the manager lacks was accepted")
	}
	if _, err := simulate.RunBatch(context.Background(), in, simulate.BreadthFirst, simulate.BatchOptions{Config: config.Defaults()}); err == nil {
		t.Error("ran without the stages")
	}
	if _, err := simulate.RunBatch(context.Background(), in, "historical-zero", simulate.BatchOptions{Config: config.Defaults(), Stages: simstages.Crawler(), Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "previous crawl") {
		t.Errorf("historical without history: %v", err)
	}
}
