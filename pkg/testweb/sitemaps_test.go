package testweb

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/sitemap"
)

// TestSitemaps: the sitemap sites name their sitemaps in robots.txt; the
// index, the gzip urlset and the text sitemap read with pkg/sitemap give
// the site's HTML pages and its hidden pages, which Page knows, URLs does
// not, and no page links to; a web without Config.Sitemaps has none.
func TestSitemaps(t *testing.T) {
	if w, _ := New(Config{Seed: 3, Hosts: 40}); len(w.SitemapOnlyURLs()) != 0 {
		t.Fatal("sitemaps without Config.Sitemaps")
	}
	w := startWeb(t, Config{Seed: 3, Hosts: 40, Sitemaps: true})
	c := newClient(t, w)
	named, probed := w.SitemapSites()
	if len(named) < 2 || len(probed) < 2 {
		t.Fatalf("sitemap sites: %d named in robots.txt, %d for the probe", len(named), len(probed))
	}
	sites := append(named, probed...)
	all := w.URLs()
	hidden := w.SitemapOnlyURLs()
	for _, h := range hidden {
		if _, found := slices.BinarySearch(all, h); found {
			t.Errorf("URLs lists hidden page %s", h)
		}
		info, ok := w.Page(h)
		if !ok || info.Status != 200 || info.Title == "" {
			t.Errorf("Page(%s) = %+v, %v", h, info, ok)
		}
	}
	for _, u := range all { // no page links to a hidden one
		info, _ := w.Page(u)
		for _, l := range info.Links {
			if strings.Contains(l, hiddenPrefix) {
				t.Fatalf("%s links to hidden page %s", u, l)
			}
		}
	}
	got := map[string]bool{}
	for _, host := range sites {
		origin := "http://" + host + ":" + strconv.Itoa(w.Port())
		rb := fetch(t, c, origin+"/robots.txt")
		var maps []string
		for _, line := range strings.Split(string(rb.body), "\n") {
			if v, ok := strings.CutPrefix(line, "Sitemap: "); ok {
				maps = append(maps, v)
			}
		}
		if slices.Contains(probed, host) {
			if rb.status != 404 || len(maps) != 0 {
				t.Fatalf("%s: robots.txt %d, names %v", host, rb.status, maps)
			}
			maps = []string{origin + "/sitemap.xml"}
		} else if len(maps) != 2 || w.Disallowed(maps[0], "wirebot") {
			t.Fatalf("%s robots.txt names %v", host, maps)
		}
		queue := maps
		for len(queue) > 0 {
			sm := queue[0]
			queue = queue[1:]
			r := fetch(t, c, sm)
			base, _ := url.Parse(sm)
			res, err := sitemap.Parse(bytes.NewReader(r.body), sitemap.Options{Base: base}, func(e sitemap.Entry) error {
				if e.Sitemap {
					queue = append(queue, e.Loc)
				} else {
					got[e.Loc] = true
				}
				return nil
			})
			if err != nil || res.Reason != "" || res.Invalid+res.OutOfScope != 0 {
				t.Errorf("%s: %+v %v", sm, res, err)
			}
		}
	}
	for _, h := range hidden {
		if !got[h] {
			t.Errorf("hidden page %s in no sitemap", h)
		}
	}
	if len(got) <= len(hidden) {
		t.Errorf("the sitemaps list %d URLs, only the %d hidden ones", len(got), len(hidden))
	}
}

// TestHostileSitemaps: each hostile sitemap, fetched and read with
// pkg/sitemap's limits, ends bounded with its reason.
func TestHostileSitemaps(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50 MB streams")
	}
	w := startWeb(t, Config{Seed: 3, Hosts: 40, Sitemaps: true, Hostile: true})
	c := newClient(t, w)
	hs := w.HostileSitemaps()
	if len(hs) != 8 {
		t.Fatalf("hostile sitemaps: %v", hs)
	}
	want := map[string]string{
		hostileBomb:   "larger than",
		hostileLaughs: "entity",
		hostileHuge:   "more entries",
		hostileBig:    "larger than",
	}
	for _, u := range hs {
		p, _ := url.Parse(u)
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// As the harvester reads it: at most harvester.max_sitemap_bytes.
		body := io.LimitReader(resp.Body, sitemap.MaxBytes+1)
		res, err := sitemap.Parse(body, sitemap.Options{Base: p}, func(sitemap.Entry) error { return nil })
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s took %v", u, took)
		}
		if r, ok := want[p.Path]; ok && !strings.Contains(res.Reason, r) {
			t.Errorf("%s: reason %q, want %q (%+v)", u, res.Reason, r, res)
		}
		switch p.Path {
		case hostileAway:
			if resp.StatusCode != http.StatusFound || !strings.Contains(resp.Header.Get("Location"), sitemapIndexPath) {
				t.Errorf("away: %d %v", resp.StatusCode, resp.Header)
			}
		case hostileCross:
			if res.OutOfScope != 1 || res.Entries != 1 {
				t.Errorf("cross: %+v", res)
			}
		}
	}
	// A loop and a deep chain end under pkg/sitemap's walker.
	open := func(loc string) (io.ReadCloser, error) {
		r, err := c.Get(loc)
		if err != nil {
			return nil, err
		}
		return r.Body, nil
	}
	st, err := sitemap.Walk(hs[1], open, sitemap.WalkOptions{}, func(string, sitemap.Entry) error { return nil })
	if err != nil || st.Files != 2 || st.Repeated != 2 {
		t.Errorf("loop: %+v %v", st, err)
	}
	st, err = sitemap.Walk(hs[2], open, sitemap.WalkOptions{}, func(string, sitemap.Entry) error { return nil })
	if err != nil || st.Files != sitemap.MaxDepth+1 || st.TooDeep != 1 {
		t.Errorf("deep: %+v %v", st, err)
	}
}
