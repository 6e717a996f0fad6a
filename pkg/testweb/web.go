// Package testweb is a deterministic synthetic web for tests, demos and
// benchmarks of the crawler. It models a national web (by default Chile's
// .cl): many hosts with heavy-tailed site sizes, realistic host names,
// HTML pages with internal, cross-host, out-of-scope, relative and broken
// links, redirects, errors, non-HTML resources, robots.txt files and
// pages in UTF-8 and ISO-8859-1.
//
// A Web serves every host from one HTTP server on a loopback port
// (dispatching on the Host header) and answers DNS queries for its host
// names with a loopback address, so a crawler pointed at its DNS server
// crawls it as if it were the real thing. Only loopback addresses
// (127.0.0.0/8) are ever used.
//
// Everything is a pure function of Config: the same Config gives the same
// host names, URLs and byte-identical response bodies (absolute URLs in
// bodies contain the actual port, so bodies of two webs are identical
// when their ports are). Pages are not stored; each response is generated
// on request from (seed, host, page index), so very large webs are cheap.
//
// The model also answers questions about itself (Page, URLs, Disallowed)
// so tests can compare what a crawler found with the truth, and it
// records every HTTP request (with the local address that answered it),
// TCP connection and DNS query it received.
//
// # The model
//
// Host names: www.<word><n>.cl, <word><n>.cl, <word>-<word>.cl,
// <word>.gob.cl (with or without www), university-like <dept>.u<word>.cl,
// and subdomains (blog., tienda., noticias., ...) of registrable domains
// already used by other hosts. Out-of-scope hosts look like www.<word>.com,
// <word>.org, <word>.com.ar ... and are never under the national suffix.
//
// Site sizes follow a Pareto law (alpha 1.1, median about 4 pages); the
// largest site has exactly MaxPages pages. The pages of a site form a tree
// (page j links to pages j*b+1 .. j*b+b, b between 2 and 7 per site) plus
// random extra links, so every page of the model is reachable from its
// home page; each home page also links the next host, making every host
// reachable from any seed. Inner tree nodes are HTML; leaves may be PDF
// files (/files/<word>-<n>.pdf), 301/302 redirects (to an HTML page of the
// same host, a few to another host's home page; some with a relative
// Location), 404 and 500 pages, frameset documents or private pages. Paths
// look like /<section>/page-<n>.html, /<section>/<n>/,
// /news/<year>/item-<n>.html, /catalog.php?id=<n>&cat=<c> and
// /index.php?page=<n>; half the hosts also serve /img/logo.png, linked
// from the home page.
//
// About 12% of links of in-scope pages point to other hosts (mostly
// in-scope, biased towards big sites, some out of scope); links are
// written absolute, root-relative, path-relative (../x.html, page-3.html,
// ?page=2) or scheme-relative, some with a #fragment; a few pages have a
// <base href>, an image map (<area>), an <iframe>, links inside <script>
// text or HTML comments (which are not links), upper-case tags or
// unquoted attributes. About 2% of links are broken (404).
//
// Character sets vary per host: most serve "text/html; charset=utf-8"
// (half of them also with <meta charset="utf-8">), some "text/html" with
// only <meta charset="utf-8">, some "text/html; charset=UTF-8", some
// ISO-8859-1 bodies labelled "text/html; charset=iso-8859-1", and a few
// ISO-8859-1 bodies labelled only by <meta http-equiv="Content-Type">.
//
// robots.txt: about 30% of in-scope hosts serve one (more with
// Config.Heterogeneous, below) whose "*" group
// disallows a prefix that holds linked pages of the site (/private/,
// /admin/, /intranet/, /privado/, /borradores/ or /tmp/), sometimes
// re-allowing <prefix>open-, sometimes also disallowing /files/; some add
// "Crawl-delay: 1" (only small sites), a group disallowing everything for
// other bots (BadBot, EvilScraper, MJ12bot, AhrefsBot, SemrushBot, DotBot)
// or an empty-Disallow group for Googlebot. One host (two from 100 hosts
// on) answers 500 for robots.txt; the others answer 404.
//
// # Scale
//
// Config.Pages scales the site sizes (keeping their Pareto shape and the
// cap MaxPages) to about that many pages: scripts/bench-crawl.sh serves a
// million pages on 10,000 hosts (largest site 20,000 pages). Building the
// model takes milliseconds; a page is rendered in about 30-50 µs on
// request; memory is the model (a few MB) plus about 200 bytes per
// recorded request. Config.HeavyPages gives page sizes a heavy tail too
// (5% of HTML pages carry a Pareto-sized appendix, up to 1 MiB). PageCount
// counts the pages without listing them; ForEachPage enumerates the
// truth of every page (the link graph) on every core; Reachable walks it
// from seed URLs as a polite in-scope crawler could, which is the
// denominator of a crawl's coverage.
//
// # Hostile hosts
//
// With Config.Hostile the web also has one in-scope host of each kind of
// HostileKind, named <kind>.hostil.<suffix>, linked from the home pages
// of the biggest sites (so from the first seed):
//
//	drip.hostil.cl           "/" sends its 600 bytes one per second
//	endless.hostil.cl        "/" is a chunked body without end (stopped after 1 GiB)
//	gzip-bomb.hostil.cl      "/" is ~1 MiB of gzip (Content-Encoding: gzip) that decodes to 1 GiB
//	redirect-loop.hostil.cl  "/" -> /loop/1 -> ... -> /loop/9 -> "/", and /self -> /self
//	huge.hostil.cl           "/" is a 50 MiB HTML page
//	garbage.hostil.cl        "/" is 64 KiB of random bytes labelled text/html; charset=utf-8
//	many-links.hostil.cl     "/" has 20,000 links to /item/N.html, small pages
//	calendar.hostil.cl       /calendar?month=N without end: a trap only a site cap stops
//	deep.hostil.cl           "/" nests 100,000 <div> elements
//	nxdomain.hostil.cl       DNS answers NXDOMAIN
//	servfail.hostil.cl       DNS answers SERVFAIL
//	reset.hostil.cl          "/" resets the connection; /partial.html resets it mid-body
//
// HostileHosts and IsHostile give the truth about them, and Page
// describes their pages; URLs, ForEachPage and Reachable leave them out,
// and HostNames includes them. The streaming answers stop as soon as the
// client goes away or the web is closed. Without Config.Hostile the web
// serves byte for byte what it served before hostile hosts existed.
//
// # The heterogeneous web
//
// Served as above, every host answers at once. With
// Config.Heterogeneous the web behaves like a real one in time, which is
// what decides how long a crawl of it takes:
//
//   - Response times: every host (in scope or not) sleeps a time of its
//     own before each response, on top of Config.Latency, and stops
//     sleeping when the client hangs up. Ordinary servers draw it from a
//     log-normal law around ResponseMedian (2 ms; sigma 0.7: 90% within
//     5 ms, 99% within 10 ms; capped at 20 times the median); a fraction
//     SlowFraction (2%) of the in-scope hosts take between SlowMin and
//     SlowMax (200 ms to 1 s, log-uniform). ResponseTime gives it.
//   - Crawl-delay: a fraction CrawlDelayFraction (3%) of the in-scope
//     sites ask for a Crawl-delay of CrawlDelayMin to CrawlDelayMax whole
//     seconds (2 to 5 s) in every group of their robots.txt (the "*"
//     group and the named ones); sites without robots.txt get one. The
//     sites are one per stratum of the sites in size order, so the
//     biggest, medium and small sites all have some: in the scale run's
//     web (10,000 hosts) the first stratum is the 33 biggest sites, and a
//     site of about 5,000 pages asks for 4 s. CrawlDelay gives it. (The
//     Crawl-delay: 1 of some small sites, above, stays.) With
//     CrawlDelayMaxPages N the strata are cut among the sites of at most
//     N pages only (as many Crawl-delay sites, as far as there are such
//     sites), so no Crawl-delay site is bigger than N pages: a web on
//     which a crawl is not held up for minutes by one site's delay.
//   - Big sites: the BigSites (5) biggest sites get between MaxPages/4
//     and MaxPages pages, the biggest exactly MaxPages: thousands of
//     pages with the scale run's MaxPages of 20,000, only MaxPages/4 to
//     MaxPages with a small MaxPages (100 to 400 by default). With Pages
//     the other sites are scaled to what the big ones leave, so the total
//     still comes to about Pages. BigSites gives them.
//   - Aliases: about AliasFraction (a third) of the in-scope sites named
//     www.X also answer on the bare name X (unless X is a host of its
//     own, or the site's robots.txt answers 500), which DNS gives the
//     same address as www.X. X answers every request, robots.txt
//     included, with a 301 to the same path on www.X, and has its site's
//     response time. Each alias's home page is linked from the home page
//     of another site, and about 30% of the cross-host links to the home
//     page of a site with an alias use the bare name, so crawlers meet
//     them. Aliases gives them; HostNames includes them, and the alias's
//     home page is a page of the model (a redirect, as the site's own
//     redirects are): URLs, PageCount, ForEachPage and Reachable count
//     it, and Disallowed, CrawlDelay and ResponseTime answer for X what
//     its site's robots.txt and server say, where X's robots.txt
//     redirects.
//
// Each part draws from its own random stream and depends only on Config,
// like the rest of the model; scripts/testweb --heterogeneous serves it,
// and the demo, the end-to-end test and scripts/bench-crawl.sh crawl it.
// Without Config.Heterogeneous the web serves byte for byte what it
// served before the field existed.
//
// # The HTTPS web
//
// With Config.HTTPSShare a fraction of the sites (drawn per site from the
// seed) answer over TLS on a second port (Config.HTTPSAddr, on the same
// addresses), with certificates (ECDSA P-256) of a certificate authority
// the web makes at Start (CACertPEM), chosen by the name the client
// sends (SNI). Their pages are https URLs (SeedURLs, URLs, Page and
// links say so). On plain HTTP:
//
//   - most HTTPS sites answer every request, robots.txt included, with a
//     301 to the same URI on https; the http:// home page of each in-scope
//     one is a page of the model, linked from the previous site's home
//     page, and a quarter of the cross-host links to such home pages use
//     http:// too;
//   - one in 16 of the in-scope HTTPS sites serves its pages on plain HTTP
//     too, the same bytes (their links to their own site are relative), so
//     that its pages are duplicates across schemes, all in the model;
//   - one in 16 is HTTPS-only: DNS gives it the address 127.78.0.1
//     (TLSOnlyAddress), where only the TLS port listens: port 80 is
//     closed. No link to it uses http://.
//
// Sites with an alias (whose bare name answers on plain HTTP with a 301
// to https://www.X), the first seed and the out-of-scope sites always
// redirect. A fraction Config.TroubleFraction (0.12) of the other in-scope
// HTTPS sites are in TLS trouble, in rotation: an expired certificate, a
// certificate for another name, a self-signed certificate, SNI required
// (such a site is HTTPS-only, and the TLS-only address fails every
// handshake without a name), TLS 1.2 only, TLS 1.3 only. A client without
// SNI elsewhere gets a certificate for default.testweb.invalid. TLS gives
// the truth about a host. With Config.Hostile the HTTPS web adds four
// hostile hosts: tls-stall (reads the ClientHello, never answers),
// tls-drip (the handshake one byte every 100 ms), tls-garbage (random
// bytes instead of a ServerHello) and scheme-loop (http -> https -> http
// ... for ever). Links to pages of a site on the other scheme are
// absolute (a scheme-relative link would keep the wrong port). Without
// Config.HTTPSShare the web serves byte for byte what it served before
// the field existed.
//
// # The subdomain web
//
// On real national webs hundreds of sites sit under one registrable
// domain (the public suffix list's eTLD+1: *.uchile.cl, a hosting
// provider's *.hosting.cl), on several servers, and a crawler's
// politeness unit is the pair (address, registrable domain). With
// Config.SubdomainShare a fraction of the in-scope sites, drawn from the
// seed, are renamed as subdomains of Config.SubdomainDomains
// registrable domains (max(2, Hosts/100) by default): uni1.<suffix>,
// hosting1.<suffix>, uni2.<suffix> ..., their sites named after a
// department (fisica3.uni1.cl) or a customer (volcan7.hosting1.cl). The
// first domains hold the most sites. A renamed site keeps its pages,
// robots.txt (which names the new host) and response time; every link,
// redirect and sitemap uses the new name, and it has no bare-name alias.
// The sites of a domain of m sites are on k = ceil(m/3)+1 of the web's
// addresses (at least 2, at most m and Config.Addresses, drawn per
// domain), so each domain has several servers and some servers hold
// several of its sites, one politeness unit; names of other domains may
// share these addresses too, as on shared hosting. The sites of a domain
// whose robots.txt asks for a Crawl-delay are all on its first address,
// with one sibling that asks for none (which must so wait their delay);
// the others are on the other addresses, which so serve no Crawl-delay
// site of the domain. With Config.Heterogeneous every other domain (the
// first, third ...) of three sites or more has a Crawl-delay site (its
// smallest is given a delay of CrawlDelayMin to CrawlDelayMax seconds
// when none of them drew one; with Config.CrawlDelayMaxPages only when
// that site has at most that many pages), so one server of the domain
// is slow and the others fast. Subdomains gives the domains and their sites;
// AddressOf, DNS and the request log (Request.Addr) give each site's
// address, which is what a politeness audit groups by. The subdomain
// web needs Config.Addresses of at least 2; an HTTPS-only site is on
// TLSOnlyAddress as ever. Without Config.SubdomainShare the web serves
// byte for byte what it served before the field existed
// (TestUnchangedWebs).
//
// # The changing web
//
// With Config.Change a share of the HTML pages (ChangeShare, 70%) change
// in time, each as a Poisson process of its own mean interval, drawn
// log-uniformly between ChangeIntervalMin and ChangeIntervalMax (30 s to
// 50 min): the version of a page live at a time is the number of its
// changes since the web's time origin (Config.TimeOrigin, by default when
// New built it), a function of the configuration alone (VersionAt,
// ChangeTimes, ChangeInterval, PageAt). Each version adds a paragraph to
// the page and, on some pages (ChangeLinkShare), links to other pages of
// its site; version 0 is the page of the web without Change. Every site
// then has a validator policy (Validators): HonestShare (60%) send a true
// Last-Modified and ETag and answer conditional requests with 304,
// LyingShare (20%) send "Last-Modified: now" with every answer, the
// others send none; sitemaps' lastmod are true, now or absent alike.
// Config.CompressShare and ChunkedShare make sites answer with gzip or br
// (Encodings) and with chunked transfer coding (Chunked). The request log
// records conditional requests, 304s, versions, codings and chunking.
// docs/testweb.md gives the rule of the versions step by step, so that a
// tool can recompute it, and the policies in detail. Without these fields
// the web serves byte for byte what it served before they existed
// (TestUnchangedWebs).
package testweb

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// PageInfo is the truth about one URL as the web serves it.
type PageInfo struct {
	// URL is the absolute URL (with the port once the web is started).
	URL string
	// Status is the HTTP status: 200, 301/302, 404, 500 ...
	Status int
	// Location is the absolute redirect target for 3xx (the header
	// itself may be relative).
	Location string
	// MIME is the Content-Type header, e.g. "text/html; charset=utf-8",
	// "text/html; charset=iso-8859-1", "text/html", "application/pdf".
	MIME string
	// Title is the text of the <title> element ("" for non-HTML).
	Title string
	// Links are the absolute URLs of every link in the page, in document
	// order with duplicates kept: href of <a> and <area>, src of <frame>
	// and <iframe>, resolved against the page URL or its <base href>,
	// fragment removed. Text inside <script> and comments is not a link.
	Links []string
	// Anchors are the anchor texts of Links (same index): the text inside
	// <a> with white space collapsed, the alt text of <area>, and "" for
	// frames, iframes and image-only links.
	Anchors []string
	// Version is the version of a changing page (Config.Change) the
	// answer is of: 0 for every page that never changes.
	Version int
}

