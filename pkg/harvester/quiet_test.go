package harvester_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// TestQuietStart: batch 2 is harvested the moment batch 1 ends, at a
// wait of 400 ms. A host new in batch 2 is asked at once (no start floor
// of a whole wait), while r.test, which batch 1 asked a moment before it
// ended, only as the target of alias.test's robots.txt redirect, still
// gets its wait: its hold is in batch 1's servers.jsonl, carried. (A
// server of both batches keeps its wait as before: TestCarryOverPoliteness.)
func TestQuietStart(t *testing.T) {
	const wait = 400 * time.Millisecond
	alias := &ht.Host{Name: "alias.test", Pages: map[string]*ht.Page{"/x": {Body: []byte("<html>x</html>")}}}
	// r.test's robots.txt, which alias.test's redirect makes alias.test's
	// rules, forbids /x: batch 1 ends right after asking it.
	r := pagesHost("r.test", 1, 0)
	r.Robots = &ht.Page{Body: []byte("User-agent: *\nDisallow: /x\n")}
	web := ht.Start(t, pagesHost("b.test", 1, 0), r, alias)
	alias.Robots = &ht.Page{Status: 301, Header: map[string][]string{"Location": {web.URL("r.test", "/robots.txt")}}}
	cfg := web.Config(wait)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	var started time.Time
	for id, urls := range [][]string{
		{web.URL("alias.test", "/x")},
		{web.URL("b.test", "/p0"), web.URL("r.test", "/p0")},
	} {
		b := col.Batch(id + 1)
		ht.WriteBatch(t, b.Dir, b.ID, ht.Entries(urls...))
		started = time.Now()
		sum, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg})
		if err != nil {
			t.Fatalf("batch %d: %v", b.ID, err)
		}
		// The summary, which crawl.log shows, says whether the run
		// started quiet (the first too: no harvest came before it).
		quiet := strings.Contains(sum.String(), "started quiet")
		if !sum.QuietStart || !quiet {
			t.Errorf("batch %d: quiet start %v, summary %q", b.ID, sum.QuietStart, sum)
		}
	}
	if rs := web.RequestsTo("r.test"); len(rs) < 2 || rs[0].Path != "/robots.txt" {
		t.Fatalf("r.test: %v, want its robots.txt asked in batch 1 (alias.test's redirect) and again", rs)
	}
	bs := web.RequestsTo("b.test")
	if len(bs) == 0 {
		t.Fatal("b.test never asked")
	}
	if d := bs[0].Start.Sub(started); d >= wait/2 {
		t.Errorf("b.test, new in batch 2, first asked %v after the harvest started: a start floor of a wait (%v) held it", d, wait)
	}
	if err := web.CheckWait(wait); err != nil {
		t.Errorf("a wait broken across the quiet start:\n%v", err)
	}
}

// TestQuietStartUnitHold: a unit's pause carried from the previous
// harvest holds for every name of the unit, including one that resolves
// before the held name. a.x.test and b.x.test share an address and a
// registrable domain (one unit, one server); batch 1 asks a.x.test last,
// and batch 2, harvested at once, holds b.x.test and a.x.test again: the
// first request of batch 2, whichever name it is for, waits the unit's
// wait after a's (TestCrawlScript/overlap saw 186 ms instead of a 1 s
// Crawl-delay: the hold was on the held name alone until it resolved).
func TestQuietStartUnitHold(t *testing.T) {
	const wait = 600 * time.Millisecond
	a, b := pagesHost("a.x.test", 2, 0), pagesHost("b.x.test", 1, 0)
	a.IP, b.IP = "127.0.5.9", "127.0.5.9"
	web := ht.Start(t, a, b)
	cfg := web.Config(wait)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	for id, urls := range [][]string{
		{web.URL("a.x.test", "/p0")},
		{web.URL("b.x.test", "/p0"), web.URL("a.x.test", "/p1")},
	} {
		bt := col.Batch(id + 1)
		ht.WriteBatch(t, bt.Dir, bt.ID, ht.Entries(urls...))
		if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg}); err != nil {
			t.Fatalf("batch %d: %v", bt.ID, err)
		}
	}
	// Every request to the unit, robots.txt too, as the server saw them.
	rs := web.Requests()
	for i := 1; i < len(rs); i++ {
		if gap := rs[i].Start.Sub(rs[i-1].End); gap < wait {
			t.Errorf("%s%s asked %v after %s%s ended, on one unit: want at least %v", rs[i].Host, rs[i].Path, gap, rs[i-1].Host, rs[i-1].Path, wait)
		}
	}
}
