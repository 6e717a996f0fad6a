package seeder_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/seeder"
	"github.com/wirecrawl/wire/pkg/seeder/internal/benchgen"
)

var benchPages = flag.Int("bench.pages", 10000, "pages of the batch of BenchmarkRun (scripts/bench-seeder.sh uses 100000)")

// BenchmarkRun takes in a generated batch (pkg/seeder/internal/benchgen:
// 20 links per page on average, a quarter of the internal targets known)
// and reports links/s. The batch is generated once; each iteration seeds
// a fresh copy of the collection.
//
//	go test ./pkg/seeder -run XXX -bench Run -benchtime 3x [-bench.pages 100000]
func BenchmarkRun(b *testing.B) {
	spec := benchgen.Default
	spec.Pages = *benchPages
	spec.Sites = max(spec.Pages/50, 10)
	src := filepath.Join(b.TempDir(), "src")
	if _, err := benchgen.Generate(src, spec); err != nil {
		b.Fatal(err)
	}
	cfg := benchgen.Config()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "col")
		if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
			b.Fatalf("copy collection: %v %s", err, out)
		}
		col, err := collection.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		s, err := seeder.Run(context.Background(), seeder.RunOptions{Collection: col, Config: cfg, Batch: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Links)/time.Since(start).Seconds(), "links/s")
		if i == 0 {
			b.Logf("%d docs, %d links, %d new urls, %d stored links", s.Docs, s.Links, s.NewURLs, s.OutLinks)
		}
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}
