package harvester_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// slack is the clock slack allowed on a gap the server measures: its
// handler may be descheduled between its last write and reading the
// clock (as in harvestertest.CheckWait).
const slack = 3 * time.Millisecond

// unitOf is the politeness unit a server sees: the address that
// answered and the registrable domain (the test names are under .test,
// which the public suffix list does not know: its last label is the
// suffix).
func unitOf(r ht.Request) string {
	labels := strings.Split(r.Host, ".")
	return r.Local + " " + strings.Join(labels[max(0, len(labels)-2):], ".")
}

// checkUnits checks, from the server's records, one request at a time per
// unit and gap (end to start) of at least need(unit, next request) between
// consecutive requests of a unit; and the starts of two requests to one
// address at least floor apart.
func checkUnits(t *testing.T, reqs []ht.Request, need func(unit string, next ht.Request) time.Duration, floor time.Duration) {
	t.Helper()
	byUnit := map[string][]ht.Request{}
	byAddr := map[string][]ht.Request{}
	for _, r := range reqs {
		if r.Local == "" {
			t.Fatalf("request %s%s without its server address", r.Host, r.Path)
		}
		byUnit[unitOf(r)] = append(byUnit[unitOf(r)], r)
		byAddr[r.Local] = append(byAddr[r.Local], r)
	}
	for u, rs := range byUnit {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		for i := 1; i < len(rs); i++ {
			gap := rs[i].Start.Sub(rs[i-1].End)
			if want := need(u, rs[i]); gap < want-slack {
				t.Errorf("unit %s: %s%s started %v after %s%s ended, want at least %v",
					u, rs[i].Host, rs[i].Path, gap, rs[i-1].Host, rs[i-1].Path, want)
			}
		}
	}
	if floor <= 0 {
		return
	}
	for a, rs := range byAddr {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
		for i := 1; i < len(rs); i++ {
			if gap := rs[i].Start.Sub(rs[i-1].Start); gap < floor-slack {
				t.Errorf("address %s: %s%s started %v after %s%s, want at least address_wait %v",
					a, rs[i].Host, rs[i].Path, gap, rs[i-1].Host, rs[i-1].Path, floor)
			}
		}
	}
}

// TestPolitenessUnits: www.a.test and a.test on one address are one
// server (one request at a time, the larger Crawl-delay of the two
// between any two requests); m.a.test on another address and b.test of
// another domain on the same address are not, but b.test's requests and
// the unit's keep address_wait between their starts.
func TestPolitenessUnits(t *testing.T) {
	www := pagesHost("www.a.test", 4, 5*time.Millisecond)
	bare := pagesHost("a.test", 4, 5*time.Millisecond)
	bare.Robots = robotsPage("User-agent: *\nCrawl-delay: 0.25\n")
	mobile := pagesHost("m.a.test", 3, 5*time.Millisecond)
	mobile.IP = "127.0.0.2"
	other := pagesHost("b.test", 4, 5*time.Millisecond)
	web := ht.Start(t, www, bare, mobile, other)
	var urls []string
	for _, h := range []*ht.Host{www, bare, mobile, other} {
		for p := range h.Pages {
			urls = append(urls, web.URL(h.Name, p))
		}
	}
	const wait, floor = 40 * time.Millisecond, 30 * time.Millisecond
	cfg := web.Config(wait)
	cfg.Harvester.Connections = 8
	cfg.Harvester.AddressWait = config.Duration(floor)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.Fetched != len(urls) {
		t.Fatalf("%+v %v", sum, err)
	}
	reqs := web.Requests()
	// The unit's Crawl-delay holds from the request after a.test's
	// robots.txt (the first the harvester could know of it).
	var delayKnown time.Time
	for _, r := range reqs {
		if r.Host == "a.test" && r.Path == "/robots.txt" {
			delayKnown = r.End
		}
	}
	if delayKnown.IsZero() {
		t.Fatal("a.test/robots.txt never asked")
	}
	need := func(unit string, next ht.Request) time.Duration {
		if unit == "127.0.0.1 a.test" && !next.Start.Before(delayKnown) {
			return 250 * time.Millisecond
		}
		return wait
	}
	checkUnits(t, reqs, need, floor)
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	// The two names of the unit shared its time: at most one of them
	// had a request in flight at any moment.
	if n := web.MaxOpen(0, func(c ht.Conn) bool { return c.Host == "a.test" || c.Host == "www.a.test" }); n > 1 {
		t.Errorf("%d connections at once to the unit of a.test and www.a.test, want 1", n)
	}
}

