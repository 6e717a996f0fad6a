package fetch

import (
	"net/netip"
	"testing"
)

func TestBlocked(t *testing.T) {
	tests := []struct {
		ip      string
		blocked bool
		why     string
	}{
		{"10.0.0.1", true, "RFC 1918"},
		{"10.255.255.255", true, "RFC 1918"},
		{"172.16.5.4", true, "RFC 1918"},
		{"172.31.255.255", true, "RFC 1918"},
		{"172.32.0.1", false, "just past 172.16/12"},
		{"172.15.255.255", false, "just before 172.16/12"},
		{"192.168.1.1", true, "RFC 1918"},
		{"192.169.0.1", false, "just past 192.168/16"},
		{"127.0.0.1", true, "loopback"},
		{"127.9.9.9", true, "loopback /8"},
		{"::1", true, "IPv6 loopback"},
		{"0.0.0.0", true, "unspecified"},
		{"0.1.2.3", true, "this network"},
		{"::", true, "IPv6 unspecified"},
		{"169.254.169.254", true, "link-local (cloud metadata)"},
		{"fe80::1", true, "IPv6 link-local"},
		{"fe80::1%eth0", true, "scoped link-local"},
		{"fc00::1", true, "unique local"},
		{"fd12:3456::1", true, "unique local"},
		{"224.0.0.1", true, "multicast"},
		{"239.255.255.250", true, "multicast (SSDP)"},
		{"ff02::1", true, "IPv6 multicast"},
		{"100.64.0.1", true, "CGNAT RFC 6598"},
		{"100.127.255.255", true, "CGNAT RFC 6598"},
		{"100.63.255.255", false, "just before CGNAT"},
		{"100.128.0.0", false, "just past CGNAT"},
		{"255.255.255.255", true, "broadcast"},
		{"240.0.0.1", true, "reserved"},
		{"198.18.0.1", true, "benchmarking"},
		{"192.0.2.1", true, "documentation"},
		{"::ffff:10.0.0.1", true, "IPv4-mapped private"},
		{"::ffff:127.0.0.1", true, "IPv4-mapped loopback"},
		{"::ffff:8.8.8.8", false, "IPv4-mapped public"},
		{"2002:c0a8:101::1", true, "6to4 of 192.168.1.1"},
		{"2002:0808:0808::1", false, "6to4 of 8.8.8.8"},
		{"2002:6440:1::1", true, "6to4 of 100.64.0.1 (CGNAT; issue 37: only five networks were refused)"},
		{"2002:e000:1::1", true, "6to4 of 224.0.0.1 (multicast; issue 37)"},
		// Issue 37: an AAAA record carrying a private IPv4 address
		// reached it through NAT64 or a translator.
		{"64:ff9b::a00:1", true, "NAT64 of 10.0.0.1 (RFC 6052 §2.1)"},
		{"64:ff9b::7f00:1", true, "NAT64 of 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", true, "NAT64 of 169.254.169.254 (cloud metadata)"},
		{"64:ff9b::808:808", false, "NAT64 of 8.8.8.8: a DNS64 host needs it"},
		{"64:ff9b::c801:203", false, "NAT64 of 200.1.2.3"},
		{"64:ff9b:0:0:1::a00:1", false, "64:ff9b::/32 outside the /96: no IPv4 address carried"},
		{"::10.0.0.1", true, "IPv4-compatible 10.0.0.1 (RFC 4291 §2.5.5.1)"},
		{"::127.0.0.1", true, "IPv4-compatible 127.0.0.1"},
		{"::ffff", true, "IPv4-compatible 0.0.255.255 (this network)"},
		{"::8.8.8.8", false, "IPv4-compatible 8.8.8.8"},
		{"::ffff:0:10.0.0.1", true, "SIIT 10.0.0.1 (RFC 2765 §2.1)"},
		{"::ffff:0:192.168.0.1", true, "SIIT 192.168.0.1"},
		{"::ffff:0:8.8.8.8", false, "SIIT 8.8.8.8"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true, "Teredo client 192.0.2.45 (RFC 4380 §4, documentation)"},
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", true, "Teredo client 10.0.0.1"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true, "Teredo client 127.0.0.1"},
		{"2001:0:4136:e378:8000:63bf:37fe:fdfc", false, "Teredo client 200.1.2.3, server 65.54.227.120"},
		{"2001:0:a00:1:8000:63bf:37fe:fdfc", true, "Teredo server 10.0.0.1: no real Teredo address"},
		{"2001:1::a00:1", false, "2001:1::/32 is not Teredo"},
		{"8.8.8.8", false, "public"},
		{"200.1.2.3", false, "public (Chile)"},
		{"11.0.0.1", false, "public"},
		{"2001:4860:4860::8888", false, "public IPv6"},
		{"2800:150::1", false, "public IPv6 (LACNIC)"},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		if got := Blocked(ip); got != tt.blocked {
			t.Errorf("Blocked(%s) = %v, want %v (%s)", tt.ip, got, tt.blocked, tt.why)
		}
	}
	if !Blocked(netip.Addr{}) {
		t.Error("the zero address is not blocked")
	}
}

