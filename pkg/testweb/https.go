package testweb

// The HTTPS web (Config.HTTPSShare): which sites answer over TLS, their
// plain-HTTP side, their certificate troubles, the certificate authority
// made at Start and the TLS listeners. See "The HTTPS web" in the package
// documentation.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stream tags of the HTTPS web (kept apart from rng.go's list, which
// other parts of the model extend).
const (
	tagHTTPS     uint64 = 0x7f5e_0001
	tagHTTPSLink uint64 = 0x7f5e_0002
)

// Defaults and shares of the HTTPS web.
const (
	// DefaultTroubleFraction is the fraction of the in-scope HTTPS sites
	// whose TLS is in trouble (Config.TroubleFraction).
	DefaultTroubleFraction = 0.12
	// Of every sideCycle in-scope HTTPS sites in order (without trouble,
	// alias, or the first seed), the sideBoth-th serves its pages on
	// plain HTTP too and the sideOnly-th is HTTPS-only; the rest answer
	// 301 to HTTPS on plain HTTP.
	sideCycle = 16
	sideBoth  = 3
	sideOnly  = 9
	// httpLinkChance is the chance that a cross-host link to the home
	// page of a site that upgrades to HTTPS is written with http://.
	httpLinkChance = 0.25
)

// TLSTrouble names what is wrong with a site's TLS.
type TLSTrouble string

// The TLS troubles, one per troubled site, in rotation among the
// troubled in-scope HTTPS sites (so every kind appears once there are six
// of them).
const (
	// TroubleNone is a site whose TLS is in order.
	TroubleNone TLSTrouble = ""
	// TroubleExpired serves a certificate that expired a year ago.
	TroubleExpired TLSTrouble = "expired"
	// TroubleWrongName serves a certificate for another name.
	TroubleWrongName TLSTrouble = "wrong-name"
	// TroubleSelfSigned serves a certificate signed by itself, not by the
	// web's CA.
	TroubleSelfSigned TLSTrouble = "self-signed"
	// TroubleSNI needs SNI: it is HTTPS-only on the TLS-only address,
	// which fails every handshake that names no server.
	TroubleSNI TLSTrouble = "sni-required"
	// TroubleTLS12 speaks TLS 1.2 only.
	TroubleTLS12 TLSTrouble = "tls12-only"
	// TroubleTLS13 speaks TLS 1.3 only.
	TroubleTLS13 TLSTrouble = "tls13-only"
)

// troubleKinds is the rotation of troubles.
func troubleKinds() []TLSTrouble {
	return []TLSTrouble{TroubleExpired, TroubleWrongName, TroubleSelfSigned, TroubleSNI, TroubleTLS12, TroubleTLS13}
}

// The hostile TLS hosts (Config.Hostile with Config.HTTPSShare).
const (
	// HostileTLSStall accepts the TCP connection, reads the ClientHello
	// and never answers: only a handshake time limit stops a client.
	HostileTLSStall HostileKind = "tls-stall"
	// HostileTLSDrip answers the handshake one byte every
	// TLSDripInterval.
	HostileTLSDrip HostileKind = "tls-drip"
	// HostileTLSGarbage answers the ClientHello with 2 KiB of random
	// bytes instead of a ServerHello, and closes.
	HostileTLSGarbage HostileKind = "tls-garbage"
	// HostileSchemeLoop redirects every http:// URL to the same https://
	// URL and every https:// URL back to http://.
	HostileSchemeLoop HostileKind = "scheme-loop"
)

// TLSDripInterval is how long the tls-drip host waits between two bytes
// of its handshake.
const TLSDripInterval = 100 * time.Millisecond

// tlsHostileKinds are the hostile kinds the HTTPS web adds.
func tlsHostileKinds() []HostileKind {
	return []HostileKind{HostileTLSStall, HostileTLSDrip, HostileTLSGarbage, HostileSchemeLoop}
}

// tlsOnlyIP is the address of the HTTPS-only sites: it listens on the
// TLS port only (port 80 closed) and fails handshakes without SNI.
func tlsOnlyIP() net.IP { return net.IPv4(127, 78, 0, 1) }

