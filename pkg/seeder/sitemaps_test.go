package seeder

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestSitemaps: robots.txt Sitemap: lines and the probe give sitemap
// documents; a sitemap's record brings its pages in with their source and
// hints, its cross-submitted entries only where the listed site's
// robots.txt names it, and the sitemaps an index lists one level deeper.
func TestSitemaps(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 100
	cfg.Seeder.SitemapProbe = true
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/", "http://c.cl/")
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/", "http://b.cl/", "http://c.cl/"},
		robots: []fetchlog.Robots{
			{Site: "http://a.cl", Status: 200, Fetched: t0, Body: "User-agent: *\nDisallow: /private/\nSitemap: http://a.cl/sitemap.xml.gz\nSitemap: http://a.cl/private/sm.xml\nSitemap: http://x.com/sm.xml\n"},
			{Site: "http://b.cl", Status: 200, Fetched: t0, Body: "Sitemap: http://a.cl/sitemap.xml.gz\n"},
			{Site: "http://c.cl", Status: 404, Fetched: t0},
		},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: "h", Links: []parsed.Link{{URL: "http://a.cl/x"}}},
			{URL: "http://b.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: "h2"},
			{URL: "http://c.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: "h3"},
		},
	})
	s := runBatch(t, col, cfg, 1, false)
	if s.SitemapSites != 2 || s.SitemapsFound != 3 || s.Rejected["out-of-scope"] != 1 {
		t.Errorf("batch 1: %+v", s)
	}
	g := readGraph(t, col)
	if d := g.doc(t, "http://a.cl/sitemap.xml.gz"); !d.Sitemap || d.Source != "robots http://a.cl/robots.txt" || d.Depth != 0 || d.State != "pending" {
		t.Errorf("sitemap from robots.txt: %+v", d)
	}
	if d := g.doc(t, "http://a.cl/private/sm.xml"); !d.Sitemap || d.State != "excluded" {
		t.Errorf("sitemap robots.txt forbids: %+v", d)
	}
	if d := g.doc(t, "http://c.cl/sitemap.xml"); !d.Sitemap || d.Source != SourceProbe {
		t.Errorf("probe: %+v", d)
	}
	if _, ok := g.docs["http://b.cl/sitemap.xml"]; ok {
		t.Errorf("probe of a site whose robots.txt names a sitemap")
	}

	lm := t0.Add(-24 * time.Hour)
	prio := 0.7
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://a.cl/sitemap.xml.gz", "http://a.cl/x"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/x", Status: 200, Fetched: t0.Add(-48 * time.Hour), MIME: "text/html", Hash: "hx"},
			{URL: "http://a.cl/sitemap.xml.gz", Status: 200, Fetched: t0, MIME: "application/x-gzip",
				Sitemap: &parsed.Sitemap{Kind: "urlset", Entries: 6, Gzip: true},
				Links: []parsed.Link{
					{URL: "http://a.cl/only", LastMod: lm.Format(time.RFC3339), ChangeFreq: "daily", Priority: &prio},
					{URL: "http://a.cl/x", LastMod: lm.Format(time.RFC3339)},
					{URL: "http://b.cl/cross", Cross: true},
					{URL: "http://c.cl/cross", Cross: true},
					{URL: "http://a.cl/sub.xml", Sitemap: true},
					{URL: "http://a.cl/sitemap.xml.gz", Sitemap: true}, // lists itself
				}},
		},
	})
	s = runBatch(t, col, cfg, 2, false)
	if s.SitemapsRead != 1 || s.SitemapEntries != 6 || s.SitemapsFound != 1 || s.Rejected[ReasonSitemapScope] != 1 || s.SitemapHinted != 2 {
		t.Errorf("batch 2: %+v", s)
	}
	g = readGraph(t, col)
	only := g.doc(t, "http://a.cl/only")
	if only.Source != "sitemap http://a.cl/sitemap.xml.gz" || !only.SitemapLastMod.Equal(lm) || only.ChangeFreq != "daily" || only.Priority != 1.7 || only.Depth != 1 || only.Sitemap {
		t.Errorf("sitemap-only page: %+v", only)
	}
	if x := g.doc(t, "http://a.cl/x"); x.Source != "" || !x.SitemapLastMod.Equal(lm) {
		t.Errorf("known page: %+v", x)
	}
	if d := g.doc(t, "http://b.cl/cross"); d.Source == "" {
		t.Errorf("cross-submitted: %+v", d)
	}
	if _, ok := g.docs["http://c.cl/cross"]; ok {
		t.Error("entry of a site whose robots.txt does not name the sitemap was taken")
	}
	if d := g.doc(t, "http://a.cl/sub.xml"); !d.Sitemap || d.Depth != 1 {
		t.Errorf("child sitemap: %+v", d)
	}
	if out := g.out["http://a.cl/sitemap.xml.gz"]; len(out) != 3 {
		t.Errorf("sitemap out-links: %v", out)
	}

	// A sitemap that redirects on its site gives a sitemap; one that
	// redirects to another site gives nothing.
	writeBatch(t, col, 3, testBatch{
		urls: []string{"http://a.cl/sub.xml", "http://c.cl/sitemap.xml"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/sub.xml", Status: 301, Fetched: t0, Redirect: "http://a.cl/moved.xml"},
			{URL: "http://c.cl/sitemap.xml", Status: 302, Fetched: t0, Redirect: "http://b.cl/elsewhere.xml"},
		},
	})
	s = runBatch(t, col, cfg, 3, false)
	if s.Rejected[ReasonSitemapRedirect] != 1 || s.SitemapsFound != 1 {
		t.Errorf("batch 3: %+v", s)
	}
	g = readGraph(t, col)
	if d := g.doc(t, "http://a.cl/moved.xml"); !d.Sitemap || d.Depth != 1 {
		t.Errorf("redirected sitemap: %+v", d)
	}
	if _, ok := g.docs["http://b.cl/elsewhere.xml"]; ok {
		t.Error("a sitemap's redirect to another site was taken")
	}
}

