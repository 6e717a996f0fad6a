package testweb

import (
	"reflect"
	"strconv"
	"testing"
)

// delayedSites returns the in-scope sites whose robots.txt asks for the
// heterogeneous web's Crawl-delay (CrawlDelayMin to CrawlDelayMax, not the
// "Crawl-delay: 1" of some small sites), as name -> pages, and the pages
// of the biggest of them.
func delayedSites(t *testing.T, w *Web) (map[string]int, int) {
	t.Helper()
	out, biggest := map[string]int{}, 0
	for si := 0; si < w.nIn; si++ {
		s := &w.sites[si]
		if s.crawlDelay == 0 {
			continue
		}
		if got := w.CrawlDelay(s.name); got != strconv.Itoa(s.crawlDelay) {
			t.Fatalf("%s: CrawlDelay %q, want %d", s.name, got, s.crawlDelay)
		}
		out[s.name] = s.pages
		biggest = max(biggest, s.pages)
	}
	return out, biggest
}

// TestCrawlDelayMaxPages: with Config.CrawlDelayMaxPages N the
// Crawl-delay sites (the subdomain web's guaranteed ones too) have at most
// N pages, about as many of them as without the cap, the same for the
// same seed and others for another; a cap of MaxPages or more gives the
// web of no cap, byte for byte.
func TestCrawlDelayMaxPages(t *testing.T) {
	timeline := Config{Seed: 1, Hosts: 1000, Pages: 41000, MaxPages: 820, HeavyPages: true, Heterogeneous: true,
		Addresses: 100, HTTPSShare: 0.85}
	sub := timeline
	sub.SubdomainShare = 0.5
	few := Config{Seed: 4, Hosts: 300, MaxPages: 500, Heterogeneous: true, CrawlDelayFraction: 0.2}
	// The timeline web's smallest sites have 9 pages: more than a
	// hundred have 10 or fewer.
	for _, tc := range []struct {
		name  string
		cfg   Config
		limit int
		// slack is how far the count of Crawl-delay sites may be from the
		// count without the cap (the subdomain web's guaranteed ones
		// depend on which sites drew one); -1: every site of at most
		// limit pages (but those whose robots.txt answers 500) has one.
		slack int
	}{
		{"timeline web, 40 pages", timeline, 40, 0},
		{"timeline web, 10 pages", timeline, 10, 0},
		{"default web, 20 pages", Config{Seed: 11, Hosts: 300, MaxPages: 500, Heterogeneous: true}, 20, 0},
		{"subdomain web, 40 pages", sub, 40, 2},
		{"subdomain web, 12 pages", sub, 12, 2},
		// Fewer sites of at most 2 pages than Crawl-delay sites wanted.
		{"many delays, 2 pages", few, 2, -1},
		// No site is that small: no Crawl-delay site at all, not even
		// the subdomain web's guaranteed ones.
		{"timeline web, 8 pages", timeline, 8, -1},
		{"subdomain web, 8 pages", sub, 8, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := tc.cfg
			cfg.CrawlDelayMaxPages = tc.limit
			w, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			before, bigBefore := delayedSites(t, base)
			after, bigAfter := delayedSites(t, w)
			t.Logf("Crawl-delay sites: %d, biggest %d pages; with a cap of %d: %d, biggest %d pages",
				len(before), bigBefore, tc.limit, len(after), bigAfter)
			if bigAfter > tc.limit {
				t.Errorf("a Crawl-delay site of %d pages, above the cap %d", bigAfter, tc.limit)
			}
			if tc.slack >= 0 {
				if d := len(after) - len(before); d < -tc.slack || d > tc.slack {
					t.Errorf("%d Crawl-delay sites with the cap, %d without", len(after), len(before))
				}
			} else {
				small := 0
				for si := 0; si < w.nIn; si++ {
					if s := &w.sites[si]; s.pages <= tc.limit && s.robots != robotsError {
						small++
					}
				}
				if len(after) != small || small >= len(before) {
					t.Errorf("%d Crawl-delay sites, want all %d eligible sites (fewer than the %d without the cap)",
						len(after), small, len(before))
				}
			}
			if tc.cfg.SubdomainShare > 0 {
				for g, gr := range w.subGroups {
					if g%2 != 0 || len(gr.members) < 3 {
						continue
					}
					smallest, has := w.sites[gr.members[0]].pages, false
					for _, si := range gr.members {
						smallest = min(smallest, w.sites[si].pages)
						has = has || w.sites[si].crawlDelay > 0
					}
					if !has && smallest <= tc.limit {
						t.Errorf("domain %s (smallest site %d pages) has no Crawl-delay site", gr.domain, smallest)
					}
				}
			}

			again, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if same, _ := delayedSites(t, again); !reflect.DeepEqual(same, after) {
				t.Error("the same configuration drew other Crawl-delay sites")
			}
			if !reflect.DeepEqual(snapshot(again), snapshot(w)) {
				t.Error("the same configuration gave another heterogeneous web")
			}
			cfg.Seed++
			other, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if others, _ := delayedSites(t, other); len(after) > 0 && reflect.DeepEqual(others, after) {
				t.Error("another seed drew the same Crawl-delay sites")
			}
		})
	}

	// A cap no site exceeds changes nothing.
	cfg := Config{Seed: 7, Hosts: 60, MaxPages: 120, Heterogeneous: true, Addresses: 8, Sitemaps: true, HTTPSShare: 0.85,
		SubdomainShare: 0.5}
	base, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CrawlDelayMaxPages = cfg.MaxPages
	capped, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if webDigest(capped) != webDigest(base) {
		t.Error("a cap of MaxPages changed the web")
	}
}
