package politeaudit

import (
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// fakeWeb is a web of a few hosts: Crawl-delays and hostile hosts.
type fakeWeb struct {
	delays  map[string]string
	hostile []testweb.HostileHost
}

func (f fakeWeb) CrawlDelay(host string) string       { return f.delays[host] }
func (f fakeWeb) HostileHosts() []testweb.HostileHost { return f.hostile }

// web is the fake web of the tests: www.d.cl (and its alias d.cl) ask
// for a Crawl-delay of 2 s, big.cl for 5 s; endless.hostil.cl streams
// and drip.hostil.cl drips.
var web = fakeWeb{
	delays: map[string]string{"www.d.cl": "2", "d.cl": "2", "big.cl": "5"},
	hostile: []testweb.HostileHost{
		{Name: "endless.hostil.cl", Kind: testweb.HostileEndless},
		{Name: "garbage.hostil.cl", Kind: testweb.HostileGarbage},
	},
}

// t0 is time zero of the synthetic logs.
var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

const ms = time.Millisecond

// rq is a request to host on addr from start to end (milliseconds after t0).
func rq(host, path, addr string, status int, start, end int) testweb.Request {
	return testweb.Request{Host: host, Path: path, Addr: addr, Status: status,
		Start: t0.Add(time.Duration(start) * ms), End: t0.Add(time.Duration(end) * ms)}
}

// at is a moment, milliseconds after t0.
func at(m int) time.Time { return t0.Add(time.Duration(m) * ms) }

const (
	ip1 = "127.0.0.1"
	ip2 = "127.77.0.1"
)

// want are the figures a case checks (the violations and a few more).
type want struct {
	unitOverlaps, overCap, shortGaps, floor, conns, hostileOver  int
	maxUnit, maxAddr, units, addresses, sharedUnits, sharedAddrs int
	afterStream                                                  int
}

func TestAudit(t *testing.T) {
	base := Rules{Wait: 100 * ms, MaxCrawlDelay: 60 * time.Second, ConnectionsPerIP: 2, AddressWait: 50 * ms, TotalTimeout: 5 * time.Second}
	for _, tc := range []struct {
		name   string
		rules  Rules
		log    Log
		want   want
		report string // a problem mentions this
	}{
		{
			name:  "one host, every rule held",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/robots.txt", ip1, 404, 0, 5),
				rq("www.a.cl", "/", ip1, 200, 105, 110),
				rq("www.a.cl", "/1", ip1, 200, 210, 300),
			}},
			want: want{maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
		},
		{
			name:  "one host, wait violated",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 10),
				rq("www.a.cl", "/1", ip1, 200, 60, 70),
			}},
			want:   want{shortGaps: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
			report: "www.a.cl/1 requested 50ms after www.a.cl/ ended (want 100ms",
		},
		{
			name:  "aliases on one address are one unit: gap and overlap",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 10),
				rq("a.cl", "/", ip1, 301, 60, 65),        // 50 ms after: under the wait
				rq("m.a.cl", "/", ip1, 200, 300, 400),    // fine
				rq("www.a.cl", "/2", ip1, 200, 350, 360), // in flight with m.a.cl
			}},
			want:   want{unitOverlaps: 1, shortGaps: 2, maxUnit: 2, maxAddr: 2, units: 1, addresses: 1, sharedUnits: 1},
			report: "unit a.cl@127.0.0.1: www.a.cl/2 started while 1 request(s) were in flight",
		},
		{
			name:  "the same names on two addresses are two units",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 10),
				rq("a.cl", "/", ip2, 301, 5, 15),
			}},
			want: want{maxUnit: 1, maxAddr: 1, units: 2, addresses: 2},
		},
		{
			name:  "shared hosting: two domains on one address, the floor and the cap held",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 100),
				rq("www.b.cl", "/", ip1, 200, 50, 150), // in flight beside a: another unit
				rq("www.a.cl", "/1", ip1, 200, 200, 210),
			}},
			want: want{maxUnit: 1, maxAddr: 2, units: 2, addresses: 1, sharedAddrs: 1},
		},
		{
			name:  "shared hosting: the floor and the cap broken",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 100),
				rq("www.b.cl", "/", ip1, 200, 10, 100),   // 10 ms after a start: floor
				rq("www.c.cl", "/", ip1, 200, 70, 100),   // third in flight, cap 2
				rq("www.b.cl", "/1", ip1, 200, 300, 310), // fine
			}},
			want:   want{overCap: 1, floor: 1, maxUnit: 1, maxAddr: 3, units: 3, addresses: 1, sharedAddrs: 1},
			report: "address 127.0.0.1: www.b.cl/ started 10ms after www.a.cl/ started (address wait 50ms)",
		},
		{
			name:  "no cap and no floor",
			rules: Rules{Wait: 100 * ms},
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 100),
				rq("www.b.cl", "/", ip1, 200, 0, 100),
				rq("www.c.cl", "/", ip1, 200, 1, 100),
			}},
			want: want{maxUnit: 1, maxAddr: 3, units: 3, addresses: 1, sharedAddrs: 1},
		},
		{
			name:  "Crawl-delay from the robots.txt fetch on, held",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.d.cl", "/", ip1, 200, 0, 10), // before robots.txt: the wait only
				rq("www.d.cl", "/robots.txt", ip1, 200, 110, 120),
				rq("www.d.cl", "/1", ip1, 200, 2120, 2130),
			}},
			want: want{maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
		},
		{
			name:  "Crawl-delay broken by the alias",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("d.cl", "/robots.txt", ip1, 301, 0, 10),          // a redirect: no delay known yet
				rq("www.d.cl", "/robots.txt", ip1, 200, 110, 120),   // the wait is enough
				rq("www.d.cl", "/", ip1, 200, 2120, 2130),           // fine
				rq("d.cl", "/", ip1, 301, 3130, 3140),               // 1 s after: under 2 s
				rq("www.d.cl", "/robots.txt", ip1, 200, 5140, 5150), // fine
			}},
			want:   want{shortGaps: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1, sharedUnits: 1},
			report: "d.cl/ requested 1s after www.d.cl/ ended (want 2s",
		},
		{
			name:  "Crawl-delay cut to max_crawl_delay",
			rules: Rules{Wait: 100 * ms, MaxCrawlDelay: time.Second},
			log: Log{Requests: []testweb.Request{
				rq("big.cl", "/robots.txt", ip1, 200, 0, 10),
				rq("big.cl", "/", ip1, 200, 1010, 1020),
				rq("big.cl", "/1", ip1, 200, 1900, 1910), // 880 ms: under the cut delay
			}},
			want:   want{shortGaps: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
			report: "want 1s",
		},
		{
			name:  "streaming hostile answer ends for the client at the total timeout",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("endless.hostil.cl", "/", ip2, 200, 0, 30000), // the server noticed late
				rq("endless.hostil.cl", "/", ip2, 200, 5200, 5300),
			}},
			want: want{maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
		},
		{
			name:  "a stream the client cut: the next gap is not the server's to judge",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("endless.hostil.cl", "/", ip2, 200, 0, 70), // cut at the body cap; the server noticed at 70 ms
				rq("garbage.hostil.cl", "/robots.txt", ip2, 404, 80, 81),
				rq("garbage.hostil.cl", "/", ip2, 200, 130, 131), // 49 ms after: checked
			}},
			want: want{shortGaps: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1, sharedUnits: 1, afterStream: 1},
		},
		{
			name:  "streaming hostile answer without a client limit",
			rules: Rules{Wait: 100 * ms},
			log: Log{Requests: []testweb.Request{
				rq("endless.hostil.cl", "/", ip2, 200, 0, 30000),
				rq("endless.hostil.cl", "/", ip2, 200, 5200, 5300),
			}},
			want: want{unitOverlaps: 1, shortGaps: 1, maxUnit: 2, maxAddr: 2, units: 1, addresses: 1},
		},
		{
			name:  "a kill between two requests: the wait from the kill, no Crawl-delay, no floor",
			rules: Rules{Wait: 100 * ms, AddressWait: 500 * ms, ConnectionsPerIP: 1},
			log: Log{Requests: []testweb.Request{
				rq("www.d.cl", "/robots.txt", ip1, 200, 0, 10),
				rq("www.d.cl", "/", ip1, 200, 2010, 9000), // in flight at the kill
				rq("www.d.cl", "/robots.txt", ip1, 200, 2150, 2160),
				rq("www.d.cl", "/1", ip1, 200, 4160, 4170),
			}, Deaths: []time.Time{at(2050)}},
			want: want{maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
		},
		{
			name:  "a kill between two requests: under the wait from the kill",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 9000),
				rq("www.a.cl", "/1", ip1, 200, 1050, 1060),
			}, Deaths: []time.Time{at(1000)}},
			want:   want{shortGaps: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
			report: "requested 50ms after",
		},
		{
			name:  "connections: two at once to one host name",
			rules: base,
			log: Log{Requests: []testweb.Request{rq("www.a.cl", "/", ip1, 200, 0, 10)}, Conns: []testweb.Conn{
				{ID: 1, Host: "www.a.cl", Addr: ip1, Opened: at(0), Closed: at(1000)},
				{ID: 2, Host: "www.a.cl", Addr: ip1, Opened: at(500), Closed: at(1500)},
				{ID: 3, Host: "www.a.cl", Addr: ip1, Opened: at(1550), Closed: at(1600)}, // within the slack
				{ID: 4, Host: "www.b.cl", Addr: ip1, Opened: at(0)},                      // never closed
				{ID: 5, Host: "www.b.cl", Addr: ip1, Opened: at(500), Closed: at(600)},
				{ID: 6, Host: "www.c.cl", Addr: ip1, Opened: at(0)}, // its harvester died
				{ID: 7, Host: "www.c.cl", Addr: ip1, Opened: at(1200), Closed: at(1300)},
			}, Deaths: []time.Time{at(1100)}},
			want:   want{conns: 2, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
			report: "host www.b.cl: connection 5 opened at 12:00:00.500000 while connection 4 was open (until 12:00:01.100000)",
		},
		{
			name:  "connections: one never closed",
			rules: base,
			log: Log{Conns: []testweb.Conn{
				{ID: 1, Host: "www.a.cl", Addr: ip1, Opened: at(0)},
				{ID: 2, Host: "www.a.cl", Addr: ip1, Opened: at(5000), Closed: at(6000)},
			}},
			want:   want{conns: 1},
			report: "(until never closed)",
		},
		{
			name:  "hostile hosts over the limit of cut answers",
			rules: Rules{MaxCutRequests: 2},
			log: Log{Requests: []testweb.Request{
				rq("endless.hostil.cl", "/robots.txt", ip2, 404, 0, 1),
				rq("endless.hostil.cl", "/", ip2, 200, 10, 20),
				rq("endless.hostil.cl", "/", ip2, 200, 30, 40),
				rq("endless.hostil.cl", "/", ip2, 200, 50, 60),
				rq("garbage.hostil.cl", "/", ip2, 200, 70, 80), // not cut: no limit
				rq("garbage.hostil.cl", "/", ip2, 200, 90, 100),
				rq("garbage.hostil.cl", "/", ip2, 200, 110, 120),
			}},
			// Both names are of hostil.cl: one unit on one address.
			want:   want{hostileOver: 1, maxUnit: 1, maxAddr: 1, units: 1, addresses: 1, sharedUnits: 1},
			report: "hostile host endless.hostil.cl (endless): 3 page requests, want at most 2",
		},
		{
			name:  "an old log without addresses: per host name, no address checks",
			rules: base,
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", "", 200, 0, 10),
				rq("a.cl", "/", "", 301, 20, 30), // another name: another unit
				rq("www.a.cl", "/1", "", 200, 40, 50),
			}},
			want:   want{shortGaps: 1, maxUnit: 1, units: 2},
			report: "www.a.cl/1 requested 30ms after",
		},
		{
			name:  "server lag within the slack",
			rules: Rules{Wait: 100 * ms, AddressWait: 200 * ms, Slack: 5 * ms},
			log: Log{Requests: []testweb.Request{
				rq("www.a.cl", "/", ip1, 200, 0, 103),
				rq("www.a.cl", "/1", ip1, 200, 198, 210), // 95 ms after; 198 ms between starts
			}},
			want: want{maxUnit: 1, maxAddr: 1, units: 1, addresses: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Audit(web, tc.rules, tc.log)
			got := want{rep.UnitOverlaps, rep.AddressOverCap, rep.ShortGaps, rep.FloorViolations, rep.ConnOverlaps, rep.HostileOver,
				rep.MaxInFlightUnit, rep.MaxInFlightAddress, rep.Units, rep.Addresses, rep.SharedUnits, rep.SharedAddresses, rep.AfterStream}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v\nproblems:\n%s", got, tc.want, strings.Join(rep.Problems, "\n"))
			}
			if rep.OK() != (rep.Violations() == 0) || len(rep.Problems) != min(rep.Violations(), MaxProblems) {
				t.Errorf("OK %v, %d violations, %d problems", rep.OK(), rep.Violations(), len(rep.Problems))
			}
			if tc.report != "" && !strings.Contains(strings.Join(rep.Problems, "\n"), tc.report) {
				t.Errorf("no problem mentions %q:\n%s", tc.report, strings.Join(rep.Problems, "\n"))
			}
		})
	}
}

