package status

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// BenchmarkCollect measures Collect (graph.db's documents by state) on a
// graph of WIRE_BENCH_PAGES pages (default 100,000), half of them fetched:
//
//	go test ./pkg/status -run X -bench Collect -benchtime 1x
func BenchmarkCollect(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("WIRE_BENCH_PAGES")); err == nil && v > 0 {
		n = v
	}
	col, err := collection.Create(b.TempDir(), []byte("\n"))
	if err != nil {
		b.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n; lo += 10_000 {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for i := lo; i < min(n, lo+10_000); i++ {
				site, _, err := tx.AddSite(fmt.Sprintf("http://s%d.cl", i%1000))
				if err != nil {
					return err
				}
				id, _, err := tx.AddURL(fmt.Sprintf("http://s%d.cl/p%d", i%1000, i), site, 0, 0)
				if err != nil {
					return err
				}
				if i%2 == 0 {
					d, err := tx.Doc(id)
					if err != nil {
						return err
					}
					d.State, d.Status, d.Fetched = linkgraph.StateFetched, 200, time.Now()
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
	g.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := Collect(col, Options{})
		if err != nil || s.Pages == nil || s.Pages.Known != n {
			b.Fatalf("%v %+v", err, s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
}
