package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// t0 is time zero of the synthetic logs.
var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// logLine renders one request log line as scripts/testweb writes it.
func logLine(conn int, host, path string, status int, start, end time.Duration) string {
	return fmt.Sprintf("%d\t%s\t%s\t%d\t%s\t%s\n", conn, host, path, status,
		t0.Add(start).Format(time.RFC3339Nano), t0.Add(end).Format(time.RFC3339Nano))
}

// logLineAt is logLine with the address that answered.
func logLineAt(conn int, host, path string, status int, start, end time.Duration, addr string) string {
	return strings.TrimSuffix(logLine(conn, host, path, status, start, end), "\n") + "\t" + addr + "\ttcp\n"
}

func TestParseRequestLine(t *testing.T) {
	good := strings.TrimSuffix(logLine(3, "a.cl", "/x?y=1", 200, time.Second, 1500*time.Millisecond), "\n")
	l, err := parseRequestLine(good)
	if err != nil {
		t.Fatal(err)
	}
	if l.conn != 3 || l.host != "a.cl" || l.path != "/x?y=1" || l.status != 200 || l.duration() != 500*time.Millisecond {
		t.Errorf("parsed %+v", l)
	}
	for _, tc := range []struct{ name, line, want string }{
		{"fields", "1\ta.cl\t/\t200\t" + t0.Format(time.RFC3339Nano), "5 tab-separated fields"},
		{"ninth field", good + "\t127.0.0.1\ttcp\tx", `ninth field "x"`},
		{"ten fields", good + "\t127.0.0.1\ttcp\tcond\tx", "10 tab-separated fields"},
		{"transport", good + "\t127.0.0.1\tx", "transport"},
		{"address", good + "\tlocalhost", "address"},
		{"conn", strings.Replace(good, "3", "x", 1), "connection id"},
		{"status", strings.Replace(good, "\t200\t", "\t2000\t", 1), "status"},
		{"negative status", strings.Replace(good, "\t200\t", "\t-1\t", 1), "status"},
		{"start", strings.Replace(good, "2024-05-01T12:00:01Z", "yesterday", 1), "start"},
		{"end before start", strings.TrimSuffix(logLine(1, "a.cl", "/", 200, 2*time.Second, time.Second), "\n"), "end before start"},
	} {
		if _, err := parseRequestLine(tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	lines, err := readRequestLog(strings.NewReader(good + "\n\n" + good + "\nbad\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("read: %d lines, error %v, want one naming line 4", len(lines), err)
	}
	lines, err = readRequestLog(strings.NewReader(good + "\n\n" + good))
	if err != nil || len(lines) != 2 {
		t.Errorf("read: %d lines, error %v, want 2 and none", len(lines), err)
	}
	if l, err := parseRequestLine(good + "\t127.77.0.3"); err != nil || l.addr != "127.77.0.3" || l.host != "a.cl" {
		t.Errorf("with an address: %+v, %v", l, err)
	}
}

// TestReadRequestLogGolden reads the log scripts/testweb writes (its
// golden file) and one written before the address field existed.
func TestReadRequestLogGolden(t *testing.T) {
	for _, tc := range []struct {
		file  string
		addrs []string
	}{
		{"../testweb/testdata/requests.tsv.golden", []string{"127.0.0.1", "127.0.0.1", "127.77.0.3", "", "127.0.0.1"}},
		{"testdata/requests-6-fields.tsv", []string{"", "", "", ""}},
	} {
		lines, err := readRequestLogFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != len(tc.addrs) {
			t.Fatalf("%s: %d lines, want %d", tc.file, len(lines), len(tc.addrs))
		}
		for i, l := range lines {
			if l.addr != tc.addrs[i] || l.conn != uint64(i+1) {
				t.Errorf("%s line %d: %+v, want address %q", tc.file, i+1, l, tc.addrs[i])
			}
		}
		if l := lines[1]; l.host != "a.cl" || l.path != "/?x=1&y=%C3%B1" || l.status != 301 || l.duration() != time.Nanosecond {
			t.Errorf("%s line 2: %+v", tc.file, l)
		}
		// Only the golden file's line 5 was conditional.
		for i, l := range lines {
			if want := tc.addrs[0] != "" && i == 4; l.conditional != want {
				t.Errorf("%s line %d: conditional %v, want %v", tc.file, i+1, l.conditional, want)
			}
		}
		// Only the golden file's line 2 came over TLS.
		for i, l := range lines {
			if want := tc.addrs[0] != "" && i == 1; l.tls != want {
				t.Errorf("%s line %d: tls %v, want %v", tc.file, i+1, l.tls, want)
			}
		}
	}
	if _, err := parseRequestLine("1\ta.cl\t/\t200\t2024-05-01T16:00:00Z\t2024-05-01T16:00:00Z\t127.0.0.1\tquic"); err == nil {
		t.Error("an unknown transport was accepted")
	}
	if _, err := parseRequestLine("1\ta.cl\t/\t200\t2024-05-01T16:00:00Z\t2024-05-01T16:00:00Z\t127.0.0.1\ttcp\tmaybe"); err == nil {
		t.Error("an unknown ninth field was accepted")
	}
	// Over TLS a request names the https page.
	tr := newTruth([]string{"http://a.cl:8080/", "https://a.cl:8443/"}, config.Defaults().Scope.Normalizer(), 8080)
	tr.httpsPort = 8443
	if p, ok := tr.logPage(requestLine{host: "a.cl", path: "/", tls: true}); !ok || p != 1 {
		t.Errorf("TLS request: page %d, %v, want the https page", p, ok)
	}
	if p, ok := tr.logPage(requestLine{host: "a.cl", path: "/"}); !ok || p != 0 {
		t.Errorf("plain request: page %d, %v, want the http page", p, ok)
	}
}

// tinyTruth is a web of two hosts: a.cl with pages /, /1 and /2 (/ links
// to both, /1 to /2), b.cl with / (linked from a.cl/, Crawl-delay 2 s).
func tinyTruth() *webTruth {
	pages := []string{"http://a.cl:8080/", "http://a.cl:8080/1", "http://a.cl:8080/2", "http://b.cl:8080/"}
	cfg := config.Defaults()
	tr := newTruth(pages, cfg.Scope.Normalizer(), 8080)
	tr.links = [][]uint32{{1, 2, 3}, {2}, {}, {}}
	tr.crawlDelay["b.cl"] = 2 * time.Second
	return tr
}

func TestComputeTimeline(t *testing.T) {
	ms := time.Millisecond
	s := time.Second
	log := logLine(1, "a.cl", "/robots.txt", 404, 0, 10*ms) +
		logLine(1, "a.cl", "/", 200, 100*ms, 200*ms) +
		logLine(2, "b.cl", "/", 0, 150*ms, 160*ms) + // reset: no response
		logLine(1, "a.cl", "/2", 200, 1*s, 1*s+50*ms) +
		logLine(1, "A.CL", "/1", 200, 2*s, 2*s+100*ms) + // the normaliser lower-cases the host
		logLine(1, "a.cl", "/", 200, 3*s, 3*s+10*ms) + // again: the first counts
		logLine(1, "a.cl", "/nowhere", 404, 4*s, 4*s+10*ms) // not a page
	lines, err := readRequestLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := computeTimeline(context.Background(), tinyTruth(), lines, timelineOptions{
		start: t0, end: t0.Add(5 * s), rules: serverRules{wait: 500 * ms}, at: []time.Duration{0, 1 * s, 2 * s, 10 * s}, damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Reachable != 4 || tl.Hosts != 2 || tl.Fetched != 3 || tl.Requests != 7 || tl.FetchedURLs != 5 {
		t.Errorf("counts %+v", tl)
	}
	if math.Abs(tl.LastEnd-4.01) > 1e-9 || tl.RunEnd == nil || *tl.RunEnd != 5 {
		t.Errorf("last end %v, run end %v", tl.LastEnd, tl.RunEnd)
	}
	// 50 % = 2 pages (a.cl/ at 0.2 s, a.cl/2 at 1.05 s), 90 % = 99 % =
	// 100 % = 4 pages: b.cl/ never answered.
	wantQ := map[int]string{50: "1.1 s", 90: "not reached", 99: "not reached", 100: "not reached"}
	for _, q := range tl.Quantiles {
		if got := seconds(q.Seconds); got != wantQ[q.Percent] {
			t.Errorf("time to %d%%: %s, want %s", q.Percent, got, wantQ[q.Percent])
		}
	}
	// The polite bound (a log without addresses: each name its own
	// address and unit): a.cl answers in the median of 10, 100, 50, 100,
	// 10, 10 ms = 30 ms and waits 0.5 s after each end, its pages done at
	// 0.03, 0.56 and 1.09 s; b.cl answers in 10 ms, done at 0.01 s.
	// The per-host bound: intervals a.cl max(0.5 s wait, 30 ms) = 0.5 s,
	// b.cl max(0.5 s, 2 s Crawl-delay, 10 ms) = 2 s.
	wantCov := []struct {
		fetched, bound, hostBound int
		afterEnd                  bool
	}{{0, 0, 0, false}, {1, 3, 2, false}, {2, 4, 4, false}, {3, 4, 4, true}}
	for i, c := range tl.Coverage {
		w := wantCov[i]
		if c.Fetched != w.fetched || c.Bound != w.bound || c.HostBound != w.hostBound || c.AfterEnd != w.afterEnd {
			t.Errorf("at %v s: fetched %d bound %d per-host %d after end %v, want %+v", c.At, c.Fetched, c.Bound, c.HostBound, c.AfterEnd, w)
		}
	}
	if c := tl.Coverage[1]; c.HostRatio != 0.5 || math.Abs(c.Ratio-1.0/3) > 1e-12 || c.Coverage != 0.25 || c.BoundCoverage != 0.75 {
		t.Errorf("at 1 s: %+v", c)
	}
	if tl.Units != 2 || tl.Addresses != 2 {
		t.Errorf("%d units on %d addresses, want 2 on 2", tl.Units, tl.Addresses)
	}
	// a.cl needs 3 x 0.5 s, b.cl 1 x 2 s.
	if s := tl.Slowest; s.Host != "b.cl" || s.Pages != 1 || s.Interval != 2 || s.Seconds != 2 {
		t.Errorf("slowest %+v", s)
	}
	if !(tl.PageRank > 0 && tl.PageRank < 1) {
		t.Errorf("PageRank ratio %v, want in (0, 1)", tl.PageRank)
	}
	var out bytes.Buffer
	tl.Print(&out)
	for _, want := range []string{"4 reachable allowed pages on 2 hosts, 3 fetched (75.0%)", "time to  50% (2 pages): 1.1 s",
		"time to 100% (4 pages): not reached", "polite bound 3 (75.0%): coverage/bound 0.333; per-host bound 2: 0.500", "(after the run ended)",
		"polite bound: 2 units on 2 addresses",
		"slowest host alone: b.cl, 1 pages x 2.000 s = 2.0 s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPageRankRatio: the order of decreasing PageRank scores 1, any
// other less, and fetching nothing 0.
func TestPageRankRatio(t *testing.T) {
	tr := tinyTruth()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		order []int
		check func(float64) bool
	}{
		{"best", []int{2, 3, 1, 0}, func(r float64) bool { return math.Abs(r-1) < 1e-12 }},
		{"worst", []int{0, 1, 3, 2}, func(r float64) bool { return r < 0.9 }},
		{"half", []int{2, 3}, func(r float64) bool { return r < 0.9 && r > 0.3 }},
		{"none", nil, func(r float64) bool { return r == 0 }},
	} {
		at := make([]time.Duration, len(tc.order))
		for k := range at {
			at[k] = time.Duration(k) * time.Second
		}
		r, byTime, err := pageRankRatio(ctx, tr, tc.order, at, 0.85)
		if err != nil || !tc.check(r) {
			t.Errorf("%s: ratio %v, error %v", tc.name, r, err)
		}
		// By time the crawl is measured at its own pace, up to its
		// last page: "half" fetched the best two in the best order.
		if tc.name != "half" && len(tc.order) > 1 && !tc.check(byTime) {
			t.Errorf("%s: ratio by time %v", tc.name, byTime)
		}
	}
	// By time: the best order scores 1 whatever the pace; the worst scores
	// less the longer it holds its worst pages alone.
	best, worst := []int{2, 3, 1, 0}, []int{0, 1, 3, 2}
	slowStart := []time.Duration{0, 10 * time.Second, 11 * time.Second, 12 * time.Second}
	fastStart := []time.Duration{0, time.Second, 11 * time.Second, 12 * time.Second}
	if _, b, _ := pageRankRatio(ctx, tr, best, slowStart, 0.85); math.Abs(b-1) > 1e-12 {
		t.Errorf("best order by time: %v, want 1", b)
	}
	_, ws, _ := pageRankRatio(ctx, tr, worst, slowStart, 0.85)
	_, wf, _ := pageRankRatio(ctx, tr, worst, fastStart, 0.85)
	if !(ws < wf) {
		t.Errorf("worst order by time: %v holding its worst page 10 s, %v holding it 1 s: want the first lower", ws, wf)
	}
	if r, _, err := pageRankRatio(ctx, newTruth(nil, config.Defaults().Scope.Normalizer(), 0), nil, nil, 0.85); r != 0 || err != nil {
		t.Errorf("empty web: %v %v", r, err)
	}
}

func TestPoliteBoundAndMedian(t *testing.T) {
	pages := map[string]int{"a": 10, "b": 3, "c": 5}
	iv := map[string]time.Duration{"a": time.Second, "b": 0, "c": 2 * time.Second}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{0, 3}, {1999 * time.Millisecond, 3 + 1 + 0}, {4 * time.Second, 3 + 4 + 2}, {time.Hour, 18}} {
		if got := politeBound(pages, iv, tc.at); got != tc.want {
			t.Errorf("bound at %v: %d, want %d", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{3}, 3}, {[]time.Duration{5, 1, 3}, 3}, {[]time.Duration{4, 1, 3, 2}, 2}} {
		if got := median(tc.d); got != tc.want {
			t.Errorf("median %v: %v, want %v", tc.d, got, tc.want)
		}
	}
}

// tinyWeb writes the configuration and seeds of a small test web with a
// fixed port (the model only: nothing listens) and returns their paths.
func tinyWeb(t *testing.T) (webPath, seedPath string, web *testweb.Web) {
	dir := t.TempDir()
	wc := testweb.Config{Seed: 3, Hosts: 12, MaxPages: 30, HTTPAddr: "127.0.0.1:18080", DNSAddr: "127.0.0.1:18053"}
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wc)
	webPath, seedPath = filepath.Join(dir, "web.json"), filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(webPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedPath, []byte(strings.Join(web.SeedURLs(3), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return webPath, seedPath, web
}

// TestTimelineCommand runs `crawlcheck reachable` and `timeline` on the
// model of a small web with a synthetic log that fetches every reachable
// page, one a second, in URL order, plus a robots.txt.
func TestTimelineCommand(t *testing.T) {
	webPath, seedPath, _ := tinyWeb(t)
	var out bytes.Buffer
	if err := newApp(&out).Run([]string{"crawlcheck", "reachable", "--web", webPath, "--seeds", seedPath}); err != nil {
		t.Fatal(err)
	}
	urls := strings.Fields(out.String())
	if len(urls) < 10 || !sort.StringsAreSorted(urls) {
		t.Fatalf("reachable: %d URLs (sorted %v)", len(urls), sort.StringsAreSorted(urls))
	}
	var log strings.Builder
	log.WriteString(logLine(1, "x.cl", "/robots.txt", 404, 0, time.Millisecond))
	for i, u := range urls {
		rest := strings.TrimPrefix(u, "http://")
		hostPort, path, _ := strings.Cut(rest, "/")
		host, _, _ := strings.Cut(hostPort, ":")
		at := time.Duration(i+1) * time.Second
		log.WriteString(logLine(1, host, "/"+path, 200, at-time.Millisecond, at))
	}
	logPath := filepath.Join(t.TempDir(), "requests.tsv")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := newApp(&out).Run([]string{"crawlcheck", "timeline", "--web", webPath, "--seeds", seedPath, "--log", logPath,
		"--start", t0.Format(time.RFC3339Nano), "--wait", "1s", "--at", "3s,1h", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	var tl Timeline
	if err := json.Unmarshal(out.Bytes(), &tl); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	n := len(urls)
	if tl.Reachable != n || tl.Fetched != n || tl.Requests != n+1 || tl.FetchedURLs != n+1 {
		t.Errorf("reachable %d fetched %d requests %d URLs %d, want %d, %d, %d, %d", tl.Reachable, tl.Fetched, tl.Requests, tl.FetchedURLs, n, n, n+1, n+1)
	}
	if s := tl.quantile(100); s == nil || *s != float64(n) {
		t.Errorf("t100 %s, want %d s", seconds(s), n)
	}
	if c := tl.Coverage[0]; c.Fetched != 3 || c.Bound < 3 {
		t.Errorf("at 3 s: %+v", c)
	}
	if c := tl.Coverage[1]; c.Fetched != n || c.Bound != n || c.Ratio != 1 {
		t.Errorf("at 1 h: %+v", c)
	}
	if !(tl.PageRank > 0 && tl.PageRank <= 1) {
		t.Errorf("PageRank ratio %v", tl.PageRank)
	}
	for _, bad := range [][]string{{"--at", "soon"}, {"--start", "yesterday"}} {
		args := []string{"crawlcheck", "timeline", "--web", webPath, "--seeds", seedPath, "--log", logPath, "--start", t0.Format(time.RFC3339)}
		if err := newApp(&out).Run(append(args, bad...)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestTimelineLinks: the truth's link graph of a real model holds the
// links among reachable pages and every page's host.
func TestTimelineLinks(t *testing.T) {
	_, _, web := tinyWeb(t)
	tr, err := buildTruth(web, config.Defaults(), web.SeedURLs(3))
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for i, l := range tr.links {
		links += len(l)
		if !strings.Contains(tr.pages[i], "://"+tr.host[i]+":18080/") {
			t.Errorf("page %s: host %q", tr.pages[i], tr.host[i])
		}
	}
	if links < len(tr.pages) {
		t.Errorf("%d links among %d pages", links, len(tr.pages))
	}
}

func TestPrintTargets(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	crawl := Timeline{Quantiles: []Quantile{{Percent: 99, Seconds: f(100)}, {Percent: 100, Seconds: f(130)}},
		PageRank: 0.9, Slowest: SlowestHost{Host: "big.cl", Seconds: 20}}
	harv := Timeline{Quantiles: []Quantile{{Percent: 99, Seconds: f(25)}}}
	polite := Timeline{Wait: 1, Coverage: []CoverageAt{{At: 60}, {At: 120, Fetched: 850, Bound: 1000, Ratio: 0.85, HostBound: 1100, HostRatio: 850.0 / 1100},
		{At: 300, AfterEnd: true}}}
	disc := &Discovery{Pages: 900, Median: 2.5, P90: 7.25, DiscoveryShare: 0.5, PolitenessShare: 0.01, ValueOrderShare: 0.49}
	var out bytes.Buffer
	printTargets(&out, crawl, harv, polite, disc, 5*time.Second)
	want := `targets (issues 16 and 34):
  crawl t99 / harvester t99: 100.0 s / 25.0 s = 4.00 (target <= 5)
  crawl t100 - t99: 30.0 s; against the slowest host's polite time 20.0 s (big.cl) + one cycle 5.0 s = 25.0 s
  coverage / polite bound at 60 s (wait 1s): 0.000 (0 / 0 pages; target >= 0.9); per-host bound 0: 0.000
  coverage / polite bound at 120 s (wait 1s): 0.850 (850 / 1000 pages; target >= 0.9); per-host bound 1100: 0.773
  coverage / polite bound at 300 s (wait 1s): 0.000 (0 / 0 pages; target >= 0.9, after the run ended); per-host bound 0: 0.000
  cumulative PageRank, crawl order / sorted bound: 0.900 (whole crawl)
  found to fetched, median over 900 pages (wait 0s): 2.50 s (target <= 3 s); p90 7.25 s; discovery 50.0%, politeness 1.0%, value order 49.0% of the summed time to fetch
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printTargets(&out, Timeline{}, harv, Timeline{}, nil, 0)
	for _, w := range []string{"crawl t99 / harvester t99: not reached / 25.0 s: no ratio", "crawl t100 - t99: not reached", "at 120 s: not measured"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