// TestAliasRobotsRedirect: a bare name whose robots.txt and pages
// redirect to www on the same address (as many sites do) is served on
// the unit's one connection: the redirect does not wait to borrow www
// (which would hold it for minutes), and every request of either name
// keeps the wait and www's Crawl-delay.
func TestAliasRobotsRedirect(t *testing.T) {
	www := pagesHost("www.c.test", 3, 0)
	www.Robots = robotsPage("User-agent: *\nCrawl-delay: 0.2\n")
	bare := &ht.Host{Name: "c.test", Pages: map[string]*ht.Page{}}
	web := ht.Start(t, www, bare)
	bare.Robots = &ht.Page{Status: http.StatusMovedPermanently, Header: http.Header{"Location": {web.URL("www.c.test", "/robots.txt")}}}
	var urls []string
	for i := 0; i < 3; i++ {
		p := fmt.Sprintf("/p%d", i)
		bare.Pages[p] = &ht.Page{Status: http.StatusMovedPermanently, Header: http.Header{"Location": {web.URL("www.c.test", p)}}}
		urls = append(urls, web.URL("c.test", p), web.URL("www.c.test", p))
	}
	cfg := web.Config(20 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.Fetched != len(urls) || len(sum.Errors) != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("harvest took %v: the robots.txt redirect waited for its own unit", took)
	}
	reqs := web.Requests()
	var first time.Time
	for _, r := range reqs {
		if r.Host == "www.c.test" && r.Path == "/robots.txt" {
			first = r.End
			break
		}
	}
	need := func(_ string, next ht.Request) time.Duration {
		if !first.IsZero() && !next.Start.Before(first) {
			return 200 * time.Millisecond
		}
		return 20 * time.Millisecond
	}
	checkUnits(t, reqs, need, 0)
}

// TestUnitCrawlDelayFromBatch: the batch's servers.jsonl gives a host the
// Crawl-delay of another name of its unit that is not in the batch (the
// unitCrawlDelay of a manager before 2026-12-07): it holds from the first request, though the
// host's own robots.txt has none.
func TestUnitCrawlDelayFromBatch(t *testing.T) {
	docs := pagesHost("docs.d.test", 3, 0)
	web := ht.Start(t, docs)
	var urls []string
	for p := range docs.Pages {
		urls = append(urls, web.URL("docs.d.test", p))
	}
	cfg := web.Config(10 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	writeServers(t, filepath.Join(dir, collection.BatchServersFile), []fetchlog.Server{{Host: "docs.d.test", UnitCrawlDelay: 0.2}})
	if sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil || sum.Fetched != len(urls) {
		t.Fatalf("%+v %v", sum, err)
	}
	checkUnits(t, web.Requests(), func(string, ht.Request) time.Duration { return 200 * time.Millisecond }, 0)
}

// TestCrawlDelayAtAddress: the batch's servers.jsonl says www.e.test,
// not in the batch, asked for a Crawl-delay on 127.0.0.1 (the manager's
// line, from graph.db). docs.e.test resolves there: it waits that delay
// from its first request (its robots.txt). m.e.test, of the same domain
// on another address, is another unit and keeps the plain wait.
func TestCrawlDelayAtAddress(t *testing.T) {
	docs := pagesHost("docs.e.test", 3, 0)
	mobile := pagesHost("m.e.test", 6, 0)
	mobile.IP = "127.0.0.2"
	web := ht.Start(t, docs, mobile)
	var urls []string
	for _, h := range []*ht.Host{docs, mobile} {
		for p := range h.Pages {
			urls = append(urls, web.URL(h.Name, p))
		}
	}
	const wait, delay = 10 * time.Millisecond, 400 * time.Millisecond
	cfg := web.Config(wait)
	cfg.Harvester.Connections = 4
	// No value clock: it would spread m.e.test's pages over docs.e.test's
	// time by design (valuegate.go); this test is about politeness.
	cfg.Harvester.Ranking = "quality"
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	writeServers(t, filepath.Join(dir, collection.BatchServersFile), []fetchlog.Server{
		{Host: "www.e.test", IP: "127.0.0.1", CrawlDelay: delay.Seconds()},
		{Host: "gone.e.test", IP: "127.0.0.9", CrawlDelay: 30}, // an address no name of the batch resolves to
	})
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.Fetched != len(urls) {
		t.Fatalf("%+v %v", sum, err)
	}
	reqs := web.Requests()
	need := func(unit string, _ ht.Request) time.Duration {
		if unit == "127.0.0.1 e.test" {
			return delay
		}
		return wait
	}
	checkUnits(t, reqs, need, 0)
	// m.e.test's seven requests (robots.txt and six pages) took about
	// six waits, not six Crawl-delays.
	var first, last time.Time
	for _, r := range reqs {
		if r.Host != "m.e.test" {
			continue
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.End.After(last) {
			last = r.End
		}
	}
	if took := last.Sub(first); took >= 3*delay {
		t.Errorf("m.e.test, on another address, took %v for 7 requests: slowed by a Crawl-delay of another unit", took)
	}
}
