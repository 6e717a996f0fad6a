package harvester_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// pagesHost is a host with pages /p0 … /p{n-1}, each answering after
// delay.
func pagesHost(name string, n int, delay time.Duration) *ht.Host {
	h := &ht.Host{Name: name, Pages: map[string]*ht.Page{}}
	for i := 0; i < n; i++ {
		h.Pages[fmt.Sprintf("/p%d", i)] = &ht.Page{Body: []byte(fmt.Sprintf("<html>%s %d</html>", name, i)), Delay: delay}
	}
	return h
}

// requestRuns groups the web's requests, in order, into runs of one
// host: "host: /path /path ...".
func requestRuns(web *ht.Web) []string {
	var runs []string
	for _, r := range web.Requests() {
		if len(runs) > 0 && strings.HasPrefix(runs[len(runs)-1], r.Host+": ") {
			runs[len(runs)-1] += " " + r.Path
			continue
		}
		runs = append(runs, r.Host+": "+r.Path)
	}
	return runs
}

// firstPages returns the hosts in the order their first page (not
// robots.txt) was requested.
func firstPages(web *ht.Web) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" && !seen[r.Host] {
			seen[r.Host] = true
			out = append(out, r.Host)
		}
	}
	return out
}

// TestRankingOrder: with one connection, hosts are served in the order of
// the configured ranking (Cao et al. §4), checked from the server side.
// The batch's servers.jsonl gives the performance estimates.
func TestRankingOrder(t *testing.T) {
	web := ht.Start(t, pagesHost("a.test", 2, 0), pagesHost("b.test", 2, 0), pagesHost("c.test", 2, 0))
	u := web.URL
	// Batch order a, b, c; scores: c's best URL is the best, b has the
	// largest sum.
	entries := []batch.Entry{
		{DocID: 1, Site: web.Site("a.test"), Score: 0.3, Kind: batch.KindNew, URL: u("a.test", "/p0")},
		{DocID: 2, Site: web.Site("b.test"), Score: 0.5, Kind: batch.KindNew, URL: u("b.test", "/p0")},
		{DocID: 3, Site: web.Site("c.test"), Score: 0.9, Kind: batch.KindNew, URL: u("c.test", "/p0")},
		{DocID: 4, Site: web.Site("b.test"), Score: 0.5, Kind: batch.KindNew, URL: u("b.test", "/p1")},
		{DocID: 5, Site: web.Site("a.test"), Score: 0.1, Kind: batch.KindNew, URL: u("a.test", "/p1")},
		{DocID: 6, Site: web.Site("c.test"), Score: 0.05, Kind: batch.KindNew, URL: u("c.test", "/p1")},
	}
	// Known estimates: a is fast, c is slow.
	servers := []fetchlog.Server{
		{Host: "a.test", ConnectMs: 1, ResponseMs: 5, RequestsPerConn: 50},
		{Host: "b.test", ConnectMs: 20, ResponseMs: 100, RequestsPerConn: 50},
		{Host: "c.test", ConnectMs: 50, ResponseMs: 2000, RequestsPerConn: 50},
	}
	for _, tt := range []struct {
		ranking string
		want    string
	}{
		{"fifo", "a.test b.test c.test"},
		{"performance", "a.test b.test c.test"},   // R = P/T
		{"quality", "c.test b.test a.test"},       // best URL
		{"crawl-ability", "a.test b.test c.test"}, // AQ/T: 0.4/0.012, 1/0.24, 0.95/4.1
		{"value", "c.test b.test a.test"},         // best next URL
	} {
		t.Run(tt.ranking, func(t *testing.T) {
			web.Reset()
			cfg := web.Config(0)
			cfg.Harvester.Connections = 1
			cfg.Harvester.Ranking = tt.ranking
			dir := filepath.Join(t.TempDir(), "000001")
			ht.WriteBatch(t, dir, 1, entries)
			writeServers(t, filepath.Join(dir, collection.BatchServersFile), servers)
			sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(firstPages(web), " "); got != tt.want || sum.Ranking != tt.ranking {
				t.Errorf("hosts served in the order %s (ranking %s), want %s", got, sum.Ranking, tt.want)
			}
		})
	}
	// Quality orders URLs by score within a host; fifo keeps batch order.
	web.Reset()
	cfg := web.Config(0)
	cfg.Harvester.Connections = 1
	cfg.Harvester.Ranking = "quality"
	dir := filepath.Join(t.TempDir(), "000002")
	ht.WriteBatch(t, dir, 2, []batch.Entry{
		{DocID: 1, Site: web.Site("a.test"), Score: 0.1, Kind: batch.KindNew, URL: u("a.test", "/p0")},
		{DocID: 2, Site: web.Site("a.test"), Score: 0.7, Kind: batch.KindNew, URL: u("a.test", "/p1")},
	})
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if rs := web.RequestsTo("a.test"); len(rs) != 3 || rs[1].Path != "/p1" {
		t.Errorf("quality ranking: requests %v, want /p1 (score 0.7) first", rs)
	}
}