// siteScheme is how a site answers on the two schemes.
type siteScheme uint8

const (
	schemeHTTP      siteScheme = iota // plain HTTP only (no certificate for the name)
	schemeUpgrade                     // HTTPS; plain HTTP answers 301 to the same URL on https
	schemeBoth                        // HTTPS, and plain HTTP serves the same pages
	schemeHTTPSOnly                   // HTTPS only, on tlsOnlyIP: plain HTTP is refused
)

// httpsWeb is the HTTPS state of a Web (nil without Config.HTTPSShare).
type httpsWeb struct {
	scheme  []siteScheme // per site
	trouble []TLSTrouble // per site
	port    atomic.Int64 // the TLS port, once known

	// Made by Start.
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPEM   []byte
	leafKey *ecdsa.PrivateKey
	configs sync.Map // site index -> *tls.Config; -1: the default
	serial  atomic.Int64
}

// httpsDefaults validates the HTTPS fields of c.
func (c Config) httpsDefaults() (Config, error) {
	if math.IsNaN(c.HTTPSShare) || c.HTTPSShare < 0 || c.HTTPSShare > 1 {
		return c, fmt.Errorf("testweb: HTTPSShare must be between 0 and 1, got %v", c.HTTPSShare)
	}
	if c.HTTPSShare == 0 {
		if c.HTTPSAddr != "" || c.TroubleFraction != 0 {
			return c, errors.New("testweb: HTTPSAddr and TroubleFraction need HTTPSShare")
		}
		return c, nil
	}
	if c.HTTPSAddr == "" {
		c.HTTPSAddr = DefaultAddr
	}
	if err := CheckLoopback(c.HTTPSAddr); err != nil {
		return c, fmt.Errorf("testweb: HTTPS address: %w", err)
	}
	return c, defaultFraction("TroubleFraction", &c.TroubleFraction, DefaultTroubleFraction)
}

// buildHTTPS draws each site's scheme and TLS trouble. Call it once the
// aliases exist: an HTTPS site with an alias, the first seed's site and
// the out-of-scope sites, when HTTPS, upgrade (their plain-HTTP side
// answers 301) and have no TLS trouble, so that the links to a bare name
// (plain HTTP) and the first seed work as ever.
func (w *Web) buildHTTPS() {
	if w.cfg.HTTPSShare <= 0 {
		return
	}
	hw := &httpsWeb{scheme: make([]siteScheme, len(w.sites)), trouble: make([]TLSTrouble, len(w.sites))}
	w.https = hw
	if _, port, err := net.SplitHostPort(w.cfg.HTTPSAddr); err == nil {
		if p, err := strconv.Atoi(port); err == nil && p > 0 {
			hw.port.Store(int64(p))
		}
	}
	first := -1
	if w.nIn > 0 {
		first = w.bySize[0]
	}
	troubled, eligible := 0, 0
	kinds := troubleKinds()
	for si := range w.sites {
		r := newRNG(uint64(w.cfg.Seed), tagHTTPS, uint64(si))
		if !r.chance(w.cfg.HTTPSShare) {
			continue
		}
		sc := schemeUpgrade
		plain := si == first || w.sites[si].alias != "" || !w.sites[si].inScope
		switch {
		case plain:
		case r.chance(w.cfg.TroubleFraction):
			t := kinds[troubled%len(kinds)]
			troubled++
			hw.trouble[si] = t
			if t == TroubleSNI {
				sc = schemeHTTPSOnly
			}
		default:
			// One in every sideCycle of the other in-scope HTTPS sites
			// serves its pages on plain HTTP too, one is HTTPS-only.
			switch eligible % sideCycle {
			case sideBoth:
				sc = schemeBoth
			case sideOnly:
				sc = schemeHTTPSOnly
			}
			eligible++
		}
		hw.scheme[si] = sc
	}
}

// httpsPort is the TLS port, or 0 when unknown.
func (w *Web) httpsPort() int64 {
	if w.https == nil {
		return 0
	}
	return w.https.port.Load()
}

