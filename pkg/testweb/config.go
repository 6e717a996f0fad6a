package testweb

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Default values applied by New to zero fields of Config.
const (
	// DefaultHosts is the default number of in-scope hosts.
	DefaultHosts = 200
	// DefaultSuffix is the default national suffix.
	DefaultSuffix = "cl"
	// DefaultMaxPages is the default size of the largest site.
	DefaultMaxPages = 400
	// DefaultOutOfScope is the default number of out-of-scope hosts.
	DefaultOutOfScope = 5
	// MaxAddresses bounds Config.Addresses (127.77.0.0/16 minus its
	// first address).
	MaxAddresses = 1 << 16
	// DefaultAddr is the default HTTP and DNS listen address.
	DefaultAddr = "127.0.0.1:0"
)

// Config describes a synthetic web. The zero value is valid: every zero
// field takes its default.
type Config struct {
	// Seed is the generator seed; the same seed (and the same other
	// fields) always gives the same web.
	Seed int64
	// Hosts is the number of in-scope hosts (default 200).
	Hosts int
	// Suffix is the national suffix of in-scope hosts, e.g. "cl" or
	// "com.ar" (default "cl").
	Suffix string
	// MaxPages is the number of pages of the largest site; every other
	// site is smaller or equal (default 400).
	MaxPages int
	// OutOfScope is the number of out-of-scope hosts (*.com, *.org, ...)
	// that pages link to; they are served too. Zero means the default (5);
	// a negative value means none.
	OutOfScope int
	// HTTPAddr is the HTTP listen address; it must be an IPv4 loopback
	// address (127.0.0.0/8). Default "127.0.0.1:0".
	HTTPAddr string
	// DNSAddr is the DNS listen address (UDP and TCP on the same port);
	// it must be an IPv4 loopback address. Default "127.0.0.1:0".
	DNSAddr string
	// Addresses is the number of loopback addresses the hosts are spread
	// over (default 1: every host answers with the HTTP listen address).
	// With N > 1 the web also listens on N-1 further addresses
	// 127.77.X.Y, on the HTTP listen port, and DNS gives each host one of
	// the N (by a hash of its name), as virtual hosts share servers on a
	// real web: a crawler's per-IP connection cap then acts as it would
	// there.
	Addresses int
	// Latency is an optional artificial delay added before every HTTP
	// response (default 0).
	Latency time.Duration
	// Pages, when positive, scales the in-scope site sizes so that they
	// add up to about this many pages (the sizes keep their heavy-tailed
	// shape and the cap MaxPages; Hosts*MaxPages must exceed Pages). Zero
	// keeps the unscaled sizes (median about 4 pages).
	Pages int
	// HeavyPages gives HTML pages heavy-tailed byte sizes: about 5% of
	// them end with an appendix of text (no links) whose length follows a
	// Pareto law, from a few KB to 1 MiB. Off, pages are 2-8 KB.
	HeavyPages bool
	// Hostile adds the hostile hosts (see HostileHosts and the package
	// documentation): in-scope hosts that drip, never end, explode, loop,
	// trap, reset or do not resolve, linked from ordinary home pages.
	// Off (the default) the web has none and serves exactly what it
	// served before the field existed.
	Hostile bool
}

// withDefaults fills zero fields and validates the configuration.
func (c Config) withDefaults() (Config, error) {
	if c.Hosts == 0 {
		c.Hosts = DefaultHosts
	}
	if c.Hosts < 0 {
		return c, fmt.Errorf("testweb: Hosts must be positive, got %d", c.Hosts)
	}
	if c.MaxPages == 0 {
		c.MaxPages = DefaultMaxPages
	}
	if c.MaxPages < 0 {
		return c, fmt.Errorf("testweb: MaxPages must be positive, got %d", c.MaxPages)
	}
	if c.OutOfScope == 0 {
		c.OutOfScope = DefaultOutOfScope
	}
	if c.OutOfScope < 0 {
		c.OutOfScope = 0
	}
	if c.Pages < 0 {
		return c, fmt.Errorf("testweb: Pages must not be negative, got %d", c.Pages)
	}
	if c.Pages > 0 && int64(c.Pages) >= int64(c.Hosts)*int64(c.MaxPages) {
		return c, fmt.Errorf("testweb: Pages (%d) must be less than Hosts*MaxPages (%d*%d)", c.Pages, c.Hosts, c.MaxPages)
	}
	if c.Latency < 0 {
		return c, fmt.Errorf("testweb: Latency must not be negative, got %v", c.Latency)
	}
	if c.Addresses == 0 {
		c.Addresses = 1
	}
	if c.Addresses < 1 || c.Addresses > MaxAddresses {
		return c, fmt.Errorf("testweb: Addresses must be between 1 and %d, got %d", MaxAddresses, c.Addresses)
	}
	c.Suffix = strings.ToLower(strings.Trim(c.Suffix, "."))
	if c.Suffix == "" {
		c.Suffix = DefaultSuffix
	}
	if err := checkSuffix(c.Suffix); err != nil {
		return c, err
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = DefaultAddr
	}
	if c.DNSAddr == "" {
		c.DNSAddr = DefaultAddr
	}
	if err := CheckLoopback(c.HTTPAddr); err != nil {
		return c, fmt.Errorf("testweb: HTTP address: %w", err)
	}
	if err := CheckLoopback(c.DNSAddr); err != nil {
		return c, fmt.Errorf("testweb: DNS address: %w", err)
	}
	return c, nil
}

// checkSuffix accepts one or more DNS labels of lower-case letters,
// digits and inner hyphens.
func checkSuffix(s string) error {
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("testweb: invalid suffix %q", s)
		}
		for _, ch := range label {
			if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
				return fmt.Errorf("testweb: invalid suffix %q", s)
			}
		}
	}
	return nil
}

// CheckLoopback returns nil if addr is "IP:PORT" with an IPv4 loopback IP
// (127.0.0.0/8) and a numeric port, and a descriptive error otherwise.
// Host names (even "localhost"), IPv6 and wildcard addresses are refused.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("listen address %q has no IP: only loopback addresses (127.0.0.0/8) may be used", addr)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("listen address %q: host must be a literal IPv4 loopback address (127.0.0.0/8): %w", addr, err)
	}
	if !ip.Is4() || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q is not loopback: only 127.0.0.0/8 may be used", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return errors.New("listen address " + strconv.Quote(addr) + ": invalid port")
	}
	return nil
}