// Request is one HTTP request received by the web.
type Request struct {
	// ConnID identifies the TCP connection (see Conn).
	ConnID uint64
	// Host is the Host header without port, lower-cased.
	Host string
	// Path is the RequestURI (path and query).
	Path string
	// Method and UserAgent are as sent by the client.
	Method, UserAgent string
	// Status is the HTTP status answered; 0 when the connection was reset
	// before any response (the hostile reset host).
	Status int
	// Start is when the handler began and End when the full response had
	// been written (for the hostile streaming answers: when the server
	// saw the client go away).
	Start, End time.Time
	// RemoteAddr is the client address.
	RemoteAddr string
	// Addr is the local IP address that answered (the listener the
	// connection came in on, e.g. "127.77.0.3"): with Config.Addresses
	// > 1 the address DNS gave the host, which is what a politeness
	// audit groups servers by.
	Addr string
	// Conditional tells whether the request carried If-None-Match or
	// If-Modified-Since (a 304 answer has Status 304).
	Conditional bool
	// Version is the version of the changing page served (Config.Change;
	// 0 for every other answer, and for a 304).
	Version int
	// Encoding is the content coding of the answer's body: "gzip", "br"
	// or "" (Config.CompressShare); Chunked whether it was sent with
	// chunked transfer coding (Config.ChunkedShare).
	Encoding string
	Chunked  bool
}