// isHTTPS reports whether site si's pages are https URLs.
func (w *Web) isHTTPS(si int) bool {
	return w.https != nil && w.https.scheme[si] != schemeHTTP
}

// originWith is "scheme://name:port", without the port when it is 0.
func originWith(scheme, name string, port int64) string {
	if port == 0 {
		return scheme + "://" + name
	}
	return scheme + "://" + name + ":" + strconv.FormatInt(port, 10)
}

// httpOrigin is the plain-HTTP origin of site si, whatever its scheme.
func (w *Web) httpOrigin(si int) string {
	return originWith("http", w.sites[si].name, w.port.Load())
}

// schemeOf is the siteScheme of site si (schemeHTTP without HTTPS).
func (w *Web) schemeOf(si int) siteScheme {
	if w.https == nil {
		return schemeHTTP
	}
	return w.https.scheme[si]
}

// ownOrigin is the origin absolute links of a page to its own site use:
// "" (root-relative links) on a site whose plain-HTTP side serves the
// same pages, so that both sides are whole copies of each other.
func (p *pageWriter) ownOrigin() string {
	if p.w.schemeOf(p.si) == schemeBoth {
		return ""
	}
	return p.w.origin(p.si)
}

// schemeRelative turns the origin o into a scheme-relative one
// ("//name:port") when a page of the current site may so refer to it:
// o's scheme is the page's own (the port is the scheme's). Otherwise it
// returns o as it is (an absolute link).
func (p *pageWriter) schemeRelative(o string) string {
	if p.w.https == nil {
		return strings.TrimPrefix(o, "http:")
	}
	if o == "" || p.w.schemeOf(p.si) == schemeBoth {
		return o
	}
	scheme := "http:"
	if p.w.isHTTPS(p.si) {
		scheme = "https:"
	}
	if strings.HasPrefix(o, scheme) {
		return strings.TrimPrefix(o, scheme)
	}
	return o
}

// httpHomeHref returns the reference to the home page of site t a page
// writes: its http:// home page when t upgrades to HTTPS (or serves both
// schemes) and always is
// set (the "next host" link of a home page), or with httpLinkChance
// (other cross-host links to home pages); href otherwise.
func (p *pageWriter) httpHomeHref(t int, href string, always bool) string {
	w := p.w
	if w.https == nil || w.https.scheme[t] != schemeUpgrade && w.https.scheme[t] != schemeBoth || !w.sites[t].inScope {
		return href
	}
	if !always {
		if p.httpsR == nil {
			r := newRNG(w.sites[p.si].seed, uint64(p.i), tagHTTPSLink)
			p.httpsR = &r
		}
		if !p.httpsR.chance(httpLinkChance) {
			return href
		}
	}
	frag := ""
	if k := strings.IndexByte(href, '#'); k >= 0 {
		frag = href[k:]
	}
	rest := strings.TrimPrefix(href, "https:")
	name := w.sites[t].name
	if !strings.HasPrefix(rest, "//"+name+":") && !strings.HasPrefix(rest, "//"+name+"/") && rest != "//"+name {
		return href // a link already rewritten (to an alias)
	}
	return w.httpOrigin(t) + "/" + frag
}

// upgradeResponse is the plain-HTTP answer of a site that upgrades: a
// 301 to the same URI on https.
func (w *Web) upgradeResponse(si int, uri string) (response, PageInfo) {
	resp, info := errorResponse(301)
	resp.location = w.origin(si) + uri
	info.URL = w.httpOrigin(si) + uri
	info.Location = resp.location
	return resp, info
}

// schemeLoopResponse is the scheme-loop host's answer: the same URI on
// the other scheme.
func (w *Web) schemeLoopResponse(h *hostile, uri string, overTLS bool) (response, PageInfo) {
	resp, info := errorResponse(301)
	from, to := originWith("http", h.name, w.port.Load()), originWith("https", h.name, w.httpsPort())
	if overTLS {
		from, to = to, from
	}
	resp.location = to + uri
	info.URL, info.Location = from+uri, resp.location
	return resp, info
}

