package testweb

import (
	"net"
	"strings"
)

// DefaultDNSTTL is the TTL, in seconds, of the DNS server's answers
// unless SetDNSAnswer gives a host another.
const DefaultDNSTTL = 300

// dnsAnswer is what SetDNSAnswer made the DNS server say for a name.
type dnsAnswer struct {
	ip  net.IP // nil: the host's usual address
	ttl uint32
}

// SetDNSAnswer makes the DNS server answer host's A queries with ip (nil
// keeps its usual address, AddressOf) and a TTL of ttl seconds, from now
// on: a server that moved, or a zone whose TTLs changed. The HTTP server
// answers only on the web's own addresses (Config.Addresses).
func (w *Web) SetDNSAnswer(host string, ip net.IP, ttl uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dnsAnswers == nil {
		w.dnsAnswers = map[string]dnsAnswer{}
	}
	w.dnsAnswers[canonicalHost(strings.TrimSuffix(host, "."))] = dnsAnswer{ip: ip, ttl: ttl}
}

// answerLocked is the address and TTL the DNS server gives the canonical
// name; w.mu is held.
func (w *Web) answerLocked(name string) (net.IP, uint32) {
	a, ok := w.dnsAnswers[name]
	if !ok {
		return w.addressOfLocked(w.addressName(name)), DefaultDNSTTL
	}
	if a.ip == nil {
		a.ip = w.addressOfLocked(w.addressName(name))
	}
	return a.ip, a.ttl
}
