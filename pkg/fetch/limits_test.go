package fetch

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// TestFirstByteTimeout: a server that accepts the request and thinks for
// too long is cut by the time-to-first-byte limit, before the read and
// total limits.
func TestFirstByteTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	cfg := testConfig()
	cfg.FirstByteTimeout = 300 * time.Millisecond
	cfg.ReadTimeout = 3 * time.Second
	resp, err, took := get(t, cfg, s.URL+"/")
	if resp != nil || kindOf(err) != KindTimeout || !strings.Contains(Text(err), "no response within 300ms") {
		t.Fatalf("got %v, %v", resp, err)
	}
	if took < cfg.FirstByteTimeout || took > cfg.FirstByteTimeout+time.Second {
		t.Errorf("cut after %v", took)
	}
}

// TestMinTransferRate: a server dripping its body below the minimum rate
// is cut after one window, long before the read and total limits; what
// came is kept and marked.
func TestMinTransferRate(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		f := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			f.Flush()
			time.Sleep(50 * time.Millisecond) // 20 bytes/s
		}
	})
	cfg := testConfig()
	cfg.MinTransferRate = 1000
	cfg.RateWindow = 400 * time.Millisecond
	cfg.ReadTimeout = 2 * time.Second
	cfg.TotalTimeout = 10 * time.Second
	resp, err, took := get(t, cfg, s.URL+"/")
	if kindOf(err) != KindTimeout || !strings.Contains(Text(err), "transfer slower than 1000 bytes/s") {
		t.Fatalf("err %v", err)
	}
	if resp == nil || resp.Truncated != TruncatedTime {
		t.Fatalf("response %+v", resp)
	}
	if took > cfg.RateWindow+time.Second {
		t.Errorf("cut after %v, want about %v", took, cfg.RateWindow)
	}

	// A fast server is not cut, however long the body.
	fast := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte("y"), 50000)) })
	if resp, err, _ := get(t, cfg, fast.URL+"/"); err != nil || len(resp.Body) != 50000 {
		t.Fatalf("fast server: %v", err)
	}
}

// TestBrotli: a br body is decoded (under the cap), and a brotli bomb is
// cut at the cap.
func TestBrotli(t *testing.T) {
	plain := []byte(strings.Repeat("¡hola mundo! ", 800))
	var enc bytes.Buffer
	bw := brotli.NewWriter(&enc)
	bw.Write(plain)
	bw.Close()
	// 64 MiB of zeros: level 1 is enough to compress them to a few KiB
	// (and much quicker to build than the best level).
	var bomb bytes.Buffer
	bb := brotli.NewWriterLevel(&bomb, 1)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 64; i++ {
		bb.Write(zeros)
	}
	bb.Close()
	if bomb.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes", bomb.Len())
	}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		if r.URL.Path == "/bomb" {
			w.Write(bomb.Bytes())
			return
		}
		w.Write(enc.Bytes())
	})
	resp, err, _ := get(t, testConfig(), s.URL+"/")
	if err != nil || !bytes.Equal(resp.Body, plain) || resp.Header.Get(DecodedHeader) != "br" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("br: %v, %d bytes, header %v", err, len(resp.Body), resp.Header)
	}
	resp, err, took := get(t, testConfig(), s.URL+"/bomb")
	if err != nil || len(resp.Body) != testMax || resp.Truncated != TruncatedLength {
		t.Fatalf("brotli bomb: %v, %d bytes, truncated %q", err, len(resp.Body), resp.Truncated)
	}
	if took > 2*time.Second {
		t.Errorf("brotli bomb took %v", took)
	}
}

// TestConditional: the validators of an earlier visit are sent; a 304 is
// an answer like any other.
func TestConditional(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Write([]byte("body"))
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	resp, err := h.Do(context.Background(), Request{URL: s.URL + "/", MaxBody: testMax, IfNoneMatch: `"v1"`, IfModifiedSince: "Mon, 02 Jan 2026 15:04:05 GMT"})
	if err != nil || resp.Status != 304 || len(resp.Body) != 0 {
		t.Fatalf("got %v %v", resp, err)
	}
	r := s.lastReq
	if r.Header.Get("If-Modified-Since") != "Mon, 02 Jan 2026 15:04:05 GMT" || !bytes.Contains(resp.Request, []byte("If-None-Match: \"v1\"\r\n")) {
		t.Errorf("server saw %v; request stored as %q", r.Header, resp.Request)
	}
	resp, err = h.Do(context.Background(), Request{URL: s.URL + "/", MaxBody: testMax})
	if err != nil || resp.Status != 200 || string(resp.Body) != "body" || bytes.Contains(resp.Request, []byte("If-")) {
		t.Fatalf("unconditional: %v %v", resp, err)
	}
}

