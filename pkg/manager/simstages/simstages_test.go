package simstages

import (
	"context"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/simulate"
)

// The batch model runs the real manager and seeder on a small generated
// web, historical strategy included (the manager's history import).
func TestCrawler(t *testing.T) {
	src, err := simulate.GenerateNational(context.Background(), simulate.GenerateParams{Pages: 300, MaxSitePages: 50, OutDegree: 5, Seed: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	g := src.Graph
	pr, err := simulate.PageRank(context.Background(), g, 0.85)
	if err != nil {
		t.Fatal(err)
	}
	hist, _, err := simulate.History(context.Background(), src.Before, g, 0.85, pr)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Manager.BatchSize = 50
	in := simulate.Input{Graph: g, PageRank: pr, Damping: 0.85, History: hist, Points: 10, TauSample: 100, Seed: 1}
	for _, strategy := range []string{simulate.BreadthFirst, "historical-parent"} {
		r, err := simulate.RunBatch(context.Background(), in, strategy, simulate.BatchOptions{Config: cfg, Stages: Crawler(), Dir: t.TempDir(), MaxBatches: 3})
		if err != nil {
			t.Fatalf("%s: %v", strategy, err)
		}
		if r.Batches != 3 || r.Fetched == 0 || r.Fetched > 150 {
			t.Errorf("%s: %d batches, %d pages; want 3 batches of at most 50", strategy, r.Batches, r.Fetched)
		}
	}
}

// A seed list with no URL in scope is an error that names the first
// line kept out.
func TestAddSeedsNoneAdded(t *testing.T) {
	cfg := config.Defaults()
	st := Crawler()
	dir := t.TempDir() + "/col"
	if err := st.Init(dir, cfg); err != nil {
		t.Fatal(err)
	}
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.AddSeeds(context.Background(), col, cfg, []string{"http://example.com/"})
	if err == nil || !strings.Contains(err.Error(), "no seed was added: seeds:1:") {
		t.Errorf("error %v, want no seed added with the line", err)
	}
	if _, err := st.AddSeeds(context.Background(), col, cfg, nil); err == nil || !strings.Contains(err.Error(), "the list was empty") {
		t.Errorf("empty list: %v", err)
	}
	n, err := st.AddSeeds(context.Background(), col, cfg, []string{"http://a.cl/"})
	if err != nil || n != 1 {
		t.Errorf("one seed: %d, %v", n, err)
	}
}