// tlsHostile reports whether kind is answered on the TLS port only.
func tlsHostile(kind HostileKind) bool {
	return kind == HostileTLSStall || kind == HostileTLSDrip || kind == HostileTLSGarbage
}

// SiteTLS is the truth about a host's schemes and certificate.
type SiteTLS struct {
	// Scheme is the scheme of the site's pages: "http" or "https".
	Scheme string
	// PlainHTTP says what the plain-HTTP side does for an HTTPS site:
	// "redirect" (301 to https), "pages" (the same pages, duplicates of
	// the https ones) or "closed" (the port is closed); "pages" for an
	// HTTP-only site.
	PlainHTTP string
	// Trouble is what is wrong with its TLS, if anything.
	Trouble TLSTrouble
}

// TLS returns the truth about host's schemes and certificate; ok is
// false for names that are not sites of the web (hostile hosts
// included). An alias has its site's, except that its plain-HTTP side
// always redirects.
func (w *Web) TLS(host string) (info SiteTLS, ok bool) {
	si, alias, ok := w.siteOf(canonicalHost(host))
	if !ok {
		return SiteTLS{}, false
	}
	info = SiteTLS{Scheme: "http", PlainHTTP: "pages"}
	if w.https == nil {
		return info, true
	}
	switch w.https.scheme[si] {
	case schemeUpgrade:
		info.Scheme, info.PlainHTTP = "https", "redirect"
	case schemeBoth:
		info.Scheme, info.PlainHTTP = "https", "pages"
	case schemeHTTPSOnly:
		info.Scheme, info.PlainHTTP = "https", "closed"
	}
	if alias {
		info.PlainHTTP = "redirect"
	}
	info.Trouble = w.https.trouble[si]
	return info, true
}

// HTTPSPort returns the TLS port (0 before Start, or without
// Config.HTTPSShare).
func (w *Web) HTTPSPort() int { return int(w.httpsPort()) }

// HTTPSAddr returns the TLS listen address ("127.0.0.1:PORT"), or ""
// before Start or without Config.HTTPSShare.
func (w *Web) HTTPSAddr() string {
	p := w.httpsPort()
	if p == 0 || w.HTTPAddr() == "" {
		return ""
	}
	host, _, _ := net.SplitHostPort(w.HTTPAddr())
	return net.JoinHostPort(host, strconv.FormatInt(p, 10))
}

// CACertPEM returns the PEM of the certificate authority that signs the
// web's certificates (made at Start; nil before, or without
// Config.HTTPSShare). A client that trusts it finds every certificate
// valid except those of the troubled sites.
func (w *Web) CACertPEM() []byte {
	if w.https == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.https.caPEM
}

// TLSOnlyAddress is the address of the HTTPS-only sites (127.78.0.1):
// only the TLS port listens there.
func TLSOnlyAddress() net.IP { return tlsOnlyIP() }

// makeCA creates the web's certificate authority and the key of its
// leaf certificates (ECDSA P-256).
func (hw *httpsWeb) makeCA() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("testweb: CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "wire testweb CA", Organization: []string{"wire testweb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("testweb: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("testweb: CA certificate: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("testweb: leaf key: %w", err)
	}
	hw.caCert, hw.caKey, hw.leafKey = ca, caKey, leafKey
	hw.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	hw.serial.Store(1)
	return nil
}

// leaf makes a certificate for names (DNS names and IP literals), signed
// by the CA, or by itself when selfSigned; expired ones ended a year
// ago.
func (hw *httpsWeb) leaf(names []string, expired, selfSigned bool) (*tls.Certificate, error) {
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(hw.serial.Add(1)),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if expired {
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-2*365*24*time.Hour), now.Add(-365*24*time.Hour)
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	parent, signer := hw.caCert, hw.caKey
	if selfSigned {
		parent, signer = tmpl, hw.leafKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &hw.leafKey.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("testweb: certificate for %s: %w", names[0], err)
	}
	chain := [][]byte{der}
	if !selfSigned {
		chain = append(chain, hw.caCert.Raw)
	}
	return &tls.Certificate{Certificate: chain, PrivateKey: hw.leafKey}, nil
}