// TestAddSitemap: seeder add --sitemap with a URL adds a sitemap to fetch;
// with a file, its pages as seeds found in it (with their hints) and its
// listed sitemaps; stats count what sitemaps brought.
func TestAddSitemap(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	opts := SeedOptions{Collection: col, Config: cfg}
	var problems bytes.Buffer
	s, err := AddSitemap(opts, "http://a.cl/sitemap_index.xml.gz", &problems)
	if err != nil || s.Sitemaps != 1 {
		t.Fatalf("url: %+v %v", s, err)
	}
	file := filepath.Join(t.TempDir(), "sm.xml")
	os.WriteFile(file, []byte(`<urlset><url><loc>http://b.cl/p</loc><lastmod>2026-01-02</lastmod></url><url><loc>http://x.com/</loc></url><url><loc>nope</loc></url></urlset>`), 0o644)
	s, err = AddSitemap(opts, file, &problems)
	if err != nil || s.Added != 1 || s.Rejected["out-of-scope"] != 1 || s.Rejected["invalid"] != 1 {
		t.Fatalf("file: %+v %v", s, err)
	}
	if !strings.Contains(problems.String(), "out-of-scope") {
		t.Errorf("problems: %s", problems.String())
	}
	g := readGraph(t, col)
	if d := g.doc(t, "http://a.cl/sitemap_index.xml.gz"); !d.Sitemap || d.Source != "seed http://a.cl/sitemap_index.xml.gz" {
		t.Errorf("sitemap URL: %+v", d)
	}
	if d := g.doc(t, "http://b.cl/p"); d.Source != "sitemap "+file || d.SitemapLastMod.IsZero() || d.Depth != 0 {
		t.Errorf("page: %+v", d)
	}
	if _, err := AddSitemap(opts, filepath.Join(t.TempDir(), "missing.xml"), &problems); err == nil {
		t.Error("missing file: no error")
	}
	r, err := Stats(col, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if sm := r.Sitemaps; sm.Sitemaps != 1 || sm.Found != 1 || sm.Only != 1 || sm.WithLastMod != 1 {
		t.Errorf("stats: %+v", sm)
	}
}

// TestSitemapSiteCap: a sitemap of one site's thousand entries brings no
// more of them than scope.max_pages_per_site allows (the sitemap itself
// counts too); the rest are refused as any link would be.
func TestSitemapSiteCap(t *testing.T) {
	cfg := testConfig() // 5 URLs per site
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/")
	writeBatch(t, col, 1, testBatch{
		urls:   []string{"http://a.cl/"},
		robots: []fetchlog.Robots{{Site: "http://a.cl", Status: 200, Fetched: t0, Body: "Sitemap: http://a.cl/sitemap.xml\n"}},
		docs:   []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: "h"}},
	})
	runBatch(t, col, cfg, 1, false)
	links := make([]parsed.Link, 1000)
	for i := range links {
		links[i] = parsed.Link{URL: fmt.Sprintf("http://a.cl/item/%d", i), LastMod: t0.Format(time.RFC3339)}
	}
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://a.cl/sitemap.xml"},
		docs: []*parsed.Doc{{URL: "http://a.cl/sitemap.xml", Status: 200, Fetched: t0, Sitemap: &parsed.Sitemap{Kind: "urlset", Entries: 1000}, Links: links}},
	})
	s := runBatch(t, col, cfg, 2, false)
	if s.NewURLs != 3 || s.Rejected[ReasonSiteCap] != 997 {
		t.Errorf("new %d, rejected %v", s.NewURLs, s.Rejected)
	}
	if g := readGraph(t, col); g.sites["http://a.cl"].Pages != 5 {
		t.Errorf("site pages %d", g.sites["http://a.cl"].Pages)
	}
}
