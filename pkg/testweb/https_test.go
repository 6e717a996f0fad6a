package testweb

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// httpsConfig is a small mostly-HTTPS web with every kind of trouble.
func httpsConfig() Config {
	return Config{Seed: 5, Hosts: 50, MaxPages: 60, OutOfScope: 4, HTTPSShare: 0.8, TroubleFraction: 0.3,
		Heterogeneous: true, ResponseMedian: time.Microsecond, SlowFraction: -1, CrawlDelayFraction: -1, Hostile: true, Sitemaps: true}
}

// newArchivalClient is newClient speaking TLS without verifying
// certificates, as an archival crawler does.
func newArchivalClient(t testing.TB, w *Web) *http.Client {
	c := newClient(t, w)
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test checks certificates itself
	return c
}

func TestHTTPSValidation(t *testing.T) {
	for _, cfg := range []Config{
		{HTTPSShare: -0.1},
		{HTTPSShare: 1.5},
		{HTTPSAddr: "127.0.0.1:0"},
		{TroubleFraction: 0.2},
		{HTTPSShare: 0.5, HTTPSAddr: "10.0.0.1:0"},
		{HTTPSShare: 0.5, TroubleFraction: 2},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestHTTPSMixDeterministic(t *testing.T) {
	mix := func() map[string]SiteTLS {
		w, err := New(httpsConfig())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]SiteTLS{}
		for _, h := range w.HostNames() {
			if info, ok := w.TLS(h); ok {
				out[h] = info
			}
		}
		return out
	}
	a, b := mix(), mix()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two webs of one Config differ in their TLS mix")
	}
	counts := map[string]int{}
	for _, info := range a {
		counts[info.Scheme+"/"+info.PlainHTTP]++
		if info.Trouble != TroubleNone {
			counts[string(info.Trouble)]++
		}
	}
	t.Logf("mix: %v", counts)
	for _, k := range []string{"http/pages", "https/redirect", "https/pages", "https/closed"} {
		if counts[k] == 0 {
			t.Errorf("no site %s", k)
		}
	}
	for _, k := range troubleKinds() {
		if counts[string(k)] == 0 {
			t.Errorf("no site with trouble %s", k)
		}
	}
}

// TestHTTPSPageTruthAndReachability fetches every URL of the model over
// its scheme and compares with the truth, and walks the model from one
// seed: every URL, both schemes, is reachable.
func TestHTTPSPageTruthAndReachability(t *testing.T) {
	w := startWeb(t, httpsConfig())
	c := newArchivalClient(t, w)
	urls := w.URLs()
	if len(urls) != w.PageCount() {
		t.Fatalf("URLs has %d, PageCount %d", len(urls), w.PageCount())
	}
	counts := map[string]int{}
	for _, u := range urls {
		info, ok := w.Page(u)
		if !ok || info.URL != u {
			t.Fatalf("Page(%s) = %v, %+v", u, ok, info)
		}
		r := fetch(t, c, u)
		if r.status != info.Status {
			t.Fatalf("%s: status %d, truth %d", u, r.status, info.Status)
		}
		counts[strings.SplitN(u, ":", 2)[0]]++
		if r.status/100 == 3 {
			base, _ := url.Parse(u)
			abs, err := base.Parse(r.header.Get("Location"))
			if err != nil || abs.String() != info.Location {
				t.Fatalf("%s: Location %q, truth %q", u, r.header.Get("Location"), info.Location)
			}
			if strings.HasPrefix(u, "http:") && strings.HasPrefix(info.Location, "https:") {
				counts["upgrade"]++
			}
			continue
		}
		if !strings.HasPrefix(info.MIME, "text/html") {
			continue
		}
		ex, err := extract(r.body, r.header.Get("Content-Type"), u)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(nonNil(ex.links), nonNil(info.Links)) {
			t.Fatalf("%s: links differ\nserved: %q\ntruth:  %q", u, ex.links, info.Links)
		}
		for _, l := range info.Links {
			if strings.HasPrefix(u, "https:") && strings.HasPrefix(l, "http:") {
				counts["https page links http"]++
			}
		}
		if rest, ok := strings.CutPrefix(u, "http:"); ok {
			if si, _, _ := w.siteOf(hostOf(t, u)); w.isHTTPS(si) {
				// The plain side of a site on both schemes: the same bytes.
				https := "https:" + strings.Replace(rest, ":"+strconv.Itoa(w.Port()), ":"+strconv.Itoa(w.HTTPSPort()), 1)
				if other := fetch(t, c, https); !bytes.Equal(other.body, r.body) {
					t.Fatalf("%s and %s differ", u, https)
				}
				counts["duplicate across schemes"]++
			}
		}
	}
	t.Logf("%d URLs: %v", len(urls), counts)
	for _, k := range []string{"http", "https", "upgrade", "https page links http", "duplicate across schemes"} {
		if counts[k] == 0 {
			t.Errorf("none: %s", k)
		}
	}
	reach := w.Reachable(w.SeedURLs(1), "WireBot")
	seen := map[string]bool{}
	for _, u := range reach {
		seen[u] = true
	}
	// Reachable leaves out what robots.txt forbids; a plain walk does not.
	all := map[string]bool{}
	queue := w.SeedURLs(1)
	all[queue[0]] = true
	for len(queue) > 0 {
		info, _ := w.Page(queue[0])
		queue = queue[1:]
		next := append([]string{info.Location}, info.Links...)
		for _, l := range next {
			if m, ok := w.modelURL(l); ok && !all[m] {
				all[m] = true
				queue = append(queue, m)
			}
		}
	}
	for _, u := range urls {
		if !all[u] {
			t.Errorf("not reachable: %s", u)
		}
	}
	if len(reach) == 0 || len(reach) > len(urls) {
		t.Errorf("Reachable gave %d of %d", len(reach), len(urls))
	}
}

