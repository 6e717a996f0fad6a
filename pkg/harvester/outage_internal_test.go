package harvester

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/wirecrawl/wire/pkg/fetch"
)

// noRoute is a connection that failed for lack of a route, as the fetch
// client reports it.
func noRoute(errno syscall.Errno) error {
	return &fetch.Error{Kind: fetch.KindConnect, Detail: "no route to host",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
}

// resolverDown is a lookup failure of the resolver's.
func resolverDown() error {
	return &fetch.Error{Kind: fetch.KindDNS, Detail: "server misbehaving looking up x",
		Err: &net.DNSError{Err: "server misbehaving", Name: "x"}}
}

// TestOutageRequests plays sequences of request outcomes through the
// rule: the hosts of each step, and whether the network is then down.
func TestOutageRequests(t *testing.T) {
	refused := &fetch.Error{Kind: fetch.KindConnect, Detail: "connection refused", Err: syscall.ECONNREFUSED}
	timeout := &fetch.Error{Kind: fetch.KindTimeout, Detail: "connect to x after 5s"}
	type step struct {
		host string
		err  error // nil: a response
		held bool
	}
	// A step of host answer is no request: the resolver answers a query.
	const answerHost = "(the resolver answers)"
	answer := []step{{host: answerHost}}
	fail := func(n int, prefix string, err error) []step {
		var out []step
		for i := range n {
			out = append(out, step{fmt.Sprintf("%s%d", prefix, i), err, true})
		}
		return out
	}
	cat := func(parts ...[]step) []step {
		var out []step
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name      string
		need      int
		remaining int
		steps     []step
		down      bool
	}{
		{"ten unreachable networks", 10, 100, fail(10, "h", noRoute(syscall.ENETUNREACH)), true},
		{"nine, then an answer", 10, 100, cat(fail(9, "h", noRoute(syscall.EHOSTUNREACH)), []step{{"ok", nil, false}},
			fail(9, "g", noRoute(syscall.EHOSTUNREACH)),
			// The first nine are tried again: their failure is their own.
			[]step{{"h0", noRoute(syscall.EHOSTUNREACH), false}}), false},
		{"refused proves a route", 10, 100, cat(fail(9, "h", noRoute(syscall.ENETUNREACH)), []step{{"r", refused, false}},
			fail(9, "g", noRoute(syscall.ENETUNREACH))), false},
		{"timeouts say nothing", 10, 100, cat(fail(5, "h", noRoute(syscall.ENETUNREACH)), []step{{"t", timeout, false}},
			fail(5, "g", noRoute(syscall.ENETUNREACH))), true},
		{"the resolver gone at request time", 10, 100, fail(10, "h", resolverDown()), true},
		// Requests on cached addresses go on succeeding after the
		// resolver is gone: they prove a route, not a resolver.
		{"a cached address is no answer", 10, 100, cat(fail(5, "h", resolverDown()), []step{{"ok", nil, false}},
			[]step{{"h0", resolverDown(), true}}, fail(5, "g", resolverDown())), true},
		{"the resolver answers", 10, 100, cat(fail(9, "h", resolverDown()), answer,
			fail(9, "g", resolverDown()),
			[]step{{"h0", resolverDown(), false}}), false},
		{"a host's own success takes it out of the run", 10, 100, cat(fail(9, "h", resolverDown()), []step{{"h0", nil, false}},
			fail(1, "g", resolverDown())), false},
		{"an answer proves no route", 10, 100, cat(fail(5, "h", noRoute(syscall.ENETUNREACH)), answer,
			fail(5, "g", noRoute(syscall.ENETUNREACH))), true},
		{"one host tried again is one host", 10, 100, cat(fail(1, "h", noRoute(syscall.ENETUNREACH)), fail(1, "h", noRoute(syscall.ENETUNREACH)),
			fail(1, "h", noRoute(syscall.ENETUNREACH)), []step{{"h0", noRoute(syscall.ENETUNREACH), false}}), false},
		{"three hosts left", 10, 3, fail(3, "h", noRoute(syscall.ENETUNREACH)), true},
		{"two hosts left are not enough", 10, 2, fail(2, "h", noRoute(syscall.ENETUNREACH)), false},
		{"off", 0, 100, []step{{"h", noRoute(syscall.ENETUNREACH), false}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answers := 0
			o := newOutage(tc.need, 100, func() int { return tc.remaining }, func() int { return answers }, func(error) {})
			for i, s := range tc.steps {
				if s.host == answerHost {
					answers++
					continue
				}
				var resp *fetch.Response
				if s.err == nil {
					resp = &fetch.Response{Status: 200}
				}
				if held := o.request(s.host, resp, s.err); held != s.held && o.down == nil {
					t.Fatalf("step %d (%s %v): held %v, want %v", i, s.host, s.err, held, s.held)
				}
			}
			if (o.down != nil) != tc.down {
				t.Fatalf("down: %v, want %v", o.down, tc.down)
			}
			if tc.down && !errors.Is(o.down, fetch.ErrNetworkDown) {
				t.Errorf("the outage is %v", o.down)
			}
		})
	}
}

// TestOutageLookups: resolver failures are held until an answer (NXDOMAIN
// included) or the end of the lookups settles them, and need in a row
// stop the run.
func TestOutageLookups(t *testing.T) {
	nx := &fetch.Error{Kind: fetch.KindDNS, Detail: "no such host x", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}
	o := newOutage(3, 6, nil, nil, func(error) {})
	if !o.lookup("a", resolverDown(), false) || !o.lookup("b", resolverDown(), false) {
		t.Fatal("resolver failures not held")
	}
	if !o.dns["a"] || o.down != nil {
		t.Fatal("a not in the run")
	}
	if o.lookup("c", nx, false) {
		t.Fatal("NXDOMAIN held")
	}
	if o.dns["a"] {
		t.Fatal("an answer left a held")
	}
	o.lookup("d", resolverDown(), false)
	o.lookup("e", nil, false) // answered
	o.lookup("f", resolverDown(), false)
	if o.down != nil || o.left != 0 {
		t.Fatalf("down %v, left %d", o.down, o.left)
	}
	o = newOutage(3, 6, nil, nil, func(error) {})
	for _, h := range []string{"a", "b", "10.0.0.1", "c"} {
		o.lookup(h, map[bool]error{true: nil, false: resolverDown()}[h == "10.0.0.1"], false)
	}
	if o.down == nil {
		t.Fatal("three resolver failures (an IP literal between them) did not stop the run")
	}
}