// siteConfig is the TLS configuration site si (or, for -1, an unknown
// or missing server name) answers with, made by Start.
func (w *Web) siteConfig(si int) (*tls.Config, error) {
	hw := w.https
	if c, ok := hw.configs.Load(si); ok {
		return c.(*tls.Config), nil
	}
	cfg := &tls.Config{NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	var names []string
	expired, self := false, false
	if si < 0 || hw.scheme[si] == schemeHTTP {
		// A name without a certificate here: what a shared server sends.
		names = []string{"default.testweb.invalid", "127.0.0.1"}
	} else {
		s := &w.sites[si]
		names = []string{s.name}
		if s.alias != "" {
			names = append(names, s.alias)
		}
		switch hw.trouble[si] {
		case TroubleExpired:
			expired = true
		case TroubleWrongName:
			names = []string{"otro-sitio.example"}
		case TroubleSelfSigned:
			self = true
		case TroubleTLS12:
			cfg.MaxVersion = tls.VersionTLS12
		case TroubleTLS13:
			cfg.MinVersion = tls.VersionTLS13
		}
	}
	cert, err := hw.leaf(names, expired, self)
	if err != nil {
		return nil, err
	}
	cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("testweb: certificate of site %d: %w", si, err)
	}
	cfg.Certificates = []tls.Certificate{*cert}
	cfg.CurvePreferences = curves()
	c, _ := hw.configs.LoadOrStore(si, cfg)
	return c.(*tls.Config), nil
}

// curves are the key exchanges the web offers: X25519 and P-256, not
// the post-quantum hybrid a Go client prefers, which costs the server
// several times the CPU of a handshake (2 cores serve a whole web in the
// tests and benchmarks).
func curves() []tls.CurveID { return []tls.CurveID{tls.X25519, tls.CurveP256} }

// makeSiteConfigs makes the TLS configuration of every HTTPS site (and
// the default one) on every core.
func (w *Web) makeSiteConfigs() error {
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Go(func() {
			for si := range next {
				if _, err := w.siteConfig(si); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for si := -1; si < len(w.sites); si++ {
		if si < 0 || w.https.scheme[si] != schemeHTTP {
			next <- si
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// errNoSNI and errHostileTLS end handshakes the server refuses.
var (
	errNoSNI      = errors.New("testweb: no server name (SNI) on the TLS-only address")
	errHostileTLS = errors.New("testweb: hostile TLS host")
)

// configForClient picks the configuration of a handshake by its server
// name, and plays the hostile TLS hosts.
func (w *Web) configForClient(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	name := canonicalHost(hello.ServerName)
	if rc, ok := hello.Conn.(*tlsRawConn); ok && name != "" {
		w.noteServerName(rc.id.Load(), name)
	}
	local, _, _ := net.SplitHostPort(hello.Conn.LocalAddr().String())
	if name == "" && local == tlsOnlyIP().String() {
		return nil, errNoSNI
	}
	if h, ok := w.hostileByName[name]; ok && tlsHostile(h.kind) {
		rc, _ := hello.Conn.(*tlsRawConn)
		switch h.kind {
		case HostileTLSStall:
			w.stall(hello.Conn)
			return nil, errHostileTLS
		case HostileTLSGarbage:
			_, _ = hello.Conn.Write(w.garbage()[:2048])
			_ = hello.Conn.Close()
			return nil, errHostileTLS
		case HostileTLSDrip:
			if rc != nil {
				rc.drip.Store(true)
			}
		}
		return w.siteConfig(-1)
	}
	si, _, ok := w.siteOf(name)
	if !ok {
		return w.siteConfig(-1)
	}
	return w.siteConfig(si)
}

// noteServerName records the server name of connection id's handshake
// as its Host (the name the hostile TLS hosts are known by: no request
// ever comes).
func (w *Web) noteServerName(id uint64, name string) {
	if id == 0 {
		return
	}
	if h, ok := w.hostileByName[name]; ok {
		name = h.name // one string per host, however many connections
	} else if si, alias, ok := w.siteOf(name); ok && alias {
		name = w.sites[si].alias
	} else if ok {
		name = w.sites[si].name
	}
	w.mu.Lock()
	if c := &w.conns[id-1]; c.Host == "" {
		c.Host = name
	}
	w.mu.Unlock()
}

// stall holds a handshake until the client hangs up, the server's
// handshake deadline passes or the web closes.
func (w *Web) stall(c net.Conn) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-w.quit:
			_ = c.SetReadDeadline(time.Now())
		case <-done:
		}
	}()
	var b [1]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			return
		}
	}
}

// tlsRawConn is a TCP connection of the TLS port under its *tls.Conn: a
// tls-drip handshake writes through it one byte at a time.
type tlsRawConn struct {
	net.Conn
	id   atomic.Uint64 // the Conn's id, once known
	drip atomic.Bool
	quit <-chan struct{}
}

// Write sends p, one byte every TLSDripInterval once the connection
// drips.
func (c *tlsRawConn) Write(p []byte) (int, error) {
	if !c.drip.Load() {
		return c.Conn.Write(p)
	}
	for k := range p {
		t := time.NewTimer(TLSDripInterval)
		select {
		case <-t.C:
		case <-c.quit:
			t.Stop()
			return k, net.ErrClosed
		}
		if _, err := c.Conn.Write(p[k : k+1]); err != nil {
			return k, err
		}
	}
	return len(p), nil
}

// tlsListener wraps the TCP connections of a TLS port in tlsRawConns.
type tlsListener struct {
	net.Listener
	quit <-chan struct{}
}

// Accept returns the next connection, wrapped.
func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tlsRawConn{Conn: c, quit: l.quit}, nil
}

