package gatherer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/timescale"
)

// TestSitemaps: entries of kind sitemap are read as sitemaps (gzip by its
// magic bytes, whatever the media type), not as pages; a page of the same
// body is not; entries out of the sitemap's directory are kept marked
// cross; a sitemap whose dates are all "now" loses them.
func TestSitemaps(t *testing.T) {
	urlset := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://www.a.cl/d/one</loc><lastmod>2026-11-01</lastmod><changefreq>daily</changefreq><priority>0.9</priority></url>
<url><loc>http://www.a.cl/d/two?x=1#frag</loc><lastmod>2099-01-01</lastmod></url>
<url><loc>http://www.b.cl/cross</loc></url>
<url><loc>https://www.a.cl/d/scheme</loc></url>
<url><loc>javascript:alert(1)</loc></url>
</urlset>`
	var lying strings.Builder
	lying.WriteString("<urlset>")
	now := gathertest.Fetched.Add(3 * time.Second).Format(time.RFC3339)
	for i := range 20 {
		fmt.Fprintf(&lying, "<url><loc>http://www.c.cl/%d</loc><lastmod>%s</lastmod></url>", i, now)
	}
	lying.WriteString("</urlset>")
	index := `<sitemapindex><sitemap><loc>http://www.a.cl/other/s.xml</loc></sitemap><sitemap><loc>http://www.z.cl/s.xml</loc></sitemap></sitemapindex>`
	xml := http.Header{"Content-Type": {"application/octet-stream"}}
	pages := []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/d/sitemap.xml.gz", Status: 200, Header: xml, Body: gz(t, []byte(urlset)), Kind: batch.KindSitemap},
		{DocID: 2, URL: "http://www.a.cl/index.xml", Status: 200, Header: xml, Body: []byte(index), Kind: batch.KindSitemap},
		{DocID: 3, URL: "http://www.c.cl/sitemap.txt", Status: 200, Header: xml, Body: []byte(lying.String()), Kind: batch.KindSitemap},
		{DocID: 4, URL: "http://www.a.cl/page.xml", Status: 200, Header: http.Header{"Content-Type": {"application/xml"}}, Body: []byte(urlset)},
		{DocID: 5, URL: "http://www.a.cl/broken.xml", Status: 200, Header: xml, Body: []byte("<urlset><url><loc>http://www.a.cl/ok</loc></url><url>"), Kind: batch.KindSitemap},
		{DocID: 6, URL: "http://www.a.cl/gone.xml", Status: 404, Header: xml, Body: []byte("no"), Kind: batch.KindSitemap},
	}
	col := newCollection(t)
	b := gathertest.Batch(t, col, 1, pages)
	s, err := Run(context.Background(), options(t, col, b, 2))
	if err != nil {
		t.Fatal(err)
	}
	docs := readDocs(t, b)
	d := docs[0]
	if d.Sitemap == nil || d.Sitemap.Kind != "urlset" || !d.Sitemap.Gzip || d.Sitemap.Entries != 4 || d.Sitemap.OutOfScope != 0 || d.Sitemap.Invalid != 1 {
		t.Fatalf("urlset: %+v", d.Sitemap)
	}
	l := d.Links
	if l[0].URL != "http://www.a.cl/d/one" || l[0].LastMod != "2026-11-01T00:00:00Z" || l[0].ChangeFreq != "daily" || l[0].Priority == nil || *l[0].Priority != 0.9 || l[0].Cross {
		t.Errorf("entry 1: %+v", l[0])
	}
	if l[1].URL != "http://www.a.cl/d/two?x=1" || l[1].LastMod != "" {
		t.Errorf("entry 2 (normalised, date in the future dropped): %+v", l[1])
	}
	if l[2].URL != "http://www.b.cl/cross" || !l[2].Cross {
		t.Errorf("entry 3 (cross): %+v", l[2])
	}
	if d := docs[1]; d.Sitemap == nil || d.Sitemap.Kind != "index" || len(d.Links) != 2 || !d.Links[0].Sitemap || d.Links[0].Cross || !d.Links[1].Cross {
		t.Errorf("index: %+v %+v", d.Sitemap, d.Links)
	}
	if d := docs[2]; d.Sitemap == nil || d.Sitemap.Untrusted == "" || len(d.Links) != 20 || d.Links[0].LastMod != "" {
		t.Errorf("lying: %+v", d.Sitemap)
	}
	if d := docs[3]; d.Sitemap != nil || len(d.Links) != 0 {
		t.Errorf("a page of kind new is not read as a sitemap: %+v", d)
	}
	if d := docs[4]; d.Sitemap == nil || !strings.Contains(d.Sitemap.Reason, "xml") || len(d.Links) != 1 {
		t.Errorf("broken: %+v", d.Sitemap)
	}
	if d := docs[5]; d.Sitemap != nil {
		t.Errorf("404: %+v", d.Sitemap)
	}
	if s.Sitemaps != 4 || s.SitemapErrors != 1 || s.SitemapEntries != 4+2+20+1 {
		t.Errorf("summary: %+v", s)
	}
}

// TestTrustDatesScaled: the lying-sitemap rule's window (1 h) and future
// slack (24 h) at manager.time_scale (issue 35): at s = 1/1440 they last
// 2.5 s and a minute, so a test web whose pages change every few scaled
// days writes honest dates seconds apart, and OptionsFromConfig passes
// the scale on.
func TestTrustDatesScaled(t *testing.T) {
	fetched := gathertest.Fetched
	const minute = timescale.Scale(0.000694444444444444)
	// n dates, each ago before the fetch.
	dates := func(n int, ago time.Duration) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = fetched.Add(-ago)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		s     timescale.Scale
		dates []time.Time
		lying bool
		kept  int // dates copied into the links
	}{
		{"20 dates 10 s before the fetch, real time: lying", timescale.Real, dates(20, 10*time.Second), true, 0},
		{"the same, a day a minute: honest", minute, dates(20, 10*time.Second), false, 20},
		{"20 dates 2 s before the fetch, a day a minute: lying", minute, dates(20, 2*time.Second), true, 0},
		{"20 dates 30 min before, real time: lying", 0, dates(20, 30*time.Minute), true, 0},
		{"a date 2 min after the fetch, real time: kept", timescale.Real, dates(1, -2*time.Minute), false, 1},
		{"a date 2 min after the fetch, a day a minute: dropped", minute, dates(1, -2*time.Minute), false, 0},
		{"a date 30 s after the fetch, a day a minute: kept", minute, dates(1, -30*time.Second), false, 1},
	} {
		links := make([]parsed.Link, len(tt.dates))
		why := trustDates(links, tt.dates, fetched, tt.s)
		kept := 0
		for _, l := range links {
			if l.LastMod != "" {
				kept++
			}
		}
		if (why != "") != tt.lying || kept != tt.kept {
			t.Errorf("%s: untrusted %q, %d dates kept; want lying %v, %d kept", tt.name, why, kept, tt.lying, tt.kept)
		}
	}
	cfg := config.Defaults()
	cfg.Manager.TimeScale = float64(minute)
	if o, err := OptionsFromConfig(cfg); err != nil || o.TimeScale != minute {
		t.Errorf("OptionsFromConfig: time scale %g, %v", o.TimeScale, err)
	}
}
