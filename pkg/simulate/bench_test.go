package simulate

import (
	"context"
	"testing"

	"github.com/wirecrawl/wire/pkg/webgraph"
)

// BenchmarkRunPaper times the paper model on a generated national web of
// 100,000 pages (1.5 million links), one strategy per sub-benchmark.
// scripts/bench-simulate.sh runs the million-page version through the
// command.
func BenchmarkRunPaper(b *testing.B) {
	ctx := context.Background()
	g, err := webgraph.Generate(webgraph.Params{Pages: 100000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	pr, err := PageRank(ctx, g, 0.85)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Graph: g, PageRank: pr, Seed: 1}
	for _, s := range []string{BreadthFirst, Backlink, OPIC, LargerSitesFirst, Omniscient, Random, PartialPageRank} {
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				if _, err := RunPaper(ctx, in, s, PaperOptions{Wait: 15}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(g.N())*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// BenchmarkGenerate times the national-web generator.
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := webgraph.Generate(webgraph.Params{Pages: 100000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
