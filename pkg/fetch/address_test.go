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
