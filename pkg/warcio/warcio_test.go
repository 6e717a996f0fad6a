package warcio

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func exchange(url string, body []byte) *Exchange {
	return &Exchange{URL: url, Date: time.Unix(1700000000, 0), IP: "127.0.0.1",
		Request:    []byte("GET / HTTP/1.1\r\nHost: a.cl\r\nUser-Agent: wirebot\r\n\r\n"),
		StatusLine: "HTTP/1.1 200 OK", Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: body}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "wire test"}, {"format", "WARC File Format 1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{[]byte("<html><title>x</title>hola</html>"), bytes.Repeat([]byte("ñ"), 100000), {}}
	type pos struct{ off, n int64 }
	var ps []pos
	for i, b := range bodies {
		x := exchange("http://a.cl/"+string(rune('a'+i)), b)
		if i == 1 {
			x.Truncated = "length"
			x.Metadata = []Field{{"fetchTimeMs", "12"}, {"wire-error", "timeout: no data for 20s"}}
		}
		off, n, err := w.Write(x)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pos{off, n})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		r, err := ReadResponse(path, p.off, p.n, 1<<30)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if r.Status != 200 || !bytes.Equal(r.Body, bodies[i]) || r.Header.Get("Content-Type") != "text/html; charset=utf-8" || r.Revisit {
			t.Errorf("record %d: status %d, body %d bytes, header %v", i, r.Status, len(r.Body), r.Header)
		}
		if r.URL != "http://a.cl/"+string(rune('a'+i)) || !r.Date.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("record %d: url %q date %v", i, r.URL, r.Date)
		}
	}
	if r, _ := ReadResponse(path, ps[1].off, ps[1].n, 10); r.Truncated != "length" || len(r.Body) != 10 {
		t.Errorf("truncated record read as %q, %d bytes", r.Truncated, len(r.Body))
	}
	// A damaged offset is an error, not a panic.
	if _, err := ReadResponse(path, ps[1].off+7, ps[1].n-7, 1<<30); !errors.Is(err, ErrRecord) {
		t.Errorf("read at a damaged offset: %v", err)
	}
	if _, err := ReadResponse(path, ps[1].off, ps[1].n/2, 1<<30); !errors.Is(err, ErrRecord) {
		t.Errorf("read of a truncated record: %v", err)
	}

	// The whole file validates with gowarc's reader, record by record:
	// warcinfo, then request, response (and metadata) per exchange.
	infos, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, in := range infos {
		types = append(types, in.Type)
	}
	want := "warcinfo request response request response metadata request response"
	if strings.Join(types, " ") != want {
		t.Errorf("records %v, want %s", types, want)
	}
	if infos[4].Offset != ps[1].off || infos[4].Truncated != "length" {
		t.Errorf("response record at %d (truncated %q), the writer said %d", infos[4].Offset, infos[4].Truncated, ps[1].off)
	}
}

