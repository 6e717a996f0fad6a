package testweb

import (
	"context"
	"math"
	"net"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// TestSubdomainValidation: the subdomain web's fields are checked, and
// need each other and several addresses.
func TestSubdomainValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"share", Config{SubdomainShare: 0.5, Addresses: 4}, true},
		{"share and domains", Config{SubdomainShare: 1, SubdomainDomains: 7, Addresses: 2}, true},
		{"other suffix", Config{SubdomainShare: 0.5, Addresses: 4, Suffix: "com.ar"}, true},
		{"negative share", Config{SubdomainShare: -0.1, Addresses: 4}, false},
		{"share above 1", Config{SubdomainShare: 1.5, Addresses: 4}, false},
		{"NaN share", Config{SubdomainShare: math.NaN(), Addresses: 4}, false},
		{"domains without share", Config{SubdomainDomains: 3, Addresses: 4}, false},
		{"negative domains", Config{SubdomainShare: 0.5, SubdomainDomains: -1, Addresses: 4}, false},
		{"one address", Config{SubdomainShare: 0.5}, false},
		// The public suffix list has "*.ck": uni1.ck is a public
		// suffix, and each of its subdomains a registrable domain.
		{"wildcard suffix", Config{SubdomainShare: 0.5, Addresses: 4, Suffix: "ck"}, false},
	} {
		_, err := New(tc.cfg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: New(%+v) error %v, want ok %v", tc.name, tc.cfg, err, tc.ok)
		}
	}
}

// withAddresses gives w the addresses Start would listen on, without
// listening, so that AddressOf answers.
func withAddresses(w *Web) *Web {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answerIP = net.IPv4(127, 0, 0, 1).To4()
	w.extraIPs = nil
	for i := 1; i < w.cfg.Addresses; i++ {
		w.extraIPs = append(w.extraIPs, extraAddress(i))
	}
	return w
}

// TestSubdomainShape: the subdomain web has the shape of the national
// webs of issue 34 (*.uchile.cl, *.hosting.cl): its sites are under a
// few registrable domains, per the public suffix list as the harvester
// groups them (urlnorm.Registrable); each domain is on several
// addresses; some address holds several sites of one domain; with
// Heterogeneous, a domain has a Crawl-delay site sharing its address
// with a sibling that asks for none, and fast addresses without any
// Crawl-delay. The same Config gives the same web.
func TestSubdomainShape(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		sites   int // subdomain sites
		domains int
	}{
		{"e2e web", Config{Seed: 7, Hosts: 60, MaxPages: 120, Heterogeneous: true, Addresses: 8, Sitemaps: true,
			HTTPSShare: 0.85, SubdomainShare: 0.5}, 30, 2},
		{"timeline web", Config{Seed: 1, Hosts: 200, Pages: 3000, MaxPages: 400, Heterogeneous: true, Hostile: true,
			Addresses: 20, SubdomainShare: 0.5}, 100, 2},
		{"many domains", Config{Seed: 2, Hosts: 1000, Heterogeneous: true, Addresses: 100, SubdomainShare: 0.5}, 500, 10},
		{"uniform web", Config{Seed: 3, Hosts: 100, Suffix: "com.ar", Addresses: 4, SubdomainShare: 0.3, SubdomainDomains: 3}, 30, 3},
		{"few sites", Config{Seed: 4, Hosts: 10, Addresses: 3, SubdomainShare: 0.1, SubdomainDomains: 5}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			withAddresses(w)
			subs := w.Subdomains()
			if len(subs) != tc.domains {
				t.Errorf("%d domains, want %d: %v", len(subs), tc.domains, subs)
			}
			hosts := map[string]bool{}
			for _, h := range w.HostNames() {
				hosts[h] = true
			}
			n := 0
			sharedUnit, delayUnit := false, false
			for dom, names := range subs {
				n += len(names)
				byAddr := map[string][]string{}
				for _, name := range names {
					if got := urlnorm.Registrable(name); got != dom {
						t.Errorf("%s: registrable domain %s, want %s", name, got, dom)
					}
					if !hosts[name] {
						t.Errorf("%s is not a host of the web", name)
					}
					if !strings.HasSuffix(dom, "."+w.cfg.Suffix) {
						t.Errorf("domain %s not under the suffix %s", dom, w.cfg.Suffix)
					}
					a := w.AddressOf(name).String()
					byAddr[a] = append(byAddr[a], name)
				}
				if len(names) >= 2 && len(byAddr) < 2 {
					t.Errorf("%s: %d sites on %d address(es), want several", dom, len(names), len(byAddr))
				}
				var delayAddr, fastAddr bool
				for _, on := range byAddr {
					delayed, fast := 0, 0
					for _, name := range on {
						if d, _ := time.ParseDuration(w.CrawlDelay(name) + "s"); d >= w.cfg.CrawlDelayMin && w.cfg.Heterogeneous {
							delayed++
						} else if w.CrawlDelay(name) == "" {
							fast++
						}
					}
					sharedUnit = sharedUnit || len(on) >= 2
					delayAddr = delayAddr || delayed > 0 && fast > 0
					fastAddr = fastAddr || delayed == 0 && fast == len(on)
				}
				delayUnit = delayUnit || delayAddr && fastAddr
			}
			if n != tc.sites {
				t.Errorf("%d subdomain sites, want %d", n, tc.sites)
			}
			if tc.sites > 2 && !sharedUnit {
				t.Error("no address holds two sites of one domain")
			}
			if tc.cfg.Heterogeneous && !delayUnit {
				t.Error("no domain with a Crawl-delay site and a sibling on its address and fast addresses besides")
			}

			again, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			withAddresses(again)
			if !reflect.DeepEqual(subs, again.Subdomains()) {
				t.Fatal("the same Config gave other subdomains")
			}
			for _, names := range subs {
				for _, name := range names {
					if !w.AddressOf(name).Equal(again.AddressOf(name)) || w.CrawlDelay(name) != again.CrawlDelay(name) {
						t.Fatalf("%s: address or Crawl-delay differ between two webs of one Config", name)
					}
				}
			}
			tc.cfg.Seed += 100
			other, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sites > 2 && reflect.DeepEqual(subs, other.Subdomains()) {
				t.Error("another seed gave the same subdomains")
			}
		})
	}
}

