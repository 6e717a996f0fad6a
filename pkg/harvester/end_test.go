package harvester_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// pageURLs returns the URLs of host's pages /p0 .. /p(n-1) (pagesHost).
func pageURLs(web *ht.Web, host string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = web.URL(host, fmt.Sprintf("/p%d", i))
	}
	return out
}

// splitDeferred returns the URLs logged deferred (with the reason) and
// those requested, from a published harvest.
func splitDeferred(t *testing.T, dir string) (deferred map[string]string, requested map[string]bool) {
	t.Helper()
	deferred, requested = map[string]string{}, map[string]bool{}
	for u, r := range readLog(t, dir) {
		if strings.HasPrefix(r.Err, harvester.ErrDeferred+":") {
			deferred[u] = strings.TrimSpace(strings.TrimPrefix(r.Err, harvester.ErrDeferred+":"))
			continue
		}
		requested[u] = true
	}
	return deferred, requested
}

// checkNotRequested fails if the server saw a request for a URL the
// harvester logged deferred: deferred means never asked.
func checkNotRequested(t *testing.T, web *ht.Web, deferred map[string]string) {
	t.Helper()
	for _, r := range web.Requests() {
		if _, ok := deferred[web.URL(r.Host, r.Path)]; ok {
			t.Errorf("%s%s was requested but logged deferred", r.Host, r.Path)
		}
	}
}

// TestBatchDeadline: a slow host with more URLs than fit before
// harvester.batch_deadline gets what fits; the rest is logged "deferred:
// deadline", never requested, and the batch is marked harvested at the
// deadline (plus the request in flight), not when the host would be done.
func TestBatchDeadline(t *testing.T) {
	web := ht.Start(t, pagesHost("slow.test", 40, 50*time.Millisecond), pagesHost("fast.test", 3, 0))
	var urls []string
	urls = append(urls, pageURLs(web, "slow.test", 40)...)
	urls = append(urls, pageURLs(web, "fast.test", 3)...)
	cfg := web.Config(100 * time.Millisecond)
	cfg.Harvester.BatchDeadline = config.Duration(time.Second)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 1800*time.Millisecond {
		t.Errorf("the harvest took %v with a 1 s deadline", d)
	}
	deferred, requested := splitDeferred(t, filepath.Join(dir, collection.HarvestDir))
	if len(deferred) == 0 || len(deferred) > 35 {
		t.Errorf("%d URLs deferred, want some of the slow host's 40 (about 7 fit in 1 s)", len(deferred))
	}
	for u, why := range deferred {
		if why != harvester.EndDeadline || !strings.Contains(u, "slow.test") {
			t.Errorf("%s deferred for %q", u, why)
		}
	}
	for i := 0; i < 3; i++ {
		if !requested[web.URL("fast.test", fmt.Sprintf("/p%d", i))] {
			t.Errorf("fast.test/p%d not fetched", i)
		}
	}
	checkNotRequested(t, web, deferred)
	if sum.Deferred != len(deferred) || sum.Ended != harvester.EndDeadline || sum.Errors[harvester.ErrDeferred] != 0 {
		t.Errorf("summary: deferred %d ended %q errors %v; the log has %d deferred", sum.Deferred, sum.Ended, sum.Errors, len(deferred))
	}
	if !strings.Contains(sum.String(), "deferred to the next batch (ended by its deadline)") {
		t.Errorf("summary does not say the batch was ended: %s", sum)
	}
	if err := web.CheckWait(100 * time.Millisecond); err != nil {
		t.Error(err)
	}
}