// TestRevisit: a 304 is stored as a revisit record with the
// server-not-modified profile, headers and no body.
func TestRevisit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.warc.gz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	x := exchange("http://a.cl/", []byte("ignored"))
	x.StatusLine = "HTTP/1.1 304 Not Modified"
	x.Header = http.Header{"Etag": {`"abc"`}}
	off, n, err := w.Write(x)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r, err := ReadResponse(path, off, n, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Revisit || r.Status != 304 || len(r.Body) != 0 || r.Header.Get("Etag") != `"abc"` {
		t.Errorf("revisit read as %+v", r)
	}
	infos, err := Verify(path)
	if err != nil || len(infos) != 2 || infos[1].Type != "revisit" {
		t.Fatalf("verify: %+v %v", infos, err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(gunzip(t, data), []byte("WARC-Profile: "+ProfileServerNotModified)) {
		t.Error("no server-not-modified profile")
	}
}

// TestBuildError: content WARC cannot carry is a *BuildError and nothing
// is written.
func TestBuildError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.warc.gz")
	w, _ := Create(path)
	defer w.Close()
	for _, x := range []*Exchange{
		exchange("http://a.cl/a b", nil),
		exchange("http://a.cl/\r\nWARC-Type: x", nil),
		{URL: "http://a.cl/", StatusLine: "", Header: http.Header{}},
		{URL: "http://a.cl/", StatusLine: "HTTP/1.1 200 OK", Header: http.Header{}, Metadata: []Field{{"bad name", "x"}}},
	} {
		_, _, err := w.Write(x)
		var be *BuildError
		if !errors.As(err, &be) || be.URL != x.URL {
			t.Errorf("%q: %v, want a BuildError", x.URL, err)
		}
	}
	if w.Size() != 0 {
		t.Errorf("%d bytes written", w.Size())
	}
}

// TestConcurrent writes and reads from many goroutines at once; run with
// -race it guards the gowarc/uuid global (gowarcMu).
func TestConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "wire test"}})
	if err != nil {
		t.Fatal(err)
	}
	type pos struct {
		url     string
		off, n  int64
		content []byte
	}
	var mu sync.Mutex
	var done []pos
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				u := fmt.Sprintf("http://h%d.cl/%d", g, i)
				body := bytes.Repeat([]byte(u), 50+i)
				off, n, err := w.Write(exchange(u, body))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				done = append(done, pos{u, off, n, body})
				var p pos
				if len(done) > 1 {
					p = done[len(done)/2]
				}
				mu.Unlock()
				if p.url != "" {
					if r, err := ReadResponse(path, p.off, p.n, 1<<20); err != nil || !bytes.Equal(r.Body, p.content) {
						t.Errorf("%s: %v", p.url, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	w.Close()
	infos, err := Verify(path)
	if err != nil || len(infos) != 1+2*len(done) {
		t.Fatalf("%d records, %v", len(infos), err)
	}
}

// TestVerifyRejects: a flipped byte inside a record (digest mismatch) and
// a torn file are both reported.
func TestVerifyRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.warc.gz")
	w, _ := Create(path)
	off, n, _ := w.Write(exchange("http://a.cl/", []byte("<html>body</html>")))
	w.Close()
	data, _ := os.ReadFile(path)

	torn := filepath.Join(dir, "torn.warc.gz")
	os.WriteFile(torn, data[:off+n/2], 0o644)
	if _, err := Verify(torn); !errors.Is(err, ErrRecord) {
		t.Errorf("torn file: %v", err)
	}

	// Rewrite the response with a wrong digest, as a foreign writer might.
	raw := gunzip(t, data[off:off+n])
	bad := bytes.Replace(raw, []byte("<html>body</html>"), []byte("<html>BODY</html>"), 1)
	m, err := recompress(bad)
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(dir, "forged.warc.gz")
	os.WriteFile(forged, append(append([]byte{}, data[:off]...), m...), 0o644)
	if _, err := Verify(forged); !errors.Is(err, ErrRecord) {
		t.Errorf("forged digest: %v", err)
	}
}

func BenchmarkEncode(b *testing.B) {
	body := bytes.Repeat([]byte("<p>hola mundo, lorem ipsum dolor sit amet</p>\n"), 350)
	x := exchange("http://www.a.cl/page-1.html", body)
	x.Metadata = []Field{{"fetchTimeMs", "12"}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(x); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzReadResponse: no record, however damaged, panics or hangs the
// reader (gowarc loops on some input, which readResponse keeps from it).
// The input is tried as the plain text of a record, gzipped as one
// member, and as raw bytes.
func FuzzReadResponse(f *testing.F) {
	enc, _ := Encode(exchange("http://a.cl/", []byte("<html>hola</html>")))
	f.Add(gunzip(f, enc.buf.Bytes()[enc.respOff:enc.respOff+enc.respLen]))
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n \r\n\r\nHTTP/"))
	f.Add([]byte("WARC/1.1\r\nWARC-Type: revisit\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{mustGzip(t, data), data} {
			done := make(chan struct{})
			go func() {
				defer close(done)
				readResponse(bytes.NewReader(in), "fuzz", 0, int64(len(in)), 1<<20)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("reader hangs on %q", data)
			}
		}
	})
}

func mustGzip(t testing.TB, b []byte) []byte {
	out, err := recompress(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompressionTiers: a record under storeBelow is stored (its member
// is larger than its body), a larger one compressed, unless its body is
// in a content coding (compressed already: a raw record); all decode to
// the same record text.
func TestCompressionTiers(t *testing.T) {
	line := []byte("<p>hola mundo, lorem ipsum dolor sit amet</p>\n")
	for _, tc := range []struct {
		name       string
		body       []byte
		coding     string
		compressed bool
	}{
		{"small page stored", bytes.Repeat(line, 50), "", false},
		{"large page compressed", bytes.Repeat(line, 350), "", true},
		{"large page in identity compressed", bytes.Repeat(line, 350), "identity", true},
		{"large body in a content coding stored", bytes.Repeat(line, 350), "gzip", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := exchange("http://www.a.cl/", tc.body)
			if tc.coding != "" {
				x.Header.Set("Content-Encoding", tc.coding)
			}
			enc, err := Encode(x)
			if err != nil {
				t.Fatal(err)
			}
			m := enc.buf.Bytes()[enc.respOff : enc.respOff+enc.respLen]
			if got := enc.respLen < len(tc.body); got != tc.compressed {
				t.Errorf("member %d bytes for a %d-byte body: compressed %v, want %v", enc.respLen, len(tc.body), got, tc.compressed)
			}
			if rec := gunzip(t, m); !bytes.Contains(rec, tc.body) {
				t.Errorf("decoded record lacks the body")
			}
		})
	}
}

// TestRawHeadAndWarcinfoID: a response stored as received keeps its head
// byte for byte (names' case and order; Header is not used), its
// payload digest is the body's as stored (the content coding kept), and
// every record of a file names the file's warcinfo record; records made
// for another file's warcinfo are refused.
func TestRawHeadAndWarcinfoID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "wire test"}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("\x1f\x8b not really gzip, but stored as it came")
	head := "HTTP/1.1 200 OK\r\nserver: x\r\nETag: \"1\"\r\nContent-Encoding: gzip\r\n\r\n"
	x := exchange("http://a.cl/", body)
	x.Head = []byte(head)
	x.Header = http.Header{"Ignored": {"yes"}}
	x.Metadata = []Field{{"fetchTimeMs", "3"}}
	off, n, err := w.Write(x)
	if err != nil {
		t.Fatal(err)
	}
	other := *x
	other.WarcinfoID = "<urn:uuid:00000000-0000-4000-8000-000000000000>"
	enc, err := Encode(&other)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Append(enc); !errors.Is(err, ErrWarcinfo) {
		t.Errorf("records of another file appended: %v", err)
	}
	enc.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResponse(path, off, n, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Body, body) || r.Header.Get("Etag") != `"1"` || r.Header.Get("Ignored") != "" {
		t.Errorf("read back %q, header %v", r.Body, r.Header)
	}
	data := gunzip(t, readFile(t, path))
	if !bytes.Contains(data, []byte("\r\n\r\n"+head)) {
		t.Errorf("the head is not stored as given:\n%s", data)
	}
	if !bytes.Contains(data, []byte("WARC-Payload-Digest: "+digestWith(sha1.New(), body, nil)+"\r\n")) {
		t.Error("payload digest is not the stored body's")
	}
	infos, err := Verify(path)
	if err != nil || len(infos) != 4 {
		t.Fatalf("verify: %v, %+v", err, infos)
	}
	if got := bytes.Count(data, []byte("WARC-Warcinfo-ID: "+w.InfoID()+"\r\n")); got != 3 || !strings.HasPrefix(w.InfoID(), "<urn:uuid:") || "<"+infos[0].ID+">" != w.InfoID() {
		t.Errorf("%d records name the warcinfo record %s (%s), want 3", got, w.InfoID(), infos[0].ID)
	}

	x.Head = []byte("HTTP/1.1 200 OK\r\nA: b\r\n") // no empty line
	if _, err := Encode(x); err == nil {
		t.Error("a head without its empty line was taken")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
