package testweb

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSetDNSDown: each mode fails lookups its own way, and DNSUp brings
// the same address back.
func TestSetDNSDown(t *testing.T) {
	w := startWeb(t, Config{Seed: 9, Hosts: 5})
	host := w.HostNames()[0] + "."
	for _, tc := range []struct {
		mode DNSMode
		want func(*net.DNSError) bool
	}{
		{DNSRefused, func(e *net.DNSError) bool { return strings.Contains(e.Err, "refused") }},
		{DNSSilent, func(e *net.DNSError) bool { return e.IsTimeout }},
		{DNSServFail, func(e *net.DNSError) bool { return !e.IsNotFound && !e.IsTimeout }},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			if err := w.SetDNSDown(tc.mode); err != nil {
				t.Fatal(err)
			}
			for _, network := range []string{"udp", "tcp"} {
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				_, err := resolverFor(w, network).LookupHost(ctx, host)
				cancel()
				var de *net.DNSError
				if !errors.As(err, &de) || !tc.want(de) {
					t.Errorf("%s lookup while %s: %v", network, tc.mode, err)
				}
			}
			if err := w.SetDNSDown(DNSUp); err != nil {
				t.Fatal(err)
			}
			for _, network := range []string{"udp", "tcp"} {
				addrs, err := resolverFor(w, network).LookupHost(context.Background(), host)
				if err != nil || len(addrs) != 1 {
					t.Errorf("%s lookup after %s: %v, %v", network, tc.mode, addrs, err)
				}
			}
		})
	}
}