// TestBatchDeadlineFromDuration: with harvester.batch_deadline 0 the
// deadline is twice the batch header's batch_duration.
func TestBatchDeadlineFromDuration(t *testing.T) {
	web := ht.Start(t, pagesHost("slow.test", 30, 0))
	var urls []string
	urls = append(urls, pageURLs(web, "slow.test", 30)...)
	cfg := web.Config(100 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "000001")
	entries := ht.Entries(urls...)
	h := batch.Header{Batch: 1, Created: time.Now(), Strategy: "test", Params: map[string]string{"batch_duration": "400ms"},
		Counts: map[string]int{"urls": len(entries), "sites": 1, "new": len(entries), "revisits": 0}}
	writeBatchHeader(t, dir, h, entries)
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond || sum.Ended != harvester.EndDeadline {
		t.Errorf("took %v, ended %q: want the deadline at 800 ms", d, sum.Ended)
	}
	if sum.Deferred < 15 || sum.Fetched+sum.Deferred != 30 {
		t.Errorf("fetched %d, deferred %d of 30 (about 8 fit in 800 ms)", sum.Fetched, sum.Deferred)
	}
}

// TestWaitsOutEndsBatch: a batch planned for 300 ms holds a fast host and
// two Crawl-delay hosts of two pages each (their robots.txt asks 3 s,
// which counts from the robots.txt request). Once the fast host is done
// and the Crawl-delay hosts have had their robots.txt, nothing is left to
// ask before their turns, which come after the batch's length: the batch
// ends then, their pages deferred ("waits"), instead of idling to the
// deadline (600 ms) and every other server of the crawl with it. Nobody
// is asked early.
func TestWaitsOutEndsBatch(t *testing.T) {
	fast := pagesHost("fast.test", 3, 0)
	var hosts = []*ht.Host{fast}
	for _, name := range []string{"cd1.test", "cd2.test"} {
		h := pagesHost(name, 2, 0)
		h.Robots = robotsPage("User-agent: *\nCrawl-delay: 3\n")
		h.IP = "127.0.0.2"
		hosts = append(hosts, h)
	}
	web := ht.Start(t, hosts...)
	var urls []string
	for _, h := range hosts {
		urls = append(urls, pageURLs(web, h.Name, len(h.Pages))...)
	}
	cfg := web.Config(10 * time.Millisecond)
	cfg.Harvester.Connections = 4
	dir := filepath.Join(t.TempDir(), "000001")
	entries := ht.Entries(urls...)
	h := batch.Header{Batch: 1, Created: time.Now(), Strategy: "test", Params: map[string]string{"batch_duration": "300ms"},
		Counts: map[string]int{"urls": len(entries), "sites": 3, "new": len(entries), "revisits": 0}}
	writeBatchHeader(t, dir, h, entries)
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if sum.Ended != harvester.EndWaits || took > 550*time.Millisecond {
		t.Errorf("took %v, ended %q: want %q once only the Crawl-delay hosts' turns are left", took, sum.Ended, harvester.EndWaits)
	}
	deferred, _ := splitDeferred(t, filepath.Join(dir, collection.HarvestDir))
	if sum.Fetched != 3 || len(deferred) != 4 {
		t.Errorf("fetched %d, deferred %v: want the fast host's 3 pages, the Crawl-delay hosts' 4 deferred", sum.Fetched, deferred)
	}
	for u, why := range deferred {
		if why != harvester.EndWaits {
			t.Errorf("%s deferred %q, want %q", u, why, harvester.EndWaits)
		}
	}
	checkUnits(t, web.Requests(), func(unit string, _ ht.Request) time.Duration {
		if strings.HasPrefix(unit, "127.0.0.2 ") {
			return 3 * time.Second
		}
		return 10 * time.Millisecond
	}, 0)
}