// TestAcceptMIME: a body of a media type not accepted is not read; a
// small one is drained so the connection stays alive, a large one closes
// it.
func TestAcceptMIME(t *testing.T) {
	var sent atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/zip":
			w.Header().Set("Content-Type", "application/zip")
			w.Write(bytes.Repeat([]byte("z"), 1000))
		case "/iso":
			w.Header().Set("Content-Type", "application/x-iso9660-image")
			for i := 0; i < 10000 && r.Context().Err() == nil; i++ {
				n, err := w.Write(bytes.Repeat([]byte("i"), 32<<10))
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html>ok</html>"))
		}
	})
	accept := func(mt string) bool { return mt == "text/html" || mt == "" }
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	do := func(path string) *Response {
		t.Helper()
		resp, err := h.Do(context.Background(), Request{URL: s.URL + path, MaxBody: testMax, Accept: accept})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp
	}
	if r := do("/"); string(r.Body) != "<html>ok</html>" || r.Skipped != "" {
		t.Errorf("html: %+v", r)
	}
	r := do("/zip")
	if len(r.Body) != 0 || r.Skipped != "media type application/zip not accepted" || r.Truncated != TruncatedOther || r.Header.Get("Content-Length") != "" {
		t.Errorf("zip: skipped %q truncated %q body %d header %v", r.Skipped, r.Truncated, len(r.Body), r.Header)
	}
	do("/")
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections after a small skipped body, want 1 (drained, kept alive)", n)
	}
	start := time.Now()
	r = do("/iso")
	if r.Skipped == "" || time.Since(start) > time.Second {
		t.Errorf("iso: %+v after %v", r.Skipped, time.Since(start))
	}
	do("/")
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections after a large skipped body, want 2 (closed)", n)
	}
	if n := sent.Load(); n > 8<<20 {
		t.Errorf("server sent %d bytes of a body that was not wanted", n)
	}
}

// TestConnMetrics: connect time and reuse are reported per response, and
// the requests a connection carried when the server closed it are
// reported to ServerCloses — by Connection: close, and by a server that
// hangs up an idle connection.
func TestConnMetrics(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.Header().Set("Connection", "close") // three requests per connection
		}
		w.Write([]byte("x"))
	})
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	for i := 0; i < 7; i++ {
		resp, err := h.Get(context.Background(), s.URL+"/", testMax)
		if err != nil {
			t.Fatal(err)
		}
		want := i%3 + 1
		if resp.ConnRequests != want || resp.Reused != (want > 1) || (resp.Connect > 0) == resp.Reused || resp.FirstByte <= 0 {
			t.Errorf("request %d: conn requests %d (want %d), reused %v, connect %v, first byte %v", i, resp.ConnRequests, want, resp.Reused, resp.Connect, resp.FirstByte)
		}
	}
	if got := h.ServerCloses(); fmt.Sprint(got) != "[3 3]" {
		t.Errorf("server closes %v, want [3 3]", got)
	}
	if got := h.ServerCloses(); len(got) != 0 {
		t.Errorf("server closes not forgotten: %v", got)
	}

	// A server that closes idle connections after two requests, without
	// saying so.
	url := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; i < 2; i++ {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"))
		}
	})
	h2 := New(testConfig(), nil).NewHost()
	defer h2.Close()
	for i := 0; i < 3; i++ {
		if _, err := h2.Get(context.Background(), url+"/", testMax); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		time.Sleep(50 * time.Millisecond) // let the transport notice the hang-up
	}
	if got := h2.ServerCloses(); fmt.Sprint(got) != "[2]" {
		t.Errorf("idle hang-up: server closes %v, want [2]", got)
	}

	// Closing it ourselves is not the server's doing.
	h3 := New(testConfig(), nil).NewHost()
	h3.Get(context.Background(), s.URL+"/", testMax)
	h3.Close()
	time.Sleep(20 * time.Millisecond)
	if got := h3.ServerCloses(); len(got) != 0 {
		t.Errorf("our own close reported as the server's: %v", got)
	}
}

