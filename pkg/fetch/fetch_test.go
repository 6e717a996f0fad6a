package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

const testMax = 64 << 10

func testConfig() Config {
	return Config{
		UserAgent:      "wirebot-test/1.0 (+http://example.org/bot)",
		ConnectTimeout: 2 * time.Second,
		ReadTimeout:    2 * time.Second,
		TotalTimeout:   5 * time.Second,
		AllowPrivate:   true,
	}
}

// server is an HTTP server on loopback that counts connections and
// requests.
type server struct {
	URL      string
	addr     string
	srv      *http.Server
	conns    atomic.Int64
	requests atomic.Int64
	mu       sync.Mutex
	lastReq  *http.Request
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String(), URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			s.mu.Lock()
			s.lastReq = r
			s.mu.Unlock()
			h(w, r)
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	go s.srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.srv.Shutdown(ctx)
		s.srv.Close()
	})
	return s
}

// rawServer accepts TCP connections and hands each to fn.
func rawServer(t *testing.T, fn func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				fn(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, cfg Config, url string) (*Response, error, time.Duration) {
	t.Helper()
	h := New(cfg, nil).NewHost()
	defer h.Close()
	start := time.Now()
	resp, err := h.Get(context.Background(), url, testMax)
	return resp, err, time.Since(start)
}

func kindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return ""
}

func TestNormalResponse(t *testing.T) {
	body := []byte("<html><title>hola</title></html>")
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Write(body)
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/a?b=c")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.StatusLine != "HTTP/1.1 200 OK" || !bytes.Equal(resp.Body, body) || resp.Truncated != "" {
		t.Fatalf("got %d %q body %q truncated %q", resp.Status, resp.StatusLine, resp.Body, resp.Truncated)
	}
	if resp.MIME() != "text/html" || resp.IP != "127.0.0.1" || resp.Header.Get("Content-Length") != fmt.Sprint(len(body)) {
		t.Errorf("mime %q ip %q header %v", resp.MIME(), resp.IP, resp.Header)
	}
	if !bytes.HasPrefix(resp.Request, []byte("GET /a?b=c HTTP/1.1\r\n")) || !bytes.Contains(resp.Request, []byte("User-Agent: wirebot-test/1.0")) || !bytes.HasSuffix(resp.Request, []byte("\r\n\r\n")) {
		t.Errorf("request recorded as %q", resp.Request)
	}
	r := s.lastReq
	if r.Header.Get("User-Agent") != testConfig().UserAgent || r.Header.Get("Accept-Encoding") != AcceptEncoding || r.Proto != "HTTP/1.1" {
		t.Errorf("server saw %s UA %q AE %q", r.Proto, r.Header.Get("User-Agent"), r.Header.Get("Accept-Encoding"))
	}
}

func TestKeepAliveOneConnection(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "page %s", r.URL.Path) })
	h := New(testConfig(), nil).NewHost()
	for i := 0; i < 5; i++ {
		resp, err := h.Get(context.Background(), fmt.Sprintf("%s/%d", s.URL, i), testMax)
		if err != nil || string(resp.Body) != fmt.Sprintf("page /%d", i) {
			t.Fatalf("request %d: %v %q", i, err, resp.Body)
		}
	}
	h.Close()
	if n := s.conns.Load(); n != 1 {
		t.Errorf("5 requests used %d connections, want 1 (keep-alive)", n)
	}
}

// TestEndlessBody: a server that never stops sending is cut at the cap;
// the response is kept and marked truncated by length.
func TestEndlessBody(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := bytes.Repeat([]byte("<p>more</p>\n"), 1000)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	resp, err, took := get(t, testConfig(), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != testMax || resp.Truncated != TruncatedLength || resp.Header.Get("Content-Length") != "" {
		t.Errorf("body %d bytes, truncated %q, header %v", len(resp.Body), resp.Truncated, resp.Header)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestGzipBomb: 100 MB of zeros in ~100 KB of gzip is cut at the cap of
// decoded bytes.
func TestGzipBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 100; i++ {
		zw.Write(zeros)
	}
	zw.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != testMax || resp.Truncated != TruncatedLength {
		t.Errorf("body %d bytes, truncated %q", len(resp.Body), resp.Truncated)
	}
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get(DecodedHeader) != "gzip" {
		t.Errorf("stored header %v", resp.Header)
	}
}

func TestGzipDecoded(t *testing.T) {
	plain := []byte(strings.Repeat("hola mundo ", 500))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(gz.Len()))
		w.Write(gz.Bytes())
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Body, plain) || resp.Truncated != "" {
		t.Errorf("decoded %d bytes, want %d", len(resp.Body), len(plain))
	}
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get(DecodedHeader) != "gzip" || resp.Header.Get("Content-Length") != "" {
		t.Errorf("stored header %v", resp.Header)
	}
}

