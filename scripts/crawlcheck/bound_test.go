package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
)

// TestServerBound: the polite bound of issue 34 against the per-host bound
// of before, on webs where a rule the per-host bound ignores binds.
func TestServerBound(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	at := []time.Duration{0, s, 2 * s, 10 * s}
	// four hosts of ten pages, each alone in its unit, on one address.
	four := func(resp, gap time.Duration) []boundUnit {
		var us []boundUnit
		for range 4 {
			us = append(us, boundUnit{addr: "127.77.0.1", pages: 10, resp: resp, gap: gap})
		}
		return us
	}
	for _, tc := range []struct {
		name  string
		units []boundUnit
		rules serverRules
		// hostPages, hostInterval: the same web as the per-host bound
		// sees it (every host its own interval max(wait, Crawl-delay,
		// response time)).
		hostPages    map[string]int
		hostInterval map[string]time.Duration
		want, host   []int
	}{
		{
			// issue 34: address_wait 250 ms is at most 4 starts a second
			// on an address, whatever its hosts; the per-host bound
			// counts 10 a second on each host.
			name:  "the address floor binds",
			units: four(10*ms, 100*ms), rules: serverRules{wait: 100 * ms, addressWait: 250 * ms},
			hostPages:    map[string]int{"a": 10, "b": 10, "c": 10, "d": 10},
			hostInterval: map[string]time.Duration{"a": 100 * ms, "b": 100 * ms, "c": 100 * ms, "d": 100 * ms},
			// one start every 250 ms: ends 0.01, 0.26, 0.51, 0.76 by 1 s
			want: []int{0, 4, 8, 40}, host: []int{0, 40, 40, 40},
		},
		{
			// at a wait of 1 s each host's own wait binds first: both
			// bounds agree.
			name:  "the address floor does not bind",
			units: four(10*ms, s), rules: serverRules{wait: s, addressWait: 250 * ms},
			hostPages:    map[string]int{"a": 10, "b": 10, "c": 10, "d": 10},
			hostInterval: map[string]time.Duration{"a": s, "b": s, "c": s, "d": s},
			// starts at 0, 0.25, 0.5, 0.75, then each unit 1.01 s
			// after its last start: 1.01, 1.26, 1.51, 1.76, 2.02 ...
			want: []int{0, 4, 8, 40}, host: []int{0, 4, 8, 40},
		},
		{
			name:  "the address floor binds at wait 0",
			units: four(10*ms, 0), rules: serverRules{addressWait: 250 * ms},
			hostPages:    map[string]int{"a": 10, "b": 10, "c": 10, "d": 10},
			hostInterval: map[string]time.Duration{"a": 10 * ms, "b": 10 * ms, "c": 10 * ms, "d": 10 * ms},
			// one start every 250 ms: 0.01, 0.26, ... 0.76 by 1 s
			want: []int{0, 4, 8, 40}, host: []int{0, 40, 40, 40},
		},
		{
			name:  "connections_per_ip binds",
			units: four(s, 0), rules: serverRules{connectionsPerIP: 2},
			hostPages:    map[string]int{"a": 10, "b": 10, "c": 10, "d": 10},
			hostInterval: map[string]time.Duration{"a": s, "b": s, "c": s, "d": s},
			// two at a time, a second each
			want: []int{0, 2, 4, 20}, host: []int{0, 4, 8, 40},
		},
		{
			name: "names of one registrable domain are one unit",
			// www.x.cl and x.cl: one unit of 20 pages, one request at a
			// time, 0.5 s each, 0.5 s wait after each end.
			units:     []boundUnit{{addr: "127.77.0.1", pages: 20, resp: 500 * ms, gap: 500 * ms}},
			rules:     serverRules{wait: 500 * ms},
			hostPages: map[string]int{"www.x.cl": 10, "x.cl": 10}, hostInterval: map[string]time.Duration{"www.x.cl": 500 * ms, "x.cl": 500 * ms},
			want: []int{0, 1, 2, 10}, host: []int{0, 4, 8, 20},
		},
		{
			name:      "a Crawl-delay after each end, plus the response time",
			units:     []boundUnit{{addr: "a", pages: 5, resp: 500 * ms, gap: 2 * s}, {addr: "b", pages: 3, resp: 0, gap: 0}},
			rules:     serverRules{wait: 0, addressWait: 0},
			hostPages: map[string]int{"a": 5, "b": 3}, hostInterval: map[string]time.Duration{"a": 2 * s, "b": 0},
			// a: 0.5, 3.0, 5.5, 8.0; b: all at 0. The per-host bound
			// counts a's first page only at its interval, 2 s, so it is
			// not above the new bound everywhere.
			want: []int{3, 4, 4, 7}, host: []int{3, 3, 4, 8},
		},
		{
			name:  "no rules: every page at once",
			units: four(0, 0), rules: serverRules{},
			hostPages:    map[string]int{"a": 10, "b": 10, "c": 10, "d": 10},
			hostInterval: map[string]time.Duration{},
			want:         []int{40, 40, 40, 40}, host: []int{40, 40, 40, 40},
		},
	} {
		got := serverBound(tc.units, tc.rules, at)
		for i := range at {
			host := politeBound(tc.hostPages, tc.hostInterval, at[i])
			if got[i] != tc.want[i] || host != tc.host[i] {
				t.Errorf("%s at %v: bound %d, per-host %d; want %d and %d", tc.name, at[i], got[i], host, tc.want[i], tc.host[i])
			}
		}
	}
}

