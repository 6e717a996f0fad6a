package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

func rawConfig() Config {
	cfg := testConfig()
	cfg.Raw = true
	return cfg
}

func gzipped(t testing.TB, plain []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(plain)
	zw.Close()
	return b.Bytes()
}

// chunk frames body in chunks of n bytes (RFC 9112 §7.1), with a chunk
// extension on the first, and ends it with an empty trailer.
func chunk(body []byte, n int) []byte {
	var b bytes.Buffer
	for i := 0; i < len(body); i += n {
		part := body[i:min(i+n, len(body))]
		ext := ""
		if i == 0 {
			ext = ";name=value"
		}
		fmt.Fprintf(&b, "%x%s\r\n%s\r\n", len(part), ext, part)
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// serveRaw answers every request read on a connection with the next of
// answers, bytes as given, and closes after the last.
func serveRaw(answers ...[]byte) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReader(c)
		for _, a := range answers {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			c.Write(a)
		}
	}
}

// TestRawResponse: in raw mode the head is stored as the server sent it
// (names' case, order, repeats, a folded line, an unknown field), the
// gzip body as received but de-chunked, and the decoded size counted;
// the Transfer-Encoding line goes with the chunks. A bare-LF head is
// stored with CRLF. The second response comes on the same connection,
// after a 100 Continue: the head recorded is its own.
func TestRawResponse(t *testing.T) {
	plain := []byte(strings.Repeat("<p>Hola, mundo.</p>\n", 500))
	gz := gzipped(t, plain)
	head := "HTTP/1.1 200 OK\r\n" +
		"server: hand-made/1.0\r\n" +
		"ETag: \"v1\"\r\n" +
		"Content-Type: text/html; charset=utf-8\r\n" +
		"Set-Cookie: a=1\r\n" +
		"X-Folded: one\r\n two\r\n" +
		"Set-Cookie: b=2\r\n" +
		"content-encoding: gzip\r\n" +
		"Transfer-Encoding: chunked\r\n" +
		"X-Odd-CASE: yes\r\n" +
		"\r\n"
	first := append([]byte(head), chunk(gz, 100)...)
	second := "HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.0 404 Not here\n" + // bare LF, as some hand-made servers send
		"Content-Length: 5\n" +
		"ETag: W/\"x\"\n" +
		"\n" +
		"gone!"
	url := rawServer(t, serveRaw(first, []byte(second)))
	h := New(rawConfig(), nil).NewHost()
	defer h.Close()

	resp, err := h.Get(t.Context(), url+"/a", testMax)
	if err != nil {
		t.Fatal(err)
	}
	wantHead := strings.Replace(head, "Transfer-Encoding: chunked\r\n", "", 1)
	if string(resp.Head) != wantHead {
		t.Errorf("head:\n%q\nwant\n%q", resp.Head, wantHead)
	}
	if resp.StatusLine != "HTTP/1.1 200 OK" || !resp.Dechunked || resp.Coding != "gzip" {
		t.Errorf("status line %q, dechunked %v, coding %q", resp.StatusLine, resp.Dechunked, resp.Coding)
	}
	if !bytes.Equal(resp.Body, gz) || resp.Size != int64(len(plain)) || resp.Truncated != "" {
		t.Errorf("body %d bytes (want the %d gzip bytes sent), size %d (want %d), truncated %q", len(resp.Body), len(gz), resp.Size, len(plain), resp.Truncated)
	}
	if got, err := resp.Content(1 << 20); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("content: %d bytes, %v", len(got), err)
	}
	if resp.Header.Get("Etag") != `"v1"` || resp.MIME() != "text/html" {
		t.Errorf("parsed header %v", resp.Header)
	}

	resp, err = h.Get(t.Context(), url+"/b", testMax)
	if err != nil {
		t.Fatal(err)
	}
	if want := "HTTP/1.0 404 Not here\r\nContent-Length: 5\r\nETag: W/\"x\"\r\n\r\n"; string(resp.Head) != want {
		t.Errorf("second head %q, want %q", resp.Head, want)
	}
	if string(resp.Body) != "gone!" || resp.Size != 5 || resp.Coding != "" || resp.Dechunked || !resp.Reused {
		t.Errorf("second: body %q size %d coding %q dechunked %v reused %v", resp.Body, resp.Size, resp.Coding, resp.Dechunked, resp.Reused)
	}
}

