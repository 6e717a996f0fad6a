package testweb

import (
	"context"
	"math"
	"net"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHeterogeneousValidation(t *testing.T) {
	h := func(c Config) Config { c.Heterogeneous = true; return c }
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for success
	}{
		{"defaults", h(Config{}), ""},
		{"fields without Heterogeneous", Config{SlowFraction: 0.1}, "need Heterogeneous"},
		{"big sites without Heterogeneous", Config{BigSites: 3}, "need Heterogeneous"},
		{"fraction above 1", h(Config{SlowFraction: 1.5}), "SlowFraction must be at most 1"},
		{"NaN fraction", h(Config{CrawlDelayFraction: math.NaN()}), "CrawlDelayFraction must be at most 1"},
		{"alias fraction above 1", h(Config{AliasFraction: 2}), "AliasFraction"},
		{"negative fractions mean none", h(Config{SlowFraction: -1, CrawlDelayFraction: -1, AliasFraction: -1, BigSites: -1}), ""},
		{"slow min above max", h(Config{SlowMin: 2 * time.Second, SlowMax: time.Second}), "SlowMin (2s) must not exceed SlowMax (1s)"},
		{"slow min alone raises max", h(Config{SlowMin: 3 * time.Second}), ""},
		{"negative slow", h(Config{SlowMin: -time.Second}), "must not be negative"},
		{"median not below slow", h(Config{ResponseMedian: 300 * time.Millisecond}), "ResponseMedian (300ms) must be below SlowMin"},
		{"fractional crawl-delay", h(Config{CrawlDelayMin: 1500 * time.Millisecond}), "CrawlDelayMin must be a whole number of seconds"},
		{"negative crawl-delay", h(Config{CrawlDelayMax: -time.Second}), "CrawlDelayMax must be a whole number of seconds"},
		{"crawl-delay min above max", h(Config{CrawlDelayMin: 4 * time.Second, CrawlDelayMax: 3 * time.Second}), "CrawlDelayMin (4s) must not exceed CrawlDelayMax (3s)"},
		{"one-second delays", h(Config{CrawlDelayMin: time.Second, CrawlDelayMax: time.Second}), ""},
		{"more big sites than hosts", h(Config{Hosts: 3, BigSites: 10}), ""},
		{"crawl-delay cap", h(Config{CrawlDelayMaxPages: 10}), ""},
		{"crawl-delay cap without Heterogeneous", Config{CrawlDelayMaxPages: 10}, "need Heterogeneous"},
		{"negative crawl-delay cap", h(Config{CrawlDelayMaxPages: -1}), "CrawlDelayMaxPages must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// heteroSnapshot is everything the heterogeneous web draws.
type heteroSnapshot struct {
	times   map[string]time.Duration
	delays  map[string]string
	robots  map[string]string
	aliases map[string]string
	big     []string
	pages   int
}

func snapshot(w *Web) heteroSnapshot {
	s := heteroSnapshot{times: map[string]time.Duration{}, delays: map[string]string{}, robots: map[string]string{},
		aliases: w.Aliases(), big: w.BigSites(), pages: w.PageCount()}
	for _, h := range append(w.HostNames(), w.OutOfScopeHostNames()...) {
		s.times[h] = w.ResponseTime(h)
		s.delays[h] = w.CrawlDelay(h)
		_, body, _ := w.RobotsTxt(h)
		s.robots[h] = body
	}
	return s
}

func TestHeterogeneousDeterministic(t *testing.T) {
	cfg := Config{Seed: 11, Hosts: 300, MaxPages: 500, Heterogeneous: true}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := snapshot(a), snapshot(b)
	if !reflect.DeepEqual(sa, sb) {
		t.Fatal("the same Config gave two different heterogeneous webs")
	}
	if len(sa.aliases) == 0 || len(sa.big) == 0 {
		t.Fatalf("no aliases (%d) or big sites (%d)", len(sa.aliases), len(sa.big))
	}
	cfg.Seed = 12
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(sa.times, snapshot(c).times) {
		t.Error("different seeds gave the same response times")
	}

	// Off, nothing of it is there.
	off, err := New(Config{Seed: 11, Hosts: 300, MaxPages: 500})
	if err != nil {
		t.Fatal(err)
	}
	so := snapshot(off)
	for h, d := range so.times {
		if d != 0 {
			t.Fatalf("%s: response time %v without Heterogeneous", h, d)
		}
	}
	if len(so.aliases) != 0 || len(so.big) != 0 {
		t.Fatalf("aliases %v, big sites %v without Heterogeneous", so.aliases, so.big)
	}
}

func TestHeterogeneousShape(t *testing.T) {
	const hosts, maxPages = 6000, 8000
	w, err := New(Config{Seed: 2, Hosts: hosts, MaxPages: maxPages, Heterogeneous: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := w.cfg

	// Response times: 2% slow, the others around the median.
	var fast []time.Duration
	slow := 0
	for si := 0; si < w.nIn; si++ {
		d := w.ResponseTime(w.sites[si].name)
		switch {
		case d >= cfg.SlowMin:
			if d > cfg.SlowMax {
				t.Fatalf("%s: %v above SlowMax", w.sites[si].name, d)
			}
			slow++
		case d > fastCapFactor*cfg.ResponseMedian:
			t.Fatalf("%s: ordinary server takes %v, above the cap", w.sites[si].name, d)
		default:
			fast = append(fast, d)
		}
	}
	if want := int(math.Round(DefaultSlowFraction * hosts)); slow != want {
		t.Errorf("%d slow hosts, want %d", slow, want)
	}
	sort.Slice(fast, func(a, b int) bool { return fast[a] < fast[b] })
	med, p99 := fast[len(fast)/2], fast[len(fast)*99/100]
	t.Logf("ordinary servers: median %v, 99th percentile %v, max %v", med, p99, fast[len(fast)-1])
	if med < time.Millisecond || med > 3*time.Millisecond || p99 > 20*time.Millisecond {
		t.Errorf("ordinary servers: median %v, 99th percentile %v", med, p99)
	}
	for _, h := range w.OutOfScopeHostNames() {
		if d := w.ResponseTime(h); d <= 0 || d >= cfg.SlowMin {
			t.Errorf("out-of-scope %s: response time %v", h, d)
		}
	}

	// Crawl-delay: 3% of the sites, in every size third, in every group;
	// one of the biggest sites (the first stratum) has one.
	delayed, biggest, firstRank := 0, 0, -1
	var thirds [3]int
	for rank, si := range w.bySize {
		s := &w.sites[si]
		if s.crawlDelay == 0 {
			continue
		}
		if delayed == 0 {
			biggest, firstRank = s.pages, rank
		}
		delayed++
		thirds[rank*3/len(w.bySize)]++
		if s.crawlDelay < 2 || s.crawlDelay > 5 {
			t.Fatalf("%s: Crawl-delay %d", s.name, s.crawlDelay)
		}
		if got := w.CrawlDelay(s.name); got != strconv.Itoa(s.crawlDelay) {
			t.Fatalf("%s: CrawlDelay %q, want %d", s.name, got, s.crawlDelay)
		}
		status, body, _ := w.RobotsTxt(s.name)
		lower := strings.ToLower(body)
		if status != 200 || strings.Count(lower, "crawl-delay: "+strconv.Itoa(s.crawlDelay)) != len(s.rules.groups) {
			t.Fatalf("%s: robots.txt (%d) does not give every group the delay:\n%s", s.name, status, body)
		}
	}
	if want := int(math.Round(DefaultCrawlDelayFraction * hosts)); delayed != want {
		t.Errorf("%d sites with Crawl-delay, want %d", delayed, want)
	}
	if thirds[0] == 0 || thirds[1] == 0 || thirds[2] == 0 {
		t.Errorf("Crawl-delay by size third (big, medium, small): %v", thirds)
	}
	t.Logf("Crawl-delay by size third %v; biggest delayed site %d pages, rank %d", thirds, biggest, firstRank)
	if stratum := (hosts + delayed - 1) / delayed; firstRank < 0 || firstRank >= stratum {
		t.Errorf("no Crawl-delay among the %d biggest sites (first at rank %d)", stratum, firstRank)
	}
	// The biggest stratum holds some of the biggest sites.
	if top := w.sites[w.bySize[0]].pages; top != maxPages {
		t.Errorf("largest site %d pages, want %d", top, maxPages)
	}

	// Big sites.
	big := w.BigSites()
	if len(big) != DefaultBigSites {
		t.Fatalf("%d big sites, want %d", len(big), DefaultBigSites)
	}
	for k, name := range big {
		s := &w.sites[w.byName[name]]
		if s.pages < maxPages/4 || s.pages > maxPages || k == 0 && s.pages != maxPages {
			t.Errorf("big site %d %s: %d pages", k, name, s.pages)
		}
	}

	// Aliases: about a third of the eligible www sites.
	eligible := 0
	for si := 0; si < w.nIn; si++ {
		s := &w.sites[si]
		if bare, ok := strings.CutPrefix(s.name, "www."); ok && s.robots != robotsError {
			if _, taken := w.byName[bare]; !taken {
				eligible++
			}
		}
	}
	al := w.Aliases()
	if f := float64(len(al)) / float64(eligible); f < 0.28 || f > 0.39 {
		t.Errorf("%d aliases of %d eligible sites (%.2f)", len(al), eligible, f)
	}
	for bare, name := range al {
		if "www."+bare != name {
			t.Fatalf("alias %s of %s", bare, name)
		}
	}
}

func TestHeterogeneousPagesScaling(t *testing.T) {
	const target = 60000
	w, err := New(Config{Seed: 4, Hosts: 2000, Pages: target, MaxPages: 6000, Heterogeneous: true})
	if err != nil {
		t.Fatal(err)
	}
	n, bigPages := 0, 0
	for si := 0; si < w.nIn; si++ {
		n += w.sites[si].pages
		if w.sites[si].big {
			bigPages += w.sites[si].pages
		}
	}
	t.Logf("%d in-scope pages for a target of %d, %d of them on the big sites", n, target, bigPages)
	if n < target*97/100 || n > target*103/100 {
		t.Errorf("%d in-scope pages, want about %d", n, target)
	}
	if bigPages < 5*6000/4 {
		t.Errorf("big sites hold %d pages", bigPages)
	}
}

func TestHeterogeneousAliasesServed(t *testing.T) {
	w := startWeb(t, Config{Seed: 5, Hosts: 80, MaxPages: 100, Addresses: 8, Heterogeneous: true})
	c := newClient(t, w)
	al := w.Aliases()
	if len(al) == 0 {
		t.Fatal("no aliases")
	}
	res := resolverFor(w, "udp")
	port := ":" + strconv.Itoa(w.Port())
	hosts := map[string]bool{}
	for _, h := range w.HostNames() {
		hosts[h] = true
	}
	for bare, name := range al {
		if !hosts[bare] || !hosts[name] {
			t.Fatalf("HostNames lacks %s or %s", bare, name)
		}
		ab, err := res.LookupIP(context.Background(), "ip4", bare)
		if err != nil {
			t.Fatalf("resolving %s: %v", bare, err)
		}
		an, err := res.LookupIP(context.Background(), "ip4", name)
		if err != nil {
			t.Fatalf("resolving %s: %v", name, err)
		}
		if len(ab) != 1 || len(an) != 1 || !ab[0].Equal(an[0]) || !ab[0].Equal(w.AddressOf(bare)) {
			t.Fatalf("%s resolves to %v, its site %s to %v", bare, ab, name, an)
		}
		if w.ResponseTime(bare) != w.ResponseTime(name) || w.CrawlDelay(bare) != w.CrawlDelay(name) {
			t.Fatalf("%s: response time or Crawl-delay differs from its site's", bare)
		}
		for _, path := range []string{"/", "/robots.txt", "/news/2020/item-7.html", "/index.php?page=3"} {
			r := fetch(t, c, "http://"+bare+port+path)
			if want := "http://" + name + port + path; r.status != 301 || r.header.Get("Location") != want {
				t.Fatalf("%s%s: %d Location %q, want 301 %s", bare, path, r.status, r.header.Get("Location"), want)
			}
			info, ok := w.Page("http://" + bare + port + path)
			if info.Status != 301 || info.Location != "http://"+name+port+path || ok != (path == "/") {
				t.Fatalf("Page(%s%s): %+v, %v", bare, path, info, ok)
			}
		}
		if status, _, _ := w.RobotsTxt(bare); status != 301 {
			t.Fatalf("RobotsTxt(%s): %d", bare, status)
		}
	}

	// Every alias home page is linked from some page, is a page of the
	// model, and is reachable; its site's pages are reachable as before.
	linked := map[string]int{}
	err := w.ForEachPage(func(info PageInfo) error {
		for _, l := range info.Links {
			if _, ok := al[hostOf(t, l)]; ok {
				linked[l]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]bool{}
	for _, u := range w.URLs() {
		urls[u] = true
	}
	if len(urls) != w.PageCount() {
		t.Errorf("URLs gives %d, PageCount %d", len(urls), w.PageCount())
	}
	reach := map[string]bool{}
	for _, u := range w.Reachable(w.SeedURLs(1), "wirebot") {
		if !urls[u] {
			t.Fatalf("Reachable gave %s, not in URLs", u)
		}
		reach[u] = true
	}
	for bare := range al {
		u := "http://" + bare + port + "/"
		if linked[u] == 0 || !urls[u] || !reach[u] {
			t.Errorf("%s: linked %d times, in URLs %v, reachable %v", u, linked[u], urls[u], reach[u])
		}
	}
	t.Logf("%d aliases, %d links to their home pages", len(al), sumValues(linked))
	if sumValues(linked) <= len(al) {
		t.Error("no ordinary cross-host link uses a bare name")
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestHeterogeneousSlowHost(t *testing.T) {
	w := startWeb(t, Config{Seed: 8, Hosts: 20, MaxPages: 30, Heterogeneous: true,
		SlowFraction: 0.2, SlowMin: 150 * time.Millisecond, SlowMax: 250 * time.Millisecond})
	var slowHost, fastHost string
	for _, h := range w.HostNames() {
		switch d := w.ResponseTime(h); {
		case d >= 150*time.Millisecond && slowHost == "":
			slowHost = h
		case d > 0 && d < 150*time.Millisecond && fastHost == "":
			fastHost = h
		}
	}
	if slowHost == "" || fastHost == "" {
		t.Fatalf("slow host %q, fast host %q", slowHost, fastHost)
	}
	c := newClient(t, w)
	port := ":" + strconv.Itoa(w.Port())
	for _, h := range []string{slowHost, fastHost} {
		fetch(t, c, "http://"+h+port+"/robots.txt") // connection set up
		start := time.Now()
		r := fetch(t, c, "http://"+h+port+"/")
		took := time.Since(start)
		if r.status != 200 || took < w.ResponseTime(h) {
			t.Errorf("%s: status %d in %v, response time %v", h, r.status, took, w.ResponseTime(h))
		}
		t.Logf("%s: %v (response time %v)", h, took, w.ResponseTime(h))
	}

	// A client that hangs up ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+slowHost+port+"/?hangup", nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DialContext: (&net.Dialer{Resolver: resolverFor(w, "udp")}).DialContext}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("request outlived its context")
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, r := range w.Requests() {
			if r.Path == "/?hangup" {
				if d := r.End.Sub(r.Start); d >= w.ResponseTime(slowHost) {
					t.Fatalf("the handler waited %v after the client left", d)
				}
				return
			}
		}
	}
	t.Fatal("the abandoned request was never recorded")
}
