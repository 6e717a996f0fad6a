package testweb

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jimsmart/grobotstxt"
	"github.com/miekg/dns"
)

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{}, ""},
		{"other loopback", Config{HTTPAddr: "127.0.0.2:0", DNSAddr: "127.1.2.3:0"}, ""},
		{"wildcard http", Config{HTTPAddr: ":0"}, "loopback"},
		{"all interfaces", Config{HTTPAddr: "0.0.0.0:8080"}, "loopback"},
		{"private ip", Config{HTTPAddr: "10.0.0.1:80"}, "loopback"},
		{"host name", Config{HTTPAddr: "localhost:0"}, "loopback"},
		{"ipv6 loopback", Config{DNSAddr: "[::1]:0"}, "loopback"},
		{"public dns", Config{DNSAddr: "8.8.8.8:53"}, "loopback"},
		{"no port", Config{HTTPAddr: "127.0.0.1"}, "listen address"},
		{"bad port", Config{DNSAddr: "127.0.0.1:http"}, "port"},
		{"negative hosts", Config{Hosts: -1}, "Hosts"},
		{"negative pages", Config{MaxPages: -3}, "MaxPages"},
		{"negative latency", Config{Latency: -time.Second}, "Latency"},
		{"bad suffix", Config{Suffix: "c_l"}, "suffix"},
		{"multi-label suffix", Config{Suffix: "com.ar", Hosts: 10}, ""},
		{"no out of scope", Config{OutOfScope: -1, Hosts: 5}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if w.HTTPAddr() != "" || w.Port() != 0 {
					t.Errorf("address before Start: %q %d", w.HTTPAddr(), w.Port())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

func TestDefaultsAndNames(t *testing.T) {
	w, err := New(Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	hosts := w.HostNames()
	if len(hosts) != DefaultHosts {
		t.Fatalf("got %d hosts, want %d", len(hosts), DefaultHosts)
	}
	oos := w.OutOfScopeHostNames()
	if len(oos) != DefaultOutOfScope {
		t.Fatalf("got %d out-of-scope hosts, want %d", len(oos), DefaultOutOfScope)
	}
	seen := map[string]bool{}
	patterns := map[string]int{}
	regs := map[string]int{}
	for _, h := range hosts {
		if seen[h] {
			t.Errorf("duplicate host %s", h)
		}
		seen[h] = true
		if !strings.HasSuffix(h, ".cl") {
			t.Errorf("in-scope host %s not under .cl", h)
		}
		labels := strings.Split(h, ".")
		switch {
		case strings.HasSuffix(h, ".gob.cl"):
			patterns["gob"]++
		case labels[0] == "www":
			patterns["www"]++
		case len(labels) == 2:
			patterns["bare"]++
		default:
			patterns["sub"]++
		}
		regs[strings.Join(labels[len(labels)-2:], ".")]++
	}
	for _, p := range []string{"gob", "www", "bare", "sub"} {
		if patterns[p] == 0 {
			t.Errorf("no host of pattern %s: %v", p, patterns)
		}
	}
	shared := 0
	for _, n := range regs {
		if n > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no two hosts share a registrable domain")
	}
	for _, h := range oos {
		if seen[h] || strings.HasSuffix(h, ".cl") {
			t.Errorf("bad out-of-scope host %s", h)
		}
	}
	t.Logf("patterns %v; sample %v; out of scope %v", patterns, hosts[:8], oos)

	other, err := New(Config{Seed: 7, Suffix: "com.ar", Hosts: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range other.HostNames() {
		if !strings.HasSuffix(h, ".com.ar") {
			t.Errorf("host %s not under .com.ar", h)
		}
	}
	for _, h := range other.OutOfScopeHostNames() {
		if strings.HasSuffix(h, ".com.ar") || strings.HasSuffix(h, ".ar") && !strings.HasSuffix(h, ".com.ar") {
			t.Errorf("out-of-scope host %s is in scope", h)
		}
	}
}

func TestDeterminism(t *testing.T) {
	cfg := Config{Seed: 42, Hosts: 40, MaxPages: 120}
	a := startWeb(t, cfg)
	b := startWeb(t, cfg)
	ca, cb := newClient(t, a), newClient(t, b)

	if !reflect.DeepEqual(a.HostNames(), b.HostNames()) {
		t.Fatal("same seed gave different host names")
	}
	ua, ub := a.URLs(), b.URLs()
	if len(ua) != len(ub) {
		t.Fatalf("URL counts differ: %d vs %d", len(ua), len(ub))
	}
	for k := range ua {
		if samePort(a, ua[k]) != samePort(b, ub[k]) {
			t.Fatalf("URL %d differs: %s vs %s", k, ua[k], ub[k])
		}
	}
	// Every URL of the model plus robots.txt files and some 404s.
	var paths []string
	for _, u := range ua {
		pu, _ := url.Parse(u)
		paths = append(paths, pu.Host[:strings.LastIndex(pu.Host, ":")]+pu.RequestURI())
	}
	for _, h := range a.HostNames()[:10] {
		paths = append(paths, h+"/robots.txt", h+"/no/such/page.html")
	}
	port := func(w *Web) string { return ":" + strings.Split(w.HTTPAddr(), ":")[1] }
	for _, p := range paths {
		host, uri, _ := strings.Cut(p, "/")
		ra := fetch(t, ca, "http://"+host+port(a)+"/"+uri)
		rb := fetch(t, cb, "http://"+host+port(b)+"/"+uri)
		if ra.status != rb.status || samePort(a, string(ra.body)) != samePort(b, string(rb.body)) ||
			ra.header.Get("Content-Type") != rb.header.Get("Content-Type") ||
			samePort(a, ra.header.Get("Location")) != samePort(b, rb.header.Get("Location")) {
			t.Fatalf("%s: responses differ (%d vs %d)", p, ra.status, rb.status)
		}
		if ra.header.Get("Date") != "" {
			t.Fatalf("%s: Date header sent", p)
		}
	}
	// The same web renders identical bytes twice.
	for _, u := range ua[:50] {
		r1, r2 := fetch(t, ca, u), fetch(t, ca, u)
		if !bytes.Equal(r1.body, r2.body) {
			t.Fatalf("%s: two fetches differ", u)
		}
	}

	c, err := New(Config{Seed: 43, Hosts: 40, MaxPages: 120})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.HostNames(), c.HostNames()) {
		t.Error("different seeds gave the same host names")
	}
}

func TestPageTruthMatchesServedHTML(t *testing.T) {
	w := startWeb(t, Config{Seed: 3, Hosts: 60, MaxPages: 150, OutOfScope: 4})
	c := newClient(t, w)
	counts := map[string]int{}
	for _, u := range w.URLs() {
		info, ok := w.Page(u)
		if !ok {
			t.Fatalf("Page(%s) not in model", u)
		}
		if info.URL != u {
			t.Fatalf("Page(%s).URL = %s", u, info.URL)
		}
		r := fetch(t, c, u)
		if r.status != info.Status {
			t.Fatalf("%s: status %d, truth %d", u, r.status, info.Status)
		}
		if ct := r.header.Get("Content-Type"); ct != info.MIME {
			t.Fatalf("%s: Content-Type %q, truth %q", u, ct, info.MIME)
		}
		if r.status/100 == 3 {
			counts["redirect"]++
			loc := r.header.Get("Location")
			if !strings.HasPrefix(loc, "http://") {
				counts["relative location"]++
			}
			base, _ := url.Parse(u)
			abs, err := base.Parse(loc)
			if err != nil || abs.String() != info.Location {
				t.Fatalf("%s: Location %q resolves to %v, truth %q", u, loc, abs, info.Location)
			}
			if hostOf(t, info.Location) != hostOf(t, u) {
				counts["cross-host redirect"]++
			}
			target, ok := w.Page(info.Location)
			if !ok || target.Status != 200 {
				t.Errorf("%s redirects to %s which is not a 200 page", u, info.Location)
			}
			continue
		}
		if !strings.HasPrefix(info.MIME, "text/html") {
			counts[info.MIME]++
			if len(info.Links) != 0 || len(r.body) == 0 {
				t.Errorf("%s: non-HTML with links or empty body", u)
			}
			continue
		}
		if strings.Contains(info.MIME, "iso-8859-1") || strings.Contains(string(r.body), "charset=iso-8859-1") {
			counts["latin1"]++
			if r.status == 200 && utf8.Valid(r.body) {
				t.Errorf("%s: Latin-1 page is valid UTF-8 (not transcoded?)", u)
			}
		}
		ex, err := extract(r.body, r.header.Get("Content-Type"), u)
		if err != nil {
			t.Fatalf("%s: tokenizing: %v", u, err)
		}
		if ex.title != info.Title {
			t.Errorf("%s: title %q, truth %q", u, ex.title, info.Title)
		}
		if !utf8.ValidString(ex.title) || strings.ContainsRune(ex.title, utf8.RuneError) {
			t.Errorf("%s: badly decoded title %q", u, ex.title)
		}
		if !reflect.DeepEqual(ex.links, nonNil(info.Links)) && !(len(ex.links) == 0 && len(info.Links) == 0) {
			t.Fatalf("%s: links differ\nserved: %q\ntruth:  %q", u, ex.links, info.Links)
		}
		if !reflect.DeepEqual(ex.anchors, nonNil(info.Anchors)) && !(len(ex.anchors) == 0 && len(info.Anchors) == 0) {
			t.Fatalf("%s: anchors differ\nserved: %q\ntruth:  %q", u, ex.anchors, info.Anchors)
		}
		body := string(r.body)
		if strings.Contains(body, "<base ") {
			counts["base"]++
		}
		if strings.Contains(body, "<area ") {
			counts["area"]++
		}
		if strings.Contains(body, "<frame ") {
			counts["frameset"]++
		}
		if strings.Contains(body, "<iframe ") {
			counts["iframe"]++
		}
		if strings.Contains(body, "<script") {
			counts["script"]++
		}
		counts[info.MIME]++
	}
	t.Logf("checked %d URLs: %v", len(w.URLs()), counts)
	for _, k := range []string{"redirect", "relative location", "application/pdf", "image/png", "latin1",
		"base", "area", "frameset", "iframe", "script", "text/html", "text/html; charset=utf-8"} {
		if counts[k] == 0 {
			t.Errorf("no %s in the web", k)
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestUnknownHostsPathsAndMethods(t *testing.T) {
	w := startWeb(t, Config{Seed: 1, Hosts: 10})
	c := newClient(t, w)
	home := w.SeedURLs(1)[0]

	if r := fetch(t, c, home+"no/such/page.html"); r.status != 404 {
		t.Errorf("unknown path: status %d", r.status)
	}
	info, ok := w.Page(home + "no/such/page.html")
	if ok || info.Status != 404 {
		t.Errorf("Page(unknown path) = %+v, %v", info, ok)
	}
	if _, ok := w.Page(home + "robots.txt"); ok {
		t.Error("robots.txt reported as a page")
	}
	// An unknown host on the right port.
	r := fetch(t, c, "http://"+w.HTTPAddr()+"/")
	if r.status != 421 {
		t.Errorf("unknown host: status %d", r.status)
	}
	if info, ok := w.Page("http://www.nowhere.cl/"); ok || info.Status != 421 {
		t.Errorf("Page(unknown host) = %+v, %v", info, ok)
	}
	if r := do(t, c, "POST", home, ""); r.status != 405 {
		t.Errorf("POST: status %d", r.status)
	}
	get, head := fetch(t, c, home), do(t, c, "HEAD", home, "")
	if head.status != 200 || len(head.body) != 0 || head.header.Get("Content-Length") != get.header.Get("Content-Length") {
		t.Errorf("HEAD: status %d, %d body bytes, length %q vs %q", head.status, len(head.body),
			head.header.Get("Content-Length"), get.header.Get("Content-Length"))
	}
	// Host names are case-insensitive and the fragment is ignored.
	u, _ := url.Parse(home)
	upper := "http://" + strings.ToUpper(u.Hostname()) + ":" + u.Port() + "/#x"
	if info, ok := w.Page(upper); !ok || info.URL != home {
		t.Errorf("Page(%s) = %+v, %v", upper, info.URL, ok)
	}
}

func TestRobots(t *testing.T) {
	w := startWeb(t, Config{Seed: 5, Hosts: 150, MaxPages: 100})
	c := newClient(t, w)
	byHost := map[string][]string{}
	for _, u := range w.URLs() {
		byHost[hostOf(t, u)] = append(byHost[hostOf(t, u)], u)
	}
	port := ":" + strings.Split(w.HTTPAddr(), ":")[1]
	tokens := []string{"WireBot", "BadBot", "EvilScraper", "googlebot", "DotBot", "MJ12bot"}
	counts := map[string]int{}
	for _, h := range w.HostNames() {
		r := fetch(t, c, "http://"+h+port+"/robots.txt")
		status, body, ok := w.RobotsTxt(h)
		if !ok || status != r.status || (status == 200 && body != string(r.body)) {
			t.Fatalf("%s: robots.txt served %d, RobotsTxt says %d", h, r.status, status)
		}
		counts[http3(r.status)]++
		if w.CrawlDelay(h) != "" {
			counts["crawl-delay"]++
		}
		if strings.Contains(body, "Googlebot") {
			counts["googlebot group"]++
		}
		disallowedHere := 0
		for _, u := range append(byHost[h], "http://"+h+port+"/robots.txt") {
			for _, tok := range tokens {
				got := w.Disallowed(u, tok)
				var want bool
				switch {
				case strings.HasSuffix(u, "/robots.txt"):
					// RFC 9309 2.2.2: /robots.txt is implicitly allowed
					// (Google's matcher does not special-case it).
					want = false
				case r.status == 200:
					want = !grobotstxt.AgentAllowed(body, tok, u)
				case r.status == 500:
					want = true
				}
				if got != want {
					t.Fatalf("Disallowed(%s, %s) = %v, robots.txt (%d) says %v:\n%s", u, tok, got, r.status, want, body)
				}
				if got && tok == "WireBot" {
					disallowedHere++
				}
			}
		}
		if r.status == 200 && disallowedHere == 0 {
			t.Errorf("%s: robots.txt forbids no existing URL:\n%s", h, body)
		}
		if r.status == 200 && disallowedHere > 0 {
			counts["forbids existing"]++
		}
	}
	t.Logf("robots: %v", counts)
	if counts["5xx"] < 1 || counts["5xx"] > 2 {
		t.Errorf("%d hosts with robots.txt 500, want 1 or 2", counts["5xx"])
	}
	if share := float64(counts["2xx"]) / float64(len(w.HostNames())); share < 0.2 || share > 0.4 {
		t.Errorf("share of hosts with robots.txt = %.2f, want about 0.3", share)
	}
	if counts["crawl-delay"] == 0 || counts["googlebot group"] == 0 {
		t.Errorf("missing robots variants: %v", counts)
	}
	// Full User-Agent strings are reduced to the product token.
	for _, h := range w.HostNames() {
		if st, _, _ := w.RobotsTxt(h); st == 500 {
			u := "http://" + h + port + "/"
			if !w.Disallowed(u, "WireBot/1.0 (+http://example.cl)") {
				t.Errorf("%s: 500 robots.txt must disallow everything", h)
			}
		}
	}
}

func http3(status int) string {
	return string(rune('0'+status/100)) + "xx"
}

func TestRobotsMatcher(t *testing.T) {
	f := &robotsFile{groups: []robotsGroup{
		{agents: []string{"*"}, rules: []robotsRule{{path: "/private/"}, {allow: true, path: "/private/open-"}, {path: "/a"}, {allow: true, path: "/a"}}},
		{agents: []string{"BadBot", "Other"}, rules: []robotsRule{{path: "/"}}},
		{agents: []string{"Googlebot"}, rules: []robotsRule{{path: ""}}},
	}}
	tests := []struct {
		token, path string
		allowed     bool
	}{
		{"WireBot", "/", true},
		{"WireBot", "/private/x.html", false},
		{"WireBot", "/private/open-3.html", true},
		{"WireBot", "/privatex", true},
		{"WireBot", "/abc", true}, // Allow wins the tie
		{"WireBot", "/robots.txt", true},
		{"badbot", "/", false},
		{"OTHER", "/x", false},
		{"BadBot", "/robots.txt", true},
		{"Googlebot", "/private/x.html", true}, // its own group, empty Disallow
		{"*", "/private/x", false},
	}
	for _, tc := range tests {
		if got := f.allowed(tc.token, tc.path); got != tc.allowed {
			t.Errorf("allowed(%q, %q) = %v, want %v", tc.token, tc.path, got, tc.allowed)
		}
	}
}

func TestDNS(t *testing.T) {
	w := startWeb(t, Config{Seed: 9, Hosts: 20})
	in, out := w.HostNames(), w.OutOfScopeHostNames()
	ctx := context.Background()
	for _, network := range []string{"udp", "tcp"} {
		res := resolverFor(w, network)
		for _, h := range []string{in[0], in[len(in)-1], out[0], strings.ToUpper(in[1]) + "."} {
			addrs, err := res.LookupHost(ctx, h)
			if err != nil || len(addrs) != 1 || addrs[0] != "127.0.0.1" {
				t.Errorf("%s LookupHost(%s) = %v, %v", network, h, addrs, err)
			}
		}
		_, err := res.LookupHost(ctx, "www.no-existe-jamas.cl.")
		var dnsErr *net.DNSError
		if err == nil || !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: unknown name: %v", network, err)
		}
		if ips, err := res.LookupIP(ctx, "ip6", in[0]+"."); err == nil && len(ips) > 0 {
			t.Errorf("%s: AAAA answered %v", network, ips)
		}
	}
	before := w.DNSQueries()
	for _, network := range []string{"udp", "tcp"} {
		cl := &dns.Client{Net: network, Timeout: 5 * time.Second}
		tests := []struct {
			name  string
			qtype uint16
			rcode int
			n     int
		}{
			{in[2] + ".", dns.TypeA, dns.RcodeSuccess, 1},
			{strings.ToUpper(out[0]) + ".", dns.TypeA, dns.RcodeSuccess, 1},
			{in[2] + ".", dns.TypeAAAA, dns.RcodeSuccess, 0},
			{"nada.example.cl.", dns.TypeA, dns.RcodeNameError, 0},
			{"nada.example.cl.", dns.TypeAAAA, dns.RcodeNameError, 0},
		}
		for _, tc := range tests {
			m := new(dns.Msg)
			m.SetQuestion(tc.name, tc.qtype)
			resp, _, err := cl.Exchange(m, w.DNSAddr())
			if err != nil {
				t.Fatalf("%s %s: %v", network, tc.name, err)
			}
			if resp.Rcode != tc.rcode || len(resp.Answer) != tc.n {
				t.Errorf("%s %s %s: rcode %d with %d answers, want %d with %d", network, tc.name,
					dns.TypeToString[tc.qtype], resp.Rcode, len(resp.Answer), tc.rcode, tc.n)
				continue
			}
			if tc.n == 1 {
				a, ok := resp.Answer[0].(*dns.A)
				if !ok || !a.A.Equal(net.IPv4(127, 0, 0, 1)) || a.Hdr.Ttl != 300 {
					t.Errorf("%s %s: answer %v", network, tc.name, resp.Answer[0])
				}
			}
		}
	}
	if got := w.DNSQueries() - before; got != 10 {
		t.Errorf("DNSQueries grew by %d, want 10", got)
	}
}

func TestRecordsRequestsAndConns(t *testing.T) {
	w := startWeb(t, Config{Seed: 11, Hosts: 10})
	c := newClient(t, w)
	seeds := w.SeedURLs(2)
	if len(seeds) != 2 {
		t.Fatalf("SeedURLs(2) = %v", seeds)
	}
	begin := time.Now()
	for _, u := range []string{seeds[0], seeds[0] + "robots.txt", seeds[0], seeds[1]} {
		do(t, c, "GET", u, "WireTest/1.0")
	}
	reqs := w.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests recorded, want 4", len(reqs))
	}
	h0, h1 := hostOf(t, seeds[0]), hostOf(t, seeds[1])
	wantHosts := []string{h0, h0, h0, h1}
	wantPaths := []string{"/", "/robots.txt", "/", "/"}
	for k, r := range reqs {
		if r.Host != wantHosts[k] || r.Path != wantPaths[k] || r.Method != "GET" || r.UserAgent != "WireTest/1.0" {
			t.Errorf("request %d = %+v", k, r)
		}
		if r.Start.Before(begin) || r.End.Before(r.Start) || r.ConnID == 0 || !strings.HasPrefix(r.RemoteAddr, "127.") || r.Addr != "127.0.0.1" {
			t.Errorf("request %d: bad times/conn/addr %+v", k, r)
		}
	}
	if reqs[0].ConnID != reqs[2].ConnID {
		t.Errorf("keep-alive not used: conns %d and %d", reqs[0].ConnID, reqs[2].ConnID)
	}
	if reqs[3].ConnID == reqs[0].ConnID {
		t.Error("two hosts shared one connection")
	}
	conns := w.Conns()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2: %+v", len(conns), conns)
	}
	for k, cn := range conns {
		if cn.ID != uint64(k+1) || cn.Opened.IsZero() || !cn.Closed.IsZero() {
			t.Errorf("conn %d = %+v", k, cn)
		}
	}
	if conns[0].Host != h0 || conns[1].Host != h1 {
		t.Errorf("conn hosts %q %q, want %q %q", conns[0].Host, conns[1].Host, h0, h1)
	}
	c.Transport.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, cn := range w.Conns() {
		if cn.Closed.IsZero() || cn.Closed.Before(cn.Opened) {
			t.Errorf("conn %d not closed after Close: %+v", cn.ID, cn)
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Start(); err == nil {
		t.Error("Start after Close succeeded")
	}
}

func TestConcurrentFetchAndLatency(t *testing.T) {
	w := startWeb(t, Config{Seed: 13, Hosts: 30, Latency: 20 * time.Millisecond})
	c := newClient(t, w)
	urls := w.URLs()
	if len(urls) > 200 {
		urls = urls[:200]
	}
	start := time.Now()
	var wg sync.WaitGroup
	jobs := make(chan string)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				r := fetch(t, c, u)
				if info, _ := w.Page(u); info.Status != r.status {
					t.Errorf("%s: status %d, truth %d", u, r.status, info.Status)
				}
				_ = w.Requests()
				_ = w.Conns()
			}
		}()
	}
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	if got := len(w.Requests()); got != len(urls) {
		t.Errorf("%d requests recorded, want %d", got, len(urls))
	}
	for _, r := range w.Requests() {
		if r.End.Sub(r.Start) < 20*time.Millisecond {
			t.Fatalf("request took %v, latency is 20ms", r.End.Sub(r.Start))
		}
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("fetching %d URLs took %v", len(urls), elapsed)
	}
}

func TestHeavyTailedSiteSizes(t *testing.T) {
	w, err := New(Config{Seed: 17, Hosts: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, 0, 1000)
	for _, s := range w.sites[:w.nIn] {
		sizes = append(sizes, s.pages)
	}
	sort.Ints(sizes)
	median, largest := sizes[len(sizes)/2], sizes[len(sizes)-1]
	big := 0
	for _, n := range sizes {
		if n >= 100 {
			big++
		}
	}
	t.Logf("median %d, largest %d, sites >= 100 pages: %d, smallest %d", median, largest, big, sizes[0])
	if largest != DefaultMaxPages {
		t.Errorf("largest site has %d pages, want MaxPages=%d", largest, DefaultMaxPages)
	}
	if median > 10 || largest < 20*median {
		t.Errorf("not heavy-tailed: median %d, largest %d", median, largest)
	}
	if big < 2 || big > 100 {
		t.Errorf("%d sites with >= 100 pages", big)
	}
	seeds := w.SeedURLs(5)
	if !strings.Contains(seeds[0], w.sites[w.bySize[0]].name) {
		t.Errorf("first seed %s is not the largest site", seeds[0])
	}
	if len(w.SeedURLs(5000)) != 1000 || len(w.SeedURLs(-1)) != 0 {
		t.Error("SeedURLs bounds")
	}
}

func TestLinkSharesAndReachability(t *testing.T) {
	w := startWeb(t, Config{Seed: 19, Hosts: 200})
	urls := w.URLs()
	inModel := make(map[string]bool, len(urls))
	for _, u := range urls {
		inModel[u] = true
	}
	inScope := map[string]bool{}
	for _, h := range w.HostNames() {
		inScope[h] = true
	}
	var internal, crossIn, outScope, broken, total int
	for _, u := range urls {
		info, _ := w.Page(u)
		h := hostOf(t, u)
		if !inScope[h] {
			continue
		}
		for _, l := range info.Links {
			total++
			lh := hostOf(t, l)
			switch {
			case lh == h:
				internal++
				if !inModel[l] {
					broken++
				}
			case inScope[lh]:
				crossIn++
			default:
				outScope++
			}
		}
	}
	share := float64(internal) / float64(total)
	t.Logf("%d URLs, %d links: internal %.3f, cross in-scope %d, out-of-scope %d, broken internal %d",
		len(urls), total, share, crossIn, outScope, broken)
	if share < 0.80 || share > 0.95 {
		t.Errorf("internal link share %.3f, want 0.80-0.95", share)
	}
	if crossIn == 0 || outScope == 0 || broken == 0 {
		t.Error("missing cross-host, out-of-scope or broken links")
	}

	// Breadth-first crawl from one seed following links and redirects
	// reaches every URL of the model.
	seen := map[string]bool{}
	queue := w.SeedURLs(1)
	seen[queue[0]] = true
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		info, ok := w.Page(u)
		if !ok {
			continue
		}
		next := info.Links
		if info.Location != "" {
			next = append([]string{info.Location}, next...)
		}
		for _, l := range next {
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	missing := 0
	for _, u := range urls {
		if !seen[u] {
			missing++
			if missing < 5 {
				t.Errorf("not reachable: %s", u)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d URLs unreachable", missing, len(urls))
	}
}

func TestRelRef(t *testing.T) {
	tests := []struct{ base, target, want string }{
		{"/", "/index.php?page=3", "index.php?page=3"},
		{"/news/2024/item-7.html", "/noticias/page-12.html", "../../noticias/page-12.html"},
		{"/news/2024/item-7.html", "/news/2024/item-9.html", "item-9.html"},
		{"/index.php", "/index.php?page=2", "?page=2"},
		{"/a/b/", "/a/b/", "./"},
		{"/a/x.html", "/a/", "./"},
		{"/a/x.html", "/", "../"},
		{"/", "/", "./"},
		{"/a/", "/a/b/c.html", "b/c.html"},
	}
	for _, tc := range tests {
		got := relRef(tc.base, tc.target)
		if got != tc.want {
			t.Errorf("relRef(%q, %q) = %q, want %q", tc.base, tc.target, got, tc.want)
		}
		b, _ := url.Parse("http://h" + tc.base)
		r, _ := b.Parse(got)
		if r.RequestURI() != tc.target {
			t.Errorf("relRef(%q, %q) = %q resolves to %q", tc.base, tc.target, got, r.RequestURI())
		}
	}
}

func TestGenerationIsFast(t *testing.T) {
	start := time.Now()
	w, err := New(Config{Seed: 23, Hosts: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := len(w.URLs())
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("1000 hosts (%d URLs) took %v", n, d)
	}
	start = time.Now()
	big, err := New(Config{Seed: 23, Hosts: 10000, MaxPages: 5000})
	if err != nil {
		t.Fatal(err)
	}
	// Render a sample of pages of the biggest site.
	si := big.bySize[0]
	for i := 0; i < 2000; i++ {
		if _, _, ok := big.respond(si, big.pathOf(&big.sites[si], i, big.sites[si].kindOf(i)), true); !ok {
			t.Fatalf("page %d of the biggest site not found", i)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("10000 hosts and 2000 pages took %v", d)
	}
	t.Logf("1000 hosts: %d URLs", n)
}

func TestTreeLinksPresent(t *testing.T) {
	w, err := New(Config{Seed: 29, Hosts: 100})
	if err != nil {
		t.Fatal(err)
	}
	for si := range w.sites {
		s := &w.sites[si]
		for i := 0; i < s.pages; i++ {
			k := s.kindOf(i)
			if k != kindHome && k != kindHTML {
				if !s.isLeaf(i) {
					t.Fatalf("%s page %d: kind %d is not a leaf", s.name, i, k)
				}
				continue
			}
			info, ok := w.Page(w.origin(si) + w.pathOf(s, i, k))
			if !ok {
				t.Fatalf("%s page %d not found", s.name, i)
			}
			links := map[string]bool{}
			for _, l := range info.Links {
				links[l] = true
			}
			for c := i*s.branch + 1; c < i*s.branch+1+s.branch && c < s.pages; c++ {
				if cu := w.origin(si) + w.pathOf(s, c, s.kindOf(c)); !links[cu] {
					t.Fatalf("%s: page %s does not link its child %s", s.name, info.URL, cu)
				}
			}
		}
	}
	if w.Disallowed("http://www.nowhere.cl/private/", "WireBot") || w.Disallowed("::bad", "WireBot") {
		t.Error("unknown host or bad URL disallowed")
	}
	for _, h := range w.OutOfScopeHostNames() {
		if w.Disallowed("http://"+h+"/private/doc-1.html", "WireBot") {
			t.Errorf("out-of-scope host %s disallows", h)
		}
	}
}

// TestAddresses: with Config.Addresses the hosts are spread over several
// loopback addresses, DNS answers each host's own, and every address
// serves the web (a request reaches its host whichever address it came
// in on, as with virtual hosts).
func TestAddresses(t *testing.T) {
	if _, err := New(Config{Addresses: -1}); err == nil {
		t.Error("Addresses -1 accepted")
	}
	if _, err := New(Config{Addresses: MaxAddresses + 1}); err == nil {
		t.Error("Addresses above MaxAddresses accepted")
	}
	w := startWeb(t, Config{Seed: 9, Hosts: 40, Addresses: 8})
	res := resolverFor(w, "udp")
	c := newClient(t, w)
	seen := map[string]int{}
	for _, h := range w.HostNames() {
		addrs, err := res.LookupHost(context.Background(), h)
		if err != nil || len(addrs) != 1 {
			t.Fatalf("LookupHost(%s) = %v, %v", h, addrs, err)
		}
		ip := net.ParseIP(addrs[0])
		if !ip.IsLoopback() || !ip.Equal(w.AddressOf(h)) {
			t.Errorf("%s resolves to %s, AddressOf says %s", h, addrs[0], w.AddressOf(h))
		}
		seen[addrs[0]]++
	}
	if len(seen) < 5 {
		t.Errorf("40 hosts on %d addresses, want most of the 8: %v", len(seen), seen)
	}
	for _, u := range w.SeedURLs(10) {
		if resp := do(t, c, "GET", u, "WireTest/1.0"); resp.status != 200 {
			t.Errorf("GET %s: %d", u, resp.status)
		}
	}
	// Each request records the address that answered: the host's.
	answered := map[string]bool{}
	for _, r := range w.Requests() {
		if want := w.AddressOf(r.Host).String(); r.Addr != want {
			t.Errorf("request %s%s answered on %q, want %s", r.Host, r.Path, r.Addr, want)
		}
		answered[r.Addr] = true
	}
	if len(answered) < 3 {
		t.Errorf("10 requests answered on %d addresses", len(answered))
	}
	for _, cn := range w.Conns() {
		if cn.Addr != w.AddressOf(cn.Host).String() {
			t.Errorf("connection %d of %s on %q", cn.ID, cn.Host, cn.Addr)
		}
	}
	single := startWeb(t, Config{Seed: 9, Hosts: 5})
	if ip := single.AddressOf(single.HostNames()[0]); !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("one address: host at %s", ip)
	}
}
