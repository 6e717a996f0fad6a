package fetch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// startHTTPSWeb starts a small mostly-HTTPS test web with every TLS
// trouble and the hostile TLS hosts; cfg resolves through its DNS and
// trusts its CA.
func startHTTPSWeb(t *testing.T) (*testweb.Web, Config) {
	t.Helper()
	w, err := testweb.New(testweb.Config{Seed: 5, Hosts: 50, MaxPages: 20, HTTPSShare: 0.8, TroubleFraction: 0.3, Hostile: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, w.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.DNSServer = w.DNSAddr()
	if cfg.RootCAs, err = LoadRoots(ca); err != nil {
		t.Fatal(err)
	}
	return w, cfg
}

// hostWith returns an in-scope host whose TLS truth satisfies want.
func hostWith(t *testing.T, w *testweb.Web, want func(testweb.SiteTLS) bool) string {
	t.Helper()
	for _, h := range w.HostNames() {
		if info, ok := w.TLS(h); ok && want(info) {
			return h
		}
	}
	t.Fatal("no such host")
	return ""
}

// TestTLSVerdicts: certificate problems never stop a fetch, and each
// response says what was wrong.
func TestTLSVerdicts(t *testing.T) {
	w, cfg := startHTTPSWeb(t)
	c := New(cfg, nil)
	port := ":" + strconv.Itoa(w.HTTPSPort())
	for _, tc := range []struct {
		trouble testweb.TLSTrouble
		valid   bool
		problem string
		version string
	}{
		{testweb.TroubleNone, true, "", ""},
		{testweb.TroubleExpired, false, "expired: not after", ""},
		{testweb.TroubleWrongName, false, "wrong-name: valid for otro-sitio.example", ""},
		{testweb.TroubleSelfSigned, false, "self-signed", ""},
		{testweb.TroubleSNI, true, "", ""},
		{testweb.TroubleTLS12, true, "", "TLS 1.2"},
		{testweb.TroubleTLS13, true, "", "TLS 1.3"},
	} {
		host := hostWith(t, w, func(i testweb.SiteTLS) bool { return i.Scheme == "https" && i.Trouble == tc.trouble })
		h := c.NewHost()
		resp, err := h.Get(context.Background(), "https://"+host+port+"/", testMax)
		h.Close()
		if err != nil {
			t.Fatalf("%s (%s): %v", host, tc.trouble, err)
		}
		ti := resp.TLS
		if ti == nil || ti.Valid != tc.valid || !strings.HasPrefix(ti.Problem, tc.problem) || ti.Cipher == "" ||
			(tc.version != "" && ti.Version != tc.version) {
			t.Errorf("%s (%s): %+v", host, tc.trouble, ti)
		}
	}
	// Plain HTTP has no TLS facts.
	plain := hostWith(t, w, func(i testweb.SiteTLS) bool { return i.Scheme == "http" })
	h := c.NewHost()
	defer h.Close()
	if resp, err := h.Get(context.Background(), "http://"+plain+":"+strconv.Itoa(w.Port())+"/", testMax); err != nil || resp.TLS != nil {
		t.Errorf("plain HTTP: %+v, %v", resp, err)
	}
}

// TestTLSSessionResumption: a second connection to a server resumes the
// first one's session.
func TestTLSSessionResumption(t *testing.T) {
	w, cfg := startHTTPSWeb(t)
	c := New(cfg, nil)
	host := hostWith(t, w, func(i testweb.SiteTLS) bool { return i.Scheme == "https" && i.Trouble == testweb.TroubleNone })
	u := "https://" + host + ":" + strconv.Itoa(w.HTTPSPort()) + "/"
	var resumed []bool
	for k := 0; k < 3; k++ {
		h := c.NewHost()
		resp, err := h.Get(context.Background(), u, testMax)
		if err != nil {
			t.Fatal(err)
		}
		// TLS 1.3 tickets arrive after the handshake: read them with the
		// response, then close.
		resumed = append(resumed, resp.TLS.Resumed)
		if !resp.TLS.Valid {
			t.Errorf("connection %d: %+v", k, resp.TLS)
		}
		h.Close()
	}
	if resumed[0] || !resumed[1] || !resumed[2] {
		t.Errorf("resumed %v, want [false true true]", resumed)
	}
}

// TestHostileTLSBounded: the hostile TLS hosts end within the connect
// time limit, as tls errors.
func TestHostileTLSBounded(t *testing.T) {
	w, cfg := startHTTPSWeb(t)
	cfg.ConnectTimeout = 400 * time.Millisecond
	c := New(cfg, nil)
	for _, hh := range w.HostileHosts() {
		switch hh.Kind {
		case testweb.HostileTLSStall, testweb.HostileTLSDrip, testweb.HostileTLSGarbage:
		default:
			continue
		}
		h := c.NewHost()
		start := time.Now()
		resp, err := h.Get(context.Background(), hh.Entries[0], testMax)
		took := time.Since(start)
		h.Close()
		if resp != nil || kindOf(err) != KindTLS {
			t.Errorf("%s: %v, %v", hh.Name, resp, err)
		}
		if took > cfg.ConnectTimeout+time.Second {
			t.Errorf("%s took %v", hh.Name, took)
		}
		t.Logf("%s: %s after %v", hh.Name, Text(err), took.Round(time.Millisecond))
	}
}

func TestLoadRoots(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadRoots(""); p != nil || err != nil {
		t.Errorf("empty path: %v, %v", p, err)
	}
	for _, f := range []string{bad, filepath.Join(dir, "missing.pem")} {
		if _, err := LoadRoots(f); err == nil {
			t.Errorf("%s: no error", f)
		}
	}
}
