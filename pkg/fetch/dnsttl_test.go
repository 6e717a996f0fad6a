package fetch

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestResolverTTL: answers of the configured server are kept for their
// TTL, raised to the floor and cut to the ceiling; failures for their
// own time; a changed answer is followed once the old one expires. The
// test web's DNS server changes the answers and TTLs.
func TestResolverTTL(t *testing.T) {
	web, err := testweb.New(testweb.Config{Seed: 1, Hosts: 3, MaxPages: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	u, err := url.Parse(web.SeedURLs(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	host := u.Hostname()
	moved := net.IPv4(127, 0, 0, 77)
	ctx := context.Background()

	for _, tc := range []struct {
		name     string
		ttl      uint32        // the zone's TTL
		bounds   TTLBounds     // the harvester's floor and ceiling
		kept     time.Duration // how long the answer must be kept
		askAgain time.Duration // and asked again by then
	}{
		{"ttl", 30, TTLBounds{Min: 10 * time.Second, Max: time.Hour}, 29 * time.Second, 31 * time.Second},
		{"floor", 1, TTLBounds{Min: 10 * time.Second, Max: time.Hour}, 9 * time.Second, 11 * time.Second},
		{"zero-ttl", 0, TTLBounds{Min: 10 * time.Second, Max: time.Hour}, 9 * time.Second, 11 * time.Second},
		{"ceiling", 86400, TTLBounds{Min: 10 * time.Second, Max: time.Hour}, time.Hour - time.Second, time.Hour + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web.SetDNSAnswer(host, nil, tc.ttl)
			now := time.Unix(1700000000, 0)
			r := NewTTLResolver(web.DNSAddr(), time.Second, 24*time.Hour, tc.bounds)
			r.now = func() time.Time { return now }
			first, err := r.Lookup(ctx, host)
			if err != nil || len(first) != 1 || first[0] != netip.MustParseAddr(web.AddressOf(host).String()) {
				t.Fatalf("lookup: %v %v, want %s", first, err, web.AddressOf(host))
			}
			web.SetDNSAnswer(host, moved, tc.ttl) // the server moves
			now = now.Add(tc.kept)
			if got, _ := r.Lookup(ctx, host); len(got) != 1 || got[0] != first[0] {
				t.Errorf("after %v: %v, want the cached %v", tc.kept, got, first)
			}
			now = now.Add(tc.askAgain - tc.kept)
			if got, _ := r.Lookup(ctx, host); len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.77") {
				t.Errorf("after %v: %v, want the new address 127.0.0.77", tc.askAgain, got)
			}
			if st := r.Stats(); st.Lookups != 2 {
				t.Errorf("%d lookups, want 2", st.Lookups)
			}
		})
	}

	t.Run("negative", func(t *testing.T) {
		now := time.Unix(1700000000, 0)
		r := NewTTLResolver(web.DNSAddr(), time.Second, 24*time.Hour, TTLBounds{Min: time.Minute, Max: time.Hour, Negative: 20 * time.Second})
		r.now = func() time.Time { return now }
		for i := 0; i < 3; i++ {
			if _, err := r.Lookup(ctx, "nx.example.test"); kindOf(err) != KindDNS || ResolverFailure(err) {
				t.Fatalf("nx lookup: %v, want a DNS error that is the name's", err)
			}
		}
		now = now.Add(19 * time.Second)
		r.Lookup(ctx, "nx.example.test")
		if st := r.Stats(); st.Lookups != 1 {
			t.Errorf("failure not kept: %d lookups", st.Lookups)
		}
		now = now.Add(2 * time.Second)
		r.Lookup(ctx, "nx.example.test")
		if st := r.Stats(); st.Lookups != 2 || st.Failures != 2 {
			t.Errorf("failure kept past dns_negative_time: %+v", st)
		}
	})

	t.Run("servfail", func(t *testing.T) {
		if err := web.SetDNSDown(testweb.DNSServFail); err != nil {
			t.Fatal(err)
		}
		defer web.SetDNSDown(testweb.DNSUp)
		r := NewTTLResolver(web.DNSAddr(), time.Second, time.Hour, TTLBounds{Min: time.Minute, Max: time.Hour, Negative: time.Second})
		if _, err := r.Lookup(ctx, host); !ResolverFailure(err) {
			t.Errorf("SERVFAIL: %v, want a resolver failure", err)
		}
	})

	t.Run("system-resolver", func(t *testing.T) {
		// The system resolver gives no TTL: its answers are kept keep.
		r := NewTTLResolver("", time.Second, 42*time.Second, TTLBounds{Min: time.Minute, Max: time.Hour, Negative: time.Second})
		if got := r.expiry(5*time.Second, false, nil); got != 42*time.Second {
			t.Errorf("system answer kept %v, want 42s", got)
		}
	})
}