// Conn is one TCP connection accepted by the HTTP server.
type Conn struct {
	// ID is the connection id (1, 2, ... in accept order).
	ID uint64
	// Host is the host of the first request on the connection, or over
	// TLS the server name (SNI) of its handshake ("" if none).
	Host string
	// TLS tells whether the connection came in on the TLS port, Resumed
	// whether its handshake resumed an earlier session (known once a
	// request came).
	TLS, Resumed bool
	// Addr is the local IP address the connection came in on.
	Addr string
	// Opened and Closed are when the connection was accepted and closed;
	// Closed is zero while it is open.
	Opened, Closed time.Time
}

// Web is a synthetic web. Create it with New, serve it with Start and stop
// it with Close. All methods are safe for concurrent use.
type Web struct {
	cfg    Config
	voc    *vocab
	sites  []site // in-scope hosts first, then out-of-scope ones
	nIn    int
	byName map[string]int
	bySize []int // in-scope site indices, biggest first
	logo   []byte
	port   atomic.Int64

	aliasOf   map[string]int // Config.Heterogeneous: bare name -> site index
	aliasFrom map[int][]int  // Config.Heterogeneous: site -> aliases its home page links

	subGroups []subdomainGroup // Config.SubdomainShare: the registrable domains of the subdomain web
	subAddr   map[int]int      // Config.SubdomainShare: site -> index of its address (subdomains.go)

	https *httpsWeb     // Config.HTTPSShare only
	sm    *sitemapState // Config.Sitemaps (sitemaps.go)

	hostiles      []*hostile          // Config.Hostile only
	hostileByName map[string]*hostile // by host name
	hostileFrom   map[int][]*hostile  // by in-scope site linking them
	bombOnce      sync.Once
	bomb          []byte        // the gzip bomb, built on first request
	quit          chan struct{} // closed by Close: streaming handlers stop
	gzipWriters   sync.Pool     // *gzip.Writer of compressed answers (serve.go)
	brWriters     sync.Pool     // *brotli.Writer of compressed answers
	lastUA        atomic.Pointer[string]

	life    sync.Mutex // serializes Start and Close
	started bool
	closed  bool
	httpSrv *http.Server
	dnsSrvs []*dns.Server
	wg      sync.WaitGroup // server goroutines
	connWG  sync.WaitGroup // open HTTP connections

	mu       sync.Mutex // guards the fields below
	httpAddr string
	dnsAddr  string
	answerIP net.IP        // the HTTP listen address
	extraIPs []net.IP      // Config.Addresses-1 further addresses, listening on the same port
	requests [][]reqRecord // chunks of reqChunk records: no copying as it grows
	nReq     int
	reqSeq   uint64 // arrival counter
	conns    []Conn
	connIDs  map[net.Conn]uint64
	// localAddrs interns the local IP addresses of connections.
	localAddrs map[string]string

	// now is the clock of the changing web and the validators (time.Now;
	// tests of the package set their own before Start).
	now func() time.Time

	dnsQueries atomic.Int64
	dnsMode    atomic.Int32         // a DNSMode, set by SetDNSDown
	dnsAnswers map[string]dnsAnswer // set by SetDNSAnswer, guarded by mu
}