// TestTailEndsBatch: ten hosts, nine with one page and one with many pages
// at a long wait. Once only that one is left (10 % of the hosts), the
// tail rule gives it tail_factor times the time so far (at least
// tail_min) and ends the batch: its other URLs are deferred, not failed.
func TestTailEndsBatch(t *testing.T) {
	var hosts []*ht.Host
	for i := 0; i < 9; i++ {
		hosts = append(hosts, pagesHost(fmt.Sprintf("s%d.test", i), 1, 0))
	}
	hosts = append(hosts, pagesHost("big.test", 50, 0))
	web := ht.Start(t, hosts...)
	var urls []string
	urls = append(urls, pageURLs(web, "big.test", 50)...)
	for i := 0; i < 9; i++ {
		urls = append(urls, web.URL(fmt.Sprintf("s%d.test", i), "/p0"))
	}
	cfg := web.Config(100 * time.Millisecond)
	cfg.Harvester.Connections = 10
	cfg.Harvester.TailFraction = 0.1
	cfg.Harvester.TailFactor = 0.5
	cfg.Harvester.TailMin = config.Duration(500 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	// The nine small hosts are done after their robots.txt, one wait
	// and a page (~0.2 s): the tail ends the batch about 0.5 s later,
	// long before big.test's 50 pages at 100 ms (5 s).
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the harvest took %v: the tail was not cut", d)
	}
	deferred, requested := splitDeferred(t, filepath.Join(dir, collection.HarvestDir))
	if sum.Ended != harvester.EndTail || len(deferred) < 30 {
		t.Errorf("ended %q with %d deferred, want the tail and most of big.test", sum.Ended, len(deferred))
	}
	for u, why := range deferred {
		if why != harvester.EndTail || !strings.Contains(u, "big.test") {
			t.Errorf("%s deferred for %q", u, why)
		}
	}
	for i := 0; i < 9; i++ {
		if !requested[web.URL(fmt.Sprintf("s%d.test", i), "/p0")] {
			t.Errorf("s%d.test/p0 not fetched", i)
		}
	}
	checkNotRequested(t, web, deferred)
	// Deferred URLs are not errors of the host.
	servers, err := fetchlog.ReadServers(filepath.Join(dir, collection.HarvestDir, fetchlog.ServersFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Host == "big.test" && s.Errors != 0 {
			t.Errorf("big.test has %d errors in servers.jsonl; deferred URLs are not errors", s.Errors)
		}
	}
}

// TestCarryOverPoliteness: batch 2 starts the moment batch 1 ends. The
// host's Crawl-delay (1 s, from its robots.txt) still holds across the
// two harvests (the second reads the first's servers.jsonl), and the
// second does not fetch robots.txt again (it reuses the first's answer).
func TestCarryOverPoliteness(t *testing.T) {
	host := pagesHost("cd.test", 4, 0)
	host.Robots = &ht.Page{Body: []byte("User-agent: *\nCrawl-delay: 1\nDisallow: /private\n")}
	web := ht.Start(t, host)
	cfg := web.Config(10 * time.Millisecond)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	for id, paths := range [][]string{{"/p0"}, {"/p1"}} {
		b := col.Batch(id + 1)
		var urls []string
		for _, p := range paths {
			urls = append(urls, web.URL("cd.test", p))
		}
		ht.WriteBatch(t, b.Dir, b.ID, ht.Entries(urls...))
		if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg}); err != nil {
			t.Fatalf("batch %d: %v", b.ID, err)
		}
	}
	robots := 0
	for _, r := range web.Requests() {
		if r.Path == "/robots.txt" {
			robots++
		}
	}
	if robots != 1 {
		t.Errorf("robots.txt fetched %d times, want once (the second harvest reuses the first's)", robots)
	}
	if err := web.CheckWait(time.Second); err != nil {
		t.Errorf("Crawl-delay broken across two harvests:\n%v", err)
	}
	if n := len(web.RequestsTo("cd.test")); n != 3 {
		t.Errorf("%d requests, want robots.txt and two pages", n)
	}
}

// TestCarryOverPolitenessAcrossABatch: the host is asked in batch 1, not
// in batch 2 (harvested in a moment), and again in batch 3. Its
// Crawl-delay still holds: batch 3 reads batch 1's servers.jsonl too, not
// only the newest harvest's (the overlapped-crawl test in CI saw a 1 s
// Crawl-delay kept as 0.62 s that way).
func TestCarryOverPolitenessAcrossABatch(t *testing.T) {
	host := pagesHost("cd.test", 4, 0)
	host.Robots = &ht.Page{Body: []byte("User-agent: *\nCrawl-delay: 1\n")}
	web := ht.Start(t, host, pagesHost("other.test", 1, 0))
	cfg := web.Config(10 * time.Millisecond)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	for id, u := range []string{web.URL("cd.test", "/p0"), web.URL("other.test", "/p0"), web.URL("cd.test", "/p1")} {
		b := col.Batch(id + 1)
		ht.WriteBatch(t, b.Dir, b.ID, ht.Entries(u))
		if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg}); err != nil {
			t.Fatalf("batch %d: %v", b.ID, err)
		}
	}
	rs := web.RequestsTo("cd.test")
	if len(rs) != 3 {
		t.Fatalf("%d requests to cd.test, want robots.txt once (batch 3 reuses batch 1's) and two pages", len(rs))
	}
	if gap := rs[2].Start.Sub(rs[1].End); gap < time.Second {
		t.Errorf("cd.test asked again %v after batch 1's request, want its Crawl-delay of 1 s", gap)
	}
}