// siteWith returns a host with the given TLS truth.
func siteWith(t *testing.T, w *Web, want func(SiteTLS) bool) string {
	t.Helper()
	for _, h := range w.HostNames() {
		if info, ok := w.TLS(h); ok && want(info) {
			return h
		}
	}
	t.Fatal("no such site")
	return ""
}

// handshake dials host's TLS port (through the web's DNS) and shakes
// hands with cfg; it returns the state or the error.
func handshake(t *testing.T, w *Web, host string, cfg *tls.Config, timeout time.Duration) (tls.ConnectionState, error) {
	t.Helper()
	ip := w.AddressOf(host)
	raw, err := net.DialTimeout("tcp4", net.JoinHostPort(ip.String(), strconv.Itoa(w.HTTPSPort())), time.Second)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer raw.Close()
	tc := tls.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return tls.ConnectionState{}, err
	}
	return tc.ConnectionState(), nil
}

func TestHTTPSCertificatesAndTroubles(t *testing.T) {
	w := startWeb(t, httpsConfig())
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(w.CACertPEM()) {
		t.Fatal("CACertPEM does not parse")
	}
	verify := func(host string) *tls.Config {
		return &tls.Config{ServerName: host, RootCAs: pool}
	}
	good := siteWith(t, w, func(i SiteTLS) bool { return i.Scheme == "https" && i.Trouble == TroubleNone })
	if st, err := handshake(t, w, good, verify(good), 2*time.Second); err != nil || st.Version < tls.VersionTLS12 {
		t.Fatalf("%s: %v", good, err)
	}
	for _, tc := range []struct {
		trouble TLSTrouble
		cfg     func(host string) *tls.Config
		want    string
	}{
		{TroubleExpired, verify, "expired"},
		{TroubleWrongName, verify, "is valid for"},
		{TroubleSelfSigned, verify, "unknown authority"},
		{TroubleSNI, func(string) *tls.Config { return &tls.Config{InsecureSkipVerify: true} }, "internal error"}, //nolint:gosec // no name on purpose
		{TroubleTLS12, func(h string) *tls.Config {
			return &tls.Config{ServerName: h, RootCAs: pool, MinVersion: tls.VersionTLS13}
		}, "version"},
		{TroubleTLS13, func(h string) *tls.Config {
			return &tls.Config{ServerName: h, RootCAs: pool, MaxVersion: tls.VersionTLS12}
		}, "version"},
	} {
		h := siteWith(t, w, func(i SiteTLS) bool { return i.Trouble == tc.trouble })
		_, err := handshake(t, w, h, tc.cfg(h), 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (%s): error %v, want %q", h, tc.trouble, err, tc.want)
		}
		// The same site with SNI and without verification: an archival
		// crawler gets through.
		if _, err := handshake(t, w, h, &tls.Config{ServerName: h, InsecureSkipVerify: true}, 2*time.Second); err != nil { //nolint:gosec // archival
			t.Errorf("%s (%s) without verification: %v", h, tc.trouble, err)
		}
	}
	// HTTPS-only: port 80 is closed.
	closed := siteWith(t, w, func(i SiteTLS) bool { return i.PlainHTTP == "closed" })
	_, err := net.DialTimeout("tcp4", net.JoinHostPort(w.AddressOf(closed).String(), strconv.Itoa(w.Port())), time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%s on plain HTTP: %v, want connection refused", closed, err)
	}
}

func TestHTTPSHostile(t *testing.T) {
	w := startWeb(t, httpsConfig())
	insecure := func(h string) *tls.Config { return &tls.Config{ServerName: h, InsecureSkipVerify: true} } //nolint:gosec // hostile hosts
	for _, tc := range []struct {
		kind    HostileKind
		timeout time.Duration
		want    string
	}{
		{HostileTLSStall, 300 * time.Millisecond, "context deadline"},
		{HostileTLSDrip, 300 * time.Millisecond, "context deadline"},
		{HostileTLSGarbage, 2 * time.Second, "does not look like a TLS handshake"},
	} {
		h := string(tc.kind) + ".hostil.cl"
		start := time.Now()
		_, err := handshake(t, w, h, insecure(h), tc.timeout)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", h, err, tc.want)
		}
		if d := time.Since(start); d > tc.timeout+time.Second {
			t.Errorf("%s took %v", h, d)
		}
	}
	// The connections are known by their server name, and closed (the
	// dripping one at its next byte after the client hung up).
	time.Sleep(3 * TLSDripInterval)
	conns := map[string]int{}
	for _, c := range w.Conns() {
		if kind, ok := w.IsHostile(c.Host); ok && c.TLS {
			conns[string(kind)]++
			if c.Closed.IsZero() {
				t.Errorf("%s: connection %d still open", c.Host, c.ID)
			}
		}
	}
	if conns[string(HostileTLSStall)] != 1 || conns[string(HostileTLSDrip)] != 1 || conns[string(HostileTLSGarbage)] != 1 {
		t.Errorf("connections by hostile kind %v", conns)
	}
	c := newArchivalClient(t, w)
	var loop HostileHost
	for _, hh := range w.HostileHosts() {
		if hh.Kind == HostileSchemeLoop {
			loop = hh
		}
	}
	u := loop.Entries[0]
	for k := 0; k < 4; k++ {
		r := fetch(t, c, u)
		info, _ := w.Page(u)
		if r.status != 301 || r.header.Get("Location") != info.Location {
			t.Fatalf("%s: %d %q, truth %q", u, r.status, r.header.Get("Location"), info.Location)
		}
		next := r.header.Get("Location")
		if next[:5] == u[:5] {
			t.Fatalf("%s -> %s: same scheme", u, next)
		}
		u = next
	}
}
