package harvester_test

import (
	"context"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestSyntheticWeb harvests every page of a small synthetic national web
// (pkg/testweb) and compares the fetch log with the model's truth: the
// status of each page, and which pages robots.txt forbids (RFC 9309 as
// the model's own matcher reads it).
func TestSyntheticWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a synthetic web")
	}
	web, err := testweb.New(testweb.Config{Seed: 2, Hosts: 10, MaxPages: 12, OutOfScope: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	inScope := map[string]bool{}
	for _, h := range web.HostNames() {
		inScope[h] = true
	}
	var urls []string
	for _, u := range web.URLs() {
		if p, err := url.Parse(u); err == nil && inScope[p.Hostname()] {
			urls = append(urls, u)
		}
	}
	sort.Strings(urls)
	const w = 30 * time.Millisecond
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(w)
	cfg.Harvester.Connections = 16
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (%v)", sum, time.Since(start).Round(time.Millisecond))

	logged := readLog(t, filepath.Join(dir, "harvest"))
	accept := harvester.Accept(cfg.Harvester.AcceptMIME)
	requested := map[string]bool{}
	for _, r := range web.Requests() {
		requested[r.Host+r.Path] = true
	}
	for _, u := range urls {
		r := logged[u]
		p, _ := url.Parse(u)
		if web.Disallowed(u, cfg.Crawl.ProductToken) {
			if fetch.KindOf(r.Err) != harvester.ErrRobots {
				t.Errorf("%s: forbidden by robots.txt, logged %+v", u, r)
			}
			if requested[p.Hostname()+p.RequestURI()] {
				t.Errorf("%s: forbidden by robots.txt, requested", u)
			}
			continue
		}
		info, _ := web.Page(u)
		if mt := fetch.MediaType(info.MIME); !accept(mt) {
			// Recorded, without its body.
			if r.Status != info.Status || r.Err != "mime: media type "+mt+" not accepted" || r.WARC == "" || r.Bytes != 0 {
				t.Errorf("%s: %s is not accepted, logged %+v", u, mt, r)
			}
			continue
		}
		if r.Err != "" || r.Status != info.Status {
			t.Errorf("%s: logged status %d err %q, the model serves %d", u, r.Status, r.Err, info.Status)
		}
		if info.Location != "" {
			loc, err := p.Parse(r.Location)
			if err != nil || loc.String() != info.Location {
				t.Errorf("%s: Location %q, the model says %q", u, r.Location, info.Location)
			}
		}
	}

	// Politeness, from the server's records.
	byHost := map[string][]testweb.Request{}
	for _, r := range web.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for host, rs := range byHost {
		if rs[0].Path != "/robots.txt" {
			t.Errorf("%s: first request %s", host, rs[0].Path)
		}
		min := w
		if d := web.CrawlDelay(host); d != "" {
			if s, err := strconv.ParseFloat(d, 64); err == nil {
				min = max(min, time.Duration(s*float64(time.Second)))
			}
		}
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].Start.Sub(rs[i-1].End); gap < min {
				t.Errorf("%s: %s after %v, want at least %v", host, rs[i].Path, rs[i].Start.Sub(rs[i-1].End), min)
			}
		}
	}
	conns := map[string][]testweb.Conn{}
	for _, c := range web.Conns() {
		if c.Host != "" {
			conns[c.Host] = append(conns[c.Host], c)
		}
	}
	for host, cs := range conns {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Opened.Before(cs[j].Opened) })
		for i := 1; i < len(cs); i++ {
			if cs[i-1].Closed.IsZero() || cs[i-1].Closed.After(cs[i].Opened) {
				t.Errorf("%s: two connections open at once", host)
			}
		}
	}
	if sum.URLs != len(urls) || !strings.Contains(sum.String(), "URLs") {
		t.Errorf("summary %+v", sum)
	}
}