// listenTLS makes the CA and opens the TLS listeners: on the HTTPS
// address, on the extra addresses (same port), and on the TLS-only
// address. It returns them wrapped for TLS; nothing without HTTPS.
func (w *Web) listenTLS(extra []net.IP) ([]net.Listener, error) {
	hw := w.https
	if hw == nil {
		return nil, nil
	}
	if err := hw.makeCA(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", w.cfg.HTTPSAddr)
	if err != nil {
		return nil, fmt.Errorf("testweb: listening for HTTPS on %s: %w", w.cfg.HTTPSAddr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	lns := []net.Listener{ln}
	fail := func(err error) ([]net.Listener, error) {
		for _, l := range lns {
			_ = l.Close()
		}
		return nil, err
	}
	for _, ip := range append(append([]net.IP(nil), extra...), tlsOnlyIP()) {
		l, err := net.Listen("tcp4", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err != nil {
			return fail(fmt.Errorf("testweb: listening for HTTPS on %s: %w", ip, err))
		}
		lns = append(lns, l)
	}
	hw.port.Store(int64(port))
	// Every certificate is made now, not at its site's first handshake:
	// a burst of first handshakes (a harvest's start) would otherwise
	// keep the server busy signing while requests wait.
	if err := w.makeSiteConfigs(); err != nil {
		return fail(err)
	}
	base := &tls.Config{GetConfigForClient: w.configForClient, NextProtos: []string{"http/1.1"}}
	out := make([]net.Listener, len(lns))
	for k, l := range lns {
		out[k] = tls.NewListener(&tlsListener{Listener: l, quit: w.quit}, base)
	}
	return out, nil
}

// pageOnScheme is Page for site si (not an alias) on the side the
// request's scheme names, when that side is not the site's own: done is
// false when the site's own answer (respond) is the truth.
func (w *Web) pageOnScheme(si int, uri string, overTLS bool, at time.Time) (info PageInfo, ok, done bool) {
	sc := w.https.scheme[si]
	switch {
	case sc == schemeHTTP && overTLS:
		_, info = errorResponse(421)
		info.URL = originWith("https", w.sites[si].name, w.httpsPort()) + uri
		return info, false, true
	case sc == schemeHTTP || overTLS:
		return PageInfo{}, false, false
	case sc == schemeUpgrade:
		_, info = w.upgradeResponse(si, uri)
		return info, uri == "/" && w.sites[si].inScope, true
	case sc == schemeBoth:
		_, info, ok = w.respondAt(si, w.httpOrigin(si), uri, true, at)
		return info, ok, true
	}
	// HTTPS-only: the connection is refused, there is no answer.
	return PageInfo{URL: w.httpOrigin(si) + uri}, false, true
}

// respondOnScheme is the answer of site si (not an alias) to a request
// for uri over TLS or plain HTTP, now.
func (w *Web) respondOnScheme(si int, uri string, overTLS bool) response {
	return w.respondOnSchemeAt(si, uri, overTLS, w.now())
}

// respondOnSchemeAt is respondOnScheme at time at.
func (w *Web) respondOnSchemeAt(si int, uri string, overTLS bool, at time.Time) response {
	sc := w.https.scheme[si]
	switch {
	case sc == schemeHTTP && overTLS, sc == schemeHTTPSOnly && !overTLS:
		resp, _ := errorResponse(421)
		return resp
	case sc == schemeUpgrade && !overTLS:
		resp, _ := w.upgradeResponse(si, uri)
		return resp
	case sc == schemeBoth && !overTLS:
		resp, _, _ := w.respondAt(si, w.httpOrigin(si), uri, false, at)
		return resp
	}
	resp, _, _ := w.respondAt(si, w.origin(si), uri, false, at)
	return resp
}

// plainSideURLs are the pages of the model on the plain-HTTP side of an
// HTTPS site: the home page of an in-scope site that upgrades (a 301,
// linked from the previous site's home page), or every page of a site
// that serves both schemes.
func (w *Web) plainSideURLs(si int) []string {
	switch w.schemeOf(si) {
	case schemeUpgrade:
		if w.sites[si].inScope {
			return []string{w.httpOrigin(si) + "/"}
		}
	case schemeBoth:
		s := &w.sites[si]
		o := w.httpOrigin(si)
		out := make([]string, 0, s.pages+1)
		for i := 0; i < s.pages; i++ {
			out = append(out, o+w.pathOf(s, i, s.kindOf(i)))
		}
		if s.hasLogo {
			out = append(out, o+logoPath)
		}
		return out
	}
	return nil
}

// plainSideCount is len(plainSideURLs(si)) without building them.
func (w *Web) plainSideCount(si int) int {
	switch w.schemeOf(si) {
	case schemeUpgrade:
		if w.sites[si].inScope {
			return 1
		}
	case schemeBoth:
		n := w.sites[si].pages
		if w.sites[si].hasLogo {
			n++
		}
		return n
	}
	return 0
}

// plainSidePages is the truth of every page of plainSideURLs(si).
func (w *Web) plainSidePages(si int, at time.Time) []PageInfo {
	var out []PageInfo
	for _, u := range w.plainSideURLs(si) {
		info, _ := w.PageAt(u, at)
		out = append(out, info)
	}
	return out
}

// modelOnScheme is modelURL for site si (not an alias) on the side the
// URL's scheme names, when it is not the site's own: done is false when
// the site's own pages decide.
func (w *Web) modelOnScheme(si int, uri string, overTLS bool) (string, bool, bool) {
	sc := w.https.scheme[si]
	switch {
	case sc == schemeHTTP && overTLS:
		return "", false, true
	case sc == schemeHTTP || overTLS:
		return "", false, false
	case sc == schemeUpgrade:
		if uri == "/" && w.sites[si].inScope {
			return w.httpOrigin(si) + "/", true, true
		}
		return "", false, true
	case sc == schemeBoth:
		s := &w.sites[si]
		if s.hasLogo && uri == logoPath {
			return w.httpOrigin(si) + logoPath, true, true
		}
		i := w.lookupPath(s, uri)
		if i < 0 {
			return "", false, true
		}
		return w.httpOrigin(si) + w.pathOf(s, i, s.kindOf(i)), true, true
	}
	return "", false, true
}
