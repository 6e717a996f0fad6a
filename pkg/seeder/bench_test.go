package seeder

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// BenchmarkRun takes in a batch of 10,000 fetched pages on 100 sites, 50
// links each (40 to the same site, 10 to others; about 4,000 new URLs in
// all), as a yardstick for the 100,000-page batches of a real crawl.
//
//	go test ./pkg/seeder -run XXX -bench Run -benchtime 3x
func BenchmarkRun(b *testing.B) {
	const pages, sites, links = 10000, 100, 50
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "col")
		if _, err := Init(dir, cfg); err != nil {
			b.Fatal(err)
		}
		col, _ := collection.Open(dir)
		var seeds strings.Builder
		url := func(site, page int) string { return fmt.Sprintf("http://www%d.example.cl/dir/page%d.html", site, page) }
		for p := 0; p < pages; p++ {
			fmt.Fprintln(&seeds, url(p%sites, p/sites))
		}
		if _, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader(seeds.String()), "seeds", io.Discard); err != nil {
			b.Fatal(err)
		}
		bt := col.Batch(1)
		entries := make([]batch.Entry, pages)
		for p := range entries {
			u := url(p%sites, p/sites)
			entries[p] = batch.Entry{DocID: uint64(p + 1), Site: urlnorm.SiteKey(u), Kind: batch.KindNew, URL: u}
		}
		h := batch.Header{Batch: 1, Created: time.Now(), Counts: map[string]int{"urls": pages}}
		collection.WriteAtomic(bt.File(), func(w io.Writer) error { return batch.Write(w, h, entries) })
		collection.WriteAtomic(filepath.Join(bt.ParsedPath(), parsed.DocsFile), func(w io.Writer) error {
			pw := parsed.NewWriter(w)
			for p, e := range entries {
				d := &parsed.Doc{DocID: e.DocID, URL: e.URL, Status: 200, Fetched: time.Now(), Hash: "h"}
				site := p % sites
				for l := 0; l < links; l++ {
					target := url(site, (p/sites+l)%(2*pages/sites))
					if l >= 40 {
						target = url((site+l)%sites, (p+l)%(2*pages/sites))
					}
					d.Links = append(d.Links, parsed.Link{URL: target, Anchor: fmt.Sprintf("anchor %d", l%7)})
				}
				if err := pw.Write(d); err != nil {
					return err
				}
			}
			return pw.Flush()
		})
		bt.MarkDone(collection.StageHarvested, "bench")
		bt.MarkDone(collection.StageGathered, "bench")
		b.StartTimer()
		start := time.Now()
		s, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Batch: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Links)/time.Since(start).Seconds(), "links/s")
		if i == 0 {
			b.Logf("%d docs, %d links, %d new urls, %d stored links", s.Docs, s.Links, s.NewURLs, s.OutLinks)
		}
	}
}