// reqRecord is a completed request with its arrival number, kept small
// (times as Unix nanoseconds, strings shared between requests where they
// can be) because the scale run records a million of them.
type reqRecord struct {
	seq, connID                         uint64
	host, path, method, ua, addr, local string
	status                              int
	start, end                          int64
	version                             int32  // Request.Version
	coding                              string // Request.Encoding: a constant, shared
	chunked, conditional                bool
}

// reqChunk is the number of request records per chunk.
const reqChunk = 1 << 14

// connIDKey is the context key of the connection id.
type connIDKey struct{}

// New builds the model of a web from cfg. It validates cfg (for instance,
// it refuses listen addresses that are not IPv4 loopback addresses) but
// does not listen on anything; call Start for that.
func New(cfg Config) (*Web, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.timed() && c.TimeOrigin.IsZero() {
		c.TimeOrigin = time.Now().Truncate(time.Second).UTC()
	}
	w := &Web{cfg: c, voc: newVocab(), connIDs: make(map[net.Conn]uint64), localAddrs: map[string]string{}, quit: make(chan struct{}),
		now: time.Now}
	if _, port, err := net.SplitHostPort(c.HTTPAddr); err == nil {
		// A fixed port is known before Start: URLs carry it at once.
		if p, err := strconv.Atoi(port); err == nil && p > 0 {
			w.port.Store(int64(p))
		}
	}
	w.buildSites()
	w.buildHostile()
	w.buildSitemaps()
	w.pickAliases()
	w.buildHTTPS()
	w.buildServing()
	w.logo, err = makeLogo(c.Seed)
	if err != nil {
		return nil, fmt.Errorf("testweb: drawing logo: %w", err)
	}
	return w, nil
}

