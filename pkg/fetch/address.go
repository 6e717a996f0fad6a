package fetch

import (
	"net/netip"
)

// blockedPrefixes are the networks the harvester never connects to unless
// harvester.allow_private is set: a national crawl has no business inside
// the crawler's own network, and a hostile DNS answer must not turn the
// crawler against it. IPv6 addresses that carry an IPv4 address (NAT64,
// IPv4-compatible, SIIT, 6to4, Teredo) are judged by it too: see carried.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",          // "this network", RFC 791 (0.0.0.0 is unspecified)
		"10.0.0.0/8",         // private, RFC 1918
		"100.64.0.0/10",      // carrier-grade NAT, RFC 6598
		"127.0.0.0/8",        // loopback, RFC 1122
		"169.254.0.0/16",     // link-local, RFC 3927
		"172.16.0.0/12",      // private, RFC 1918
		"192.0.0.0/24",       // IETF protocol assignments, RFC 6890
		"192.168.0.0/16",     // private, RFC 1918
		"198.18.0.0/15",      // benchmarking, RFC 2544
		"224.0.0.0/4",        // multicast, RFC 5771
		"240.0.0.0/4",        // reserved, RFC 1112 (255.255.255.255 broadcast included)
		"::/128",             // unspecified, RFC 4291
		"::1/128",            // loopback, RFC 4291
		"64:ff9b:1::/48",     // local-use IPv4/IPv6 translation, RFC 8215
		"fc00::/7",           // unique local, RFC 4193
		"fe80::/10",          // link-local, RFC 4291
		"ff00::/8",           // multicast, RFC 4291
		"2001:db8::/32",      // documentation, RFC 3849
		"100::/64",           // discard-only, RFC 6666
		"fec0::/10",          // site-local (deprecated), RFC 3879
		"192.0.2.0/24",       // documentation, RFC 5737
		"198.51.100.0/24",    // documentation, RFC 5737
		"203.0.113.0/24",     // documentation, RFC 5737
		"255.255.255.255/32", // limited broadcast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// The IPv6 networks whose addresses carry an IPv4 address (carried).
var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")    // well-known NAT64 prefix, RFC 6052 §2.1
	siitPrefix   = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT), RFC 2765 §2.1
	compatPrefix = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated), RFC 4291 §2.5.5.1
	sixToFour    = netip.MustParsePrefix("2002::/16")       // 6to4, RFC 3056 §2
	teredoPrefix = netip.MustParsePrefix("2001::/32")       // Teredo, RFC 4380 §4
)

// embedded is an IPv4 address an IPv6 address carries, and how.
type embedded struct {
	scheme string // "NAT64", "IPv4-compatible", "SIIT", "6to4", "Teredo client", "Teredo server"
	ip     netip.Addr
}

// carried returns the IPv4 addresses that ip (an IPv6 address, not
// IPv4-mapped) carries by a translation or tunnelling scheme. A crawl
// host behind NAT64 (DNS64) dials 64:ff9b::a.b.c.d as a.b.c.d; one with
// 6to4 or Teredo routes 2002:AABB:CCDD:: and Teredo addresses towards the
// IPv4 address inside; IPv4-compatible and SIIT addresses are IPv4
// addresses to a translator. So a name whose AAAA record carries a
// private IPv4 address must be refused like its A record would be.
// Teredo carries two: the client's (the last 32 bits inverted, where a
// relay sends the packets) and its server's (bits 32–63); both are
// returned.
func carried(ip netip.Addr) []embedded {
	if !ip.Is6() || ip.Is4In6() {
		return nil
	}
	b := ip.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case nat64Prefix.Contains(ip):
		return []embedded{{"NAT64", last}}
	case siitPrefix.Contains(ip):
		return []embedded{{"SIIT", last}}
	case compatPrefix.Contains(ip):
		return []embedded{{"IPv4-compatible", last}}
	case sixToFour.Contains(ip):
		return []embedded{{"6to4", netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}}
	case teredoPrefix.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
		return []embedded{{"Teredo client", client}, {"Teredo server", server}}
	}
	return nil
}

// Blocked tells whether the harvester refuses to connect to ip when
// private addresses are not allowed: loopback, private (RFC 1918,
// fc00::/7), link-local, unspecified, multicast, carrier-grade NAT,
// reserved and documentation ranges. IPv4-mapped IPv6 addresses are judged
// by their IPv4 address; NAT64 (64:ff9b::/96), IPv4-compatible
// (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), 6to4 (2002::/16) and Teredo
// (2001::/32) addresses also by the IPv4 addresses they carry.
func Blocked(ip netip.Addr) bool {
	blocked, _ := blockedBy(ip)
	return blocked
}

// blockedBy is Blocked, also returning the IPv4 address carried by ip
// that got it refused (the zero embedded if ip is refused for itself).
func blockedBy(ip netip.Addr) (bool, embedded) {
	if blockedItself(ip) {
		return true, embedded{}
	}
	for _, e := range carried(ip.Unmap()) {
		if blockedItself(e.ip) {
			return true, e
		}
	}
	return false, embedded{}
}

// blockedItself judges ip by the networks it is in, not by an address it
// carries.
func blockedItself(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.Unmap()
	if ip.Zone() != "" {
		return true // scoped addresses are link-local by nature
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Policy decides which addresses may be dialled.
type Policy struct {
	// AllowPrivate lets every address through (tests and the demo, which
	// crawl a web served on loopback).
	AllowPrivate bool
}

// Check returns nil if ip may be dialled, else an *Error of kind
// KindBlocked naming the address ("blocked-address 10.0.0.1") and, for an
// IPv6 address refused for the IPv4 address it carries, that address too
// ("blocked-address 64:ff9b::a00:1 (NAT64 of 10.0.0.1)").
func (p Policy) Check(ip netip.Addr) error {
	if p.AllowPrivate {
		return nil
	}
	blocked, via := blockedBy(ip)
	if !blocked {
		return nil
	}
	detail := ip.Unmap().String()
	if via.ip.IsValid() {
		detail += " (" + via.scheme + " of " + via.ip.String() + ")"
	}
	return &Error{Kind: KindBlocked, Detail: detail}
}
