package fetch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRequestAsNetHTTP: the request the session writes (and stores) is
// byte for byte what net/http writes for the same GET and header, line
// breaks in values made spaces included.
func TestRequestAsNetHTTP(t *testing.T) {
	c := New(testConfig(), nil)
	for _, tc := range []struct {
		url      string
		ims, inm string
	}{
		{url: "http://a.cl/"},
		{url: "http://a.cl:8080/x/y?q=1&r=%20"},
		{url: "https://www.uchile.cl/índice?ü=1"},
		{url: "http://b.cl/p", ims: "Tue, 24 Nov 2026 10:00:00 GMT", inm: `"abc"`},
		{url: "http://b.cl/p", inm: "\"x\"\r\nX-Injected: 1"},
		{url: "http://[::1]:99/"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodGet, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = http.Header{"User-Agent": {c.cfg.UserAgent}, "Accept": {"*/*"}, "Accept-Encoding": {AcceptEncoding}}
		if tc.ims != "" {
			req.Header.Set("If-Modified-Since", tc.ims)
		}
		if tc.inm != "" {
			req.Header.Set("If-None-Match", tc.inm)
		}
		var want bytes.Buffer
		if err := req.Write(&want); err != nil {
			t.Fatal(err)
		}
		got := c.request(u.RequestURI(), u.Host, Request{URL: tc.url, IfModifiedSince: tc.ims, IfNoneMatch: tc.inm})
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.url, got, want.Bytes())
		}
	}
}

// TestHugeHeader: a response head past MaxHeaderBytes is a protocol
// error, found without reading the rest of what the server sends.
func TestHugeHeader(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("HTTP/1.1 200 OK\r\n"))
		line := []byte("X-Filler: " + strings.Repeat("a", 1000) + "\r\n")
		for i := 0; i < 10000; i++ { // 10 MB of header, unless the client hangs up
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	})
	cfg := testConfig()
	cfg.MaxHeaderBytes = 16 << 10
	resp, err, took := get(t, cfg, url+"/")
	if resp != nil || kindOf(err) != KindProtocol || !strings.Contains(Text(err), "16384 bytes") {
		t.Fatalf("huge header: %v, %v", resp, err)
	}
	if took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestInformational: 1xx responses before the response are skipped (up
// to five), and the connection is kept for the next request.
func TestInformational(t *testing.T) {
	url := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" +
				"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	for i := 0; i < 2; i++ {
		resp, err := h.Get(context.Background(), url+"/", testMax)
		if err != nil || resp.Status != 200 || string(resp.Body) != "ok" || resp.ConnRequests != i+1 {
			t.Fatalf("request %d: %+v, %v", i, resp, err)
		}
	}

	endless := rawServer(t, func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		for i := 0; i < 100; i++ {
			if _, err := c.Write([]byte("HTTP/1.1 102 Processing\r\n\r\n")); err != nil {
				return
			}
		}
	})
	resp, err, _ := get(t, testConfig(), endless+"/")
	if resp != nil || kindOf(err) != KindProtocol {
		t.Fatalf("endless 1xx: %v, %v", resp, err)
	}
}

// TestUnreadBodyClosesConnection: a body left unread (cut at the cap)
// ends the connection, and the next request opens another instead of
// reading the rest as a response.
func TestUnreadBodyClosesConnection(t *testing.T) {
	big := strings.Repeat("x", 3*testMax)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write([]byte(big))
			return
		}
		w.Write([]byte("small"))
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	resp, err := h.Get(context.Background(), s.URL+"/big", testMax)
	if err != nil || resp.Truncated != TruncatedLength {
		t.Fatalf("big: %v, %v", resp, err)
	}
	resp, err = h.Get(context.Background(), s.URL+"/small", testMax)
	if err != nil || string(resp.Body) != "small" || resp.Reused {
		t.Fatalf("small after big: %+v, %v", resp, err)
	}
	if got := h.ServerCloses(); len(got) != 0 {
		t.Errorf("our own close reported as the server's: %v", got)
	}
	if s.conns.Load() != 2 || h.peak != 1 {
		t.Errorf("%d connections, %d at once; want 2, 1", s.conns.Load(), h.peak)
	}
}

// TestHTTPS: over TLS (a certificate nobody vouches for), responses come
// whole, the connection is kept alive, and a server that closes it while
// idle is noticed before the next request, which goes on a new one.
func TestHTTPS(t *testing.T) {
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("secure " + r.URL.Path))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Config.IdleTimeout = 100 * time.Millisecond
	s.StartTLS()
	defer s.Close()
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	for i, path := range []string{"/a", "/b"} {
		resp, err := h.Get(context.Background(), s.URL+path, testMax)
		if err != nil || string(resp.Body) != "secure "+path || resp.ConnRequests != i+1 {
			t.Fatalf("%s: %+v, %v", path, resp, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // the server closes the idle connection
	resp, err := h.Get(context.Background(), s.URL+"/c", testMax)
	if err != nil || string(resp.Body) != "secure /c" || resp.Reused {
		t.Fatalf("after the idle close: %+v, %v", resp, err)
	}
	if got := h.ServerCloses(); fmt.Sprint(got) != "[2]" {
		t.Errorf("server closes %v, want [2]", got)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2", conns.Load())
	}
}

// TestUnsolicitedBytes: bytes a server sends on an idle connection are
// never read as the next response: the connection is closed, the next
// request goes on a new one, and the close is not counted as the
// server's keep-alive limit.
func TestUnsolicitedBytes(t *testing.T) {
	var conns atomic.Int64
	url := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nforged"))
		http.ReadRequest(br) // until the client hangs up
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	for i := 0; i < 2; i++ {
		time.Sleep(20 * time.Millisecond)
		resp, err := h.Get(context.Background(), url+"/", testMax)
		if err != nil || string(resp.Body) != "ok" || resp.Reused {
			t.Fatalf("request %d: %+v, %v", i, resp, err)
		}
	}
	if got := h.ServerCloses(); len(got) != 0 {
		t.Errorf("unsolicited bytes counted as a keep-alive limit: %v", got)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2", conns.Load())
	}
}

// FuzzResponse: whatever a server sends in answer to a first request —
// any bytes, then silence — the session neither panics nor takes more
// than its body cap, and the second request to the same server is
// answered by what the server sends for it (on the same connection or a
// new one), never by bytes left over from the first answer.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"\x00\x01garbage",
	} {
		f.Add([]byte(s))
	}
	const second = "HTTP/1.1 200 OK\r\nX-Second: 1\r\nContent-Length: 2\r\n\r\nok"
	f.Fuzz(func(t *testing.T, first []byte) {
		var n atomic.Int64
		url := rawServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			for {
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				if n.Add(1) == 1 {
					c.Write(first)
				} else {
					c.Write([]byte(second))
				}
			}
		})
		cfg := testConfig()
		// Short limits, so that an answer that stops short costs little
		// (the second answer comes at once: these never cut it).
		cfg.ReadTimeout = 250 * time.Millisecond
		cfg.TotalTimeout = time.Second
		cfg.MaxHeaderBytes = 4 << 10
		h := New(cfg, nil).NewHost()
		defer h.Close()
		const max = 1024
		if resp, _ := h.Get(context.Background(), url+"/1", max); resp != nil && len(resp.Body) > max {
			t.Fatalf("first: %d bytes, cap %d", len(resp.Body), max)
		}
		resp, err := h.Get(context.Background(), url+"/2", max)
		if err != nil || resp.Header.Get("X-Second") != "1" || string(resp.Body) != "ok" {
			t.Fatalf("second request answered by %+v, %v", resp, err)
		}
	})
}
