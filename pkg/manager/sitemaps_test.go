package manager

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// TestSitemapScheduling: a sitemap goes first, as an entry of kind
// sitemap; a page whose sitemap lastmod is after its fetch is stale (F =
// 0) once min_revisit has passed, and explain says where a URL was found.
func TestSitemapScheduling(t *testing.T) {
	f := newFixture(t)
	f.add(
		page{url: "http://a.cl/", links: []string{"http://a.cl/p"}},
		page{url: "http://a.cl/sitemap.xml"},
		page{url: "http://a.cl/old", state: linkgraph.StateFetched, visits: 1, first: daysAgo(10), fetched: daysAgo(10)},
		page{url: "http://a.cl/fresh", state: linkgraph.StateFetched, visits: 1, first: daysAgo(10), fetched: daysAgo(10)},
		page{url: "http://a.cl/only"},
	)
	f.update(func(tx *linkgraph.Tx) error {
		for u, fn := range map[string]func(d *linkgraph.Doc){
			"http://a.cl/sitemap.xml": func(d *linkgraph.Doc) { d.Sitemap, d.Source = true, "robots http://a.cl/robots.txt" },
			"http://a.cl/old":         func(d *linkgraph.Doc) { d.SitemapLastMod = daysAgo(1) },
			"http://a.cl/fresh":       func(d *linkgraph.Doc) { d.SitemapLastMod = daysAgo(20) },
			"http://a.cl/only": func(d *linkgraph.Doc) {
				d.Source, d.Priority, d.ChangeFreq = "sitemap http://a.cl/sitemap.xml", 1.9, "daily"
			},
		} {
			d, err := tx.Doc(f.ids[u])
			if err != nil {
				return err
			}
			fn(d)
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		return nil
	})
	if ex := f.explain("http://a.cl/old"); ex.F != 0 || !strings.Contains(ex.FWhy, "lastmod") {
		t.Errorf("stale by lastmod: F %g (%s)", ex.F, ex.FWhy)
	}
	if ex := f.explain("http://a.cl/fresh"); ex.F == 0 {
		t.Errorf("lastmod before the fetch: F %g", ex.F)
	}
	ex := f.explain("http://a.cl/only")
	var out bytes.Buffer
	ex.Print(&out)
	if !strings.Contains(out.String(), "found in sitemap http://a.cl/sitemap.xml") || !strings.Contains(out.String(), "priority 0.9") {
		t.Errorf("explain:\n%s", out.String())
	}
	res := f.mustRun()
	h, entries := readBatch(t, f.col, res.Batch)
	if len(entries) == 0 || entries[0].Kind != batch.KindSitemap || entries[0].URL != "http://a.cl/sitemap.xml" || entries[0].Score != 1 || h.Counts["sitemaps"] != 1 {
		t.Errorf("batch: %+v %+v", h.Counts, entries)
	}
	kinds, pos := map[string]string{}, map[string]int{}
	for i, e := range entries {
		kinds[e.URL], pos[e.URL] = e.Kind, i
	}
	if kinds["http://a.cl/old"] != batch.KindRevisit || kinds["http://a.cl/fresh"] != batch.KindRevisit || pos["http://a.cl/old"] > pos["http://a.cl/fresh"] {
		t.Errorf("the page its sitemap says changed goes before the other: %v %v", kinds, pos)
	}
}