// TestOneConnectionAcrossPorts: moving to another port of the host closes
// the idle connection before the next one is opened.
func TestOneConnectionAcrossPorts(t *testing.T) {
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a")) })
	b := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("b")) })
	h := New(testConfig(), nil).NewHost()
	defer h.Close()
	for _, u := range []string{a.URL, a.URL, b.URL, a.URL, b.URL} {
		if _, err := h.Get(context.Background(), u+"/", testMax); err != nil {
			t.Fatal(err)
		}
	}
	if h.peak != 1 || a.conns.Load() != 2 || b.conns.Load() != 2 {
		t.Errorf("%d connections open at once (want 1); %d and %d opened (want 2 each)", h.peak, a.conns.Load(), b.conns.Load())
	}
	if got := h.ServerCloses(); len(got) != 0 {
		t.Errorf("our own closes reported as the server's: %v", got)
	}
}

// TestResolverCache: answers and failures are cached for the configured
// time, then asked again; a DNS server that never answers costs one
// timeout.
func TestResolverCache(t *testing.T) {
	dnsAddr, queries := dnsServer(t, "a.example.test")
	now := time.Unix(1700000000, 0)
	r := NewResolver(dnsAddr, time.Second, time.Minute)
	r.now = func() time.Time { return now }
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if addrs, err := r.Lookup(ctx, "a.example.test"); err != nil || len(addrs) != 1 {
			t.Fatalf("lookup %d: %v %v", i, addrs, err)
		}
		if _, err := r.Lookup(ctx, "nx.example.test"); kindOf(err) != KindDNS {
			t.Fatalf("nx %d: %v", i, err)
		}
	}
	first := queries.Load()
	now = now.Add(2 * time.Minute)
	r.Lookup(ctx, "a.example.test")
	r.Lookup(ctx, "nx.example.test")
	if got := queries.Load(); got <= first {
		t.Errorf("expired entries not asked again (%d then %d queries)", first, got)
	}
	// NXDOMAIN is an answer too: the four queries were answered.
	if st := r.Stats(); st.Lookups != 4 || st.Failures != 2 || st.Answered != 4 {
		t.Errorf("stats %+v, want 4 lookups, 2 failures, 4 answered", st)
	}

	// A server that drops every query: one timeout, then the cached
	// failure.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	silent := NewResolver(pc.LocalAddr().String(), 300*time.Millisecond, 0)
	start := time.Now()
	_, err = silent.Lookup(ctx, "www.example.test")
	if kindOf(err) != KindDNS || !strings.Contains(Text(err), "timeout looking up www.example.test") {
		t.Fatalf("silent server: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("silent server took %v", took)
	}
	start = time.Now()
	silent.Lookup(ctx, "www.example.test")
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("cached failure took %v", took)
	}
	// A timeout is the resolver's failure, not an answer (the outage
	// rule counts answers).
	if st := silent.Stats(); st.Lookups != 1 || st.Answered != 0 {
		t.Errorf("silent server's stats %+v, want 1 lookup, none answered", st)
	}
}

// FuzzReadBody: whatever a server sends as a gzip or brotli body, the
// decoded body stays within the cap, and the raw input read within its
// own cap, without a panic.
func FuzzReadBody(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("hola "), 1000))
	zw.Close()
	var br bytes.Buffer
	bw := brotli.NewWriter(&br)
	bw.Write(bytes.Repeat([]byte("hola "), 1000))
	bw.Close()
	f.Add(gz.Bytes(), true)
	f.Add(br.Bytes(), false)
	f.Add([]byte("not compressed"), true)
	const max = 4096
	f.Fuzz(func(t *testing.T, data []byte, isGzip bool) {
		coding := "br"
		if isGzip {
			coding = "gzip"
		}
		resp := &http.Response{Header: http.Header{"Content-Encoding": {coding}}, Body: io.NopCloser(bytes.NewReader(data))}
		body, truncated, _ := readBody(resp, max)
		if len(body) > max || (len(body) == max) != (truncated == TruncatedLength) && truncated != TruncatedLength {
			t.Fatalf("%d bytes, truncated %q", len(body), truncated)
		}
	})
}