// TestValueRanking: a slow server with the batch's best pages and a fast
// one with its worst, connections to spare. The crawl-ability ranking
// fetches every page of the fast server before the slow one's second
// page; the value ranking's clock holds the fast server's pages back so
// that most come after the slow server's best, and every page is still
// fetched. Checked from the server side.
func TestValueRanking(t *testing.T) {
	web := ht.Start(t, pagesHost("slow.test", 6, 250*time.Millisecond), pagesHost("fast.test", 30, 0))
	u := web.URL
	var entries []batch.Entry
	for i := 0; i < 6; i++ {
		entries = append(entries, batch.Entry{DocID: uint64(i + 1), Site: web.Site("slow.test"), Score: 0.9 - 0.1*float64(i), Kind: batch.KindNew, URL: u("slow.test", fmt.Sprintf("/p%d", i))})
	}
	for i := 0; i < 30; i++ {
		entries = append(entries, batch.Entry{DocID: uint64(i + 100), Site: web.Site("fast.test"), Score: 0.3 - 0.01*float64(i), Kind: batch.KindNew, URL: u("fast.test", fmt.Sprintf("/p%d", i))})
	}
	servers := []fetchlog.Server{
		{Host: "slow.test", ConnectMs: 1, ResponseMs: 250, RequestsPerConn: 50},
		{Host: "fast.test", ConnectMs: 1, ResponseMs: 2, RequestsPerConn: 50},
	}
	// fastBefore counts the fast server's pages requested before the slow
	// server's third page.
	fastBefore := func() (n, pages int) {
		for _, r := range web.Requests() {
			if r.Path == "/robots.txt" {
				continue
			}
			pages++
			if r.Host == "slow.test" && r.Path == "/p2" {
				return n, -1
			}
			if r.Host == "fast.test" {
				n++
			}
		}
		return n, pages
	}
	for _, tt := range []struct {
		ranking string
		max     int // fast pages before slow's third, at most
		min     int // and at least
	}{
		{"crawl-ability", 30, 24}, // all, but for a loaded machine
		{"value", 20, 0},
	} {
		t.Run(tt.ranking, func(t *testing.T) {
			web.Reset()
			cfg := web.Config(0)
			cfg.Harvester.Connections = 8
			cfg.Harvester.Ranking = tt.ranking
			dir := filepath.Join(t.TempDir(), "000001")
			ht.WriteBatch(t, dir, 1, entries)
			writeServers(t, filepath.Join(dir, collection.BatchServersFile), servers)
			sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Fetched != len(entries) {
				t.Errorf("%d pages fetched, want %d", sum.Fetched, len(entries))
			}
			n, _ := fastBefore()
			if n > tt.max || n < tt.min {
				t.Errorf("%d pages of the fast server before the slow server's third, want %d to %d", n, tt.min, tt.max)
			}
			t.Logf("%s: %d fast pages before the slow server's third, %.2f s", tt.ranking, n, sum.ElapsedSeconds)
		})
	}
}

