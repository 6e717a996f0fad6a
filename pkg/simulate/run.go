package simulate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Models.
const (
	ModelPaper = "paper"
	ModelBatch = "batch"
)

// Options choose the model and its settings for Run.
type Options struct {
	Model  string // ModelPaper or ModelBatch
	Paper  PaperOptions
	Batch  BatchOptions
	Logger *slog.Logger // one line per strategy; nil discards
}

// Run simulates every strategy in turn on the same input and returns the
// results in the same order, with the wall-clock time each took.
func Run(ctx context.Context, in Input, strategies []string, opt Options) ([]*Result, error) {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var out []*Result
	for _, s := range strategies {
		t0 := time.Now()
		var r *Result
		var err error
		switch opt.Model {
		case ModelPaper, "":
			r, err = RunPaper(ctx, in, s, opt.Paper)
		case ModelBatch:
			r, err = RunBatch(ctx, in, s, opt.Batch)
		default:
			return nil, fmt.Errorf("simulate: unknown model %q (want paper or batch)", opt.Model)
		}
		if err != nil {
			return nil, err
		}
		r.Elapsed = time.Since(t0).Seconds()
		log.Info("strategy done", "strategy", s, "model", r.Model, "avg_pagerank", fmt.Sprintf("%.4f", r.AvgPageRank),
			"tau", fmt.Sprintf("%.4f", r.Tau), "fetched", r.Fetched, "elapsed", time.Duration(r.Elapsed*float64(time.Second)).Round(time.Millisecond))
		out = append(out, r)
	}
	return out, nil
}

// Output files written by WriteOutputs into a directory.
const (
	FileCurves   = "curves.csv"   // every point of every curve
	FileTable    = "table.txt"    // the summary table
	FilePageRank = "pagerank.svg" // cumulative PageRank against the fraction of pages
	FileTime     = "time.svg"     // cumulative PageRank against simulated time
	FileQueue    = "queue.svg"    // pending queue against the fraction of pages
)

// WriteOutputs writes the curves, the table and the three charts of
// results into dir (created if needed), each file atomically. title
// heads the charts; pr, the true PageRank of the graph, draws the upper
// bound.
func WriteOutputs(dir, title string, results []*Result, pr []float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{FileCurves, func(w io.Writer) error { return WriteCSV(w, results) }},
		{FileTable, func(w io.Writer) error { return WriteTable(w, results) }},
		{FilePageRank, PageRankChart(title, results, pr).WriteSVG},
		{FileTime, TimeChart(title, results).WriteSVG},
		{FileQueue, QueueChart(title, results).WriteSVG},
	}
	for _, f := range files {
		if err := collection.WriteAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	return nil
}

// Sorted returns the results by decreasing average cumulative PageRank.
func Sorted(results []*Result) []*Result {
	s := slices.Clone(results)
	slices.SortStableFunc(s, func(a, b *Result) int {
		switch {
		case a.AvgPageRank > b.AvgPageRank:
			return -1
		case a.AvgPageRank < b.AvgPageRank:
			return 1
		}
		return 0
	})
	return s
}
