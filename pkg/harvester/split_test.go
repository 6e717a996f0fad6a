package harvester

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// TestPlanSplit: the split by server, on the shapes of a national web.
func TestPlanSplit(t *testing.T) {
	entries := func(hosts map[string]int) []batch.Entry {
		var out []batch.Entry
		for h, n := range hosts {
			for i := 0; i < n; i++ {
				out = append(out, batch.Entry{Site: "http://" + h, URL: fmt.Sprintf("http://%s/p%d", h, i)})
			}
		}
		return out
	}
	t.Run("subdomains of one registrable domain on many servers", func(t *testing.T) {
		// The case of issue 36: every site under uni.cl. By registrable
		// domain, one shard had all of them.
		hosts, servers := map[string]int{}, []fetchlog.Server(nil)
		for i := 0; i < 40; i++ {
			h := fmt.Sprintf("s%d.uni.cl", i)
			hosts[h] = 10
			servers = append(servers, fetchlog.Server{Host: h, IP: fmt.Sprintf("10.0.0.%d", i%20)})
		}
		sp := planSplit(entries(hosts), servers, 2, time.Second, time.Minute)
		if sp.load[0] != sp.load[1] || sp.load[0] != 200*time.Second {
			t.Errorf("loads %v, want 200 s each", sp.load)
		}
		for i := 0; i < 40; i++ {
			h := fmt.Sprintf("s%d.uni.cl", i)
			if want := sp.owner(netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", i%20))); sp.byHost[h] != want {
				t.Errorf("%s in shard %d, its address in %d", h, sp.byHost[h], want)
			}
		}
	})
	t.Run("names of unknown address stay with their registrable domain", func(t *testing.T) {
		sp := planSplit(entries(map[string]int{"www.a.cl": 3, "a.cl": 2, "b.a.cl": 1, "c.cl": 6}), nil, 2, time.Second, time.Minute)
		if sp.byHost["www.a.cl"] != sp.byHost["a.cl"] || sp.byHost["a.cl"] != sp.byHost["b.a.cl"] || sp.byHost["a.cl"] == sp.byHost["c.cl"] {
			t.Errorf("split %v", sp.byHost)
		}
	})
	t.Run("cost counts Crawl-delay and response time", func(t *testing.T) {
		servers := []fetchlog.Server{
			{Host: "slow.cl", IP: "10.0.0.1", CrawlDelay: 10},     // 10 s a URL
			{Host: "slower.cl", IP: "10.0.0.2", CrawlDelay: 3600}, // capped at max_crawl_delay 30 s
			{Host: "lazy.cl", IP: "10.0.0.3", ResponseMs: 2000},   // 2 s a URL
			{Host: "fast.cl", IP: "10.0.0.4", ResponseMs: 10},     // the wait, 1 s
			{Host: "new.cl", IP: "10.0.0.5"},                      // DefaultResponseTime 0.5 s < wait
		}
		sp := planSplit(entries(map[string]int{"slow.cl": 1, "slower.cl": 1, "lazy.cl": 1, "fast.cl": 1, "new.cl": 1}), servers, 1, time.Second, 30*time.Second)
		if want := (10 + 30 + 2 + 1 + 1) * time.Second; sp.load[0] != want || sp.largest != 30*time.Second {
			t.Errorf("load %v largest %v, want %v and 30s", sp.load[0], sp.largest, want)
		}
	})
	t.Run("balance within the LPT bound and deterministic", func(t *testing.T) {
		hosts, servers := map[string]int{}, []fetchlog.Server(nil)
		for i := 0; i < 300; i++ {
			h := fmt.Sprintf("site%d.cl", i)
			hosts[h] = 1 + (i*37)%50
			if i%3 != 0 {
				servers = append(servers, fetchlog.Server{Host: h, IP: fmt.Sprintf("10.1.%d.%d", i/200, i%97)})
			}
		}
		es := entries(hosts)
		for _, n := range []int{2, 3, 4, 7} {
			sp := planSplit(es, servers, n, time.Second, time.Minute)
			var sum, most time.Duration
			for _, l := range sp.load {
				sum += l
				most = max(most, l)
			}
			mean := sum / time.Duration(n)
			if most > max(mean*12/10, sp.largest) {
				t.Errorf("%d shards: largest %v, mean %v, largest group %v", n, most, mean, sp.largest)
			}
			// The same input in another order gives the same split.
			rev := make([]batch.Entry, len(es))
			for i := range es {
				rev[len(es)-1-i] = es[i]
			}
			again := planSplit(rev, servers, n, time.Second, time.Minute)
			for h, i := range sp.byHost {
				if again.byHost[h] != i {
					t.Fatalf("%d shards: %s in %d, then in %d", n, h, i, again.byHost[h])
				}
			}
		}
	})
}
