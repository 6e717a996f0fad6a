package fetch

import (
	"net/netip"
)

// blockedPrefixes are the networks the harvester never connects to unless
// harvester.allow_private is set: a national crawl has no business inside
// the crawler's own network, and a hostile DNS answer must not turn the
// crawler against it.
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
		"2002:a00::/24",      // 6to4 of 10/8
		"2002:7f00::/24",     // 6to4 of 127/8
		"2002:a9fe::/32",     // 6to4 of 169.254/16
		"2002:ac10::/28",     // 6to4 of 172.16/12
		"2002:c0a8::/32",     // 6to4 of 192.168/16
		"192.0.2.0/24",       // documentation, RFC 5737
		"198.51.100.0/24",    // documentation, RFC 5737
		"203.0.113.0/24",     // documentation, RFC 5737
		"255.255.255.255/32", // limited broadcast
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Blocked tells whether the harvester refuses to connect to ip when
// private addresses are not allowed: loopback, private (RFC 1918,
// fc00::/7), link-local, unspecified, multicast, carrier-grade NAT,
// reserved and documentation ranges. IPv4-mapped IPv6 addresses are judged
// by their IPv4 address.
func Blocked(ip netip.Addr) bool {
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
// KindBlocked naming the address.
func (p Policy) Check(ip netip.Addr) error {
	if p.AllowPrivate || !Blocked(ip) {
		return nil
	}
	return &Error{Kind: KindBlocked, Detail: ip.Unmap().String()}
}