// makeLogo draws a small deterministic PNG.
func makeLogo(seed int64) ([]byte, error) {
	r := newRNG(uint64(seed), tagBody, 0)
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	c1 := color.RGBA{uint8(r.next()), uint8(r.next()), uint8(r.next()), 255}
	c2 := color.RGBA{uint8(r.next()), uint8(r.next()), uint8(r.next()), 255}
	for y := 0; y < 16; y++ {
		for x := 0; x < 16; x++ {
			if (x/4+y/4)%2 == 0 {
				img.Set(x, y, c1)
			} else {
				img.Set(x, y, c2)
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Start listens on the HTTP and DNS addresses and serves the web in the
// background. A web can be started only once.
func (w *Web) Start() error {
	w.life.Lock()
	defer w.life.Unlock()
	if w.started {
		return errors.New("testweb: web already started")
	}
	ln, err := net.Listen("tcp4", w.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("testweb: listening for HTTP on %s: %w", w.cfg.HTTPAddr, err)
	}
	ta, ok := ln.Addr().(*net.TCPAddr)
	if !ok || ta.IP.To4() == nil || !ta.IP.IsLoopback() {
		_ = ln.Close()
		return fmt.Errorf("testweb: HTTP listener has non-loopback address %v", ln.Addr())
	}
	lns := []net.Listener{ln}
	closeAll := func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}
	var extra []net.IP
	for i := 1; i < w.cfg.Addresses; i++ {
		ip := extraAddress(i)
		l, err := net.Listen("tcp4", net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port)))
		if err != nil {
			closeAll()
			return fmt.Errorf("testweb: listening for HTTP on address %d of %d: %w", i+1, w.cfg.Addresses, err)
		}
		lns = append(lns, l)
		extra = append(extra, ip)
	}
	tlsLns, err := w.listenTLS(extra)
	if err != nil {
		closeAll()
		return err
	}
	lns = append(lns, tlsLns...)
	w.mu.Lock()
	w.httpAddr = ta.String()
	w.answerIP = ta.IP.To4()
	w.extraIPs = extra
	w.mu.Unlock()
	prevPort := w.port.Load()
	w.port.Store(int64(ta.Port))

	srvs, dnsAddr, err := w.startDNS()
	if err != nil {
		closeAll()
		w.port.Store(prevPort)
		w.mu.Lock()
		w.httpAddr = ""
		w.mu.Unlock()
		return err
	}
	w.mu.Lock()
	w.dnsAddr = dnsAddr
	w.mu.Unlock()
	w.dnsSrvs = srvs

	w.httpSrv = &http.Server{
		Handler:           http.HandlerFunc(w.serveHTTP),
		ConnContext:       w.connContext,
		ConnState:         w.connState,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	for _, l := range lns {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			_ = w.httpSrv.Serve(l) // returns http.ErrServerClosed after Close
		}()
	}
	w.started = true
	return nil
}

// extraAddress is the i-th further listen address (i >= 1):
// 127.77.X.Y with X.Y = i.
func extraAddress(i int) net.IP {
	return net.IPv4(127, 77, byte(i>>8), byte(i))
}

// AddressOf returns the IPv4 address DNS gives host (after Start): the
// HTTP listen address, or with Config.Addresses > 1 one of the web's
// addresses chosen by a hash of the name (of the site's name for an
// alias, which so shares its site's address), or for a site of the
// subdomain web (Config.SubdomainShare) the address its domain's
// placement gave it; an HTTPS-only site's is TLSOnlyAddress.
func (w *Web) AddressOf(host string) net.IP {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addressOfLocked(w.addressName(canonicalHost(host)))
}

// addressName is the name whose hash places a host on an address: the
// site's own name for an alias, so that both names have one address.
func (w *Web) addressName(host string) string {
	if si, ok := w.aliasOf[host]; ok {
		return w.sites[si].name
	}
	return host
}

// addressOfLocked is AddressOf for a canonical name; w.mu is held.
func (w *Web) addressOfLocked(name string) net.IP {
	k := w.addressIndex(name)
	switch {
	case k < 0:
		return tlsOnlyIP()
	case k == 0 || k > len(w.extraIPs):
		return w.answerIP
	}
	return w.extraIPs[k-1]
}

// addressIndex is where the web serves a canonical name: 0 the HTTP
// listen address, k the k-th of the Config.Addresses-1 further ones, -1
// the TLS-only address of HTTPS-only sites. It depends on the
// configuration alone, so a web rebuilt from its configuration and never
// started knows it too (ServerOf).
func (w *Web) addressIndex(name string) int {
	if w.https != nil {
		if si, ok := w.byName[name]; ok && w.https.scheme[si] == schemeHTTPSOnly {
			return -1
		}
	}
	n := max(w.cfg.Addresses, 1)
	if n == 1 {
		return 0
	}
	if si, ok := w.byName[name]; ok {
		if k, ok := w.subdomainAddress(si); ok && k < n {
			return k
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % uint32(n))
}

// ServerOf names the server that answers host, the same name for every
// host served from one address (AddressOf once started): "address K" (K
// as addressIndex gives it) or "TLS-only address". Unlike AddressOf it
// needs no Start: the audits and the crawl's timeline group a web rebuilt
// from its configuration by it, so that a host the crawl never asked is
// still on its real server.
func (w *Web) ServerOf(host string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.addressIndex(w.addressName(canonicalHost(host))); k >= 0 {
		return "address " + strconv.Itoa(k)
	}
	return "TLS-only address"
}

// Close stops the HTTP and DNS servers and waits for their goroutines. It
// gives in-flight requests up to 5 seconds to finish, then closes every
// connection. Closing a web that was not started, or twice, is a no-op.
// The model (Page, URLs, Requests ...) stays usable after Close.
func (w *Web) Close() error {
	w.life.Lock()
	defer w.life.Unlock()
	if !w.started || w.closed {
		return nil
	}
	w.closed = true
	close(w.quit) // the drip, endless and huge answers stop at once
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if err := w.httpSrv.Shutdown(ctx); err != nil {
		if cerr := w.httpSrv.Close(); cerr != nil {
			errs = append(errs, fmt.Errorf("testweb: closing HTTP server: %w", cerr))
		}
	}
	for _, s := range w.dnsSrvs {
		if err := s.ShutdownContext(ctx); err != nil {
			errs = append(errs, fmt.Errorf("testweb: shutting down DNS server: %w", err))
		}
	}
	w.wg.Wait()
	w.connWG.Wait() // every connection has run its StateClosed hook
	return errors.Join(errs...)
}

// HTTPAddr returns the actual HTTP listen address ("127.0.0.1:PORT"), or
// "" before Start.
func (w *Web) HTTPAddr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.httpAddr
}

// DNSAddr returns the actual DNS listen address (UDP and TCP), or "" before
// Start.
func (w *Web) DNSAddr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dnsAddr
}

