package harvester

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

func TestPlan(t *testing.T) {
	e := func(id uint64, site, path string, score float64) batch.Entry {
		return batch.Entry{DocID: id, Site: site, Score: score, Kind: batch.KindNew, URL: site + path}
	}
	entries := []batch.Entry{
		e(1, "http://c.cl", "/", 0.9),
		e(2, "http://a.cl", "/", 0.5),
		e(3, "https://a.cl", "/", 0.95), // same host as http://a.cl, better site
		e(4, "http://b.cl:8080", "/", 0.7),
		e(5, "http://a.cl", "/x", 0.6), // better than /, later in the batch
		e(6, "http://c.cl", "/y", 0.1),
		e(7, "http://d.cl", "/", 0.99), // already logged
	}
	todo := []bool{true, true, true, true, true, true, false}
	names := func(ss []*Server) string {
		var out []string
		for _, s := range ss {
			var sites []string
			for _, q := range s.Sites {
				var ids []string
				for _, e := range q.Entries {
					ids = append(ids, itoa(int(e.DocID)))
				}
				sites = append(sites, strings.TrimPrefix(strings.TrimPrefix(q.Site, "http://"), "https://")+"("+strings.Join(ids, ",")+")")
			}
			out = append(out, s.Host+"["+strings.Join(sites, " ")+"]")
		}
		return strings.Join(out, " ")
	}
	est := func(string) Estimates { return defaultEstimates(50) }
	tests := []struct {
		rank Ranking
		want string
	}{
		// URL level: by score for the quality orders, batch order else;
		// the servers come out in batch order (the queue ranks them).
		{QualityRanking{}, "c.cl[c.cl(1,6)] a.cl[a.cl(3) a.cl(5,2)] b.cl[b.cl:8080(4)]"},
		{CrawlabilityRanking{}, "c.cl[c.cl(1,6)] a.cl[a.cl(3) a.cl(5,2)] b.cl[b.cl:8080(4)]"},
		{FIFORanking{}, "c.cl[c.cl(1,6)] a.cl[a.cl(2,5) a.cl(3)] b.cl[b.cl:8080(4)]"},
		{PerformanceRanking{}, "c.cl[c.cl(1,6)] a.cl[a.cl(2,5) a.cl(3)] b.cl[b.cl:8080(4)]"},
	}
	for _, tt := range tests {
		got := plan(entries, todo, tt.rank, est)
		if names(got) != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.rank.Name(), names(got), tt.want)
		}
	}
	srv := plan(entries, todo, QualityRanking{}, est)[1]
	if srv.Host != "a.cl" || srv.URLs() != 3 || srv.Quality() != 0.95 || srv.AQ() != 0.95+0.6+0.5 || srv.P() != 3 {
		t.Errorf("a.cl server: %d URLs, quality %g, AQ %g, P %d", srv.URLs(), srv.Quality(), srv.AQ(), srv.P())
	}
}

// TestRankings checks each ranking of Cao et al. §4 on servers with known
// estimates: T = 2·ConnectionTime + P·ResponseTime/p, R = P/T, quality of
// the best URL, C = AQ/T, and P = min(RequestsPerConnection, TaskURLs).
func TestRankings(t *testing.T) {
	mk := func(host string, first int, connect, response time.Duration, rpc float64, scores ...float64) *Server {
		s := &Server{Host: host, First: first, order: first, Est: Estimates{ConnectTime: connect, ResponseTime: response, RequestsPerConn: rpc}}
		var es []batch.Entry
		for _, sc := range scores {
			es = append(es, batch.Entry{Score: sc})
		}
		s.Sites = []*SiteQueue{{Entries: es}}
		s.left = len(es)
		return s
	}
	// fast: 10 URLs of 0.1 over 5-request connections; slow but good: 2
	// URLs of 0.9; huge: 100 URLs of 0.2, 50 per connection.
	fast := mk("fast", 2, 10*time.Millisecond, 20*time.Millisecond, 5, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)
	slow := mk("slow", 1, 200*time.Millisecond, 2*time.Second, 50, 0.9, 0.9)
	var many []float64
	for i := 0; i < 100; i++ {
		many = append(many, 0.2)
	}
	huge := mk("huge", 0, 50*time.Millisecond, 100*time.Millisecond, 50, many...)
	// gem: quick, few URLs, the best scores.
	gem := mk("gem", 3, 10*time.Millisecond, 50*time.Millisecond, 50, 2, 2, 2)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if fast.P() != 5 || slow.P() != 2 || huge.P() != 50 {
		t.Errorf("P: %d %d %d, want 5 2 50", fast.P(), slow.P(), huge.P())
	}
	if !near(fast.T(), 2*0.01+5*0.02) || !near(slow.T(), 2*0.2+2*2) || !near(huge.T(), 2*0.05+50*0.1) {
		t.Errorf("T: %g %g %g", fast.T(), slow.T(), huge.T())
	}
	order := func(r Ranking) string {
		ss := []*Server{fast, slow, huge, gem}
		for _, s := range ss {
			s.rank = r.Rank(s)
		}
		sort.SliceStable(ss, func(i, j int) bool { return serverHeap(ss).Less(i, j) })
		var out []string
		for _, s := range ss {
			out = append(out, s.Host)
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		r    Ranking
		want string
	}{
		{FIFORanking{}, "huge slow fast gem"},         // queue order
		{PerformanceRanking{}, "fast gem huge slow"},  // R = P/T: 5/0.12, 3/0.17, 50/5.1, 2/4.4
		{QualityRanking{}, "gem slow huge fast"},      // best URL: 2, 0.9, 0.2, 0.1
		{CrawlabilityRanking{}, "gem fast huge slow"}, // C = AQ/T: 6/0.17, 0.5/0.12, 10/5.1, 1.8/4.4
	} {
		if got := order(tt.r); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.r.Name(), got, tt.want)
		}
	}
}

