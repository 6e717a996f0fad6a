package testweb

import (
	"errors"
	"fmt"
	"math"
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

	// Defaults of the heterogeneous web (Config.Heterogeneous).

	// DefaultResponseMedian is the median response time of ordinary
	// servers.
	DefaultResponseMedian = 2 * time.Millisecond
	// DefaultSlowFraction is the fraction of in-scope hosts that are slow.
	DefaultSlowFraction = 0.02
	// DefaultSlowMin and DefaultSlowMax bound the response time of slow
	// hosts.
	DefaultSlowMin = 200 * time.Millisecond
	// DefaultSlowMax is the upper bound of a slow host's response time.
	DefaultSlowMax = time.Second
	// DefaultCrawlDelayFraction is the fraction of in-scope sites whose
	// robots.txt asks for a Crawl-delay.
	DefaultCrawlDelayFraction = 0.03
	// DefaultCrawlDelayMin is the smallest Crawl-delay drawn.
	DefaultCrawlDelayMin = 2 * time.Second
	// DefaultCrawlDelayMax is the largest Crawl-delay drawn.
	DefaultCrawlDelayMax = 5 * time.Second
	// DefaultBigSites is the number of big sites.
	DefaultBigSites = 5
	// DefaultAliasFraction is the fraction of the in-scope sites named
	// www.X that also answer on the bare name X.
	DefaultAliasFraction = 1.0 / 3
	// fastCapFactor caps an ordinary server's response time at this many
	// times the median (40 ms by default), and never at SlowMin or more.
	fastCapFactor = 20
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
	// Sitemaps makes about a third of the in-scope sites with robots.txt
	// rules publish sitemaps, including pages no page links to (see
	// SitemapSites, SitemapOnlyURLs; with Hostile, HostileSitemaps).
	Sitemaps bool
	// EndlessLinks makes the endless host's pages link to more of its
	// own: each endless page starts with links to /sin-fin/1 ...
	// /sin-fin/EndlessLinks, which stream without end too, as a real host
	// whose every page streams (Hostile must be on). Zero (the default)
	// keeps its one page "/", without links.
	EndlessLinks int

	// Heterogeneous makes the web behave like a real one in time (see
	// "The heterogeneous web" in the package documentation): servers
	// with heavy-tailed response times and a few slow ones, Crawl-delay
	// on a few percent of the sites of every size, a handful of big
	// sites, and sites answering on a bare name as well as on www. The
	// fields below tune it; zero means the default given, and setting
	// any of them without Heterogeneous is an error. Off (the default)
	// the web serves exactly what it served before the field existed.
	Heterogeneous bool
	// ResponseMedian is the median response time of the ordinary
	// servers, drawn per host from a log-normal law (sigma 0.7) and
	// capped at 20 times the median and below SlowMin (default 2 ms).
	ResponseMedian time.Duration
	// SlowFraction is the fraction of in-scope hosts whose response
	// time is between SlowMin and SlowMax, drawn log-uniformly (default
	// 0.02; negative: none). The count is rounded to the nearest host.
	SlowFraction float64
	// SlowMin and SlowMax bound the response time of the slow hosts
	// (default 200 ms and 1 s).
	SlowMin, SlowMax time.Duration
	// CrawlDelayFraction is the fraction of the in-scope sites whose
	// robots.txt gives every group a Crawl-delay, a whole number of
	// seconds between CrawlDelayMin and CrawlDelayMax (default 0.03;
	// negative: none). The sites are taken one from each of as many
	// strata of the sites in size order, so that big, medium and small
	// sites all have some; at least one site when the fraction is
	// positive.
	CrawlDelayFraction float64
	// CrawlDelayMin and CrawlDelayMax bound the Crawl-delay, whole
	// seconds, at least 1 s (default 2 s and 5 s).
	CrawlDelayMin, CrawlDelayMax time.Duration
	// CrawlDelayMaxPages, when positive, draws the Crawl-delay sites
	// (the same count, round(CrawlDelayFraction * in-scope sites), at
	// least one) only among the in-scope sites of at most this many
	// pages, one from each of as many strata of them in size order, so
	// that no site takes its delay times more than this many pages (a web
	// whose Crawl-delay sites are small, on which a crawl ends within
	// seconds). Fewer when fewer sites are that small; with SubdomainShare
	// a domain whose smallest site is bigger gets no Crawl-delay site of
	// its own. Pages are a site's linked pages: the 2-5 hidden pages of a
	// sitemap site come on top, and the "Crawl-delay: 1" some sites of at
	// most 30 pages ask for (without Heterogeneous too) is not capped.
	// Zero (the default) draws among the sites of every size, exactly the
	// web of before the field existed, as does a cap of MaxPages or more.
	// Only with Heterogeneous; negative is an error.
	CrawlDelayMaxPages int
	// BigSites is the number of big sites: the biggest sites get between
	// MaxPages/4 and MaxPages pages (log-uniform; the biggest exactly
	// MaxPages), so that with the MaxPages of the scale run (20,000) they
	// have thousands of pages; with a small MaxPages they are just the
	// sites of MaxPages/4 to MaxPages pages. With Pages set, the other
	// sites are scaled to what the big ones leave. Default 5; at most
	// Hosts; negative: none.
	BigSites int
	// AliasFraction is the fraction of the in-scope sites named www.X
	// (X not a host of its own, robots.txt not broken) that also answer
	// on the bare name X, on the same address, with a 301 to the same
	// path on www.X for every request (default 1/3; negative: none).
	// Every alias is linked from another site's home page, and some
	// cross-host links to its home page use the bare name.
	AliasFraction float64

	// HTTPSShare is the fraction of the sites served over TLS (see "The
	// HTTPS web" in the package documentation), drawn per site from the
	// seed: their pages are https URLs on the HTTPS port, with
	// certificates of a CA the web makes at Start (CACertPEM); most
	// answer 301 to HTTPS on plain HTTP, a few serve the same pages there
	// too, a few are HTTPS-only. Zero (the default) serves plain HTTP
	// only, exactly what the web served before the field existed.
	HTTPSShare float64
	// HTTPSAddr is the TLS listen address, an IPv4 loopback address
	// (default "127.0.0.1:0"; only with HTTPSShare).
	HTTPSAddr string
	// SubdomainShare is the fraction of the in-scope sites renamed as
	// subdomains of a few registrable domains, as universities, hosting
	// providers and agencies have them (see "The subdomain web" in the
	// package documentation): <label><k>.uni<N>.<suffix> and
	// <label><k>.hosting<N>.<suffix>, each domain on several of the
	// web's addresses, some of them holding several of its sites (one
	// politeness unit), and with Heterogeneous a Crawl-delay site on
	// one address of every other domain of three sites or more (but not
	// one bigger than CrawlDelayMaxPages), with a sibling on that address
	// and fast sites on the others. At least two sites when positive;
	// it needs Addresses of at least 2. Zero (the default) renames none:
	// the web serves exactly what it served before the field existed.
	SubdomainShare float64
	// SubdomainDomains is the number of registrable domains holding the
	// subdomain sites (default DefaultSubdomainDomains: max(2,
	// Hosts/100)); fewer when there are not two sites for each (only
	// with SubdomainShare).
	SubdomainDomains int

	// TroubleFraction is the fraction of the in-scope HTTPS sites whose
	// TLS is in trouble (expired, wrong-name or self-signed certificate,
	// SNI required, TLS 1.2 or 1.3 only; default 0.12, negative: none;
	// only with HTTPSShare).
	TroubleFraction float64

	// Change makes a share of the pages change in time (see "The
	// changing web" in the package documentation and docs/testweb.md):
	// each changing page is a Poisson process of its own rate, and the
	// version live at a time (VersionAt) adds a paragraph, and on some
	// pages links, to the page. It also gives every site a validator
	// policy (HonestShare, LyingShare). The fields ChangeShare to
	// ChangeLinkShare tune it; zero means the default given, and setting
	// any of them without Change is an error. Off (the default) no page
	// changes and the web serves exactly what it served before the field
	// existed.
	Change bool
	// ChangeShare is the fraction of the HTML pages (home, ordinary and
	// private pages; not framesets) that change, drawn per page (default
	// 0.7; negative: none).
	ChangeShare float64
	// ChangeIntervalMin and ChangeIntervalMax bound the mean interval
	// between two changes of a page, drawn per page log-uniformly between
	// them (default 30s and 50m, two decades); whole seconds, at least 1 s.
	ChangeIntervalMin, ChangeIntervalMax time.Duration
	// ChangeLinkShare is the fraction of the changing pages whose links
	// change with the version too (default 0.5; negative: none).
	ChangeLinkShare float64
	// TimeOrigin is the origin of the web's time: version 0 of every
	// page is live from it, and the Last-Modified of what never changes
	// is it. Zero means the time New builds the web, truncated to the
	// second (Origin gives it, and the testweb command writes it in its
	// --config-out so that the web rebuilt from that file has the same
	// versions); a time with a fraction of a second is truncated. Only
	// with Change, HonestShare or LyingShare.
	TimeOrigin time.Time `json:",omitzero"`

	// HonestShare is the fraction of the sites (drawn per site) that send
	// a true Last-Modified (the time the live version appeared) and a
	// strong ETag (a hash of the body) with every 200, answer
	// If-None-Match and If-Modified-Since with 304 Not Modified as RFC
	// 9110 says, and give their sitemaps' pages a true lastmod. LyingShare
	// is the fraction that send "Last-Modified: now" with every answer,
	// never answer 304, and give every sitemap lastmod the time of the
	// request. The other sites send no validators and no lastmod. With
	// Change the defaults are 0.6 and 0.2 (negative: none); without it
	// zero means none, and a positive share gives the validators to a web
	// whose pages never change. Off (both zero, without Change) the web
	// sends no validators, exactly what it served before the fields
	// existed. Their sum must not exceed 1.
	HonestShare, LyingShare float64
	// CompressShare is the fraction of the sites (drawn per site) that
	// compress their text answers (HTML, XML, plain text) when the
	// request's Accept-Encoding allows it: half of them with gzip only, a
	// quarter with br only, a quarter with either (br preferred); see
	// Encodings. ChunkedShare is the fraction of the sites that send
	// every answer with chunked transfer coding, in two chunks or more,
	// without Content-Length. Zero (the default) for both: no site
	// compresses or chunks, exactly the web of before the fields existed.
	CompressShare, ChunkedShare float64
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
	if c.EndlessLinks < 0 || (c.EndlessLinks > 0 && !c.Hostile) {
		return c, fmt.Errorf("testweb: EndlessLinks needs Hostile and must not be negative, got %d", c.EndlessLinks)
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
	c, err := c.httpsDefaults()
	if err != nil {
		return c, err
	}
	if c, err = c.subdomainDefaults(); err != nil {
		return c, err
	}
	if c, err = c.changeDefaults(); err != nil {
		return c, err
	}
	return c.heterogeneousDefaults()
}

// heterogeneousDefaults fills and validates the fields of the
// heterogeneous web.
func (c Config) heterogeneousDefaults() (Config, error) {
	if !c.Heterogeneous {
		if c.ResponseMedian != 0 || c.SlowFraction != 0 || c.SlowMin != 0 || c.SlowMax != 0 ||
			c.CrawlDelayFraction != 0 || c.CrawlDelayMin != 0 || c.CrawlDelayMax != 0 || c.CrawlDelayMaxPages != 0 ||
			c.BigSites != 0 || c.AliasFraction != 0 {
			return c, errors.New("testweb: ResponseMedian, SlowFraction, SlowMin, SlowMax, CrawlDelayFraction, " +
				"CrawlDelayMin, CrawlDelayMax, CrawlDelayMaxPages, BigSites and AliasFraction need Heterogeneous")
		}
		return c, nil
	}
	if err := defaultFraction("SlowFraction", &c.SlowFraction, DefaultSlowFraction); err != nil {
		return c, err
	}
	if err := defaultFraction("CrawlDelayFraction", &c.CrawlDelayFraction, DefaultCrawlDelayFraction); err != nil {
		return c, err
	}
	if err := defaultFraction("AliasFraction", &c.AliasFraction, DefaultAliasFraction); err != nil {
		return c, err
	}
	if c.ResponseMedian == 0 {
		c.ResponseMedian = DefaultResponseMedian
	}
	if c.SlowMin == 0 {
		c.SlowMin = DefaultSlowMin
	}
	if c.SlowMax == 0 {
		c.SlowMax = max(DefaultSlowMax, c.SlowMin)
	}
	if c.ResponseMedian < 0 || c.SlowMin < 0 || c.SlowMax < 0 {
		return c, fmt.Errorf("testweb: ResponseMedian, SlowMin and SlowMax must not be negative, got %v, %v and %v",
			c.ResponseMedian, c.SlowMin, c.SlowMax)
	}
	if c.SlowMin > c.SlowMax {
		return c, fmt.Errorf("testweb: SlowMin (%v) must not exceed SlowMax (%v)", c.SlowMin, c.SlowMax)
	}
	if c.ResponseMedian >= c.SlowMin {
		return c, fmt.Errorf("testweb: ResponseMedian (%v) must be below SlowMin (%v)", c.ResponseMedian, c.SlowMin)
	}
	if c.CrawlDelayMin == 0 {
		c.CrawlDelayMin = DefaultCrawlDelayMin
	}
	if c.CrawlDelayMax == 0 {
		c.CrawlDelayMax = max(DefaultCrawlDelayMax, c.CrawlDelayMin)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"CrawlDelayMin", c.CrawlDelayMin}, {"CrawlDelayMax", c.CrawlDelayMax}} {
		if d.v < time.Second || d.v%time.Second != 0 {
			return c, fmt.Errorf("testweb: %s must be a whole number of seconds, at least 1s, got %v", d.name, d.v)
		}
	}
	if c.CrawlDelayMin > c.CrawlDelayMax {
		return c, fmt.Errorf("testweb: CrawlDelayMin (%v) must not exceed CrawlDelayMax (%v)", c.CrawlDelayMin, c.CrawlDelayMax)
	}
	if c.CrawlDelayMaxPages < 0 {
		return c, fmt.Errorf("testweb: CrawlDelayMaxPages must not be negative (0: no cap), got %d", c.CrawlDelayMaxPages)
	}
	switch {
	case c.BigSites == 0:
		c.BigSites = DefaultBigSites
	case c.BigSites < 0:
		c.BigSites = 0
	}
	c.BigSites = min(c.BigSites, c.Hosts)
	return c, nil
}

// defaultFraction fills a fraction field that takes a default: zero
// becomes def, a negative value 0 (none); NaN and values above 1 are
// refused, naming the field.
func defaultFraction(name string, v *float64, def float64) error {
	switch {
	case math.IsNaN(*v) || *v > 1:
		return fmt.Errorf("testweb: %s must be at most 1 (negative: none), got %v", name, *v)
	case *v == 0:
		*v = def
	case *v < 0:
		*v = 0
	}
	return nil
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