// Port returns the HTTP port, or 0 before Start.
func (w *Web) Port() int {
	return int(w.port.Load())
}

// SeedURLs returns the home pages of n in-scope hosts, biggest sites first
// (ties in a fixed order), as absolute URLs. URLs carry the port only
// after Start.
func (w *Web) SeedURLs(n int) []string {
	n = min(max(n, 0), w.nIn)
	out := make([]string, 0, n)
	for _, si := range w.bySize[:n] {
		out = append(out, w.origin(si)+"/")
	}
	return out
}

// HostNames returns the in-scope host names, sorted; with Config.Hostile
// they include the hostile hosts (see HostileHosts), and with
// Config.Heterogeneous the bare names that are aliases of sites (see
// Aliases).
func (w *Web) HostNames() []string {
	out := make([]string, 0, w.nIn+len(w.hostiles)+len(w.aliasOf))
	for _, s := range w.sites[:w.nIn] {
		out = append(out, s.name)
		if s.alias != "" {
			out = append(out, s.alias)
		}
	}
	for _, h := range w.hostiles {
		out = append(out, h.name)
	}
	sort.Strings(out)
	return out
}

// OutOfScopeHostNames returns the out-of-scope host names, sorted.
func (w *Web) OutOfScopeHostNames() []string {
	out := make([]string, 0, len(w.sites)-w.nIn)
	for _, s := range w.sites[w.nIn:] {
		out = append(out, s.name)
	}
	sort.Strings(out)
	return out
}

// Page returns the truth about rawURL as the web serves it: status,
// Content-Type, redirect target, title, links and anchors. ok is false if
// the URL is not a page of the model; info then still says what the
// server answers (404 for unknown paths, 421 for unknown hosts; robots.txt
// is not a page). The port and fragment of rawURL are ignored. Call it
// after Start so that the URLs in the answer carry the port. A changing
// page (Config.Change) is described as it is now: PageAt describes it at
// another time.
func (w *Web) Page(rawURL string) (info PageInfo, ok bool) {
	return w.PageAt(rawURL, w.now())
}