// TestBoundUnits: the timeline groups the reachable pages' hosts by the
// address the log shows and by registrable domain; a name the log never
// asked is an address of its own.
func TestBoundUnits(t *testing.T) {
	ms := time.Millisecond
	pages := []string{"http://www.x.cl:8080/", "http://www.x.cl:8080/1", "http://x.cl:8080/", "http://y.cl:8080/", "http://z.cl:8080/"}
	tr := newTruth(pages, config.Defaults().Scope.Normalizer(), 8080)
	tr.links = make([][]uint32, len(pages))
	tr.crawlDelay = map[string]time.Duration{"x.cl": 3 * time.Second}
	log := logLineAt(1, "www.x.cl", "/", 200, 0, 100*ms, "127.77.0.1") +
		logLineAt(2, "X.CL", "/", 301, 200*ms, 220*ms, "127.77.0.1") +
		logLineAt(3, "y.cl", "/", 200, 300*ms, 330*ms, "127.77.0.1")
	lines, err := readRequestLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	got := boundUnits(tr, lines, serverRules{wait: time.Second})
	want := []boundUnit{
		{addr: "127.77.0.1", pages: 3, resp: 60 * ms, gap: 3 * time.Second},
		{addr: "127.77.0.1", pages: 1, resp: 30 * ms, gap: time.Second},
		{addr: "name:z.cl", pages: 1, resp: 0, gap: time.Second},
	}
	if len(got) != len(want) {
		t.Fatalf("units %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("unit %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// With the web's own servers, z.cl, which the crawl never asked, is on
	// its real server (here y.cl's): a unit of that address, not an
	// address of its own.
	tr.serverOf = func(host string) string {
		if strings.HasSuffix(strings.ToLower(host), "x.cl") {
			return "address 1"
		}
		return "address 2"
	}
	// A unit the log never asked takes the web's own response time.
	tr.responseOf = func(host string) time.Duration { return 40 * ms }
	byWeb := boundUnits(tr, lines, serverRules{wait: time.Second})
	if len(byWeb) != 3 || byWeb[2].addr != "address 2" || byWeb[1].addr != "address 2" || byWeb[0].addr != "address 1" ||
		byWeb[2].resp != 40*ms || byWeb[1].resp != 30*ms {
		t.Errorf("units by the web's servers %+v", byWeb)
	}
	tr.serverOf, tr.responseOf = nil, nil
	tl, err := computeTimeline(context.Background(), tr, lines, timelineOptions{start: t0,
		rules: serverRules{wait: time.Second, addressWait: 250 * ms, connectionsPerIP: 8}, at: []time.Duration{time.Second}, damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	// By 1 s: x.cl's unit one page (0.06; the next after its 3 s
	// Crawl-delay), y.cl's one (0.28: the floor after x.cl's start at
	// 0), z.cl's one (0). Per host: www.x.cl 1 (1 s interval), x.cl 0 (3
	// s), y.cl 1, z.cl 1.
	if c := tl.Coverage[0]; c.Bound != 3 || c.HostBound != 3 || tl.Units != 3 || tl.Addresses != 2 || tl.AddressWait != 0.25 || tl.ConnectionsPerIP != 8 {
		t.Errorf("timeline %+v, coverage %+v", tl, tl.Coverage)
	}
}