// TestSubdomainLinks: renamed sites keep their pages and links: every
// link of the model names a host of the web (none names a site's name
// of before), robots.txt names the new host, and every subdomain site's
// home page is reachable from the seeds.
func TestSubdomainLinks(t *testing.T) {
	w, err := New(Config{Seed: 7, Hosts: 60, MaxPages: 120, Heterogeneous: true, Addresses: 8, Sitemaps: true,
		HTTPSShare: 0.85, SubdomainShare: 0.5, HTTPAddr: "127.0.0.1:18080"})
	if err != nil {
		t.Fatal(err)
	}
	base, err := New(Config{Seed: 7, Hosts: 60, MaxPages: 120, Heterogeneous: true, Addresses: 8, Sitemaps: true,
		HTTPSShare: 0.85, HTTPAddr: "127.0.0.1:18080"})
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, h := range append(w.HostNames(), w.OutOfScopeHostNames()...) {
		known[h] = true
	}
	renamed := map[string]bool{}
	for _, h := range base.HostNames() {
		if !known[h] {
			renamed[h] = true
		}
	}
	if len(renamed) == 0 {
		t.Fatal("no site renamed")
	}
	err = w.ForEachPage(func(info PageInfo) error {
		for _, l := range append([]string{info.Location}, info.Links...) {
			if l == "" {
				continue
			}
			u, err := url.Parse(l)
			if err != nil {
				continue
			}
			if h := u.Hostname(); renamed[h] {
				t.Errorf("%s links to %s, a name of before the renaming", info.URL, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reach := map[string]bool{}
	for _, u := range w.Reachable(w.SeedURLs(5), "WireTest") {
		reach[u] = true
	}
	for _, names := range w.Subdomains() {
		for _, name := range names {
			status, body, _ := w.RobotsTxt(name)
			if status == 200 && !strings.Contains(body, "robots.txt for "+name+"\n") {
				t.Errorf("%s: robots.txt %q does not name it", name, body)
			}
			si := w.byName[name]
			home := w.origin(si) + "/"
			if !w.Disallowed(home, "WireTest") && !reach[home] {
				t.Errorf("%s is not reachable from the seeds", home)
			}
		}
	}
}

// TestSubdomainServed: DNS gives a subdomain site its placed address,
// and the web answers it there.
func TestSubdomainServed(t *testing.T) {
	w := startWeb(t, Config{Seed: 9, Hosts: 40, Addresses: 6, Heterogeneous: true, SubdomainShare: 0.5})
	res := resolverFor(w, "udp")
	c := newClient(t, w)
	for dom, names := range w.Subdomains() {
		for _, name := range names {
			addrs, err := res.LookupHost(context.Background(), name)
			if err != nil || len(addrs) != 1 || !net.ParseIP(addrs[0]).Equal(w.AddressOf(name)) {
				t.Fatalf("LookupHost(%s) = %v, %v; AddressOf says %s", name, addrs, err, w.AddressOf(name))
			}
		}
		u := w.origin(w.byName[names[0]]) + "/"
		if resp := do(t, c, "GET", u, "WireTest/1.0"); resp.status != 200 {
			t.Errorf("%s: GET %s: %d", dom, u, resp.status)
		}
	}
	for _, r := range w.Requests() {
		if want := w.AddressOf(r.Host).String(); r.Addr != want {
			t.Errorf("request %s%s answered on %s, want %s", r.Host, r.Path, r.Addr, want)
		}
	}
}

// TestServerOf: ServerOf, which needs no Start, groups the web's hosts
// exactly as the addresses DNS gives them once started (aliases,
// HTTPS-only sites and subdomain placements included), and a web
// rebuilt from the same configuration, never started, agrees.
func TestServerOf(t *testing.T) {
	cfg := Config{Seed: 9, Hosts: 60, Addresses: 6, Heterogeneous: true, SubdomainShare: 0.5, HTTPSShare: 0.85}
	w := startWeb(t, cfg)
	rebuilt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	byServer, byAddr := map[string]string{}, map[string]string{}
	for _, name := range w.HostNames() {
		server, addr := w.ServerOf(name), w.AddressOf(name).String()
		if other := rebuilt.ServerOf(name); other != server {
			t.Errorf("%s: ServerOf %q, %q on the web never started", name, server, other)
		}
		if a, ok := byServer[server]; ok && a != addr {
			t.Errorf("%s: server %q is address %s, but %s for another host", name, server, addr, a)
		}
		if s, ok := byAddr[addr]; ok && s != server {
			t.Errorf("%s: address %s is server %q, but %q for another host", name, addr, server, s)
		}
		byServer[server], byAddr[addr] = addr, server
	}
	if len(byServer) < 3 {
		t.Errorf("%d servers, want several", len(byServer))
	}
}