// PageAt is Page at time t: a changing page (Config.Change) is described
// in the version live at t (see VersionAt); every other page is the same
// at any time.
func (w *Web) PageAt(rawURL string, t time.Time) (info PageInfo, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") && !(w.https != nil && strings.EqualFold(u.Scheme, "https")) {
		return PageInfo{URL: rawURL}, false
	}
	overTLS := strings.EqualFold(u.Scheme, "https")
	host := canonicalHost(u.Hostname())
	if h, hostile := w.hostileByName[host]; hostile {
		if h.kind == HostileSchemeLoop {
			_, info := w.schemeLoopResponse(h, u.RequestURI(), overTLS)
			return info, u.RequestURI() == "/"
		}
		return w.hostilePage(h, u.RequestURI())
	}
	si, alias, known := w.siteOf(host)
	if !known {
		_, info = errorResponse(http.StatusMisdirectedRequest)
		info.URL = rawURL
		return info, false
	}
	if w.https != nil && !alias {
		if info, ok, done := w.pageOnScheme(si, u.RequestURI(), overTLS, t); done {
			return info, ok
		}
	}
	if alias {
		// Every answer is a redirect; only the home page, which pages
		// link, is a page of the model.
		_, info = w.aliasResponse(si, u.RequestURI())
		return info, u.RequestURI() == "/"
	}
	_, info, ok = w.respondAt(si, w.origin(si), u.RequestURI(), true, t)
	return info, ok
}

// URLs returns, sorted, every URL that is a page of the model, whatever
// its status (200, 3xx, the 404 and 500 pages of the model), on in-scope
// and out-of-scope hosts; robots.txt files and the hostile hosts (see
// HostileHosts) are not included. Every one is reachable from its host's
// home page through links, except the home page of an alias (a 301 to
// its site's home page, see Aliases), which is linked from other sites.
func (w *Web) URLs() []string {
	var out []string
	for si := range w.sites {
		s := &w.sites[si]
		o := w.origin(si)
		for i := 0; i < s.pages; i++ {
			out = append(out, o+w.pathOf(s, i, s.kindOf(i)))
		}
		if s.hasLogo {
			out = append(out, o+logoPath)
		}
		if s.alias != "" {
			out = append(out, w.aliasOrigin(si)+"/")
		}
		out = append(out, w.plainSideURLs(si)...)
	}
	sort.Strings(out)
	return out
}

// Requests returns a copy of every HTTP request received whose response
// has been written, in arrival order (the order in which handlers began).
func (w *Web) Requests() []Request {
	w.mu.Lock()
	recs := make([]reqRecord, 0, w.nReq)
	for _, c := range w.requests {
		recs = append(recs, c...)
	}
	w.mu.Unlock()
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].seq < recs[b].seq })
	out := make([]Request, len(recs))
	for k, r := range recs {
		out[k] = Request{
			ConnID: r.connID, Host: r.host, Path: r.path, Method: r.method, UserAgent: r.ua,
			Status: r.status, Start: time.Unix(0, r.start), End: time.Unix(0, r.end), RemoteAddr: r.addr,
			Addr: r.local, Conditional: r.conditional, Version: int(r.version), Encoding: r.coding, Chunked: r.chunked,
		}
	}
	return out
}

// Conns returns a copy of every TCP connection accepted, by id.
func (w *Web) Conns() []Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Conn(nil), w.conns...)
}

// DNSQueries returns the number of DNS messages received.
func (w *Web) DNSQueries() int {
	return int(w.dnsQueries.Load())
}

// canonicalHost lower-cases a host name and removes a trailing dot.
func canonicalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostOnly strips the port from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// connContext assigns an id to a new connection and notes the local
// address it came in on (one string per address, shared by its
// connections and requests).
func (w *Web) connContext(ctx context.Context, c net.Conn) context.Context {
	local := hostOnly(c.LocalAddr().String())
	w.mu.Lock()
	if a, ok := w.localAddrs[local]; ok {
		local = a
	} else {
		w.localAddrs[local] = local
	}
	id := uint64(len(w.conns) + 1)
	w.conns = append(w.conns, Conn{ID: id, Addr: local, Opened: time.Now()})
	if tc, ok := c.(*tls.Conn); ok {
		w.conns[id-1].TLS = true
		if rc, ok := tc.NetConn().(*tlsRawConn); ok {
			rc.id.Store(id)
		}
	}
	w.connIDs[c] = id
	w.connWG.Add(1)
	w.mu.Unlock()
	return context.WithValue(ctx, connIDKey{}, id)
}

// connState notes when connections close.
func (w *Web) connState(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	w.mu.Lock()
	if id, ok := w.connIDs[c]; ok {
		w.conns[id-1].Closed = time.Now()
		delete(w.connIDs, c)
		w.connWG.Done()
	}
	w.mu.Unlock()
}