func TestReportFigures(t *testing.T) {
	rep := Audit(web, Rules{Wait: 100 * ms, AddressWait: 50 * ms, MaxCrawlDelay: time.Minute}, Log{Requests: []testweb.Request{
		rq("www.d.cl", "/robots.txt", ip1, 200, 0, 10),
		rq("www.d.cl", "/", ip1, 200, 1010, 1020), // 1 s: 1 s under the Crawl-delay
		rq("www.e.cl", "/", ip1, 200, 1030, 1040), // 20 ms after d's start: floor
		rq("endless.hostil.cl", "/", ip2, 200, 0, 10),
	}})
	if rep.Requests != 4 || rep.Hosts != 3 || rep.DelayGaps != 1 || rep.MinGap != time.Second || rep.MinGapUnit != "d.cl@127.0.0.1" ||
		rep.MinStartGap != 20*ms {
		t.Errorf("figures: %+v", rep)
	}
	if rep.WorstGap.Gap != time.Second || rep.WorstGap.Want != 2*time.Second || rep.WorstFloor.Gap != 20*ms || rep.WorstFloor.Want != 50*ms {
		t.Errorf("worst: %+v, %+v", rep.WorstGap, rep.WorstFloor)
	}
	if len(rep.Hostile) != 2 || rep.Hostile[0] != (HostileCount{Host: "endless.hostil.cl", Kind: testweb.HostileEndless, Requests: 1, Pages: 1}) ||
		rep.Hostile[1].Requests != 0 {
		t.Errorf("hostile: %+v", rep.Hostile)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b, "new"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"gaps under wait/Crawl-delay", "new", "endless.hostil.cl  endless  1", "worst gap on 1 unit(s): 1s instead of 2s",
		"worst address floor on 1 address(es): 20ms instead of 50ms", "politeness violations: 2\n"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// TestRealWebRequests audits requests of a real test web: the addresses
// the web records group aliases with their sites.
func TestRealWebRequests(t *testing.T) {
	w, err := testweb.New(testweb.Config{Seed: 5, Hosts: 40, MaxPages: 20, Heterogeneous: true, Hostile: true})
	if err != nil {
		t.Fatal(err)
	}
	var reqs []testweb.Request
	for bare, name := range w.Aliases() {
		reqs = append(reqs, rq(bare, "/", ip1, 301, 0, 1), rq(name, "/", ip1, 200, 2, 3))
	}
	if len(reqs) == 0 {
		t.Fatal("no aliases")
	}
	rep := Audit(w, Rules{Wait: 10 * ms}, Log{Requests: reqs})
	if rep.Units != len(reqs)/2 || rep.SharedUnits != rep.Units || rep.ShortGaps != rep.Units {
		t.Errorf("%d alias pairs: %d units, %d of several names, %d short gaps", len(reqs)/2, rep.Units, rep.SharedUnits, rep.ShortGaps)
	}
	if len(rep.Hostile) != len(w.HostileHosts()) {
		t.Errorf("%d hostile hosts counted, the web has %d", len(rep.Hostile), len(w.HostileHosts()))
	}
}

func TestFromConfig(t *testing.T) {
	h := config.Defaults().Harvester
	r := FromConfig(h)
	if r.Wait != h.Wait.D() || r.MaxCrawlDelay != h.MaxCrawlDelay.D() || r.ConnectionsPerIP != h.ConnectionsPerIP ||
		r.AddressWait != h.AddressWait.D() || r.TotalTimeout != h.TotalTimeout.D() || r.AddressWait == 0 {
		t.Errorf("FromConfig(%+v) = %+v", h, r)
	}
}
