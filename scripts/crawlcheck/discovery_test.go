package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
)

// discoveryTruth is a web of three sites on three addresses:
//
//	p0 a.cl/        the seed; links to a.cl/1, b.cl/old, c.cl/
//	p1 a.cl/1       links to a.cl/x
//	p2 b.cl/old     a redirect to b.cl/new (its Location, its one link)
//	p3 b.cl/new
//	p4 c.cl/        links to c.cl/2; c.cl has a Crawl-delay of 2 s
//	p5 a.cl/lonely  linked only from a.cl/x: never found
//	p6 a.cl/x       links to a.cl/lonely; never fetched
//	p7 c.cl/2       links to a.cl/s
//	p8 a.cl/s       fetched before c.cl/2 (as from a sitemap)
func discoveryTruth() *webTruth {
	pages := []string{"http://a.cl:8080/", "http://a.cl:8080/1", "http://b.cl:8080/old", "http://b.cl:8080/new",
		"http://c.cl:8080/", "http://a.cl:8080/lonely", "http://a.cl:8080/x", "http://c.cl:8080/2", "http://a.cl:8080/s"}
	tr := newTruth(pages, config.Defaults().Scope.Normalizer(), 8080)
	tr.links = [][]uint32{{1, 2, 4}, {6}, {3}, {}, {7}, {}, {5}, {8}, {}}
	tr.crawlDelay = map[string]time.Duration{"a.cl": 0, "b.cl": 0, "c.cl": 2 * time.Second}
	return tr
}

