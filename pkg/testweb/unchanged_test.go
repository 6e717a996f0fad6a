package testweb

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"net"
	"sort"
	"testing"
)

// TestUnchangedWebs: the webs of configurations that existed before a
// new opt-in field are, byte for byte, what they were: host names, the
// address DNS gives each, Crawl-delays, response times, aliases, seeds,
// and every response of every site (pages, robots.txt, logo, sitemaps,
// on both schemes of the HTTPS web). The hashes were computed with the
// code of before the subdomain web (Config.SubdomainShare, issue 34), so
// the figures of earlier runs stay comparable. Add a configuration here
// (with its hash, computed before the change) when a new feature must
// leave it alone.
func TestUnchangedWebs(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"default small", Config{Seed: 5, Hosts: 80, MaxPages: 200},
			"fdfb8a589ea28b18aeac6a05fbf8dc628cc2ce8091235a1bc40dfe18fe27fa57"},
		{"e2e web", Config{Seed: 7, Hosts: 60, MaxPages: 120, Heterogeneous: true, Addresses: 8, Sitemaps: true, HTTPSShare: 0.85},
			"005954b5b72267c85a654875ceef9af64b54a5ba7172c0011830190b9b92b3d5"},
		{"timeline-like web", Config{Seed: 1, Hosts: 200, Pages: 3000, MaxPages: 400, HeavyPages: true, Hostile: true,
			Heterogeneous: true, Addresses: 20, Sitemaps: true},
			"bac85b0ad3834ad4b035df8ce08493f244c3344419299d58997a567382a355ed"},
		{"other suffix", Config{Seed: 3, Hosts: 50, Suffix: "com.ar", Addresses: 4, OutOfScope: -1},
			"9f74b966b5ebc636ed4bf869fd3248af2844b03684f6d4c63e537940753d7a7b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := webDigest(w); got != tc.want {
				t.Errorf("the web changed: hash %s, want %s", got, tc.want)
			}
		})
	}
}

// webDigest hashes what a web serves and says about itself, without
// listening: the addresses are those Start would listen on.
func webDigest(w *Web) string {
	w.mu.Lock()
	w.answerIP = net.IPv4(127, 0, 0, 1).To4()
	w.extraIPs = nil
	for i := 1; i < w.cfg.Addresses; i++ {
		w.extraIPs = append(w.extraIPs, extraAddress(i))
	}
	w.mu.Unlock()
	h := sha256.New()
	for _, name := range append(w.HostNames(), w.OutOfScopeHostNames()...) {
		fmt.Fprintf(h, "host %s %s %q %v\n", name, w.AddressOf(name), w.CrawlDelay(name), w.ResponseTime(name))
	}
	aliases := w.Aliases()
	bare := make([]string, 0, len(aliases))
	for b := range aliases {
		bare = append(bare, b)
	}
	sort.Strings(bare)
	for _, b := range bare {
		fmt.Fprintf(h, "alias %s %s\n", b, aliases[b])
	}
	fmt.Fprintf(h, "seeds %q\nbig %q\nsitemap-only %q\n", w.SeedURLs(20), w.BigSites(), w.SitemapOnlyURLs())
	named, probe := w.SitemapSites()
	fmt.Fprintf(h, "sitemap sites %q %q\n", named, probe)
	for _, hh := range w.HostileHosts() {
		info, ok := w.Page("http://" + hh.Name + "/")
		fmt.Fprintf(h, "hostile %s %v %v %d %q %q %q\n", hh.Name, hh.Kind, ok, info.Status, info.MIME, info.Location, info.Links)
	}
	for si := range w.sites {
		s := &w.sites[si]
		uris := []string{"/robots.txt", logoPath, sitemapIndexPath, sitemapPagesPath, sitemapExtraPath}
		for i := 0; i < s.pages; i++ {
			uris = append(uris, w.pathOf(s, i, s.kindOf(i)))
		}
		for _, uri := range uris {
			if w.https != nil {
				digestResponse(h, s.name, uri, w.respondOnScheme(si, uri, false))
				digestResponse(h, s.name, uri, w.respondOnScheme(si, uri, true))
				continue
			}
			resp, _, _ := w.respond(si, uri, false)
			digestResponse(h, s.name, uri, resp)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// digestResponse writes one response into h.
func digestResponse(h hash.Hash, host, uri string, resp response) {
	fmt.Fprintf(h, "%s%s %d %s %s %d\n", host, uri, resp.status, resp.ctype, resp.location, len(resp.body))
	_, _ = io.WriteString(h, string(resp.body))
}