func TestBadGzip(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("this is not gzip at all"))
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/")
	if kindOf(err) != KindDecode || resp == nil || resp.Status != 200 {
		t.Fatalf("got %v, %v", resp, err)
	}
}

// TestSlowDrip: a server sending one byte every 20 ms never trips the read
// timeout; the total timeout cuts it within bound.
func TestSlowDrip(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		f := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			f.Flush()
			time.Sleep(20 * time.Millisecond)
		}
	})
	cfg := testConfig()
	cfg.ReadTimeout = time.Second
	cfg.TotalTimeout = 500 * time.Millisecond
	resp, err, took := get(t, cfg, s.URL+"/")
	if kindOf(err) != KindTimeout || !strings.Contains(Text(err), "total") {
		t.Fatalf("err %v", err)
	}
	if resp == nil || resp.Truncated != TruncatedTime || len(resp.Body) == 0 {
		t.Fatalf("response %+v", resp)
	}
	if took < cfg.TotalTimeout || took > cfg.TotalTimeout+500*time.Millisecond {
		t.Errorf("cut after %v, want about %v", took, cfg.TotalTimeout)
	}
}

// TestSlowHeaders: a server dripping its status line is cut by the total
// timeout before any response.
func TestSlowHeaders(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		for _, b := range []byte("HTTP/1.1 200 OK\r\nX-Slow: " + strings.Repeat("y", 1000)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	cfg := testConfig()
	cfg.TotalTimeout = 400 * time.Millisecond
	resp, err, took := get(t, cfg, url+"/")
	if resp != nil || kindOf(err) != KindTimeout {
		t.Fatalf("got %v, %v", resp, err)
	}
	if took > cfg.TotalTimeout+500*time.Millisecond {
		t.Errorf("cut after %v", took)
	}
}

// TestReadTimeout: headers then silence is cut by the read timeout.
func TestReadTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	cfg := testConfig()
	cfg.ReadTimeout = 200 * time.Millisecond
	resp, err, took := get(t, cfg, s.URL+"/")
	if kindOf(err) != KindTimeout || !strings.Contains(Text(err), "no data") {
		t.Fatalf("err %v", err)
	}
	if resp == nil || string(resp.Body) != "start" || resp.Truncated != TruncatedTime {
		t.Fatalf("response %+v", resp)
	}
	if took > time.Second {
		t.Errorf("cut after %v", took)
	}

	// No response at all: the same limit applies to the wait for headers.
	url := rawServer(t, func(c net.Conn) { time.Sleep(time.Second) })
	resp, err, _ = get(t, cfg, url+"/")
	if resp != nil || kindOf(err) != KindTimeout {
		t.Fatalf("silent server: %v, %v", resp, err)
	}
}

// TestGarbage: binary noise served as text/html is stored as it came.
func TestGarbage(t *testing.T) {
	noise := make([]byte, 10000)
	rand.New(rand.NewSource(1)).Read(noise)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(noise)
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/")
	if err != nil || !bytes.Equal(resp.Body, noise) || resp.MIME() != "text/html" {
		t.Fatalf("got %v, %d bytes", err, len(resp.Body))
	}

	// Noise instead of an HTTP response is a protocol error.
	url := rawServer(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		c.Write(noise)
	})
	resp, err, _ = get(t, testConfig(), url+"/")
	if resp != nil || kindOf(err) != KindProtocol {
		t.Fatalf("noise: %v, %v", resp, err)
	}
}