func writeServers(t *testing.T, path string, lines []fetchlog.Server) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		line, err := fetchlog.FormatServer(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readServers(t *testing.T, dir string) map[string]fetchlog.Server {
	t.Helper()
	lines, err := fetchlog.ReadServers(filepath.Join(dir, fetchlog.ServersFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fetchlog.Server{}
	for _, l := range lines {
		if _, dup := out[l.Host]; dup {
			t.Errorf("servers.jsonl: %s twice", l.Host)
		}
		out[l.Host] = l
	}
	return out
}

// TestNonPreemptive: with one connection and P = 3, a host keeps the
// connection for 3 URLs, then another host gets it (server side: runs of
// three requests per connection). A server that closes connections after
// two requests teaches the harvester P = 2, which the servers file keeps.
func TestNonPreemptive(t *testing.T) {
	var served atomic.Int64
	closer := pagesHost("closer.test", 8, 0)
	for _, p := range closer.Pages {
		body := p.Body
		p.Handler = func(w http.ResponseWriter, r *http.Request) {
			if served.Add(1)%2 == 0 {
				w.Header().Set("Connection", "close")
			}
			w.Write(body)
		}
	}
	web := ht.Start(t, pagesHost("a.test", 6, 0), pagesHost("b.test", 6, 0), closer)
	cfg := web.Config(0)
	cfg.Harvester.Connections = 1
	cfg.Harvester.RequestsPerConnection = 3
	cfg.Harvester.Ranking = "fifo"
	var urls []string
	for i := 0; i < 6; i++ {
		urls = append(urls, web.URL("a.test", fmt.Sprintf("/p%d", i)), web.URL("b.test", fmt.Sprintf("/p%d", i)))
	}
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	runs := requestRuns(web)
	want := []string{
		"a.test: /robots.txt /p0 /p1 /p2", "b.test: /robots.txt /p0 /p1 /p2",
		"a.test: /p3 /p4 /p5", "b.test: /p3 /p4 /p5",
	}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests by connection:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}

	// A turn goes on past P while no other server waits for the
	// connection: a host alone keeps its one connection for its 6 URLs
	// (not two of 3), and the harvester learns that its server serves
	// more than P per connection.
	web.Reset()
	urls = nil
	for i := 0; i < 6; i++ {
		urls = append(urls, web.URL("a.test", fmt.Sprintf("/p%d", i)))
	}
	dir = filepath.Join(t.TempDir(), "000003")
	ht.WriteBatch(t, dir, 3, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if conns, reqs := web.Conns(), web.Requests(); len(conns) != 1 || len(reqs) != 7 {
		t.Errorf("a host alone: %d connections for %d requests, want 1 for 7 (robots.txt and 6 pages)", len(conns), len(reqs))
	}
	if s := readServers(t, filepath.Join(dir, collection.HarvestDir))["a.test"]; s.RequestsPerConn <= 3 {
		t.Errorf("a.test estimates %+v, want more than 3 requests per connection learned", s)
	}

	// Learning requests per connection from a server that closes every
	// second one.
	web.Reset()
	served.Store(0)
	urls = nil
	for i := 0; i < 8; i++ {
		urls = append(urls, web.URL("closer.test", fmt.Sprintf("/p%d", i)))
	}
	cfg.Harvester.RequestsPerConnection = 50
	dir = filepath.Join(t.TempDir(), "000002")
	ht.WriteBatch(t, dir, 2, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	s := readServers(t, filepath.Join(dir, collection.HarvestDir))["closer.test"]
	if s.RequestsPerConn < 1.5 || s.RequestsPerConn > 3 || s.Pages != 8 || s.ConnectMs <= 0 || s.ResponseMs <= 0 || s.IP != "127.0.0.1" {
		t.Errorf("closer.test estimates %+v, want about 2 requests per connection", s)
	}
}

// TestConnectionsPerIP: hosts sharing an address get at most
// connections_per_ip connections at once, whatever the overall number.
func TestConnectionsPerIP(t *testing.T) {
	var hosts []*ht.Host
	var urls []string
	for i := 0; i < 6; i++ {
		h := pagesHost(fmt.Sprintf("shared%d.test", i), 3, 40*time.Millisecond)
		hosts = append(hosts, h)
	}
	for i := 0; i < 2; i++ {
		h := pagesHost(fmt.Sprintf("own%d.test", i), 3, 40*time.Millisecond)
		h.IP = fmt.Sprintf("127.0.0.%d", 2+i)
		hosts = append(hosts, h)
	}
	web := ht.Start(t, hosts...)
	for _, h := range hosts {
		for p := range h.Pages {
			urls = append(urls, web.URL(h.Name, p))
		}
	}
	cfg := web.Config(10 * time.Millisecond)
	cfg.Harvester.Connections = 8
	cfg.Harvester.ConnectionsPerIP = 2
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.Fetched != len(urls) {
		t.Fatalf("%+v %v", sum, err)
	}
	if n := web.MaxOpen(15*time.Millisecond, func(c ht.Conn) bool { return c.Local == "127.0.0.1" }); n != 2 {
		t.Errorf("%d connections at once to 127.0.0.1, want 2 (the cap, reached)", n)
	}
	if n := web.MaxOpen(15*time.Millisecond, func(c ht.Conn) bool { return c.Local != "127.0.0.1" }); n != 2 {
		t.Errorf("%d connections at once to the other addresses, want 2", n)
	}
	if n := web.MaxOpen(15*time.Millisecond, func(ht.Conn) bool { return true }); n > 4 {
		t.Errorf("%d connections at once overall, want at most 4", n)
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
}

// TestAdaptiveWait: with wait_factor the wait is a multiple of the last
// response time, at least wait and at most max_wait; a Crawl-delay wins
// when it is longer.
func TestAdaptiveWait(t *testing.T) {
	slow := pagesHost("slow.test", 3, 150*time.Millisecond)
	capped := pagesHost("capped.test", 3, 400*time.Millisecond)
	fast := pagesHost("fast.test", 3, 0)
	delayed := pagesHost("delayed.test", 3, 0)
	delayed.Robots = robotsPage("User-agent: *\nCrawl-delay: 0.5\n")
	web := ht.Start(t, slow, capped, fast, delayed)
	var urls []string
	for _, h := range []string{"slow.test", "capped.test", "fast.test", "delayed.test"} {
		for i := 0; i < 3; i++ {
			urls = append(urls, web.URL(h, fmt.Sprintf("/p%d", i)))
		}
	}
	cfg := web.Config(100 * time.Millisecond)
	cfg.Harvester.WaitFactor = 3
	cfg.Harvester.MaxWait = config.Duration(600 * time.Millisecond)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	gaps := func(host string) (lo, hi time.Duration) {
		rs := web.RequestsTo(host)
		lo = time.Hour
		for i := 2; i < len(rs); i++ { // between pages (the first gap follows robots.txt)
			g := rs[i].Start.Sub(rs[i-1].End)
			lo, hi = min(lo, g), max(hi, g)
		}
		return
	}
	if lo, _ := gaps("slow.test"); lo < 450*time.Millisecond {
		t.Errorf("slow.test: gap %v after 150 ms responses, want ≥ 3 × 150 ms", lo)
	}
	if lo, hi := gaps("capped.test"); lo < 600*time.Millisecond || hi > 1100*time.Millisecond {
		t.Errorf("capped.test: gaps %v..%v after 400 ms responses, want the 600 ms ceiling", lo, hi)
	}
	if lo, _ := gaps("fast.test"); lo < 100*time.Millisecond {
		t.Errorf("fast.test: gap %v, want the 100 ms floor", lo)
	}
	if lo, _ := gaps("delayed.test"); lo < 500*time.Millisecond {
		t.Errorf("delayed.test: gap %v, want the 0.5 s Crawl-delay", lo)
	}
}

// TestConditionalGET: revisits carry the validators of the batch; a 304
// is logged as such (no body, a revisit record), new URLs are fetched
// unconditionally.
func TestConditionalGET(t *testing.T) {
	var seen atomic.Value
	seen.Store("")
	page := func(w http.ResponseWriter, r *http.Request) {
		seen.Store(seen.Load().(string) + fmt.Sprintf("%s ims=%q inm=%q\n", r.URL.Path, r.Header.Get("If-Modified-Since"), r.Header.Get("If-None-Match")))
		if r.Header.Get("If-None-Match") == `"v1"` || r.Header.Get("If-Modified-Since") == "Mon, 02 Jan 2026 15:04:05 GMT" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v2"`)
		w.Write([]byte("<html>new</html>"))
	}
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{"/same": {Handler: page}, "/changed": {Handler: page}, "/dated": {Handler: page}, "/new": {Handler: page}}})
	u := web.URL
	entries := []batch.Entry{
		{DocID: 1, Site: web.Site("a.test"), Score: 4, Kind: batch.KindRevisit, URL: u("a.test", "/same"), ETag: `"v1"`},
		{DocID: 2, Site: web.Site("a.test"), Score: 3, Kind: batch.KindRevisit, URL: u("a.test", "/changed"), ETag: `"v0"`},
		{DocID: 3, Site: web.Site("a.test"), Score: 2, Kind: batch.KindRevisit, URL: u("a.test", "/dated"), LastModified: "Mon, 02 Jan 2026 15:04:05 GMT"},
		{DocID: 4, Site: web.Site("a.test"), Score: 1, Kind: batch.KindNew, URL: u("a.test", "/new")},
	}
	cfg := web.Config(0)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, entries)
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := "/same ims=\"\" inm=\"\\\"v1\\\"\"\n/changed ims=\"\" inm=\"\\\"v0\\\"\"\n/dated ims=\"Mon, 02 Jan 2026 15:04:05 GMT\" inm=\"\"\n/new ims=\"\" inm=\"\"\n"
	if got := seen.Load().(string); got != want {
		t.Errorf("server saw\n%s\nwant\n%s", got, want)
	}
	logged := readLog(t, filepath.Join(dir, "harvest"))
	for path, status := range map[string]int{"/same": 304, "/changed": 200, "/dated": 304, "/new": 200} {
		r := logged[u("a.test", path)]
		if r.Status != status || !r.OK() || r.WARC == "" || (status == 304) != (r.Bytes == 0) {
			t.Errorf("%s: %+v, want status %d", path, r, status)
		}
	}
	if sum.Statuses["3xx"] != 2 {
		t.Errorf("summary %+v", sum.Statuses)
	}
	checkWARCs(t, filepath.Join(dir, "harvest"))
}

// TestBatchSidecars: a robots.txt copy in the batch's robots.jsonl is used
// instead of fetching the file (and kept in the output), and the
// estimates of the batch's servers.jsonl are where the output's start.
func TestBatchSidecars(t *testing.T) {
	web := ht.Start(t,
		&ht.Host{Name: "a.test", Robots: robotsPage("User-agent: *\nDisallow: /\n"), Pages: map[string]*ht.Page{"/x": html("x"), "/y": html("y")}},
		&ht.Host{Name: "b.test", Robots: robotsPage("User-agent: *\nDisallow: /y\n"), Pages: map[string]*ht.Page{"/x": html("x"), "/y": html("y")}},
		&ht.Host{Name: "gone.test", DNS: "servfail"},
	)
	u := web.URL
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(u("a.test", "/x"), u("a.test", "/y"), u("b.test", "/x"), u("b.test", "/y"), u("gone.test", "/")))
	fetched := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	copyLine, _ := fetchlog.FormatRobots(fetchlog.Robots{Site: web.Site("a.test"), Status: 200, Fetched: fetched, Body: "User-agent: *\nDisallow: /y\n"})
	os.WriteFile(filepath.Join(dir, collection.BatchRobotsFile), copyLine, 0o644)
	measured := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	writeServers(t, filepath.Join(dir, collection.BatchServersFile), []fetchlog.Server{
		{Host: "a.test", ConnectMs: 1000, ResponseMs: 3000, RequestsPerConn: 7, Measured: measured},
	})
	cfg := web.Config(0)
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range web.RequestsTo("a.test") {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "/x" {
		t.Errorf("a.test got %v, want only /x (robots.txt from the batch, which disallows /y)", paths)
	}
	out := filepath.Join(dir, "harvest")
	logged := readLog(t, out)
	ax := logged[u("a.test", "/x")]
	if logged[u("a.test", "/y")].Err != "robots" || logged[u("b.test", "/y")].Err != "robots" || !ax.OK() {
		t.Errorf("robots not obeyed: %+v", logged)
	}
	rl, _ := fetchlog.ReadRobots(filepath.Join(out, fetchlog.RobotsFile))
	bySite := map[string]fetchlog.Robots{}
	for _, r := range rl {
		bySite[r.Site] = r
	}
	if r := bySite[web.Site("a.test")]; !r.Fetched.Equal(fetched) || r.Body != "User-agent: *\nDisallow: /y\n" || len(rl) != 3 {
		t.Errorf("robots.jsonl %+v", rl)
	}
	servers := readServers(t, out)
	a := servers["a.test"]
	// One response measured after a 1000/3000 ms estimate: 0.8 · old + 0.2 · new.
	if a.RequestsPerConn != 7 || a.ConnectMs >= 1000 || a.ConnectMs < 800 || a.ResponseMs >= 3000 || a.ResponseMs < 2400 || !a.Measured.After(measured) || a.Pages != 1 {
		t.Errorf("a.test estimates %+v", a)
	}
	if g := servers["gone.test"]; !strings.HasPrefix(g.DNSError, "dns: ") || g.ConnectMs != 0 || g.Errors != 1 {
		t.Errorf("gone.test %+v, want its DNS failure", g)
	}
	if len(servers) != 3 {
		t.Errorf("servers.jsonl has %d hosts, want 3", len(servers))
	}
}

// TestRobotsRedirectToBusyHost: a robots.txt that redirects to another
// host of the batch waits for that host's connection to end: the host
// never sees two connections.
func TestRobotsRedirectToBusyHost(t *testing.T) {
	target := pagesHost("target.test", 6, 60*time.Millisecond)
	target.Robots = robotsPage("User-agent: *\nDisallow: /p5\n")
	web := ht.Start(t,
		&ht.Host{Name: "redir.test", Robots: &ht.Page{Status: 301, Header: http.Header{"Location": {"http://target.test:PORT/robots.txt"}}}, Pages: map[string]*ht.Page{"/a": html("a"), "/p5": html("p5")}},
		target,
	)
	web.Hosts()["redir.test"].Robots.Header.Set("Location", web.URL("target.test", "/robots.txt"))
	var urls []string
	for i := 0; i < 6; i++ {
		urls = append(urls, web.URL("target.test", fmt.Sprintf("/p%d", i)))
	}
	urls = append(urls, web.URL("redir.test", "/a"), web.URL("redir.test", "/p5"))
	cfg := web.Config(30 * time.Millisecond)
	cfg.Harvester.Ranking = "fifo"
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	if err := web.CheckWait(30 * time.Millisecond); err != nil {
		t.Error(err)
	}
	logged := readLog(t, filepath.Join(dir, "harvest"))
	if r := logged[web.URL("redir.test", "/p5")]; r.Err != "robots" {
		t.Errorf("redir.test/p5: %+v, want excluded by the redirected robots.txt", r)
	}
	if r := logged[web.URL("redir.test", "/a")]; !r.OK() {
		t.Errorf("redir.test/a: %+v", r)
	}
}

// TestWaitAcrossRuns: the harvest of the next batch, started the moment
// the previous one ends (as scripts/crawl.sh does), must not ask a host
// sooner than the wait after the previous run's last request to it (found
// by the fault-injection test: 16.6 ms with a 20 ms wait).
func TestWaitAcrossRuns(t *testing.T) {
	const wait = 300 * time.Millisecond
	web := ht.Start(t, pagesHost("a.test", 4, 0))
	cfg := web.Config(wait)
	for id, paths := range [][]string{{"/p0", "/p1"}, {"/p2", "/p3"}} {
		var urls []string
		for _, p := range paths {
			urls = append(urls, web.URL("a.test", p))
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("%06d", id+1))
		ht.WriteBatch(t, dir, id+1, ht.Entries(urls...))
		if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(web.RequestsTo("a.test")); n < 5 {
		t.Fatalf("%d requests to a.test, want robots.txt and 4 pages at least", n)
	}
	if err := web.CheckWait(wait); err != nil {
		t.Error(err)
	}
}

// TestLookupsAhead: names are looked up a bounded distance ahead of the
// connections (feedLookups), not all at the start. With one connection
// and two lookups at a time, at most the free connection and two more
// servers are resolved ahead of those already asked: every request
// starts with at most three names looked up besides the hosts asked so
// far (before 2026-12-07 all twenty were looked up at the start).
func TestLookupsAhead(t *testing.T) {
	var hosts []*ht.Host
	var urls []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("h%02d.test", i)
		hosts = append(hosts, pagesHost(name, 2, 5*time.Millisecond))
	}
	web := ht.Start(t, hosts...)
	for i := 0; i < 20; i++ {
		for p := 0; p < 2; p++ {
			urls = append(urls, web.URL(fmt.Sprintf("h%02d.test", i), fmt.Sprintf("/p%d", p)))
		}
	}
	cfg := web.Config(0)
	cfg.Harvester.Connections = 1
	cfg.Harvester.DNSLookups = 2
	cfg.Harvester.Ranking = "fifo"
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	lookups := web.Lookups()
	asked := map[string]bool{}
	for _, r := range web.Started() {
		asked[r.Host] = true
		looked := map[string]bool{}
		for _, l := range lookups {
			if !l.At.After(r.Start) {
				looked[l.Name] = true
			}
		}
		ahead := 0
		for name := range looked {
			if !asked[name] {
				ahead++
			}
		}
		if ahead > 3 {
			t.Fatalf("request %s%s started with %d names looked up ahead of the hosts asked (%d looked up), want at most 3", r.Host, r.Path, ahead, len(looked))
		}
	}
	if n := len(asked); n != 20 {
		t.Errorf("%d hosts asked, want 20", n)
	}
}

// TestTurnGoesOn: after its P URLs a server keeps its connection unless a
// server ready for one ranks before it (turnOver). a.test yields to
// b.test, ready and tied (fifo); then b.test waits 1 s for its
// Crawl-delay (after its robots.txt), longer than max_idle, so it is in
// the queue but not ready:
// a.test's next turn goes on past P on the same connection instead of
// reconnecting every P (before 2026-12-07 any server not done and without
// a connection ended the turn).
func TestTurnGoesOn(t *testing.T) {
	b := pagesHost("b.test", 2, 0)
	b.Robots = &ht.Page{Body: []byte("User-agent: *\nCrawl-delay: 1\n")}
	web := ht.Start(t, pagesHost("a.test", 9, 0), b)
	cfg := web.Config(0)
	cfg.Harvester.Connections = 1
	cfg.Harvester.RequestsPerConnection = 3
	cfg.Harvester.MaxIdle = config.Duration(100 * time.Millisecond)
	cfg.Harvester.Ranking = "fifo"
	var urls []string
	for i := 0; i < 9; i++ {
		urls = append(urls, web.URL("a.test", fmt.Sprintf("/p%d", i)))
	}
	urls = append(urls, web.URL("b.test", "/p0"), web.URL("b.test", "/p1"))
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	runs := requestRuns(web)
	want := []string{
		"a.test: /robots.txt /p0 /p1 /p2", "b.test: /robots.txt",
		"a.test: /p3 /p4 /p5 /p6 /p7 /p8", "b.test: /p0 /p1",
	}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests by host:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	conns := 0
	for _, c := range web.Conns() {
		if c.Host == "a.test" {
			conns++
		}
	}
	if conns != 2 {
		t.Errorf("a.test had %d connections, want 2 (one per turn, the second going on past P)", conns)
	}
}

// TestTurnYieldsToUnit: a server parked on its address or unit counts
// as waiting for a connection (turnOver). www.a.test and a.test are one
// politeness unit: while www.a.test holds it, a.test waits parked, and
// www.a.test's turn ends after its P URLs so that a.test gets the unit
// (tied, fifo) rather than waiting for all of www.a.test's URLs.
func TestTurnYieldsToUnit(t *testing.T) {
	web := ht.Start(t, pagesHost("www.a.test", 9, 0), pagesHost("a.test", 3, 0))
	cfg := web.Config(0)
	cfg.Harvester.Connections = 2
	cfg.Harvester.RequestsPerConnection = 3
	cfg.Harvester.Ranking = "fifo"
	var urls []string
	for i := 0; i < 9; i++ {
		urls = append(urls, web.URL("www.a.test", fmt.Sprintf("/p%d", i)))
	}
	for i := 0; i < 3; i++ {
		urls = append(urls, web.URL("a.test", fmt.Sprintf("/p%d", i)))
	}
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	runs := requestRuns(web)
	want := []string{
		"www.a.test: /robots.txt /p0 /p1 /p2", "a.test: /robots.txt /p0 /p1 /p2",
		"www.a.test: /p3 /p4 /p5 /p6 /p7 /p8",
	}
	if strings.Join(runs, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests by host:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
}