// TestCarryOverUnitCrawlDelay: batch 1 reads www.g.test's Crawl-delay
// (its robots.txt); batch 2, harvested the moment batch 1 ends, holds
// only docs.g.test, another name of the unit (same address and domain),
// whose robots.txt asks for none, and no manager has seeded batch 1 yet.
// The unit's Crawl-delay holds between all of docs.g.test's requests
// (batch 1's servers.jsonl gives it, with the address), not only before
// the first (notBefore).
func TestCarryOverUnitCrawlDelay(t *testing.T) {
	www := pagesHost("www.g.test", 1, 0)
	www.Robots = &ht.Page{Body: []byte("User-agent: *\nCrawl-delay: 0.4\n")}
	docs := pagesHost("docs.g.test", 3, 0)
	web := ht.Start(t, www, docs)
	cfg := web.Config(10 * time.Millisecond)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	for id, urls := range [][]string{{web.URL("www.g.test", "/p0")}, pageURLs(web, "docs.g.test", 3)} {
		b := col.Batch(id + 1)
		ht.WriteBatch(t, b.Dir, b.ID, ht.Entries(urls...))
		if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg}); err != nil {
			t.Fatalf("batch %d: %v", b.ID, err)
		}
	}
	checkUnits(t, web.Requests(), func(string, ht.Request) time.Duration { return 400 * time.Millisecond }, 0)
}

// writeBatchHeader writes dir/batch.tsv with header h.
func writeBatchHeader(t *testing.T, dir string, h batch.Header, entries []batch.Entry) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := collection.WriteAtomic(filepath.Join(dir, collection.BatchFile), func(w io.Writer) error {
		return batch.Write(w, h, entries)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeadlineStopsRobotsRedirectWait: a site whose robots.txt redirects
// to a busy host waits to borrow that host; when the batch ends, the wait
// ends too (its URLs are deferred) instead of fetching robots.txt after
// the end (seen on the test web: a bare-name alias's robots.txt fetched
// 3 s after the tail had ended its batch).
func TestDeadlineStopsRobotsRedirectWait(t *testing.T) {
	busy := pagesHost("www.busy.test", 30, 0)
	alias := &ht.Host{Name: "busy.test", Robots: &ht.Page{Status: 301, Header: map[string][]string{"Location": {"http://www.busy.test/robots.txt"}}},
		Pages: map[string]*ht.Page{"/x": {Body: []byte("<html>x</html>")}}}
	web := ht.Start(t, busy, alias)
	var urls []string
	urls = append(urls, pageURLs(web, "www.busy.test", 30)...)
	urls = append(urls, web.URL("busy.test", "/x"))
	cfg := web.Config(100 * time.Millisecond)
	cfg.Harvester.Connections = 2
	cfg.Harvester.BatchDeadline = config.Duration(time.Second)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	end := start.Add(time.Second)
	for _, r := range web.Requests() {
		if r.Start.After(end.Add(50 * time.Millisecond)) {
			t.Errorf("%s%s requested %v after the deadline", r.Host, r.Path, r.Start.Sub(end))
		}
	}
	deferred, _ := splitDeferred(t, filepath.Join(dir, collection.HarvestDir))
	if deferred[web.URL("busy.test", "/x")] != harvester.EndDeadline || sum.Ended != harvester.EndDeadline {
		t.Errorf("busy.test/x: %q, ended %q", deferred[web.URL("busy.test", "/x")], sum.Ended)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("the harvest took %v with a 1 s deadline", d)
	}
}
