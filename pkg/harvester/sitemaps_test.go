package harvester_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/gatherer"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/sitemap"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestHostileSitemaps harvests the test web's hostile sitemaps as batch
// entries of kind sitemap and gathers them: each ends bounded, with its
// reason in its parsed record (docs/sitemaps.md, "Hostile sitemaps").
func TestHostileSitemaps(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 4 MB over loopback")
	}
	web, err := testweb.New(testweb.Config{Seed: 3, Hosts: 40, Sitemaps: true, Hostile: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	urls := web.HostileSitemaps()
	entries := ht.Entries(urls...)
	for i := range entries {
		entries[i].Kind = batch.KindSitemap
	}
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(10 * time.Millisecond)
	cfg.Harvester.MaxSitemapBytes = 2_000_000 // the streams are cut sooner, and the parser stops the bomb at 2 MB and at 10,000 entries (50 MB and 50,000 by default)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, entries)
	start := time.Now()
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "text")
	os.MkdirAll(text, 0o755)
	if _, err := gatherer.Run(context.Background(), gatherer.Options{BatchDir: dir, BatchID: 1, TextDir: text, Workers: 2,
		MaxBodyBytes: cfg.Harvester.MaxBodyBytes, MaxSitemapBytes: cfg.Harvester.MaxSitemapBytes,
		SitemapLimits: sitemap.Limits{MaxBytes: 2_000_000, MaxURLs: 10_000}}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("harvest and gather took %v", took)
	}
	f, err := os.Open(filepath.Join(dir, "parsed", parsed.DocsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{ // path → what the record's reason says
		"/sitemap-bomb.xml.gz": "larger than the byte limit",
		"/sitemap-laughs.xml":  "entity",
		"/sitemap-huge.xml":    "more entries than the limit",
		"/sitemap-big.txt":     "body cut by the harvester",
	}
	r := parsed.NewReader(f, "docs.jsonl")
	seen := 0
	for {
		d, err := r.Next()
		if err != nil {
			break
		}
		seen++
		path := d.URL[strings.Index(d.URL[len("http://"):], "/")+len("http://"):]
		switch {
		case want[path] != "":
			if d.Sitemap == nil || !strings.Contains(d.Sitemap.Reason, want[path]) {
				t.Errorf("%s: %+v", d.URL, d.Sitemap)
			}
		case path == "/sitemap-away.xml":
			if d.Status != 302 || d.Sitemap != nil || d.Redirect == "" {
				t.Errorf("away: status %d, redirect %q, %+v", d.Status, d.Redirect, d.Sitemap)
			}
		case path == "/sitemap-loop.xml", path == "/sitemap-deep-0.xml":
			if d.Sitemap == nil || d.Sitemap.Kind != "index" || len(d.Links) == 0 || !d.Links[0].Sitemap {
				t.Errorf("%s: %+v", d.URL, d.Sitemap)
			}
		case path == "/sitemap-cross.xml":
			if d.Sitemap == nil || len(d.Links) != 2 || !d.Links[0].Cross || d.Links[1].Cross {
				t.Errorf("cross: %+v %+v", d.Sitemap, d.Links)
			}
		}
		if d.Sitemap != nil {
			t.Logf("%s: %d bytes, %+v", path, d.Bytes, *d.Sitemap)
		}
	}
	if seen != len(urls) {
		t.Errorf("%d records, want %d", seen, len(urls))
	}
}
