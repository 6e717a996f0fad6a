package testweb

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/miekg/dns"
)

// startDNS listens on UDP and TCP on the same port of the DNS address and
// starts both servers. It returns the servers and the actual address.
func (w *Web) startDNS() ([]*dns.Server, string, error) {
	host, port, err := net.SplitHostPort(w.cfg.DNSAddr)
	if err != nil {
		return nil, "", fmt.Errorf("testweb: DNS address %q: %w", w.cfg.DNSAddr, err)
	}
	var (
		pc net.PacketConn
		ln net.Listener
	)
	for attempt := 0; ; attempt++ {
		pc, err = net.ListenPacket("udp4", w.cfg.DNSAddr)
		if err != nil {
			return nil, "", fmt.Errorf("testweb: listening for DNS over UDP on %s: %w", w.cfg.DNSAddr, err)
		}
		p := pc.LocalAddr().(*net.UDPAddr).Port
		ln, err = net.Listen("tcp4", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			break
		}
		_ = pc.Close()
		if port != "0" || attempt >= 20 {
			return nil, "", fmt.Errorf("testweb: listening for DNS over TCP on port %d: %w", p, err)
		}
	}
	srvs, err := w.serveDNSOn(pc, ln)
	if err != nil {
		return nil, "", err
	}
	return srvs, pc.LocalAddr().String(), nil
}

// serveDNSOn starts DNS servers on a UDP socket and a TCP listener.
func (w *Web) serveDNSOn(pc net.PacketConn, ln net.Listener) ([]*dns.Server, error) {
	handler := dns.HandlerFunc(w.serveDNS)
	srvs := []*dns.Server{
		{PacketConn: pc, Handler: handler},
		{Listener: ln, Handler: handler},
	}
	for k, srv := range srvs {
		started := make(chan struct{})
		errc := make(chan error, 1)
		srv.NotifyStartedFunc = func() { close(started) }
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			errc <- srv.ActivateAndServe()
		}()
		select {
		case <-started:
		case err := <-errc:
			for _, prev := range srvs[:k] {
				_ = prev.ShutdownContext(context.Background())
			}
			for _, later := range srvs[k+1:] {
				if later.PacketConn != nil {
					_ = later.PacketConn.Close()
				}
				if later.Listener != nil {
					_ = later.Listener.Close()
				}
			}
			return nil, fmt.Errorf("testweb: starting DNS server: %w", err)
		}
	}
	return srvs, nil
}

// serveDNS answers A queries for every host of the web with its address
// (the HTTP listen address, or one of Config.Addresses; TTL 300 (both as
// SetDNSAnswer may change them); an alias
// the address of its site), other types of known names with an empty
// NOERROR answer, and unknown names with NXDOMAIN; the hostile hosts of
// kinds nxdomain and servfail get NXDOMAIN and SERVFAIL. SetDNSDown
// changes that: no answer at all (DNSSilent), SERVFAIL for every name
// (DNSServFail).
func (w *Web) serveDNS(rw dns.ResponseWriter, req *dns.Msg) {
	w.dnsQueries.Add(1)
	mode := DNSMode(w.dnsMode.Load())
	if mode == DNSSilent {
		return
	}
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if opt := req.IsEdns0(); opt != nil {
		m.SetEdns0(max(opt.UDPSize(), dns.MinMsgSize), false)
	}
	switch {
	case mode == DNSServFail:
		m.Rcode = dns.RcodeServerFailure
		m.Authoritative = false
	case req.Opcode != dns.OpcodeQuery:
		m.Rcode = dns.RcodeNotImplemented
	case len(req.Question) != 1:
		m.Rcode = dns.RcodeFormatError
	default:
		q := req.Question[0]
		name := canonicalHost(q.Name)
		if h, ok := w.hostileByName[name]; ok {
			switch h.kind {
			case HostileNXDomain:
				m.Rcode = dns.RcodeNameError
				m.Authoritative = true
			case HostileServFail:
				m.Rcode = dns.RcodeServerFailure
				m.Authoritative = false
			}
			if m.Rcode != dns.RcodeSuccess {
				break
			}
		} else if _, _, ok := w.siteOf(name); !ok {
			m.Rcode = dns.RcodeNameError
			break
		}
		if q.Qclass == dns.ClassINET && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeANY) {
			w.mu.Lock()
			ip, ttl := w.answerLocked(name) // dnsanswer.go
			w.mu.Unlock()
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl},
				A:   ip,
			})
		}
	}
	_ = rw.WriteMsg(m)
}
