package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// dnsQuerier asks one DNS server (harvester.dns_server) for a name's A
// and AAAA records with github.com/miekg/dns, over UDP and over TCP when
// the answer is truncated, and returns the answer's TTL with it: Go's
// net.Resolver gives the addresses only, and the TTL is what tells how
// long an answer may be kept. Failures are returned as net.DNSError as
// Go's resolver gives them (NXDOMAIN: IsNotFound; SERVFAIL and other
// codes: "server misbehaving"), or as the network's error (refused, time
// limit), so that ResolverFailure tells the name's answer from the
// resolver's failure the same way for both.
type dnsQuerier struct {
	server  string
	timeout time.Duration
}

// answer is what one query brought back.
type answer struct {
	addrs []netip.Addr
	ttl   time.Duration // the smallest TTL of the records used
	err   error
}

// lookup asks for A and AAAA at once and merges them: IPv4 first, then
// IPv6 (the harvester dials them in this order), with the smaller TTL.
// A name is missing when its A query says NXDOMAIN; an answer of either
// family is enough.
func (q *dnsQuerier) lookup(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	ch := make(chan answer, 1)
	go func() { ch <- q.query(ctx, host, dns.TypeAAAA) }()
	a := q.query(ctx, host, dns.TypeA)
	aaaa := <-ch
	addrs := append(a.addrs, aaaa.addrs...)
	var nf *net.DNSError
	switch {
	case len(addrs) > 0:
		ttl := a.ttl
		if len(a.addrs) == 0 || (len(aaaa.addrs) > 0 && aaaa.ttl < ttl) {
			ttl = aaaa.ttl
		}
		return addrs, ttl, nil
	case a.err != nil:
		return nil, 0, a.err
	case aaaa.err != nil && !(errors.As(aaaa.err, &nf) && nf.IsNotFound):
		return nil, 0, aaaa.err
	}
	return nil, 0, nil // no address: the caller says so
}

// query asks for one record type of host.
func (q *dnsQuerier) query(ctx context.Context, host string, qtype uint16) answer {
	name := dns.Fqdn(host)
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	m.SetEdns0(dns.DefaultMsgSize, false)
	c := &dns.Client{Net: "udp", Timeout: q.timeout}
	resp, _, err := c.ExchangeContext(ctx, m, q.server)
	var ne net.Error
	if err != nil && ctx.Err() == nil && !(errors.As(err, &ne) && ne.Timeout()) {
		// A second attempt, as Go's resolver makes (resolv.conf's
		// attempts:2): a refused read on a fresh UDP socket can be an
		// ICMP error left from an earlier query (the harvester's own
		// test of a resolver coming back saw it under -race).
		resp, _, err = c.ExchangeContext(ctx, m, q.server)
	}
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, m, q.server)
	}
	if err != nil {
		if errors.As(err, &ne) && ne.Timeout() {
			return answer{err: &net.DNSError{Err: "i/o timeout", Name: host, Server: q.server, IsTimeout: true}}
		}
		return answer{err: err}
	}
	return answerOf(resp, host, qtype, q.server)
}

// answerOf reads a DNS server's response to the query for qtype of host
// (server names the server in errors): the addresses of that type at the
// end of the CNAME chain from host, as a stub resolver follows it, and
// the smallest TTL along the chain; NXDOMAIN and other failure codes as
// net.DNSError.
func answerOf(resp *dns.Msg, host string, qtype uint16, server string) answer {
	name := dns.Fqdn(host)
	switch resp.Rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNameError:
		return answer{err: &net.DNSError{Err: "no such host", Name: host, Server: server, IsNotFound: true}}
	default:
		return answer{err: &net.DNSError{Err: "server misbehaving (" + dns.RcodeToString[resp.Rcode] + ")", Name: host, Server: server}}
	}
	var out answer
	owner, first := strings.ToLower(name), true
	for hop := 0; hop < 10; hop++ {
		next := ""
		for _, rr := range resp.Answer {
			h := rr.Header()
			if !strings.EqualFold(h.Name, owner) {
				continue
			}
			ttl := time.Duration(h.Ttl) * time.Second
			var ip netip.Addr
			switch v := rr.(type) {
			case *dns.CNAME:
				next = strings.ToLower(v.Target)
			case *dns.A:
				ip, _ = netip.AddrFromSlice(v.A.To4())
			case *dns.AAAA:
				ip, _ = netip.AddrFromSlice(v.AAAA.To16())
			default:
				continue
			}
			if first || ttl < out.ttl {
				out.ttl, first = ttl, false
			}
			if ip.IsValid() && rr.Header().Rrtype == qtype {
				out.addrs = append(out.addrs, ip)
			}
		}
		if len(out.addrs) > 0 || next == "" {
			break
		}
		owner = next
	}
	return out
}