// serveHTTP answers one request and records it.
func (w *Web) serveHTTP(rw http.ResponseWriter, req *http.Request) {
	start := time.Now()
	connID, _ := req.Context().Value(connIDKey{}).(uint64)
	host := canonicalHost(hostOnly(req.Host))
	si, alias, known := w.siteOf(host)
	h, hostile := w.hostileByName[host]
	switch {
	case known && alias:
		host = w.sites[si].alias
	case known:
		host = w.sites[si].name // one string per host, however many requests
	case hostile:
		host = h.name
	}
	var local string
	w.mu.Lock()
	w.reqSeq++
	seq := w.reqSeq
	if connID > 0 {
		c := &w.conns[connID-1]
		if c.Host == "" {
			c.Host = host
		}
		if req.TLS != nil && req.TLS.DidResume {
			c.Resumed = true
		}
		local = c.Addr
	}
	w.mu.Unlock()
	uri := req.RequestURI
	if !strings.HasPrefix(uri, "/") {
		uri = req.URL.RequestURI()
	}
	d := w.cfg.Latency
	if known {
		d += w.sites[si].respTime
	}
	if d > 0 {
		w.pause(req, d)
	}
	now := w.now()
	var status int
	var served response // the in-memory answer, for the record
	streamed := false
	if known && !alias {
		status, streamed = w.serveSitemapStream(rw, req, si, uri)
	}
	switch {
	case streamed:
	case hostile:
		status = w.serveHostile(rw, req, h, uri)
	default:
		var resp response
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			resp, _ = errorResponse(http.StatusMethodNotAllowed)
		} else {
			resp = w.answer(si, known, alias, uri, req.TLS != nil, now)
		}
		if known {
			resp = w.decorate(req, si, resp, now)
		}
		w.writeResponse(rw, req, resp)
		status, served = resp.status, resp
	}
	end := time.Now()
	rec := reqRecord{
		seq: seq, connID: connID, host: host, path: req.RequestURI, method: req.Method,
		ua: w.internUA(req.UserAgent()), addr: req.RemoteAddr, local: local, status: status,
		start: start.UnixNano(), end: end.UnixNano(),
		coding: served.header.coding, chunked: served.header.chunked, conditional: served.header.conditional,
	}
	if status == http.StatusOK {
		rec.version = int32(min(served.version, math.MaxInt32))
	}
	w.mu.Lock()
	if n := len(w.requests); n == 0 || len(w.requests[n-1]) == reqChunk {
		w.requests = append(w.requests, make([]reqRecord, 0, reqChunk))
	}
	last := &w.requests[len(w.requests)-1]
	*last = append(*last, rec)
	w.nReq++
	w.mu.Unlock()
}

// answer is the in-memory answer to a GET of uri at time at on a host
// that is not hostile: site si (known), under its alias name (alias), over
// TLS or not; before decorate adds validators, a content coding and
// chunking. The streamed sitemaps are not among them (serveSitemapStream).
func (w *Web) answer(si int, known, alias bool, uri string, overTLS bool, at time.Time) response {
	var resp response
	switch {
	case !known:
		resp, _ = errorResponse(http.StatusMisdirectedRequest)
	case alias:
		resp, _ = w.aliasResponse(si, uri)
	case w.https != nil:
		resp = w.respondOnSchemeAt(si, uri, overTLS, at)
	default:
		resp, _, _ = w.respondAt(si, w.origin(si), uri, false, at)
	}
	return resp
}

// ResponseAt is what the web answers a GET of rawURL at time t: the
// status, the Content-Type and the body as the server sends it without a
// content coding (HTML in its site's charset), a changing page
// (Config.Change) in the version live at t (VersionAt). Validators,
// compression and chunking change no content and are left out. ok is
// false for a URL that does not parse or whose scheme the web does not
// serve, and for the answers whose bodies are never held in memory: the
// hostile hosts' (Config.Hostile) and the streamed sitemaps. A test
// compares what an archive replays with it.
func (w *Web) ResponseAt(rawURL string, t time.Time) (status int, contentType string, body []byte, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") && !(w.https != nil && strings.EqualFold(u.Scheme, "https")) {
		return 0, "", nil, false
	}
	host := canonicalHost(u.Hostname())
	if _, hostile := w.hostileByName[host]; hostile {
		return 0, "", nil, false
	}
	si, alias, known := w.siteOf(host)
	uri := u.RequestURI()
	if known && !alias && w.sitemapStreamed(si, uri) {
		return 0, "", nil, false
	}
	resp := w.answer(si, known, alias, uri, strings.EqualFold(u.Scheme, "https"), t)
	return resp.status, resp.ctype, resp.body, true
}

// internUA returns ua, sharing the string of the previous request when it
// is the same (a crawler sends one User-Agent), so that a million
// recorded requests do not hold a million copies.
func (w *Web) internUA(ua string) string {
	if p := w.lastUA.Load(); p != nil && *p == ua {
		return *p
	}
	w.lastUA.Store(&ua)
	return ua
}

// writeResponse sends a complete in-memory response, with what
// decorate added (serve.go): validators, a 304 without body, a content
// coding (the body is coded already), chunked transfer coding.
func (w *Web) writeResponse(rw http.ResponseWriter, req *http.Request, resp response) {
	h := rw.Header()
	h["Date"] = nil // keep responses byte-identical
	x := &resp.header
	if x.lastModified != "" {
		h.Set("Last-Modified", x.lastModified)
	}
	if x.etag != "" {
		h.Set("ETag", x.etag)
	}
	if x.vary {
		h.Set("Vary", "Accept-Encoding")
	}
	if resp.status == http.StatusNotModified {
		rw.WriteHeader(resp.status)
		return
	}
	h.Set("Content-Type", resp.ctype)
	if x.coding != "" {
		h.Set("Content-Encoding", x.coding)
	}
	if !x.chunked {
		h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	}
	if resp.location != "" {
		h.Set("Location", resp.location)
	}
	if resp.status == http.StatusMethodNotAllowed {
		h.Set("Allow", "GET, HEAD")
	}
	rw.WriteHeader(resp.status)
	switch {
	case req.Method == http.MethodHead:
	case x.chunked:
		writeChunked(rw, resp.body)
	default:
		_, _ = rw.Write(resp.body)
	}
}