func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func TestConnectionReset(t *testing.T) {
	// Reset before any response.
	url := rawServer(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		reset(c)
	})
	resp, err, _ := get(t, testConfig(), url+"/")
	if resp != nil || kindOf(err) != KindReset {
		t.Fatalf("reset before response: %v, %v (%q)", resp, err, Text(err))
	}

	// Reset in the middle of the body: what came is kept, marked.
	url = rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n<html>partial"))
		time.Sleep(50 * time.Millisecond)
		reset(c)
	})
	resp, err, _ = get(t, testConfig(), url+"/")
	if kindOf(err) != KindReset || resp == nil || string(resp.Body) != "<html>partial" || resp.Truncated != TruncatedDisconnect {
		t.Fatalf("reset mid-body: %+v, %v", resp, err)
	}
	if resp.Header.Get("Content-Length") != "" {
		t.Errorf("Content-Length kept on a cut body")
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	resp, err, _ := get(t, testConfig(), "http://"+addr+"/")
	if resp != nil || kindOf(err) != KindConnect {
		t.Fatalf("got %v, %v", resp, err)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/old")
	if err != nil || resp.Status != 301 || resp.Location() != "/elsewhere" {
		t.Fatalf("got %v, %v", resp, err)
	}
	if n := s.requests.Load(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestBlockedAddress(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	cfg := testConfig()
	cfg.AllowPrivate = false
	resp, err, _ := get(t, cfg, s.URL+"/")
	if resp != nil || Text(err) != "blocked-address 127.0.0.1" {
		t.Fatalf("got %v, %v", resp, err)
	}
	if s.conns.Load() != 0 {
		t.Error("a blocked address was connected to")
	}
}

func TestCancelled(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	resp, err := h.Get(ctx, s.URL+"/", testMax)
	if resp != nil || kindOf(err) != KindCancelled {
		t.Fatalf("got %v, %v", resp, err)
	}
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{"ftp://a.cl/", "/relative", "http://"} {
		if _, err, _ := get(t, testConfig(), u); kindOf(err) != KindBadURL {
			t.Errorf("%q: %v", u, err)
		}
	}
}

// TestBadRequestTarget: a URL whose request target would not be sent as
// one (a space splitting the request line, a control or non-ASCII byte
// that url.Parse leaves in a query) is refused before anything is sent
// (issue 37: "GET /robots.txt?a b HTTP/1.0 HTTP/1.1" was sent).
func TestBadRequestTarget(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	for _, tc := range []struct{ path, want string }{
		{"/robots.txt?a b HTTP/1.0", "bad-url: request target has byte 0x20 at offset 13: only visible ASCII can be sent (not a normalised URL)"},
		{"/?q=\xc3\xa9", "bad-url: request target has byte 0xc3 at offset 4: only visible ASCII can be sent (not a normalised URL)"},
	} {
		resp, err, _ := get(t, testConfig(), s.URL+tc.path)
		if resp != nil || Text(err) != tc.want {
			t.Errorf("%q: %v, %v, want %q", tc.path, resp, err, tc.want)
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("server saw %d requests, want none", n)
	}
	// The same URLs spelt by the normaliser go through.
	resp, err, _ := get(t, testConfig(), s.URL+"/robots.txt?a%20b%20HTTP/1.0")
	if err != nil || resp.Status != 200 {
		t.Fatalf("escaped target: %v, %v", resp, err)
	}
}

// dnsServer answers A queries for names in hosts with 127.0.0.1 and
// NXDOMAIN otherwise; it counts queries.
func dnsServer(t *testing.T, hosts ...string) (string, *atomic.Int64) {
	t.Helper()
	var records []string
	for _, h := range hosts {
		records = append(records, dns.Fqdn(h)+" 60 IN A 127.0.0.1")
	}
	return dnsRecordServer(t, records...)
}

// dnsRecordServer answers each question with the records (zone file
// lines) of its name and type, NXDOMAIN for a name without records; it
// counts queries.
func dnsRecordServer(t *testing.T, records ...string) (string, *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string][]dns.RR{}
	for _, s := range records {
		r := rr(t, s)
		known[strings.ToLower(r.Header().Name)] = append(known[strings.ToLower(r.Header().Name)], r)
	}
	var queries atomic.Int64
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) }, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true // else Go's resolver takes an empty answer for a lame referral and asks again
		q := r.Question[0]
		rrs, ok := known[strings.ToLower(q.Name)]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		for _, a := range rrs {
			if a.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, a)
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String(), &queries
}

// TestBlockedAAAA: a name whose AAAA record carries a private IPv4
// address (NAT64, IPv4-compatible, SIIT, 6to4, Teredo) is refused after
// the lookup and nothing is dialled; one carrying a public IPv4 address
// is allowed, as a host behind DNS64 needs (issue 37).
func TestBlockedAAAA(t *testing.T) {
	dnsAddr, _ := dnsRecordServer(t,
		"nat64.x.test. 60 IN AAAA 64:ff9b::7f00:1",
		"compat.x.test. 60 IN AAAA ::127.0.0.1",
		"siit.x.test. 60 IN AAAA ::ffff:0:a00:1",
		"sixtofour.x.test. 60 IN AAAA 2002:a9fe:a9fe::1",
		"teredo.x.test. 60 IN AAAA 2001:0:4136:e378:8000:63bf:3f57:5601",
		"public.x.test. 60 IN AAAA 64:ff9b::c801:203",
	)
	cfg := testConfig()
	cfg.DNSServer = dnsAddr
	cfg.AllowPrivate = false
	c := New(cfg, nil)
	for host, want := range map[string]string{
		"nat64.x.test":     "blocked-address 64:ff9b::7f00:1 (NAT64 of 127.0.0.1)",
		"compat.x.test":    "blocked-address ::7f00:1 (IPv4-compatible of 127.0.0.1)",
		"siit.x.test":      "blocked-address ::ffff:0:a00:1 (SIIT of 10.0.0.1)",
		"sixtofour.x.test": "blocked-address 2002:a9fe:a9fe::1 (6to4 of 169.254.169.254)",
		"teredo.x.test":    "blocked-address 2001:0:4136:e378:8000:63bf:3f57:5601 (Teredo client of 192.168.169.254)",
	} {
		if _, err := c.Resolve(context.Background(), host); Text(err) != want {
			t.Errorf("Resolve(%s): %v, want %q", host, err, want)
		}
		h := c.NewHost()
		resp, err := h.Get(context.Background(), "http://"+host+"/", testMax)
		h.Close()
		if resp != nil || Text(err) != want {
			t.Errorf("Get(%s): %v, %v, want %q", host, resp, err, want)
		}
	}
	if ip, err := c.Resolve(context.Background(), "public.x.test"); err != nil || ip.String() != "64:ff9b::c801:203" {
		t.Errorf("NAT64 of a public address: %v, %v", ip, err)
	}
}

// TestConfiguredDNS goes through a DNS server given in the config, with
// its answers cached for the run.
func TestConfiguredDNS(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.Host) })
	_, port, _ := net.SplitHostPort(s.addr)
	dnsAddr, queries := dnsServer(t, "www.example.test")
	cfg := testConfig()
	cfg.DNSServer = dnsAddr
	c := New(cfg, nil)
	for i := 0; i < 3; i++ {
		h := c.NewHost()
		resp, err := h.Get(context.Background(), "http://www.example.test:"+port+"/", testMax)
		h.Close()
		if err != nil || string(resp.Body) != "www.example.test:"+port {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if n := queries.Load(); n > 2 { // A and AAAA, once
		t.Errorf("%d DNS queries for one host, want at most 2 (cached)", n)
	}
	h := c.NewHost()
	defer h.Close()
	_, err := h.Get(context.Background(), "http://nowhere.example.test:"+port+"/", testMax)
	if kindOf(err) != KindDNS || !strings.Contains(Text(err), "no such host") {
		t.Fatalf("unknown name: %v", err)
	}

	// Names that resolve to a blocked address are refused after the lookup.
	cfg.AllowPrivate = false
	h2 := New(cfg, nil).NewHost()
	defer h2.Close()
	_, err = h2.Get(context.Background(), "http://www.example.test:"+port+"/", testMax)
	if Text(err) != "blocked-address 127.0.0.1" {
		t.Fatalf("blocked name: %v", err)
	}
}

// TestBeforeSend: the hook runs once per request, before anything is
// written; its error ends the request unsent and keeps the connection.
func TestBeforeSend(t *testing.T) {
	var seen atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		fmt.Fprint(w, "ok")
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	calls := 0
	hold := errors.New("not now")
	req := Request{URL: s.URL + "/a", MaxBody: testMax, BeforeSend: func() error {
		calls++
		if calls == 2 {
			return hold
		}
		return nil
	}}
	for i, want := range []error{nil, hold, nil} {
		_, err := h.Do(context.Background(), req)
		if !errors.Is(err, want) {
			t.Fatalf("request %d: %v, want %v", i, err, want)
		}
	}
	if calls != 3 || seen.Load() != 2 || s.conns.Load() != 1 {
		t.Errorf("%d calls, server saw %d requests on %d connections; want 3, 2 (the held one unsent), 1", calls, seen.Load(), s.conns.Load())
	}
}

// TestBeforeSendWaitIsNotTimed: a wait in the hook (the harvester's
// address floor) does not count against the request's total and read
// limits, which run from when it is sent; they still hold after it.
func TestBeforeSendWaitIsNotTimed(t *testing.T) {
	slow := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-slow:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "ok")
	})
	defer close(slow)
	cfg := testConfig()
	cfg.ReadTimeout = 150 * time.Millisecond
	cfg.TotalTimeout = 250 * time.Millisecond
	h := New(cfg, nil).NewHost()
	defer h.Close()
	wait := func() error { time.Sleep(400 * time.Millisecond); return nil }
	resp, err := h.Do(context.Background(), Request{URL: s.URL + "/a", MaxBody: testMax, BeforeSend: wait})
	if err != nil || string(resp.Body) != "ok" {
		t.Fatalf("a request held 400 ms before it was sent, limits 150/250 ms: %v", err)
	}
	start := time.Now()
	_, err = h.Do(context.Background(), Request{URL: s.URL + "/slow", MaxBody: testMax, BeforeSend: wait})
	if KindOf(Text(err)) != string(KindTimeout) {
		t.Errorf("a server that never answers, after the hold: %v, want a timeout", err)
	}
	if took := time.Since(start); took > 400*time.Millisecond+2*time.Second {
		t.Errorf("the timeout came %v after the start", took)
	}
}
