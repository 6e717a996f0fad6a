package fetch

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func rr(t testing.TB, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAnswerOf: the addresses at the end of the CNAME chain, with the
// smallest TTL along it; records of other names or types ignored;
// NXDOMAIN is the name's, SERVFAIL the resolver's.
func TestAnswerOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rcode  int
		qtype  uint16
		answer []string
		want   []string
		ttl    time.Duration
		err    string
	}{
		{"a", dns.RcodeSuccess, dns.TypeA, []string{"www.x.cl. 300 IN A 192.0.2.1", "www.x.cl. 60 IN A 192.0.2.2"}, []string{"192.0.2.1", "192.0.2.2"}, time.Minute, ""},
		{"cname", dns.RcodeSuccess, dns.TypeA, []string{"www.x.cl. 30 IN CNAME web.hosting.cl.", "web.hosting.cl. 600 IN A 192.0.2.9"}, []string{"192.0.2.9"}, 30 * time.Second, ""},
		{"two-hops", dns.RcodeSuccess, dns.TypeA, []string{"www.x.cl. 900 IN CNAME a.cl.", "a.cl. 900 IN CNAME b.cl.", "b.cl. 20 IN A 192.0.2.3"}, []string{"192.0.2.3"}, 20 * time.Second, ""},
		{"other-name", dns.RcodeSuccess, dns.TypeA, []string{"evil.cl. 300 IN A 192.0.2.66"}, nil, 0, ""},
		{"aaaa", dns.RcodeSuccess, dns.TypeAAAA, []string{"www.x.cl. 120 IN AAAA 2001:db8::1", "www.x.cl. 120 IN A 192.0.2.1"}, []string{"2001:db8::1"}, 2 * time.Minute, ""},
		{"case", dns.RcodeSuccess, dns.TypeA, []string{"WWW.X.CL. 300 IN A 192.0.2.1"}, []string{"192.0.2.1"}, 5 * time.Minute, ""},
		{"nxdomain", dns.RcodeNameError, dns.TypeA, nil, nil, 0, "no such host"},
		{"servfail", dns.RcodeServerFailure, dns.TypeA, nil, nil, 0, "server misbehaving (SERVFAIL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion("www.x.cl.", tc.qtype)
			m.Rcode = tc.rcode
			for _, s := range tc.answer {
				m.Answer = append(m.Answer, rr(t, s))
			}
			got := answerOf(m, "www.x.cl", tc.qtype, "192.0.2.53:53")
			var de *net.DNSError
			if tc.err != "" {
				if !errors.As(got.err, &de) || de.Err != tc.err || de.IsNotFound != (tc.rcode == dns.RcodeNameError) {
					t.Fatalf("error %v, want %q", got.err, tc.err)
				}
				if ResolverFailure(&Error{Kind: KindDNS, Err: got.err}) == (tc.rcode == dns.RcodeNameError) {
					t.Errorf("ResolverFailure wrong for %s", tc.name)
				}
				return
			}
			if got.err != nil {
				t.Fatal(got.err)
			}
			var addrs []string
			for _, a := range got.addrs {
				addrs = append(addrs, a.String())
			}
			if len(addrs) != len(tc.want) || (len(addrs) > 0 && (addrs[0] != tc.want[0] || addrs[len(addrs)-1] != tc.want[len(tc.want)-1])) {
				t.Errorf("addresses %v, want %v", addrs, tc.want)
			}
			if len(tc.want) > 0 && got.ttl != tc.ttl {
				t.Errorf("TTL %v, want %v", got.ttl, tc.ttl)
			}
		})
	}
}

// FuzzAnswerOf: any response a DNS server may send is read without a
// panic, into addresses of the type asked and a TTL that is not
// negative.
func FuzzAnswerOf(f *testing.F) {
	for _, s := range [][]string{
		{"www.x.cl. 300 IN A 192.0.2.1"},
		{"www.x.cl. 30 IN CNAME a.cl.", "a.cl. 20 IN A 192.0.2.3"},
		{"www.x.cl. 30 IN CNAME www.x.cl."},
		{"www.x.cl. 120 IN AAAA 2001:db8::1"},
	} {
		m := new(dns.Msg)
		m.SetQuestion("www.x.cl.", dns.TypeA)
		for _, r := range s {
			m.Answer = append(m.Answer, rr(f, r))
		}
		data, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, v4 bool) {
		m := new(dns.Msg)
		if m.Unpack(data) != nil {
			return
		}
		qtype := dns.TypeAAAA
		if v4 {
			qtype = dns.TypeA
		}
		got := answerOf(m, "www.x.cl", qtype, "server")
		if got.ttl < 0 {
			t.Fatalf("TTL %v", got.ttl)
		}
		for _, a := range got.addrs {
			if !a.IsValid() || (v4 && !a.Is4()) || (!v4 && !a.Is6()) {
				t.Fatalf("address %v for type %d", a, qtype)
			}
		}
	})
}