// discoveryLog is a crawl of discoveryTruth (times in ms from t0).
func discoveryLog(t *testing.T) []requestLine {
	ms := time.Millisecond
	a, b, c := "127.77.0.1", "127.77.0.2", "127.77.0.3"
	log := logLineAt(1, "a.cl", "/robots.txt", 404, 100*ms, 110*ms, a) + // the first request: the seeds are found
		logLineAt(1, "a.cl", "/", 200, 200*ms, 300*ms, a) + // p0: found 0.1, fetched 0.2
		logLineAt(2, "c.cl", "/robots.txt", 200, 200*ms, 250*ms, c) + // c.cl's Crawl-delay runs from 0.25
		logLineAt(3, "a.cl", "/1", 0, 310*ms, 320*ms, a) + // reset: not a fetch
		logLineAt(4, "b.cl", "/old", 301, 350*ms, 360*ms, b) + // p2: found 0.3 (p0's end), fetched 0.35
		logLineAt(5, "a.cl", "/1", 200, 400*ms, 500*ms, a) + // p1: found 0.3, fetched 0.4
		logLineAt(4, "b.cl", "/new", 200, 600*ms, 700*ms, b) + // p3: found 0.36 via the redirect, fetched 0.6
		logLineAt(2, "c.cl", "/", 200, 3000*ms, 3100*ms, c) + // p4: found 0.3, allowed 2.25, fetched 3.0
		logLineAt(6, "a.cl", "/s", 200, 4000*ms, 4050*ms, a) + // p8: fetched before c.cl/2, which links to it
		logLineAt(2, "c.cl", "/2", 200, 5200*ms, 5300*ms, c) // p7: found 3.1, allowed 5.1, fetched 5.2
	lines, err := readRequestLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestComputeDiscovery splits a handmade crawl (issue 34's definitions):
// a seed, a page found through a redirect, a page never found, a page
// found and never fetched, one fetched before any link to it, and two
// pages whose politeness part is the Crawl-delay of their site.
func TestComputeDiscovery(t *testing.T) {
	d := computeDiscovery(discoveryTruth(), discoveryLog(t), []int{0}, t0, serverRules{})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if d.Reachable != 9 || d.Seeds != 1 || d.Found != 8 || d.Fetched != 7 || d.FoundNotFetched != 1 || d.FetchedUnfound != 1 || d.Pages != 6 {
		t.Errorf("counts: %+v", d)
	}
	if !near(d.SeedsAt, 0.1) {
		t.Errorf("seeds found at %v s, want 0.1", d.SeedsAt)
	}
	// Delays: p0 0.1, p1 0.1, p2 0.05, p3 0.24, p4 2.7, p7 2.1.
	if !near(d.Median, 0.17) || !near(d.P90, 2.7) {
		t.Errorf("median %v p90 %v, want 0.17 and 2.7", d.Median, d.P90)
	}
	// Σ fetched 0.2+0.4+0.35+0.6+3.0+5.2; Σ found 0.1+0.3+0.3+0.36+0.3+3.1;
	// politeness: p4 2.25 - 0.3, p7 5.1 - 3.1.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"total", d.Total, 9.75}, {"discovery", d.Discovery, 4.46}, {"politeness", d.Politeness, 3.95}, {"value order", d.ValueOrder, 1.34},
		{"discovery share", d.DiscoveryShare, 4.46 / 9.75}, {"politeness share", d.PolitenessShare, 3.95 / 9.75}} {
		if !near(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	wantDepth := []DepthDelay{{0, 1, 0.1, 0.1}, {1, 3, 0.1, 2.7}, {2, 2, 1.17, 2.1}}
	if len(d.ByDepth) != len(wantDepth) {
		t.Fatalf("by depth %+v, want %+v", d.ByDepth, wantDepth)
	}
	for i, w := range wantDepth {
		if g := d.ByDepth[i]; g.Depth != w.Depth || g.Pages != w.Pages || !near(g.Median, w.Median) || !near(g.P90, w.P90) {
			t.Errorf("depth %d: %+v, want %+v", i, g, w)
		}
	}
	var out bytes.Buffer
	d.Print(&out)
	for _, w := range []string{"9 reachable allowed pages, 8 found (88.9%; 1 seeds, found at 0.1 s), 7 fetched (77.8%); 1 found and not fetched, 1 fetched before",
		"over 6 pages: median 0.17 s, p90 2.70 s", "= discovery 4.5 s (45.7%) + politeness 4.0 s (40.5%) + value order 1.3 s (13.7%)",
		"by link depth (pages): 0: 0.10 s (1), 1: 0.10 s (3), 2: 1.17 s (2)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}

	// A wait of 1 s: c.cl's Crawl-delay still governs it; b.cl/new, found
	// at 0.36 at the end of b.cl/old, is allowed only after it was
	// fetched (the handmade log is not polite at this wait): its part is
	// cut to fetched − found, 0.24; so is a.cl/1's, found at 0.3 and
	// fetched at 0.4: 0.1.
	d = computeDiscovery(discoveryTruth(), discoveryLog(t), []int{0}, t0, serverRules{wait: time.Second})
	if !near(d.Politeness, 3.95+0.24+0.1) {
		t.Errorf("politeness at wait 1 s: %v, want %v", d.Politeness, 3.95+0.24+0.1)
	}
}

// TestEarliestAllowed: the earliest time one more request would have
// kept each rule, given the requests before it.
func TestEarliestAllowed(t *testing.T) {
	s := time.Second
	seq := func(r ...[2]time.Duration) *reqSeq {
		q := &reqSeq{}
		for _, x := range r {
			q.add(x[0], x[1])
		}
		q.sort()
		return q
	}
	for _, tc := range []struct {
		name       string
		from       time.Duration
		unit, addr *reqSeq
		gap        time.Duration
		rules      serverRules
		want       time.Duration
	}{
		{"nothing known", 5 * s, nil, nil, s, serverRules{addressWait: s, connectionsPerIP: 1}, 5 * s},
		{"idle unit", 5 * s, seq([2]time.Duration{0, s}), nil, s, serverRules{}, 5 * s},
		{"unit in flight, then the gap", 5 * s, seq([2]time.Duration{4 * s, 6 * s}), nil, 2 * s, serverRules{}, 8 * s},
		{"later requests are not looked at", 5 * s, seq([2]time.Duration{5 * s, 6 * s}), nil, 2 * s, serverRules{}, 5 * s},
		{"the gap after an early request that ends late", 5 * s, seq([2]time.Duration{0, 4 * s}, [2]time.Duration{s, 2 * s}), nil, 2 * s, serverRules{}, 6 * s},
		{"address floor", 5 * s, nil, seq([2]time.Duration{4500 * time.Millisecond, 4600 * time.Millisecond}), 0,
			serverRules{addressWait: s}, 5500 * time.Millisecond},
		{"floor, then another start within it", 5 * s, nil,
			seq([2]time.Duration{4500 * time.Millisecond, 4600 * time.Millisecond}, [2]time.Duration{5200 * time.Millisecond, 5300 * time.Millisecond}),
			0, serverRules{addressWait: s}, 6200 * time.Millisecond},
		{"connections_per_ip binds", 5 * s, nil, seq([2]time.Duration{3 * s, 9 * s}, [2]time.Duration{4 * s, 7 * s}), 0,
			serverRules{connectionsPerIP: 2}, 7 * s},
		{"connections_per_ip not reached", 5 * s, nil, seq([2]time.Duration{3 * s, 9 * s}, [2]time.Duration{4 * s, 7 * s}), 0,
			serverRules{connectionsPerIP: 3}, 5 * s},
		{"the unit then the address", 5 * s, seq([2]time.Duration{4 * s, 6 * s}),
			seq([2]time.Duration{4 * s, 6 * s}, [2]time.Duration{5500 * time.Millisecond, 5600 * time.Millisecond}), 0,
			serverRules{addressWait: s}, 6500 * time.Millisecond},
	} {
		if got := earliestAllowed(tc.from, tc.unit, tc.addr, tc.gap, tc.rules); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDiscoveryCommand runs `crawlcheck discovery` on the model of a
// small web with a log that fetches every reachable page, one a second,
// in URL order, and `crawlcheck targets` with its JSON.
func TestDiscoveryCommand(t *testing.T) {
	webPath, seedPath, _ := tinyWeb(t)
	var out bytes.Buffer
	if err := newApp(&out).Run([]string{"crawlcheck", "reachable", "--web", webPath, "--seeds", seedPath}); err != nil {
		t.Fatal(err)
	}
	urls := strings.Fields(out.String())
	var log strings.Builder
	for i, u := range urls {
		hostPort, path, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
		host, _, _ := strings.Cut(hostPort, ":")
		at := time.Duration(i+1) * time.Second
		log.WriteString(logLineAt(1, host, "/"+path, 200, at-time.Millisecond, at, "127.0.0.1"))
	}
	dir := t.TempDir()
	logPath, jsonPath := filepath.Join(dir, "requests.tsv"), filepath.Join(dir, "discovery.json")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := newApp(&out).Run([]string{"crawlcheck", "discovery", "--web", webPath, "--seeds", seedPath, "--log", logPath,
		"--start", t0.Format(time.RFC3339Nano), "--wait", "0s", "--json-out", jsonPath})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rules: wait 0s (or the unit's Crawl-delay), address_wait 250ms, connections_per_ip 8") {
		t.Errorf("output:\n%s", out.String())
	}
	var d Discovery
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	n := len(urls)
	// Every page is fetched; the seeds among them are found at 0.999 s.
	if d.Reachable != n || d.Fetched != n || d.Seeds == 0 || d.Found+d.FetchedUnfound < n || d.Pages+d.FetchedUnfound != n || d.SeedsAt != 0.999 {
		t.Errorf("n %d: %+v", n, d)
	}
	if !(d.Total > 0 && math.Abs(d.Discovery+d.Politeness+d.ValueOrder-d.Total) < 1e-6) {
		t.Errorf("the parts do not sum to the total: %+v", d)
	}
	if err := newApp(&out).Run([]string{"crawlcheck", "discovery", "--web", webPath, "--seeds", seedPath, "--log", logPath,
		"--start", t0.Format(time.RFC3339Nano), "--address-wait", "-1s"}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("negative --address-wait: %v", err)
	}
}
