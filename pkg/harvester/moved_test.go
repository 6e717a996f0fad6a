package harvester_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestServerMoves: a server whose address changes between two batches
// (the test web's DNS server gives its names another address, with a
// short TTL) is asked at its new address in the next batch, and its
// politeness state moves with it: the previous batch asked www.X with a
// Crawl-delay of 1 s, the next batch has only X (another name of the
// unit), and its first request, at the new address, waits for the rest
// of that Crawl-delay. Before followMoves the next batch held the unit
// at the old address and asked X 50 ms (one wait) after it started.
func TestServerMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("harvests a test web")
	}
	web, err := testweb.New(testweb.Config{Seed: 3, Hosts: 8, MaxPages: 6, OutOfScope: -1, Heterogeneous: true,
		AliasFraction: 1, CrawlDelayFraction: 1, CrawlDelayMin: time.Second, CrawlDelayMax: time.Second, Addresses: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	var bare, www string
	for b, w := range web.Aliases() {
		if web.CrawlDelay(w) == "1" && (bare == "" || b < bare) {
			bare, www = b, w
		}
	}
	if bare == "" {
		t.Fatalf("no alias with a Crawl-delay of 1 s: %v", web.Aliases())
	}
	from := web.AddressOf(www)
	var to net.IP
	for _, h := range web.HostNames() {
		if ip := web.AddressOf(h); !ip.Equal(from) {
			to = ip
		}
	}
	if to == nil {
		t.Fatal("every host on one address")
	}
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(50 * time.Millisecond)
	cfg.Harvester.DNSMinTTL = 0
	url := func(host string) string { return fmt.Sprintf("http://%s:%d/", host, web.Port()) }

	dir := t.TempDir()
	b1 := filepath.Join(dir, "000001")
	ht.WriteBatch(t, b1, 1, ht.Entries(url(www)))
	if _, err := harvester.RunDir(context.Background(), b1, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, r := range web.Requests() {
		if r.Host == www && r.End.After(last) {
			last = r.End
		}
	}
	// The server moves, its names with it.
	web.SetDNSAnswer(www, to, 1)
	web.SetDNSAnswer(bare, to, 1)
	n := len(web.Requests())
	b2 := filepath.Join(dir, "000002")
	ht.WriteBatch(t, b2, 2, ht.Entries(url(bare)))
	if _, err := harvester.RunDir(context.Background(), b2, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	reqs := web.Requests()[n:]
	if len(reqs) == 0 {
		t.Fatal("batch 2 asked nothing")
	}
	for _, r := range reqs {
		if r.Addr != to.String() {
			t.Errorf("batch 2 asked %s%s at %s, want the new address %s", r.Host, r.Path, r.Addr, to)
		}
	}
	// The server's clock: the gap from the end of the last request of
	// batch 1 to the start of the first of batch 2, less a margin for
	// the time the request takes to reach the server.
	if gap := reqs[0].Start.Sub(last); gap < time.Second-20*time.Millisecond {
		t.Errorf("batch 2 asked %s%s %v after batch 1's last request to %s: the Crawl-delay of 1 s did not move with the server", reqs[0].Host, reqs[0].Path, gap, www)
	}
}