// TestEstimates: the moving averages of §4.2 with alpha 0.8, the first
// measurement replacing a default.
func TestEstimates(t *testing.T) {
	e := defaultEstimates(50)
	now := time.Now()
	e.observeResponse(100*time.Millisecond, now)
	if e.ResponseTime != 100*time.Millisecond {
		t.Errorf("first measurement: %v", e.ResponseTime)
	}
	e.observeResponse(200*time.Millisecond, now)
	if e.ResponseTime != 120*time.Millisecond {
		t.Errorf("0.8·100 + 0.2·200 = %v, want 120ms", e.ResponseTime)
	}
	e.observeRPC(1, now)
	e.observeRPC(6, now)
	if math.Abs(e.RequestsPerConn-2) > 1e-9 || !e.KnownRPC {
		t.Errorf("rpc %g, want 2", e.RequestsPerConn)
	}
	var r Estimates
	r = defaultEstimates(50)
	r.fromRecord(fetchlog.Server{Host: "a.cl", ConnectMs: 12.5, RequestsPerConn: 3, Measured: now})
	if r.ConnectTime != 12500*time.Microsecond || !r.KnownConnect || r.KnownResponse || r.ResponseTime != DefaultResponseTime || r.RequestsPerConn != 3 {
		t.Errorf("from record: %+v", r)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"", 0, false},
		{"soon", 0, false},
		{"Sun, 22 Nov 2026 12:01:00 GMT", time.Minute, true},
		{"Sun, 22 Nov 2026 11:00:00 GMT", 0, true}, // in the past: no wait
		{"99999999999", 24 * time.Hour, true},      // capped before overflow
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.v, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRobotsDenial(t *testing.T) {
	h := &harvest{}
	h.cfg.Crawl.ProductToken = "wirebot"
	tests := []struct {
		rec  fetchlog.Robots
		url  string
		want string
	}{
		{fetchlog.Robots{Status: 200, Body: "User-agent: *\nDisallow: /p\n"}, "http://a.cl/p", "robots"},
		{fetchlog.Robots{Status: 200, Body: "User-agent: *\nDisallow: /p\n"}, "http://a.cl/q", ""},
		{fetchlog.Robots{Status: 404}, "http://a.cl/p", ""},
		{fetchlog.Robots{Status: 500}, "http://a.cl/p", "robots: robots.txt unreachable (status 500)"},
		{fetchlog.Robots{Err: "timeout: no data for 20s"}, "http://a.cl/p", "robots: robots.txt unreachable (timeout: no data for 20s)"},
		{fetchlog.Robots{Status: 200, Body: "User-agent: *\nAllow: /\n", Err: "reset: connection reset by peer"}, "http://a.cl/p", "robots: robots.txt unreachable (reset: connection reset by peer)"},
		{fetchlog.Robots{Err: "dns: no such host a.cl"}, "http://a.cl/p", "dns: no such host a.cl"},
		{fetchlog.Robots{Err: "blocked-address 10.0.0.1"}, "http://a.cl/p", "blocked-address 10.0.0.1"},
	}
	for _, tt := range tests {
		if got := robotsDenial(tt.rec, h.rulesOf(tt.rec), tt.url); got != tt.want {
			t.Errorf("%+v %s: %q, want %q", tt.rec, tt.url, got, tt.want)
		}
	}
}

func response(url, body string) *fetch.Response {
	return &fetch.Response{URL: url, Started: time.Now(), IP: "127.0.0.1", Request: []byte("GET / HTTP/1.1\r\nHost: a.cl\r\n\r\n"),
		Status: 200, StatusLine: "HTTP/1.1 200 OK", Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(body)}
}

// testWARCName names the WARC files of the output tests: batch 7, whole,
// started at a fixed second.
var testWARCName = warcio.Name{Prefix: "wire", Time: time.Date(2026, 11, 22, 2, 3, 11, 0, time.UTC), Batch: 7, ShardI: 1, ShardN: 1}

// TestRepair resumes from a harvest.partial left by a crash: a torn last
// line, a line whose WARC record never reached the disk, a torn robots
// line. What cannot be trusted is dropped (and so fetched again).
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	o, res, err := openOutput(dir, testWARCName, 0, nil, nil)
	if err != nil || len(res.records) != 0 || len(res.robots) != 0 {
		t.Fatalf("fresh: %v %+v", err, res)
	}
	for i, u := range []string{"http://a.cl/1", "http://a.cl/2"} {
		rec := fetchlog.Record{DocID: uint64(i + 1), URL: u, Fetched: time.Now()}
		if err := o.page(response(u, "body "+u), nil, rec, capture.Capture{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.robots(fetchlog.Robots{Site: "http://a.cl", Status: 200, Fetched: time.Now(), Body: "User-agent: *\n"}); err != nil {
		t.Fatal(err)
	}
	if err := o.close(); err != nil {
		t.Fatal(err)
	}
	first := "wire-20261122020311-000007-s1of1-00001.warc.gz"
	warc := filepath.Join(dir, first)
	st, _ := os.Stat(warc)
	ghost := fetchlog.Record{DocID: 3, URL: "http://a.cl/3", Status: 200, Fetched: time.Now(), WARC: first, Offset: st.Size(), Length: 500}
	appendFile(t, filepath.Join(dir, fetchlog.LogFile), ghost.Format()+"4\thttp://a.cl/4\t200\t12")
	appendFile(t, filepath.Join(dir, fetchlog.RobotsFile), `{"site":"http://b.cl","sta`)

	// The resumed run starts later: its files keep the harvest's start.
	later := testWARCName
	later.Time = later.Time.Add(time.Hour)
	o, res, err = openOutput(dir, later, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	if len(res.records) != 2 || res.records[1].URL != "http://a.cl/2" || len(res.robots) != 1 || len(res.repaired) != 2 {
		t.Fatalf("resumed %d records, %d robots, repaired %q", len(res.records), len(res.robots), res.repaired)
	}
	if got, want := o.nextWARC.String(), "wire-20261122020311-000007-s1of1-00002.warc.gz"; got != want {
		t.Errorf("next WARC file %s, want %s (never append to an old one, keep the harvest's start)", got, want)
	}
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil || len(recs) != 2 {
		t.Fatalf("rewritten log: %d records, %v", len(recs), err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, fetchlog.RobotsFile))
	if !strings.HasSuffix(string(data), "\n") || strings.Count(string(data), "\n") != 1 {
		t.Errorf("robots file not repaired: %q", data)
	}
	r, err := warcio.ReadResponse(warc, recs[1].Offset, recs[1].Length, 1<<20)
	if err != nil || string(r.Body) != "body http://a.cl/2" {
		t.Errorf("record after repair: %v %v", r, err)
	}
}

// TestNextWARCName: the first file of a run goes on from the files a
// killed run left in the partial directory — the highest serial plus one,
// the harvest's start time from their names — whatever the kind of name:
// a harvest begun by a harvester of before issue 37 (data-00001.warc.gz)
// goes on under the new names.
func TestNextWARCName(t *testing.T) {
	later := testWARCName
	later.Time = later.Time.Add(90 * time.Minute)
	for _, tt := range []struct {
		name  string
		files []string
		want  string
	}{
		{"fresh", nil, "wire-20261122033311-000007-s1of1-00001.warc.gz"},
		{"resumed", []string{"wire-20261122020311-000007-s1of1-00001.warc.gz", "wire-20261122020311-000007-s1of1-00002.warc.gz", "fetch.log"},
			"wire-20261122020311-000007-s1of1-00003.warc.gz"},
		{"old names", []string{"data-00001.warc.gz", "data-00002.warc.gz"}, "wire-20261122033311-000007-s1of1-00003.warc.gz"},
		{"old then new", []string{"data-00001.warc.gz", "wire-20261122020311-000007-s1of1-00002.warc.gz"}, "wire-20261122020311-000007-s1of1-00003.warc.gz"},
		{"not WARC files", []string{"notes.txt", "x.warc.gz"}, "wire-20261122033311-000007-s1of1-00001.warc.gz"},
	} {
		if got := nextWARCName(later, tt.files).String(); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestRepairHeader(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, fetchlog.LogFile), []byte(fetchlog.Header()[:10]), 0o644)
	o, res, err := openOutput(dir, testWARCName, 0, nil, nil)
	if err != nil || len(res.records) != 0 {
		t.Fatalf("torn header: %v", err)
	}
	o.close()
	data, _ := os.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if string(data) != fetchlog.Header() {
		t.Errorf("header not rewritten: %q", data)
	}

	other := t.TempDir()
	os.WriteFile(filepath.Join(other, fetchlog.LogFile), []byte(fmt.Sprintf("# wire-fetchlog %d\n", fetchlog.Version+1)), 0o644)
	if _, _, err := openOutput(other, testWARCName, 0, nil, nil); err == nil {
		t.Error("a fetch log of another version was accepted")
	}

	// A version 1 log begun by an older harvester, killed mid-line: its
	// records are kept, the torn line dropped, the header made this
	// version's.
	old := t.TempDir()
	rec := fetchlog.Record{DocID: 1, URL: "http://a.cl/1", Status: 404, Fetched: time.Now()}
	os.WriteFile(filepath.Join(old, fetchlog.LogFile), []byte("# wire-fetchlog 1\n"+rec.Format()+"2\thttp://a.cl/2\t20"), 0o644)
	o, res, err = openOutput(old, testWARCName, 0, nil, nil)
	if err != nil || len(res.records) != 1 || len(res.repaired) != 1 {
		t.Fatalf("version 1 log with a torn line: %v, %d records, repaired %q", err, len(res.records), res.repaired)
	}
	o.close()
	if data, _ := os.ReadFile(filepath.Join(old, fetchlog.LogFile)); string(data) != fetchlog.Header()+rec.Format() {
		t.Errorf("version 1 log repaired as %q", data)
	}
}

// TestWARCRotation starts a new file when the current one is full, and
// indexes the full one.
func TestWARCRotation(t *testing.T) {
	dir := t.TempDir()
	o, _, err := openOutput(dir, testWARCName, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		u := "http://a.cl/" + itoa(i)
		if err := o.page(response(u, strings.Repeat("x", 2000)), nil, fetchlog.Record{DocID: uint64(i + 1), URL: u, Fetched: time.Now()}, capture.Capture{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.close(); err != nil {
		t.Fatal(err)
	}
	got := warcFiles(dir)
	if len(got) != 3 || got[2] != "wire-20261122020311-000007-s1of1-00003.warc.gz" {
		t.Fatalf("files %v", got)
	}
	// The files closed on the way are indexed by then; the last one is
	// left to the publication (indexWARCs).
	for i, name := range got {
		lines, err := cdxj.ReadFile(filepath.Join(dir, cdxj.IndexName(name)))
		switch {
		case i < 2 && (err != nil || len(lines) != 1 || lines[0].URL != "http://a.cl/"+itoa(i)):
			t.Errorf("%s: index %v, %v; want the page's line", name, lines, err)
		case i == 2 && err == nil:
			t.Errorf("%s, the open file, was indexed before the publication", name)
		}
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(s)
}

// FuzzRetryAfter: any Retry-After value gives a pause between 0 and a day,
// or none.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", " 5 ", "-1", "Sun, 22 Nov 2026 12:01:00 GMT", "99999999999", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retryAfter(v, now)
		if ok && (d < 0 || d > 366*24*time.Hour) {
			t.Fatalf("retryAfter(%q) = %v", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("retryAfter(%q) = %v without a value", v, d)
		}
	})
}

// FuzzParseShard: ParseShard accepts exactly i/N with 1 ≤ i ≤ N ≤ 1024,
// and what it accepts prints back.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"1/4", "4/4", "0/1", "1/1025", " 2/3", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseShard(v)
		if err != nil {
			return
		}
		if s.I < 1 || s.I > s.N || s.N > 1024 {
			t.Fatalf("ParseShard(%q) = %+v", v, s)
		}
		if again, err := ParseShard(fmt.Sprintf("%d/%d", s.I, s.N)); err != nil || again != s {
			t.Fatalf("%+v does not print back", s)
		}
	})
}

// TestLogNeverAheadOfWARC: a fetch log line reaches the file only after
// the WARC record it points at, even when the fetch log's buffer fills
// before the WARC buffer does (long lines, small records): after every
// page, each line in the file points inside the WARC file as it is on
// disk.
func TestLogNeverAheadOfWARC(t *testing.T) {
	dir := t.TempDir()
	o, _, err := openOutput(dir, testWARCName, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	long := strings.Repeat("e", 4000) // a 4 KB line for a record of about 1 KB
	lines := 0
	for i := range 200 {
		u := "http://a.cl/" + itoa(i)
		rec := fetchlog.Record{DocID: uint64(i + 1), URL: u, Fetched: time.Now(), Err: long}
		if err := o.page(response(u, "x"), nil, rec, capture.Capture{}); err != nil {
			t.Fatal(err)
		}
		recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
		if err != nil {
			t.Fatal(err)
		}
		lines = len(recs)
		for _, r := range recs {
			st, err := os.Stat(filepath.Join(dir, r.WARC))
			if err != nil || r.Offset+r.Length > st.Size() {
				t.Fatalf("after page %d: line of %s points at %s@%d+%d, past the WARC file on disk (%v)", i, r.URL, r.WARC, r.Offset, r.Length, err)
			}
		}
	}
	if lines == 0 {
		t.Fatal("no line reached the file: the test did not fill the fetch log's buffer")
	}
}

// TestSideLinesBuffered: the robots and servers lines are buffered like
// the fetch log's (a write per line had cost the scheduler's goroutine a
// system call per host) and reach their files with the next flush, after
// the WARC records appended before them: a site's robots line is never
// on disk before its robots.txt record.
func TestSideLinesBuffered(t *testing.T) {
	dir := t.TempDir()
	o, _, err := openOutput(dir, testWARCName, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	if err := o.robotsResponse(response("http://a.cl/robots.txt", "User-agent: *\n")); err != nil {
		t.Fatal(err)
	}
	if err := o.robots(fetchlog.Robots{Site: "http://a.cl", Status: 200, Fetched: time.Now(), Body: "User-agent: *\n"}); err != nil {
		t.Fatal(err)
	}
	if err := o.server(fetchlog.Server{Host: "a.cl", IP: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	size := func(name string) int64 {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		return st.Size()
	}
	warc := o.warcFile
	for _, tt := range []struct {
		file  string
		flush bool
	}{
		{fetchlog.RobotsFile, false}, {fetchlog.ServersFile, false},
		{fetchlog.RobotsFile, true}, {fetchlog.ServersFile, true},
	} {
		if tt.flush {
			if err := o.flush(); err != nil {
				t.Fatal(err)
			}
		}
		if got := size(tt.file); (got > 0) != tt.flush {
			t.Errorf("flushed %v: %s holds %d bytes", tt.flush, tt.file, got)
		}
	}
	if size(warc) == 0 {
		t.Errorf("the robots.txt record is not on disk with its robots line")
	}
	robots, err := fetchlog.ReadRobots(filepath.Join(dir, fetchlog.RobotsFile))
	if err != nil || len(robots) != 1 || robots[0].Site != "http://a.cl" {
		t.Errorf("robots file: %+v, %v", robots, err)
	}
	servers, err := fetchlog.ReadServers(filepath.Join(dir, fetchlog.ServersFile))
	if err != nil || len(servers) != 1 || servers[0].Host != "a.cl" {
		t.Errorf("servers file: %+v, %v", servers, err)
	}
}

// TestBigRobotsLineAfterItsRecord: a robots line longer than its
// buffer's free space (a long robots.txt is kept whole in the line) is
// written out at once, but only after the robots.txt records buffered
// before it: on disk, the robots file never names a site whose
// robots.txt record is not in the WARC file.
func TestBigRobotsLineAfterItsRecord(t *testing.T) {
	dir := t.TempDir()
	o, _, err := openOutput(dir, testWARCName, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	body := "User-agent: *\n" + strings.Repeat("Disallow: /a-long-path-of-the-site/\n", lineBuffer/32)
	if err := o.robotsResponse(response("http://a.cl/robots.txt", body)); err != nil {
		t.Fatal(err)
	}
	warc := filepath.Join(dir, o.warcFile)
	before, err := os.Stat(warc) // the warcinfo record; the robots.txt records are buffered
	if err != nil {
		t.Fatal(err)
	}
	if err := o.robots(fetchlog.Robots{Site: "http://a.cl", Status: 200, Fetched: time.Now(), Body: body}); err != nil {
		t.Fatal(err)
	}
	robots, err := os.ReadFile(filepath.Join(dir, fetchlog.RobotsFile))
	if err != nil || len(robots) == 0 {
		t.Fatalf("the long line was not written out at once: %d bytes, %v", len(robots), err)
	}
	after, err := os.Stat(warc)
	if err != nil || after.Size() <= before.Size() {
		t.Errorf("robots line on disk before its robots.txt record (WARC file %d bytes, %d before the line; %v)", after.Size(), before.Size(), err)
	}
}

// TestCloseChecksLogSize: the run's summary and check are made from the
// lines as appended, so close fails if the fetch log on disk is not
// exactly what was appended (here, cut short behind the output's back),
// and passes when it is, resumed lines included.
func TestCloseChecksLogSize(t *testing.T) {
	for _, cut := range []bool{false, true} {
		dir := t.TempDir()
		for round := 0; round < 2; round++ { // the second round resumes
			o, _, err := openOutput(dir, testWARCName, 0, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := "http://a.cl/" + itoa(round)
			if err := o.page(response(u, "body"), nil, fetchlog.Record{DocID: uint64(round + 1), URL: u, Fetched: time.Now()}, capture.Capture{}); err != nil {
				t.Fatal(err)
			}
			if err := o.flush(); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, fetchlog.LogFile)
			if st, _ := os.Stat(log); cut && round == 1 {
				if err := os.Truncate(log, st.Size()-3); err != nil {
					t.Fatal(err)
				}
			}
			err = o.close()
			switch {
			case cut && round == 1 && (err == nil || !strings.Contains(err.Error(), "were written")):
				t.Errorf("a fetch log cut short passed the check at close: %v", err)
			case !(cut && round == 1) && err != nil:
				t.Errorf("round %d: %v", round, err)
			}
		}
	}
}

// TestHostTableUnits: names join the unit of their address and
// registrable domain, which keeps the later turn and the longer
// Crawl-delay of both; the address floor holds across units.
func TestHostTableUnits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ip1, ip2 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	tab := newHostTable(100 * time.Millisecond)
	tab.later("x.cl", t0.Add(time.Second)) // carried from an earlier batch, before the lookup
	tab.crawlDelay("www.x.cl", 3*time.Second)
	for _, c := range []struct {
		host string
		ip   netip.Addr
		key  string
	}{
		{"www.x.cl", ip1, "127.0.0.1 x.cl"},
		{"x.cl", ip1, "127.0.0.1 x.cl"},
		{"M.X.CL", ip1, "127.0.0.1 x.cl"},
		{"m.x.cl", ip2, "127.0.0.2 x.cl"},
		{"y.cl", ip1, "127.0.0.1 y.cl"},
		{"cl", ip1, "127.0.0.1 cl"},
	} {
		if got := tab.join(c.host, c.ip); got != c.key {
			t.Errorf("join(%s, %s) = %q, want %q", c.host, c.ip, got, c.key)
		}
	}
	if !tab.sameUnit("x.cl", "www.x.cl") || tab.sameUnit("x.cl", "y.cl") || tab.sameUnit("www.x.cl", "m.x.cl") {
		t.Error("units wrong")
	}
	if got := tab.unitTurn("www.x.cl"); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("www.x.cl's turn %v, want x.cl's carried pause", got)
	}
	// A request to x.cl ending at t0+1s: the unit's Crawl-delay (from
	// www.x.cl's robots.txt) holds, not x.cl's own wait.
	tab.after("x.cl", t0.Add(time.Second), 500*time.Millisecond)
	if got := tab.unitTurn("www.x.cl"); !got.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("after a request ending at 1 s, next at %v, want 4 s", got.Sub(t0))
	}
	// The address floor: y.cl may start, then nothing on 127.0.0.1 for
	// 100 ms and the margin (10 ms: a tenth) until its answer comes, while
	// 127.0.0.2 is free.
	now := t0.Add(5 * time.Second)
	ok, seq, _, _ := tab.start("y.cl", now, nil)
	if !ok {
		t.Fatal("y.cl may not start")
	}
	if ok, _, at, _ := tab.start("x.cl", now.Add(50*time.Millisecond), nil); ok || !at.Equal(now.Add(110*time.Millisecond)) {
		t.Errorf("x.cl 50 ms after y.cl on one address: %v %v, want to wait until the floor and its margin", ok, at.Sub(now))
	}
	if ok, _, _, _ := tab.start("m.x.cl", now.Add(50*time.Millisecond), nil); !ok {
		t.Error("m.x.cl, on another address, held back by 127.0.0.1's floor")
	}
	// Once y.cl's answer began (its first byte at 20 ms), the floor
	// counts from there: the server began the request before it.
	tab.answered("y.cl", seq, now.Add(20*time.Millisecond))
	if ok, _, at, _ := tab.start("x.cl", now.Add(110*time.Millisecond), nil); ok || !at.Equal(now.Add(120*time.Millisecond)) {
		t.Errorf("x.cl after y.cl's first byte at 20 ms: %v %v, want to wait until 120 ms", ok, at.Sub(now))
	}
	// An answer to an earlier request than the latest changes nothing.
	ok, seq2, _, _ := tab.start("x.cl", now.Add(120*time.Millisecond), nil)
	if !ok {
		t.Fatal("x.cl may not start at 120 ms")
	}
	tab.answered("y.cl", seq, now.Add(130*time.Millisecond))
	if got := tab.notBefore("x.cl"); !got.Equal(now.Add(230 * time.Millisecond)) {
		t.Errorf("after x.cl at 120 ms (no answer yet), next at %v, want 230 ms", got.Sub(now))
	}
	tab.answered("x.cl", seq2, now.Add(125*time.Millisecond))
	if got := tab.notBefore("x.cl"); !got.Equal(now.Add(225 * time.Millisecond)) {
		t.Errorf("after x.cl's answer at 125 ms, next at %v, want 225 ms", got.Sub(now))
	}
	// A request with no answer yet holds the address past the floor and
	// its margin (the server may have begun it late), until its answer
	// begins, its end, or unansweredHold past the floor.
	ok, seq3, _, _ := tab.start("y.cl", now.Add(300*time.Millisecond), nil)
	if !ok {
		t.Fatal("y.cl may not start at 300 ms")
	}
	ok, _, at, heard := tab.start("x.cl", now.Add(450*time.Millisecond), nil)
	if ok || heard == nil || !at.Equal(now.Add(400*time.Millisecond+unansweredHold)) {
		t.Errorf("x.cl at 450 ms, y.cl's request of 300 ms unanswered: %v %v %v, want held for its answer", ok, heard != nil, at.Sub(now))
	}
	if ok, _, _, _ := tab.start("x.cl", now.Add(400*time.Millisecond+unansweredHold), nil); !ok {
		t.Error("x.cl held past unansweredHold")
	}
	ok, seq4, _, _ := tab.start("y.cl", now.Add(3*time.Second), nil)
	if !ok {
		t.Fatal("y.cl may not start at 3 s")
	}
	ok, _, _, heard = tab.start("x.cl", now.Add(3200*time.Millisecond), nil)
	if ok || heard == nil {
		t.Fatal("x.cl not held for y.cl's request of 3 s")
	}
	// Ended without an answer at 3.3 s: the floor counts from the end.
	tab.answered("y.cl", seq4, now.Add(3300*time.Millisecond))
	select {
	case <-heard:
	default:
		t.Error("the end of y.cl's request did not release the requests held for it")
	}
	tab.answered("y.cl", seq4, now.Add(3350*time.Millisecond)) // a second report changes nothing
	if ok, _, at, _ := tab.start("x.cl", now.Add(3350*time.Millisecond), nil); ok || !at.Equal(now.Add(3400*time.Millisecond)) {
		t.Errorf("x.cl after y.cl's end at 3.3 s: %v %v, want to wait until 3.4 s", ok, at.Sub(now))
	}
	_ = seq3
	// A name of the previous batch, not in this one, holds back its
	// unit: docs.z.cl joins it.
	tab.laterUnit(ip2, "www.z.cl", t0.Add(9*time.Second))
	tab.join("docs.z.cl", ip2)
	tab.join("y.z.cl", ip1)
	if got := tab.unitTurn("docs.z.cl"); !got.Equal(t0.Add(9 * time.Second)) {
		t.Errorf("docs.z.cl's turn %v, want www.z.cl's carried 9 s", got.Sub(t0))
	}
	if got := tab.unitTurn("y.z.cl"); got.After(t0) {
		t.Errorf("y.z.cl, on another address, held back to %v", got.Sub(t0))
	}
}

// unitTurn (for the tests) is the earliest time of the next request to the host's unit,
// its address's floor aside (which only ever holds a request back for a
// moment, and is claimed by start).
func (t *hostTable) unitTurn(host string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(host).notBefore
}

// TestAddressFloorByScore: when an address's floor opens, the request for
// the best URL among those waiting for it goes first, whichever
// connection calls first; a better request that is due but not there
// holds the floor for arriveGrace at most, and one that leaves frees it.
func TestAddressFloorByScore(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ip := netip.MustParseAddr("127.0.0.1")
	tab := newHostTable(100 * time.Millisecond)
	for _, h := range []string{"a.cl", "b.cl", "c.cl", "d.cl"} {
		tab.join(h, ip)
	}
	ok, seq, _, _ := tab.start("d.cl", t0, nil)
	if !ok {
		t.Fatal("d.cl may not start on a free address")
	}
	tab.answered("d.cl", seq, t0.Add(10*time.Millisecond)) // the floor opens at 110 ms
	low := tab.want("a.cl", 0, 0.1, t0.Add(20*time.Millisecond))
	high := tab.want("b.cl", 0, 0.9, t0.Add(30*time.Millisecond))
	mid := tab.want("c.cl", 0, 0.5, t0.Add(40*time.Millisecond))
	if !high.due.Equal(t0.Add(110 * time.Millisecond)) {
		t.Errorf("b.cl due at %v, want the floor (110 ms)", high.due.Sub(t0))
	}
	open := t0.Add(110 * time.Millisecond)
	for _, c := range []struct {
		name string
		host string
		w    *waiter
		at   time.Duration
		ok   bool
		next time.Duration // the retry time when refused
	}{
		{"the floor is not open yet", "b.cl", high, 100 * time.Millisecond, false, 110 * time.Millisecond},
		// b.cl is there (it waits in start for the floor): the others
		// wait for the waiters to change, polling after unansweredHold.
		{"the worst waiter asks first at the floor", "a.cl", low, 110 * time.Millisecond, false, 110*time.Millisecond + unansweredHold},
		{"so does the middle one", "c.cl", mid, 111 * time.Millisecond, false, 111*time.Millisecond + unansweredHold},
	} {
		ok, _, at, _ := tab.start(c.host, t0.Add(c.at), c.w)
		if ok != c.ok || !ok && !at.Equal(t0.Add(c.next)) {
			t.Errorf("%s: start(%s) at %v = %v, retry at %v; want %v, %v", c.name, c.host, c.at, ok, at.Sub(t0), c.ok, c.next)
		}
	}
	// The best arrives and goes; the middle one is next once the floor
	// opens again, though the worst asks first.
	ok, seq, _, _ = tab.start("b.cl", open.Add(2*time.Millisecond), high)
	if !ok {
		t.Fatal("the best waiter may not start")
	}
	if n := len(tab.addrs[ip].waiters); n != 2 {
		t.Errorf("%d waiters after the best started, want 2: a request in flight holds no place", n)
	}
	tab.leave(high)
	tab.answered("b.cl", seq, open.Add(5*time.Millisecond))
	next := open.Add(105 * time.Millisecond)
	ok, _, _, changed := tab.start("a.cl", next, low)
	if ok {
		t.Error("a.cl (0.1) went before c.cl (0.5), which is there")
	}
	ok, seq, _, _ = tab.start("c.cl", next.Add(time.Millisecond), mid)
	if !ok {
		t.Fatal("c.cl may not start")
	}
	select {
	case <-changed:
	default:
		t.Error("c.cl's start did not wake a.cl")
	}
	tab.leave(mid)
	tab.answered("c.cl", seq, next.Add(2*time.Millisecond))
	// A better request registered but not there past arriveGrace (its
	// connection slow to open) does not stall the address.
	late := tab.want("b.cl", 0, 0.9, next.Add(3*time.Millisecond))
	third := next.Add(102 * time.Millisecond)
	if ok, _, at, _ := tab.start("a.cl", third, low); ok || !at.Equal(third.Add(arriveGrace)) {
		t.Errorf("a.cl while b.cl was due: %v, retry at %v; want refused until arriveGrace past b.cl's due time", ok, at.Sub(third))
	}
	ok, seq, _, _ = tab.start("a.cl", third.Add(arriveGrace), low)
	if !ok {
		t.Error("a.cl held by a better request that never came")
	}
	tab.answered("a.cl", seq, third.Add(arriveGrace+time.Millisecond))
	tab.leave(late)
	// A better request whose unit's turn is far off (a Crawl-delay) does
	// not hold the address meanwhile, registered or there.
	fourth := third.Add(arriveGrace + 150*time.Millisecond)
	tab.later("b.cl", fourth.Add(4*time.Second))
	slow := tab.want("b.cl", 0, 0.9, fourth)
	ok, seq, _, _ = tab.start("a.cl", fourth, low)
	if !ok {
		t.Error("a.cl held by a better request due 4 s later")
	}
	tab.answered("a.cl", seq, fourth.Add(time.Millisecond))
	tab.later("b.cl", fourth.Add(4*time.Second))
	tab.start("b.cl", fourth.Add(time.Millisecond), slow) // there, refused: its turn is in 4 s
	if ok, _, _, _ := tab.start("a.cl", fourth.Add(200*time.Millisecond), low); !ok {
		t.Error("a.cl held by a better request that is there but whose turn is 4 s off")
	}
	tab.leave(slow)
	tab.leave(low)
	if n := len(tab.addrs[ip].waiters); n != 0 {
		t.Errorf("%d waiters left after every one left", n)
	}
}