// refusedIPv4 are the IPv4 networks docs/harvester.md lists as refused,
// written out here rather than taken from the code so that a network
// dropped from address.go fails the test.
var refusedIPv4 = []string{
	"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "0.0.0.0/8",
	"224.0.0.0/4", "255.255.255.255/32", "100.64.0.0/10", "240.0.0.0/4", "192.0.0.0/24", "198.18.0.0/15",
	"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
}

// publicIPv4 are allowed addresses, several just outside a refused
// network.
var publicIPv4 = []string{"8.8.8.8", "200.1.2.3", "1.0.0.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
	"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255",
	"192.169.0.0", "192.0.1.255", "192.0.3.0", "198.17.255.255", "198.20.0.0", "223.255.255.255"}

// embeddings wrap an IPv4 address in the IPv6 addresses that carry it.
var embeddings = []struct {
	name string
	wrap func(v4 [4]byte) netip.Addr
}{
	{"plain", func(a [4]byte) netip.Addr { return netip.AddrFrom4(a) }},
	{"IPv4-mapped ::ffff:a.b.c.d", func(a [4]byte) netip.Addr { return netip.AddrFrom16(netip.AddrFrom4(a).As16()) }},
	{"NAT64 64:ff9b::/96", func(a [4]byte) netip.Addr { return v6([]byte{0, 0x64, 0xff, 0x9b}, 12, a) }},
	{"IPv4-compatible ::a.b.c.d", func(a [4]byte) netip.Addr { return v6(nil, 12, a) }},
	{"SIIT ::ffff:0:a.b.c.d", func(a [4]byte) netip.Addr { return v6([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 12, a) }},
	{"6to4 2002:AABB:CCDD::1", func(a [4]byte) netip.Addr {
		b := v6([]byte{0x20, 0x02}, 2, a).As16()
		b[15] = 1
		return netip.AddrFrom16(b)
	}},
	{"Teredo client (inverted)", func(a [4]byte) netip.Addr {
		// Server 65.54.227.120 (RFC 4380's example), flags 0x8000, port.
		return v6([]byte{0x20, 0x01, 0, 0, 65, 54, 227, 120, 0x80, 0, 0x63, 0xbf}, 12, [4]byte{^a[0], ^a[1], ^a[2], ^a[3]})
	}},
}

// v6 builds an IPv6 address from prefix bytes with v4 at byte offset at.
func v6(prefix []byte, at int, v4 [4]byte) netip.Addr {
	var b [16]byte
	copy(b[:], prefix)
	copy(b[at:], v4[:])
	return netip.AddrFrom16(b)
}

// TestBlockedCarriedIPv4: every IPv4 network the docs refuse is refused
// however an IPv6 address carries it (its first and last address), and
// public IPv4 addresses are allowed in every wrapping (issue 37: NAT64,
// IPv4-compatible, SIIT and Teredo addresses were not judged by their
// IPv4 address, and 6to4 only over five networks).
func TestBlockedCarriedIPv4(t *testing.T) {
	for _, e := range embeddings {
		for _, n := range refusedIPv4 {
			p := netip.MustParsePrefix(n)
			first := p.Masked().Addr().As4()
			last := first
			for i := p.Bits(); i < 32; i++ {
				last[i/8] |= 0x80 >> (i % 8)
			}
			for _, a := range [][4]byte{first, last} {
				if ip := e.wrap(a); !Blocked(ip) {
					t.Errorf("%s of %s (%s): %s allowed", e.name, netip.AddrFrom4(a), n, ip)
				}
			}
		}
		for _, s := range publicIPv4 {
			if ip := e.wrap(netip.MustParseAddr(s).As4()); Blocked(ip) {
				t.Errorf("%s of public %s: %s refused", e.name, s, ip)
			}
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	ip := netip.MustParseAddr("::ffff:10.0.0.1")
	err := Policy{}.Check(ip)
	if err == nil || Text(err) != "blocked-address 10.0.0.1" || KindOf(Text(err)) != string(KindBlocked) {
		t.Fatalf("Check(%s) = %v", ip, err)
	}
	if err := (Policy{AllowPrivate: true}).Check(ip); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
	if err := (Policy{}).Check(netip.MustParseAddr("200.1.2.3")); err != nil {
		t.Errorf("public address refused: %v", err)
	}
	// An address refused for the IPv4 address it carries names both.
	for ip, want := range map[string]string{
		"64:ff9b::a00:1":                       "blocked-address 64:ff9b::a00:1 (NAT64 of 10.0.0.1)",
		"2002:7f00:1::1":                       "blocked-address 2002:7f00:1::1 (6to4 of 127.0.0.1)",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe": "blocked-address 2001:0:4136:e378:8000:63bf:f5ff:fffe (Teredo client of 10.0.0.1)",
		"::ffff:0:c0a8:1":                      "blocked-address ::ffff:0:c0a8:1 (SIIT of 192.168.0.1)",
		"::a00:1":                              "blocked-address ::a00:1 (IPv4-compatible of 10.0.0.1)",
		"::1":                                  "blocked-address ::1",
	} {
		if got := Text(Policy{}.Check(netip.MustParseAddr(ip))); got != want {
			t.Errorf("Check(%s) = %q, want %q", ip, got, want)
		}
	}
	if err := (Policy{}).Check(netip.MustParseAddr("64:ff9b::808:808")); err != nil {
		t.Errorf("NAT64 of a public address refused: %v", err)
	}
}

func TestKindOf(t *testing.T) {
	for text, want := range map[string]string{
		"timeout: no data for 20s": "timeout",
		"blocked-address 10.0.0.1": "blocked-address",
		"robots":                   "robots",
		"host-gave-up: 3 failures": "host-gave-up",
		"":                         "",
	} {
		if got := KindOf(text); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", text, got, want)
		}
	}
}

// FuzzBlocked: an address from a DNS answer (any 16 bytes) is judged
// without a panic, and an IPv4 address gets the same verdict in every
// IPv6 wrapping that carries it (IPv4-mapped, NAT64, IPv4-compatible,
// SIIT, 6to4, Teredo with a public server) as on its own.
func FuzzBlocked(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "8.8.8.8", "0.0.0.1", "100.64.0.0", "255.255.255.255", "172.32.0.0"} {
		f.Add(netip.MustParseAddr(s).AsSlice(), netip.MustParseAddr("64:ff9b::"+s).AsSlice())
	}
	f.Add([]byte{}, netip.MustParseAddr("2001:0:4136:e378:8000:63bf:3fff:fdd2").AsSlice())
	f.Fuzz(func(t *testing.T, v4, v6b []byte) {
		if ip, ok := netip.AddrFromSlice(v6b); ok {
			err := Policy{}.Check(ip)
			if Blocked(ip) != (err != nil) || (err != nil && KindOf(Text(err)) != string(KindBlocked)) {
				t.Fatalf("%s: Blocked %v, Check %v", ip, Blocked(ip), err)
			}
		}
		if len(v4) != 4 {
			return
		}
		a := [4]byte(v4)
		want := Blocked(netip.AddrFrom4(a))
		for _, e := range embeddings {
			if ip := e.wrap(a); Blocked(ip) != want {
				t.Fatalf("%s of %s: %s blocked %v, the IPv4 address %v", e.name, netip.AddrFrom4(a), ip, !want, want)
			}
		}
	})
}