// TestRawGzipBomb: 100 MB of zeros in about 100 KB of gzip is refused at
// the cap of decoded bytes in raw mode too, storing only the first
// encoded bytes; so is a brotli bomb.
func TestRawGzipBomb(t *testing.T) {
	zeros := make([]byte, 1<<20)
	var gz, br bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	bw := brotli.NewWriterLevel(&br, 1)
	for range 100 {
		zw.Write(zeros)
		bw.Write(zeros)
	}
	zw.Close()
	bw.Close()
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/br" {
			w.Header().Set("Content-Encoding", "br")
			w.Write(br.Bytes())
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	for _, path := range []string{"/gz", "/br"} {
		resp, err, took := get(t, rawConfig(), s.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Size != testMax || resp.Truncated != TruncatedLength || int64(len(resp.Body)) > rawCap(testMax) || len(resp.Body) == 0 {
			t.Errorf("%s: size %d, %d bytes stored (cap %d), truncated %q", path, resp.Size, len(resp.Body), rawCap(testMax), resp.Truncated)
		}
		sent := gz.Bytes()
		if path == "/br" {
			sent = br.Bytes()
		}
		if !bytes.HasPrefix(sent, resp.Body) {
			t.Errorf("%s: the stored bytes are not the first bytes sent", path)
		}
		// net/http's server sends so long a body chunked.
		if !bytes.Contains(resp.Head, []byte("Content-Encoding: ")) || !resp.Dechunked || bytes.Contains(resp.Head, []byte("Transfer-Encoding")) {
			t.Errorf("%s: head %q, dechunked %v", path, resp.Head, resp.Dechunked)
		}
		if took > 2*time.Second {
			t.Errorf("%s took %v", path, took)
		}
	}
}

// TestRawUnknownCoding: a coding the client cannot decode is stored as
// received, counted and cut at the cap as received bytes; a damaged gzip
// body is a decode error, what arrived stored.
func TestRawUnknownCoding(t *testing.T) {
	big := bytes.Repeat([]byte("z"), testMax+10)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/zstd":
			w.Header().Set("Content-Encoding", "zstd")
			w.Write(big)
		case "/bad":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xffnot deflate at all"))
		}
	})
	resp, err, _ := get(t, rawConfig(), s.URL+"/zstd")
	if err != nil || len(resp.Body) != testMax || resp.Size != testMax || resp.Truncated != TruncatedLength || resp.Coding != "zstd" {
		t.Errorf("zstd: %v, %d bytes, size %d, truncated %q, coding %q", err, len(resp.Body), resp.Size, resp.Truncated, resp.Coding)
	}
	resp, err, _ = get(t, rawConfig(), s.URL+"/bad")
	if kindOf(err) != KindDecode || resp == nil || resp.Truncated != TruncatedOther || !bytes.HasPrefix(resp.Body, []byte("\x1f\x8b")) {
		t.Errorf("bad gzip: %v, %+v", err, resp)
	}
}

func TestRawHead(t *testing.T) {
	for _, c := range []struct {
		name, in  string
		dechunked bool
		want      string
	}{
		{"kept as received", "HTTP/1.1 200 OK\r\nserver: x\r\nETag: \"a\"\r\n\r\n", false, "HTTP/1.1 200 OK\r\nserver: x\r\nETag: \"a\"\r\n\r\n"},
		{"bare LF made CRLF", "HTTP/1.0 200 OK\nA: b\n\n", false, "HTTP/1.0 200 OK\r\nA: b\r\n\r\n"},
		{"chunked: framing fields left out, folded line with them",
			"HTTP/1.1 200 OK\r\nA: 1\r\ntransfer-encoding: chunked\r\n\tmore\r\nContent-Length : 5\r\nB: 2\r\n folded\r\n\r\n", true,
			"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n folded\r\n\r\n"},
		{"not chunked: Content-Length kept", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"},
		{"no empty line", "HTTP/1.1 200 OK\r\nA: b", false, "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"},
		{"empty", "", false, "\r\n"},
	} {
		if got := string(rawHead([]byte(c.in), c.dechunked)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzRawHead: whatever head a server sends, the stored head is its
// lines with CRLF endings, ends with exactly one empty line, and starts
// with the status line.
func FuzzRawHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n x\r\n\r\n"), true)
	f.Add([]byte("HTTP/1.0 200 OK\nA: b\n\n"), false)
	f.Add([]byte("\r\n\r\n"), true)
	f.Fuzz(func(t *testing.T, in []byte, dechunked bool) {
		out := rawHead(in, dechunked)
		if !bytes.HasSuffix(out, []byte("\r\n")) || bytes.Contains(out[:len(out)-2], []byte("\r\n\r\n")) && !bytes.HasPrefix(out, []byte("\r\n")) {
			t.Fatalf("%q: stored %q", in, out)
		}
		first, _, _ := bytes.Cut(in, []byte("\n"))
		if !bytes.HasPrefix(out, append(bytes.TrimSuffix(first, []byte("\r")), '\r', '\n')) {
			t.Fatalf("%q: stored %q does not start with the status line", in, out)
		}
		if len(out) > 2*len(in)+4 {
			t.Fatalf("%q grew to %q", in, out)
		}
	})
}

// FuzzReadRaw: whatever a server sends as a gzip, brotli or deflate
// body, raw mode stores at most rawCap bytes of it, counts at most the
// cap, and never panics.
func FuzzReadRaw(f *testing.F) {
	f.Add(gzipped(f, bytes.Repeat([]byte("hola "), 1000)), "gzip")
	f.Add([]byte("not compressed"), "br")
	f.Add([]byte("x\x9c\x03\x00\x00\x00\x00\x01"), "deflate")
	const max = 4096
	f.Fuzz(func(t *testing.T, data []byte, coding string) {
		resp := &http.Response{Header: http.Header{"Content-Encoding": {coding}}, Body: io.NopCloser(bytes.NewReader(data))}
		var h Host
		body, size, truncated, _ := h.readRaw(new(bytes.Buffer), resp, max)
		if int64(len(body)) > rawCap(max) || size > max || size < 0 {
			t.Fatalf("%d bytes stored, size %d, truncated %q", len(body), size, truncated)
		}
		if truncated == "" && !bytes.Equal(body, data) && len(data) <= max {
			t.Fatalf("a whole body stored as %q, sent %q", body, data)
		}
	})
}
