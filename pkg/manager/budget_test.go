package manager

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The manager's stand-in for an unmeasured host is the harvester's own.
func TestDefaultResponseTime(t *testing.T) {
	if defaultResponseTime != harvester.DefaultResponseTime {
		t.Errorf("defaultResponseTime %s, harvester.DefaultResponseTime %s", defaultResponseTime, harvester.DefaultResponseTime)
	}
}

// The time one URL occupies its host: response time, then the wait (fixed
// or adaptive) or the capped Crawl-delay, whichever is longer.
func TestURLCost(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	fixed := pace{wait: 15 * s, maxWait: 60 * s, maxCrawlDelay: 60 * s}
	adaptive := pace{wait: 1 * s, waitFactor: 10, maxWait: 20 * s, maxCrawlDelay: 30 * s}
	tests := []struct {
		name       string
		p          pace
		resp, cd   time.Duration
		want       time.Duration
		wantWaitOf time.Duration
	}{
		{"default wait, unmeasured host", fixed, defaultResponseTime, 0, 15*s + 500*ms, 15 * s},
		{"fixed wait ignores response", fixed, 3 * s, 0, 18 * s, 15 * s},
		{"Crawl-delay below the wait", fixed, 500 * ms, 5 * s, 15*s + 500*ms, 15 * s},
		{"Crawl-delay above the wait", fixed, 500 * ms, 40 * s, 40*s + 500*ms, 15 * s},
		{"Crawl-delay capped at max_crawl_delay", fixed, 500 * ms, 10 * time.Minute, 60*s + 500*ms, 15 * s},
		{"wait_factor: floor at wait", adaptive, 50 * ms, 0, 1*s + 50*ms, 1 * s},
		{"wait_factor: scaled response", adaptive, 300 * ms, 0, 3*s + 300*ms, 3 * s},
		{"wait_factor: capped at max_wait", adaptive, 4 * s, 0, 24 * s, 20 * s},
		{"wait_factor and Crawl-delay", adaptive, 300 * ms, 7 * s, 7*s + 300*ms, 3 * s},
		{"wait_factor and a capped Crawl-delay", adaptive, 4 * s, 2 * time.Minute, 34 * s, 20 * s},
		{"no wait at all", pace{}, 200 * ms, 0, 200 * ms, 0},
	}
	for _, tt := range tests {
		if got := tt.p.urlCost(tt.resp, tt.cd); got != tt.want {
			t.Errorf("%s: cost %s, want %s", tt.name, got, tt.want)
		}
		if got := tt.p.waitAfter(tt.resp); got != tt.wantWaitOf {
			t.Errorf("%s: wait %s, want %s", tt.name, got, tt.wantWaitOf)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for s, want := range map[string]bool{
		"User-agent: *\nCrawl-delay: 5\n": true,
		"CRAWL-DELAY: 1":                  true,
		"crawl-Delay:2":                   true,
		"User-agent: *\nDisallow: /x\n":   false,
		"crawl delay: 5":                  false,
		"crawl-dela":                      false,
		"":                                false,
	} {
		if got := containsFold(s, "crawl-delay"); got != want {
			t.Errorf("containsFold(%q) = %v, want %v", s, got, want)
		}
	}
}

// timeWeb is a fixture of hosts that differ in speed, with
// wait 1 s and batch_duration 30 s:
//
//   - fast.cl: 60 pages, measured at 100 ms, robots.txt fresh: 1.1 s a URL,
//     27 in 30 s. Every other page has anchor text (profit 0.5 against
//     0.75), so profit order is the pages without anchor text in id order,
//     then the others;
//   - slow.cl: 10 pages, 2 s, Crawl-delay 5: 7 s a URL, 4;
//   - new.cl: 30 pages never measured (0.5 s) and no robots.txt: 1.5 s a
//     URL and 1.5 s more for the robots.txt fetch, 19;
//   - delay.cl: 5 pages, Crawl-delay 120 cut to max_crawl_delay 60: 60.5 s,
//     more than the budget, yet its first URL;
//   - http://x.cl (100 ms) and https://x.cl:8443 (400 ms), one host:
//     1.4 s a URL (the slower), 21 between them.
func timeWeb(t *testing.T) *fixture {
	f := newFixture(t)
	f.cfg.Harvester.Wait = config.Duration(time.Second)
	f.cfg.Harvester.MaxCrawlDelay = config.Duration(60 * time.Second)
	f.cfg.Manager.BatchDuration = config.Duration(30 * time.Second)
	var pages []page
	add := func(site string, n int, anchorsOnOdd bool) {
		for i := range n {
			p := page{url: fmt.Sprintf("%s/p%02d", site, i)}
			if anchorsOnOdd && i%2 == 1 {
				p.anchors = []string{"more"}
			}
			pages = append(pages, p)
		}
	}
	add("http://fast.cl", 60, true)
	add("http://slow.cl", 10, false)
	add("http://new.cl", 30, false)
	add("http://delay.cl", 5, false)
	add("http://x.cl", 20, false)
	add("https://x.cl:8443", 20, false)
	f.add(pages...)
	robots := func(body string) func(*linkgraph.Site) {
		return func(s *linkgraph.Site) {
			s.RobotsStatus, s.RobotsFetched, s.RobotsBody = 200, testNow.Add(-time.Hour), body
		}
	}
	measured := func(ms float64) func(*linkgraph.Site) {
		return func(s *linkgraph.Site) { s.ConnectMs, s.ResponseMs, s.EstimatesAt = 20, ms, testNow.Add(-time.Hour) }
	}
	for key, ms := range map[string]float64{"http://fast.cl": 100, "http://slow.cl": 2000, "http://x.cl": 100, "https://x.cl:8443": 400} {
		f.site(key, measured(ms))
	}
	f.site("http://fast.cl", robots("User-agent: *\nDisallow: /private\n"))
	f.site("http://slow.cl", robots("User-agent: *\nCrawl-delay: 5\n"))
	f.site("http://delay.cl", robots("User-agent: wirebot\nCrawl-delay: 120\n\nUser-agent: *\nCrawl-delay: 1\n"))
	f.site("http://x.cl", robots(""))
	f.site("https://x.cl:8443", robots(""))
	return f
}

// What the budget makes of each site's record.
func TestBudgetSites(t *testing.T) {
	f := timeWeb(t)
	// A stale copy still gives the Crawl-delay, but costs a fetch.
	f.add(page{url: "http://stale.cl/"})
	f.site("http://stale.cl", func(s *linkgraph.Site) {
		s.RobotsStatus, s.RobotsFetched, s.RobotsBody = 200, testNow.Add(-48*time.Hour), "User-agent: *\nCrawl-delay: 3\n"
	})
	f.add(page{url: "http://idle.cl/", state: linkgraph.StateExcluded}) // no candidates: not read
	const s, ms = time.Second, time.Millisecond
	want := map[string]struct {
		cost        time.Duration
		robotsFetch bool
		host        string
	}{
		"http://fast.cl":    {1100 * ms, false, "fast.cl"},
		"http://slow.cl":    {7 * s, false, "slow.cl"},
		"http://new.cl":     {1500 * ms, true, "new.cl"},
		"http://delay.cl":   {60*s + 500*ms, false, "delay.cl"},
		"http://x.cl":       {1400 * ms, false, "x.cl"},
		"https://x.cl:8443": {1400 * ms, false, "x.cl"},
		"http://stale.cl":   {3*s + 500*ms, true, "stale.cl"},
	}
	f.view(func(tx *linkgraph.Tx) error {
		v, err := readDocs(context.Background(), tx, &f.cfg.Manager, testNow, 0, nil)
		if err != nil {
			return err
		}
		b, err := newBudget(v, &f.cfg, testNow)
		if err != nil {
			return err
		}
		for key, w := range want {
			id, _ := tx.SiteID(key)
			st := b.sites[id]
			if st.host < 0 || st.cost != w.cost || st.robotsFetch != w.robotsFetch || b.hosts[st.host].name != w.host {
				t.Errorf("%s: %+v (host %+v), want %+v", key, st, b.hosts[max(st.host, 0)], w)
			}
		}
		if id, _ := tx.SiteID("http://idle.cl"); b.sites[id].host != -1 {
			t.Errorf("idle.cl, without candidates, read: %+v", b.sites[id])
		}
		if len(b.hosts) != 6 {
			t.Errorf("%d hosts, want 6", len(b.hosts))
		}
		f.cfg.Manager.BatchDuration = 0
		if b, err := newBudget(v, &f.cfg, testNow); b != nil || err != nil {
			t.Errorf("batch_duration 0: budget %v, %v", b, err)
		}
		return nil
	})
}

// A fast host gets many URLs and a slow one few, each within
// batch_duration; those left out come in the next batch, in profit order.
func TestRunBatchDuration(t *testing.T) {
	f := timeWeb(t)
	res := f.mustRun()
	h, entries := readBatch(t, f.col, 1)
	perHost := map[string][]string{}
	for _, e := range entries {
		host := hostOf(e.Site)
		perHost[host] = append(perHost[host], e.URL)
	}
	wantCount := map[string]int{"fast.cl": 28, "slow.cl": 5, "new.cl": 19, "delay.cl": 1, "x.cl": 22}
	for host, n := range wantCount {
		if len(perHost[host]) != n {
			t.Errorf("%s: %d URLs in batch 1, want %d", host, len(perHost[host]), n)
		}
	}
	if res.Stats.TimeCapped != (60-28)+(10-5)+(30-19)+(5-1)+(40-22) || res.Stats.SiteCapped != 0 || res.Stats.Left != 0 {
		t.Errorf("stats %+v", res.Stats)
	}
	if h.Params["batch_duration"] != "30s" || h.Params["max_pages_per_site"] != "10000" {
		t.Errorf("params %v", h.Params)
	}
	if d, err := time.ParseDuration(h.Params["batch_duration"]); err != nil || d != 30*time.Second {
		t.Errorf("batch_duration param %q: %v", h.Params["batch_duration"], err)
	}
	// fast.cl in profit order: its 30 pages without anchor text (even
	// numbers) first, in id order; batch 1 has the first 28 of them (the
	// 28th starts at 29.7 s, within the 30 s, and ends past them) and
	// batch 2 the other 2, then 26 of the anchored ones.
	var order []string
	for i := 0; i < 60; i += 2 {
		order = append(order, fmt.Sprintf("http://fast.cl/p%02d", i))
	}
	for i := 1; i < 60; i += 2 {
		order = append(order, fmt.Sprintf("http://fast.cl/p%02d", i))
	}
	if got := perHost["fast.cl"]; !slices.Equal(got, order[:28]) {
		t.Errorf("fast.cl in batch 1:\n%v\nwant\n%v", got, order[:28])
	}
	// Nothing left out changed state.
	if d := f.doc(order[28]); d.State != linkgraph.StatePending {
		t.Errorf("%s left %s", order[28], d.State)
	}
	f.mustRun()
	_, entries = readBatch(t, f.col, 2)
	var fast2 []string
	for _, e := range entries {
		if e.Site == "http://fast.cl" {
			fast2 = append(fast2, e.URL)
		}
	}
	if !slices.Equal(fast2, order[28:56]) {
		t.Errorf("fast.cl in batch 2:\n%v\nwant\n%v", fast2, order[28:56])
	}
	// new.cl's robots.txt is still not stored: its first URL pays again.
	n := 0
	for _, e := range entries {
		if e.Site == "http://new.cl" {
			n++
		}
	}
	if n != 11 {
		t.Errorf("new.cl: %d URLs in batch 2, want the 11 left", n)
	}
}

// batch_duration 0 turns time sizing off: only the other limits apply,
// and the header says 0s.
func TestRunBatchDurationOff(t *testing.T) {
	f := timeWeb(t)
	f.cfg.Manager.BatchDuration = 0
	f.cfg.Manager.MaxPagesPerSite = 25
	res := f.mustRun()
	h, _ := readBatch(t, f.col, 1)
	if res.Stats.TimeCapped != 0 || res.Stats.SiteCapped != 60-25+30-25 || res.URLs != 25+10+25+5+20+20 {
		t.Errorf("result %+v", res)
	}
	if h.Params["batch_duration"] != "0s" {
		t.Errorf("params %v", h.Params)
	}
}

// The same graph gives the same batch with time sizing too.
func TestRunBatchDurationDeterministic(t *testing.T) {
	var files [2][]byte
	for i := range files {
		res := timeWeb(t).mustRun()
		var err error
		if files[i], err = os.ReadFile(res.File); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("two runs differ:\n%s\n%s", files[0], files[1])
	}
	if _, entries, err := batch.Read(bytes.NewReader(files[0])); err != nil || len(entries) != 28+5+19+1+22 {
		t.Errorf("%d entries, %v", len(entries), err)
	}
}

// explain names the time budget, with the numbers behind it.
func TestExplainBatchDuration(t *testing.T) {
	f := timeWeb(t)
	check := func(u, want string) {
		t.Helper()
		if ex := f.explain(u); !strings.Contains(ex.Verdict, want) {
			t.Errorf("%s: verdict %q, want %q", u, ex.Verdict, want)
		}
	}
	check("http://fast.cl/p54", "in the next batch")
	check("http://fast.cl/p56", "held back by the batch's time budget: its server fast.cl already has 28 URLs in this batch taking 30.8 s of batch_duration 30s, "+
		"and one more of its site takes 1.1 s (response 0.1 s + wait 1 s); it waits for the next batch")
	check("http://slow.cl/p05", "its server slow.cl already has 5 URLs in this batch taking 35 s of batch_duration 30s, "+
		"and one more of its site takes 7 s (response 2 s + the longer of wait 1 s and Crawl-delay 5 s)")
	check("http://delay.cl/p01", "its server delay.cl already has 1 URLs in this batch taking 60.5 s of batch_duration 30s")
	check("http://new.cl/p19", "its server new.cl already has 19 URLs in this batch taking 30 s of batch_duration 30s, "+
		"and one more of its site takes 1.5 s (response 0.5 s (not measured: the harvester's default) + wait 1 s)")
	check("https://x.cl:8443/p19", "its server x.cl already has 22 URLs")
}

// The names of a site on one address (www.u.cl, u.cl) share one time
// budget, as the harvester serves them as one server; a name of the same
// domain on another address, or a domain of its own on the same
// address, has its own.
func TestBudgetUnits(t *testing.T) {
	f := newFixture(t)
	f.cfg.Harvester.Wait = config.Duration(time.Second)
	f.cfg.Manager.BatchDuration = config.Duration(10 * time.Second)
	var pages []page
	for _, site := range []string{"http://www.u.cl", "http://u.cl", "http://m.u.cl", "http://v.cl"} {
		for i := range 20 {
			pages = append(pages, page{url: fmt.Sprintf("%s/p%02d", site, i)})
		}
	}
	f.add(pages...)
	for site, ip := range map[string]string{"http://www.u.cl": "10.0.0.1", "http://u.cl": "10.0.0.1", "http://m.u.cl": "10.0.0.2", "http://v.cl": "10.0.0.1"} {
		f.site(site, func(s *linkgraph.Site) {
			s.ConnectMs, s.ResponseMs, s.EstimatesAt, s.IP = 20, 0.001, testNow.Add(-time.Hour), ip
			s.RobotsStatus, s.RobotsFetched = 404, testNow.Add(-time.Hour)
		})
	}
	f.mustRun()
	_, entries := readBatch(t, f.col, 1)
	per := map[string]int{}
	for _, e := range entries {
		per[hostOf(e.Site)]++
	}
	// Each URL takes about 1 s (the wait): 10 fit in 10 s, shared by
	// the unit's two names.
	if got := per["www.u.cl"] + per["u.cl"]; got != 10 {
		t.Errorf("www.u.cl and u.cl, one unit: %d URLs in the batch (%v), want 10", got, per)
	}
	if per["m.u.cl"] != 10 || per["v.cl"] != 10 {
		t.Errorf("m.u.cl (other address) %d, v.cl (other domain) %d URLs, want 10 each", per["m.u.cl"], per["v.cl"])
	}
}

// A unit's longest Crawl-delay paces all its names in the harvester, so
// the budget costs every URL of the unit at it: u.cl, without a
// Crawl-delay of its own, shares www.u.cl's 2 s.
func TestBudgetUnitCrawlDelay(t *testing.T) {
	f := newFixture(t)
	f.cfg.Harvester.Wait = config.Duration(time.Second)
	f.cfg.Manager.BatchDuration = config.Duration(10 * time.Second)
	var pages []page
	for _, site := range []string{"http://u.cl", "http://www.u.cl"} { // u.cl's first, in id order
		for i := range 20 {
			pages = append(pages, page{url: fmt.Sprintf("%s/p%02d", site, i)})
		}
	}
	f.add(pages...)
	for site, body := range map[string]string{"http://www.u.cl": "User-agent: *\nCrawl-delay: 2\n", "http://u.cl": ""} {
		f.site(site, func(s *linkgraph.Site) {
			s.ConnectMs, s.ResponseMs, s.EstimatesAt, s.IP = 20, 0.001, testNow.Add(-time.Hour), "10.0.0.1"
			s.RobotsStatus, s.RobotsFetched, s.RobotsBody = 200, testNow.Add(-time.Hour), body
		})
	}
	if ex := f.explain("http://u.cl/p19"); !strings.Contains(ex.Verdict, "Crawl-delay 2 s (another site of its server's)") {
		t.Errorf("explain u.cl/p19: %q, want the unit's Crawl-delay named", ex.Verdict)
	}
	f.mustRun()
	_, entries := readBatch(t, f.col, 1)
	if len(entries) != 5 {
		t.Errorf("%d URLs of the unit in the batch, want 5 (2 s each in 10 s; 10 at u.cl's own 1 s)", len(entries))
	}
}

// The batch's servers.jsonl gives the harvester every Crawl-delay that
// graph.db stores for a site of the batch's registrable domains whose
// address it knows, from a site outside the batch too, with that
// address: the harvester, not the manager, joins names to units. A site
// whose address is not known gives no line, and no host's line guesses
// a Crawl-delay from another site (no unitCrawlDelay).
func TestUnitCrawlDelay(t *testing.T) {
	f := newFixture(t)
	f.add(
		page{url: "http://www.u.cl/", state: linkgraph.StateExcluded},  // no candidates: not in the batch
		page{url: "http://slow.u.cl/", state: linkgraph.StateExcluded}, // not resolved yet, not in the batch
		page{url: "http://far.w.cl/", state: linkgraph.StateExcluded},  // another domain, not in the batch
		page{url: "http://docs.u.cl/"},
		page{url: "http://m.u.cl/"},
		page{url: "http://v.cl/"},
		page{url: "http://new.u.cl/"},
	)
	robots := func(ip, body string) func(*linkgraph.Site) {
		return func(s *linkgraph.Site) {
			s.IP, s.RobotsStatus, s.RobotsFetched, s.RobotsBody = ip, 200, testNow.Add(-time.Hour), body
		}
	}
	f.site("http://www.u.cl", robots("10.0.0.1", "User-agent: *\nCrawl-delay: 5\n"))
	f.site("http://slow.u.cl", robots("", "User-agent: *\nCrawl-delay: 9\n"))
	f.site("http://far.w.cl", robots("10.0.0.1", "User-agent: *\nCrawl-delay: 7\n"))
	f.site("http://docs.u.cl", robots("10.0.0.1", "User-agent: *\nCrawl-delay: 1\n"))
	f.site("http://m.u.cl", robots("10.0.0.2", ""))
	f.site("http://v.cl", robots("10.0.0.1", ""))
	p := f.plan(1)
	type line struct {
		ip string
		cd float64
	}
	got := map[string]line{}
	for _, s := range p.servers {
		if s.UnitCrawlDelay != 0 {
			t.Errorf("%s: unitCrawlDelay %g written", s.Host, s.UnitCrawlDelay)
		}
		got[s.Host] = line{s.IP, s.CrawlDelay}
	}
	want := map[string]line{
		"www.u.cl":  {"10.0.0.1", 5}, // outside the batch, of a batch domain, address known
		"docs.u.cl": {"10.0.0.1", 1}, // its own
	}
	for host, l := range want {
		if got[host] != l {
			t.Errorf("%s: %+v, want %+v (servers %+v)", host, got[host], l, p.servers)
		}
	}
	for _, host := range []string{"slow.u.cl", "far.w.cl", "m.u.cl", "v.cl", "new.u.cl"} {
		if l, ok := got[host]; ok && l.cd != 0 {
			t.Errorf("%s: Crawl-delay %g given, want none (servers %+v)", host, l.cd, p.servers)
		}
	}
}

// A shared server's address has a time of its own: at most
// batch_duration / address_wait requests of all its sites in one batch
// (and their time over connections_per_ip), the best first; a site on
// another address is not held back by it. explain says why.
func TestBudgetAddresses(t *testing.T) {
	tests := []struct {
		name      string
		addrWait  time.Duration
		perIP     int
		wantOnIP  int    // URLs of the three sites on 10.0.0.1
		wantWhy   string // explain of a page left out
		wantOther int    // URLs of w.cl, alone on 10.0.0.2
	}{
		{"floor 1 s: 10 requests in 10 s", time.Second, 0, 10, "its address 10.0.0.1 already has 10 URLs in this batch, which its floor (address_wait 1s", 10},
		{"floor 2 s: 5 requests", 2 * time.Second, 0, 5, "address_wait 2s", 5},
		{"no floor, 2 connections: 20 URLs of 1 s over 2 connections", 0, 2, 20, "taking 10 s of batch_duration 10s on its connections_per_ip 2 connections", 10},
		{"neither: each site its own 10", 0, 0, 30, "its server", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Harvester.Wait = config.Duration(time.Second)
			f.cfg.Harvester.AddressWait = config.Duration(tt.addrWait)
			f.cfg.Harvester.ConnectionsPerIP = tt.perIP
			f.cfg.Manager.BatchDuration = config.Duration(10 * time.Second)
			var pages []page
			sites := map[string]string{"http://a.cl": "10.0.0.1", "http://b.cl": "10.0.0.1", "http://c.cl": "10.0.0.1", "http://w.cl": "10.0.0.2"}
			for _, site := range []string{"http://a.cl", "http://b.cl", "http://c.cl", "http://w.cl"} {
				for i := range 20 {
					pages = append(pages, page{url: fmt.Sprintf("%s/p%02d", site, i)})
				}
			}
			f.add(pages...)
			for site, ip := range sites {
				f.site(site, func(s *linkgraph.Site) {
					s.ConnectMs, s.ResponseMs, s.EstimatesAt, s.IP = 20, 0.001, testNow.Add(-time.Hour), ip
					s.RobotsStatus, s.RobotsFetched = 404, testNow.Add(-time.Hour)
				})
			}
			if ex := f.explain("http://c.cl/p19"); !strings.Contains(ex.Verdict, tt.wantWhy) {
				t.Errorf("explain c.cl/p19: %q, want it to say %q", ex.Verdict, tt.wantWhy)
			}
			f.mustRun()
			_, entries := readBatch(t, f.col, 1)
			per := map[string]int{}
			for _, e := range entries {
				per[hostOf(e.Site)]++
			}
			if got := per["a.cl"] + per["b.cl"] + per["c.cl"]; got != tt.wantOnIP {
				t.Errorf("sites on 10.0.0.1: %d URLs in the batch (%v), want %d", got, per, tt.wantOnIP)
			}
			if per["w.cl"] != tt.wantOther {
				t.Errorf("w.cl, alone on its address: %d URLs, want %d", per["w.cl"], tt.wantOther)
			}
		})
	}
}

// TestFillToMakespan: a batch lasts as long as its busiest server; the
// others are filled with the URLs batch_duration held back, up to that
// time and no further, and never past the harvester's deadline.
func TestFillToMakespan(t *testing.T) {
	tests := []struct {
		name     string
		slow     bool          // a server of 6 s responses on an address of its own: two URLs end at 13 s
		deadline time.Duration // harvester.batch_deadline (0: twice batch_duration)
		want     int           // URLs of a.cl, on an address with a floor of 1 s
		filled   int
	}{
		{"no slow server: 10 s, nothing to fill", false, 0, 10, 0},
		{"a slow server holds the batch 13 s: filled to 13", true, 0, 13, 3 + 3},
		{"the deadline caps the fill", true, 12 * time.Second, 12, 2 + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Harvester.Wait = config.Duration(time.Second)
			f.cfg.Harvester.AddressWait = config.Duration(time.Second)
			f.cfg.Harvester.BatchDeadline = config.Duration(tt.deadline)
			f.cfg.Manager.BatchDuration = config.Duration(10 * time.Second)
			sites := map[string]string{"http://a.cl": "10.0.0.1", "http://w.cl": "10.0.0.2"}
			if tt.slow {
				sites["http://s.cl"] = "10.0.0.3"
			}
			var pages []page
			for site := range sites {
				for i := range 20 {
					pages = append(pages, page{url: fmt.Sprintf("%s/p%02d", site, i)})
				}
			}
			f.add(pages...)
			for site, ip := range sites {
				f.site(site, func(s *linkgraph.Site) {
					s.ConnectMs, s.ResponseMs, s.EstimatesAt, s.IP = 20, 0.001, testNow.Add(-time.Hour), ip
					if site == "http://s.cl" {
						s.ResponseMs = 6000
					}
					s.RobotsStatus, s.RobotsFetched = 404, testNow.Add(-time.Hour)
				})
			}
			res := f.mustRun()
			if res.Stats.Filled != tt.filled {
				t.Errorf("filled %d URLs, want %d", res.Stats.Filled, tt.filled)
			}
			_, entries := readBatch(t, f.col, 1)
			per := map[string]int{}
			for i, e := range entries {
				per[hostOf(e.Site)]++
				if i > 0 && e.Score > entries[i-1].Score {
					t.Errorf("entry %d (%s, score %g) after a lower score %g: the filled batch is not in batch order", i, e.URL, e.Score, entries[i-1].Score)
				}
			}
			if per["a.cl"] != tt.want || per["w.cl"] != tt.want {
				t.Errorf("a.cl %d URLs, w.cl %d, want %d each (%v)", per["a.cl"], per["w.cl"], tt.want, per)
			}
			if tt.slow && per["s.cl"] != 2 {
				t.Errorf("s.cl: %d URLs, want 2 (6 s responses, 1 s wait: 0–7 s and 7–13 s)", per["s.cl"])
			}
		})
	}
}
