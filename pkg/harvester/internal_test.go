package harvester

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
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
		e(5, "http://a.cl", "/x", 0.4),
		e(6, "http://c.cl", "/y", 0.1),
		e(7, "http://d.cl", "/", 0.99), // already logged
	}
	todo := []bool{true, true, true, true, true, true, false}
	names := func(ss []*Server) string {
		var out []string
		for _, s := range ss {
			var sites []string
			for _, q := range s.Sites {
				sites = append(sites, strings.TrimPrefix(strings.TrimPrefix(q.Site, "http://"), "https://")+"("+itoa(len(q.Entries))+")")
			}
			out = append(out, s.Host+"["+strings.Join(sites, " ")+"]")
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		rank Ranking
		want string
	}{
		{QualityRanking{}, "a.cl[a.cl(1) a.cl(2)] c.cl[c.cl(2)] b.cl[b.cl:8080(1)]"},
		{FIFORanking{}, "c.cl[c.cl(2)] a.cl[a.cl(1) a.cl(2)] b.cl[b.cl:8080(1)]"},
	}
	for _, tt := range tests {
		got := plan(entries, todo, tt.rank)
		if names(got) != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.rank.Name(), names(got), tt.want)
		}
	}
	srv := plan(entries, todo, QualityRanking{})[0]
	if srv.Sites[0].Site != "https://a.cl" || srv.URLs != 3 || srv.Best != 0.95 || srv.Sites[1].Entries[0].DocID != 2 {
		t.Errorf("a.cl server %+v", srv)
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

// TestRepair resumes from a harvest.partial left by a crash: a torn last
// line, a line whose WARC record never reached the disk, a torn robots
// line. What cannot be trusted is dropped (and so fetched again).
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	o, res, err := openOutput(dir, 0, nil)
	if err != nil || len(res.records) != 0 || len(res.robots) != 0 {
		t.Fatalf("fresh: %v %+v", err, res)
	}
	for i, u := range []string{"http://a.cl/1", "http://a.cl/2"} {
		rec := fetchlog.Record{DocID: uint64(i + 1), URL: u, Fetched: time.Now()}
		if err := o.page(response(u, "body "+u), rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.robots(fetchlog.Robots{Site: "http://a.cl", Status: 200, Fetched: time.Now(), Body: "User-agent: *\n"}); err != nil {
		t.Fatal(err)
	}
	if err := o.close(); err != nil {
		t.Fatal(err)
	}
	warc := filepath.Join(dir, "data-00001.warc.gz")
	st, _ := os.Stat(warc)
	ghost := fetchlog.Record{DocID: 3, URL: "http://a.cl/3", Status: 200, Fetched: time.Now(), WARC: "data-00001.warc.gz", Offset: st.Size(), Length: 500}
	appendFile(t, filepath.Join(dir, fetchlog.LogFile), ghost.Format()+"4\thttp://a.cl/4\t200\t12")
	appendFile(t, filepath.Join(dir, fetchlog.RobotsFile), `{"site":"http://b.cl","sta`)

	o, res, err = openOutput(dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	if len(res.records) != 2 || res.records[1].URL != "http://a.cl/2" || len(res.robots) != 1 || len(res.repaired) != 2 {
		t.Fatalf("resumed %d records, %d robots, repaired %q", len(res.records), len(res.robots), res.repaired)
	}
	if o.nextWARC != 2 {
		t.Errorf("next WARC file %d, want 2 (never append to an old one)", o.nextWARC)
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

func TestRepairHeader(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, fetchlog.LogFile), []byte(fetchlog.Header()[:10]), 0o644)
	o, res, err := openOutput(dir, 0, nil)
	if err != nil || len(res.records) != 0 {
		t.Fatalf("torn header: %v", err)
	}
	o.close()
	data, _ := os.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if string(data) != fetchlog.Header() {
		t.Errorf("header not rewritten: %q", data)
	}

	other := t.TempDir()
	os.WriteFile(filepath.Join(other, fetchlog.LogFile), []byte("# wire-fetchlog 2\n"), 0o644)
	if _, _, err := openOutput(other, 0, nil); err == nil {
		t.Error("a fetch log of another version was accepted")
	}
}

// TestWARCRotation starts a new file when the current one is full.
func TestWARCRotation(t *testing.T) {
	dir := t.TempDir()
	o, _, err := openOutput(dir, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		u := "http://a.cl/" + itoa(i)
		if err := o.page(response(u, strings.Repeat("x", 2000)), fetchlog.Record{DocID: uint64(i + 1), URL: u, Fetched: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	o.close()
	if got := warcFiles(dir); len(got) != 3 || got[2] != "data-00003.warc.gz" {
		t.Errorf("files %v", got)
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
