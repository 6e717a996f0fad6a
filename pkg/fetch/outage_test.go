package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// servfailServer answers every query SERVFAIL, as a recursive resolver
// that lost its upstream does.
func servfailServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// TestResolverFailure tells the resolver's failures (refused, silent,
// SERVFAIL) from answers about the name (NXDOMAIN).
func TestResolverFailure(t *testing.T) {
	// A closed UDP port: the kernel answers "port unreachable", which
	// the resolver sees as connection refused.
	closed, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.LocalAddr().String()
	closed.Close()
	// A socket that reads and never answers.
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	known, _ := dnsServer(t, "www.example.test")
	for _, tc := range []struct {
		name, server, host string
		want               bool
	}{
		{"refused", refused, "www.example.test", true},
		{"timeout", silent.LocalAddr().String(), "www.example.test", true},
		{"servfail", servfailServer(t), "www.example.test", true},
		{"nxdomain", known, "nowhere.example.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(tc.server, 300*time.Millisecond, 0)
			_, err := r.Lookup(context.Background(), tc.host)
			if err == nil {
				t.Fatal("lookup succeeded")
			}
			if got := ResolverFailure(err); got != tc.want {
				t.Errorf("ResolverFailure(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
	if ResolverFailure(&Error{Kind: KindDNS, Detail: "no address for x"}) {
		t.Error("an empty answer counted as a resolver failure")
	}
	if ResolverFailure(&Error{Kind: KindConnect, Err: errors.New("x")}) {
		t.Error("a connect error counted as a resolver failure")
	}
}

// TestNoRoute: unreachable networks and hosts are told from refused
// connections and classified as connect errors.
func TestNoRoute(t *testing.T) {
	wrap := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
	}
	for _, tc := range []struct {
		err    error
		want   bool
		detail string
	}{
		{wrap(syscall.ENETUNREACH), true, "network unreachable"},
		{wrap(syscall.ENETDOWN), true, "network unreachable"},
		{wrap(syscall.EHOSTUNREACH), true, "no route to host"},
		{wrap(syscall.ECONNREFUSED), false, "connection refused"},
	} {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := NoRoute(tc.err); got != tc.want {
				t.Errorf("NoRoute = %v, want %v", got, tc.want)
			}
			h := New(testConfig(), nil).NewHost()
			defer h.Close()
			e := h.classify(context.Background(), "http://x.test/", tc.err)
			if e.Kind != KindConnect || e.Detail != tc.detail {
				t.Errorf("classified %s: %s, want connect: %s", tc.err, e.Text(), tc.detail)
			}
			if NoRoute(e) != tc.want {
				t.Errorf("NoRoute of the classified error = %v", !tc.want)
			}
		})
	}
}
