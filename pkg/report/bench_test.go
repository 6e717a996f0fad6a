package report

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// benchPages is the size of the benchmark's graph: WIRE_BENCH_PAGES, or
// 100,000 pages.
func benchPages() int {
	if n, err := strconv.Atoi(os.Getenv("WIRE_BENCH_PAGES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// benchCollection builds a graph.db of n pages on n/50 sites, half of
// them fetched, with 10 out-links per fetched page (mostly within the
// site), in transactions of 10,000 pages.
func benchCollection(b *testing.B, n int) *collection.Collection {
	b.Helper()
	col, err := collection.Create(b.TempDir(), []byte("\n"))
	if err != nil {
		b.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	sites := max(1, n/50)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for lo := 0; lo < n; lo += 10_000 {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for i := lo; i < min(n, lo+10_000); i++ {
				s := i % sites
				site, _, err := tx.AddSite(fmt.Sprintf("http://s%d.cl", s))
				if err != nil {
					return err
				}
				id, _, err := tx.AddURL(fmt.Sprintf("http://s%d.cl/p%d", s, i), site, i%7, 0)
				if err != nil {
					return err
				}
				if i%2 == 0 {
					d, err := tx.Doc(id)
					if err != nil {
						return err
					}
					d.State, d.Status, d.FirstFetched = linkgraph.StateFetched, 200, t0.Add(time.Duration(i)*time.Millisecond)
					if err := tx.PutDoc(d); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// Links once every page exists.
	for lo := 0; lo < n; lo += 10_000 {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for i := lo; i < min(n, lo+10_000); i += 2 {
				bm := roaring.New()
				for k := 0; k < 10; k++ {
					t := i + 1 + rng.IntN(200)
					if k%4 == 0 {
						t = rng.IntN(n)
					}
					bm.Add(uint32(t%n + 1))
				}
				if err := tx.SetOutLinks(uint64(i+1), bm); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return col
}

// BenchmarkCollect measures Collect and Render on a graph of
// WIRE_BENCH_PAGES pages:
//
//	go test ./pkg/report -run X -bench Collect -benchtime 1x
func BenchmarkCollect(b *testing.B) {
	n := benchPages()
	col := benchCollection(b, n)
	b.ResetTimer()
	for b.Loop() {
		d, err := Collect(context.Background(), col, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Render(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
}
