package testweb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/miekg/dns"
)

// DNSMode is how the web's DNS server behaves: up, or down in one of the
// ways a resolver fails (SetDNSDown).
type DNSMode int32

// The DNS modes.
const (
	// DNSUp answers every query (the default).
	DNSUp DNSMode = iota
	// DNSRefused closes the server's ports: a lookup gets "connection
	// refused" (ICMP port unreachable on UDP, RST on TCP), as from a
	// machine whose resolver is not running.
	DNSRefused
	// DNSSilent reads the queries and never answers: lookups time out.
	DNSSilent
	// DNSServFail answers every query SERVFAIL, as a recursive resolver
	// that lost its upstream.
	DNSServFail
)

// String names the mode.
func (m DNSMode) String() string {
	switch m {
	case DNSUp:
		return "up"
	case DNSRefused:
		return "refused"
	case DNSSilent:
		return "silent"
	case DNSServFail:
		return "servfail"
	}
	return fmt.Sprintf("DNSMode(%d)", int32(m))
}

// SetDNSDown puts the DNS server in mode (after Start); DNSUp brings it
// back, on the same address. Leaving DNSRefused reopens the ports, which
// fails if another program took them meanwhile.
func (w *Web) SetDNSDown(mode DNSMode) error {
	w.life.Lock()
	defer w.life.Unlock()
	if !w.started || w.closed {
		return errors.New("testweb: SetDNSDown on a web that is not serving")
	}
	old := DNSMode(w.dnsMode.Load())
	if old == mode {
		return nil
	}
	if mode == DNSRefused {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var errs []error
		for _, s := range w.dnsSrvs {
			if err := s.ShutdownContext(ctx); err != nil {
				errs = append(errs, fmt.Errorf("testweb: shutting down DNS server: %w", err))
			}
		}
		w.dnsSrvs = nil
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	if old == DNSRefused {
		srvs, err := w.listenDNS(w.DNSAddr())
		if err != nil {
			return err
		}
		w.dnsSrvs = srvs
	}
	w.dnsMode.Store(int32(mode))
	return nil
}

// listenDNS serves DNS on addr (UDP and TCP, the port given), retrying
// for a second while the old sockets are let go.
func (w *Web) listenDNS(addr string) ([]*dns.Server, error) {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp4", addr); err == nil {
			var ln net.Listener
			if ln, err = net.Listen("tcp4", addr); err == nil {
				return w.serveDNSOn(pc, ln)
			}
			_ = pc.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("testweb: reopening DNS on %s: %w", addr, err)
}
