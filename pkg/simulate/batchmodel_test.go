package simulate

import (
	"context"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// TestBatchModelBreadthFirst follows the manager's breadth-first batches
// of two pages on the example graph (each page its own site): {S}, then
// the pages found in batch 1 by doc id {A, B}, then {C, D}, then {E, F}.
func TestBatchModelBreadthFirst(t *testing.T) {
	g := build(t, example)
	pr, _ := PageRank(context.Background(), g, 0.85)
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 2
	r, err := RunBatch(context.Background(), Input{Graph: g, PageRank: pr, Points: 7}, BreadthFirst,
		BatchOptions{Config: cfg, Stages: crawlerStages(), Dir: t.TempDir()})
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
	pr, _ := PageRank(ctx, g, 0.85)
	hist, _, _ := History(ctx, before, g, 0.85, pr)
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 300
	cfg.Manager.PageRankInterval = 600
	in := Input{Graph: g, PageRank: pr, History: hist, Seed: 1}
	res, err := Run(ctx, in, BatchStrategies(), Options{Model: ModelBatch,
		Batch: BatchOptions{Config: cfg, Stages: crawlerStages(), Dir: t.TempDir(), Robots: 10, Wait: 15}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Result{}
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
	if o, r := byName[Omniscient], byName[Random]; o.AvgPageRank <= r.AvgPageRank {
		t.Errorf("omniscient %.4f not above random %.4f", o.AvgPageRank, r.AvgPageRank)
	}
}

func TestBatchModelErrors(t *testing.T) {
	g := build(t, example)
	pr, _ := PageRank(context.Background(), g, 0.85)
	in := Input{Graph: g, PageRank: pr}
	if _, err := RunBatch(context.Background(), in, "historical-omniscient", BatchOptions{}); err == nil {
		t.Error("a strategy the manager lacks was accepted")
	}
	if _, err := RunBatch(context.Background(), in, BreadthFirst, BatchOptions{Config: config.Defaults()}); err == nil {
		t.Error("ran without the stages")
	}
	if _, err := RunBatch(context.Background(), in, "historical-zero", BatchOptions{Config: config.Defaults(), Stages: crawlerStages(), Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "previous crawl") {
		t.Errorf("historical without history: %v", err)
	}
}
