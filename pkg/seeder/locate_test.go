package seeder

import (
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestPartitionLookup: in partition 1 of 2, a name graph.db does not know
// goes to the partition of the address its DNS lookup gives
// (crawl.partition_lookup), not to its registrable domain's: a seed and a
// page's link whose name hashes to partition 1 but whose server's address
// is partition 2's go to partition 2, and the other way round; a name
// that does not resolve, or lookup off, goes by the registrable domain.
func TestPartitionLookup(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 3, Hosts: 60, MaxPages: 2, Addresses: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	part := partition.Partition{I: 1, K: 2}
	// away: named for partition 1, served from an address of partition 2;
	// home: the reverse.
	var away, home string
	for _, s := range web.SeedURLs(60) {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		h := u.Hostname()
		ip, ok := netip.AddrFromSlice(web.AddressOf(h).To4())
		if !ok {
			continue
		}
		byName, byAddr := part.OfName(h), part.OfAddress(ip)
		switch {
		case away == "" && byName == 1 && byAddr == 2:
			away = s
		case home == "" && byName == 2 && byAddr == 1:
			home = s
		}
	}
	if away == "" || home == "" {
		t.Fatalf("the web has no name whose address is of the other partition (away %q, home %q)", away, home)
	}
	// Not in the web's DNS (NXDOMAIN): by its name, partition 1 or 2.
	unknown := "http://no-such-site.cl/"
	for _, tc := range []struct {
		name   string
		lookup bool
		mine   []string // taken in by partition 1
		theirs []string // written for partition 2
	}{
		{"lookup", true, []string{home}, []string{away}},
		{"by-name", false, []string{away}, []string{home}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Crawl.Partition = part.String()
			cfg.Crawl.PartitionLookup = tc.lookup
			cfg.Harvester.DNSServer = web.DNSAddr()
			cfg.Harvester.AllowPrivate = true
			u, _ := url.Parse(unknown)
			if part.OfName(u.Hostname()) == 1 {
				tc.mine = append(tc.mine, unknown)
			} else {
				tc.theirs = append(tc.theirs, unknown)
			}

			// Seeds.
			col := newCollection(t, cfg)
			s, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader(strings.Join([]string{away, home, unknown}, "\n")), "seeds", io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if s.OtherPartitions != len(tc.theirs) {
				t.Errorf("seeds of other partitions: %d, want %d (%v)", s.OtherPartitions, len(tc.theirs), tc.theirs)
			}
			g := readGraph(t, col)
			for _, u := range tc.mine {
				if _, ok := g.docs[u]; !ok {
					t.Errorf("seed %s not taken in", u)
				}
			}
			for _, u := range tc.theirs {
				if _, ok := g.docs[u]; ok {
					t.Errorf("seed %s of partition 2 taken in", u)
				}
			}

			// A page's links.
			col = newCollection(t, cfg)
			page := "http://page.cl/"
			addSeeds(t, col, cfg, page)
			writeBatch(t, col, 1, testBatch{urls: []string{page}, docs: []*parsed.Doc{{
				URL: page, Status: 200, Links: []parsed.Link{{URL: away}, {URL: home}, {URL: unknown}},
			}}})
			sum := runBatch(t, col, cfg, 1, false)
			if tc.lookup && (sum.Lookups == 0 || sum.Located == 0) {
				t.Errorf("lookups %d, urls routed by address %d: want some", sum.Lookups, sum.Located)
			}
			if !tc.lookup && sum.Lookups != 0 {
				t.Errorf("lookups %d with crawl.partition_lookup off", sum.Lookups)
			}
			g = readGraph(t, col)
			for _, u := range tc.mine {
				if _, ok := g.docs[u]; !ok {
					t.Errorf("link to %s not taken in", u)
				}
			}
			sent := map[string]bool{}
			for _, f := range exchangeIn(t.TempDir(), partition.Partition{I: 2, K: 2}, []string{col.Dir}) {
				if _, err := readExchange(f, partition.Partition{I: 2, K: 2}, func(l exchangeLine) error {
					sent[l.URL] = true
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			for _, u := range tc.theirs {
				if _, ok := g.docs[u]; ok || !sent[u] {
					t.Errorf("link to %s: taken in %v, sent to partition 2 %v; want sent only", u, ok, sent[u])
				}
			}
		})
	}
}

// TestLocatorQueue: however many names a batch brings, the locator looks
// them up with maxLookups workers (not a goroutine each), answers every
// one, and a close with names still queued returns, leaving them
// unanswered (routed by name).
func TestLocatorQueue(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 3, Hosts: 5, MaxPages: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := testConfig()
	cfg.Crawl.Partition = "1/2"
	cfg.Harvester.DNSServer = web.DNSAddr()
	cfg.Harvester.AllowPrivate = true
	const n = 2000
	for _, tc := range []struct {
		name  string
		close bool // close before waiting
	}{{"answered", false}, {"closed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := newLocator(cfg)
			if err != nil || l == nil {
				t.Fatalf("locator %v, %v", l, err)
			}
			before := runtime.NumGoroutine()
			for i := range n {
				l.start(fmt.Sprintf("no-such-%d.cl", i)) // NXDOMAIN: a failure each
			}
			// The workers, and the DNS server's and client's own
			// goroutines for the queries under way: far fewer than the
			// names.
			if g := runtime.NumGoroutine() - before; g > n/10 {
				t.Errorf("%d goroutines for %d names, want at most %d", g, n, n/10)
			}
			if tc.close {
				l.close()
				if _, ok := l.addr("no-such-1999.cl"); ok {
					t.Error("an address after close")
				}
				return
			}
			for i := range n {
				if _, ok := l.addr(fmt.Sprintf("no-such-%d.cl", i)); ok {
					t.Errorf("no-such-%d.cl has an address", i)
				}
			}
			if l.lookups.Load() != n || l.failures.Load() != n {
				t.Errorf("%d lookups, %d failures, want %d each", l.lookups.Load(), l.failures.Load(), n)
			}
			l.close()
		})
	}
}
