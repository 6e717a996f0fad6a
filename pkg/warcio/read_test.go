package warcio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v2"

	"github.com/wirecrawl/wire/pkg/inflate"
)

// gowarcRead reads the plain text of a response or revisit record with
// gowarc (the reader this package used before read.go), for comparison.
func gowarcRead(plain []byte, maxBody int64) (*Response, error) {
	if !bytes.HasPrefix(plain, []byte("WARC/")) || !bytes.Contains(plain, []byte("\r\n\r\n")) {
		return nil, errors.New("not a WARC record") // gowarc loops on some such input
	}
	u := newUnmarshaler(gowarc.WithSkipParseBlock())
	rec, _, _, err := u.Unmarshal(bufio.NewReader(bytes.NewReader(plain)))
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	if rec.Type() != gowarc.Response && rec.Type() != gowarc.Revisit {
		return nil, fmt.Errorf("record type %s", rec.Type())
	}
	r := &Response{URL: rec.WarcHeader().Get(gowarc.WarcTargetURI), Truncated: rec.WarcHeader().Get(gowarc.WarcTruncated), Revisit: rec.Type() == gowarc.Revisit}
	r.Date, _ = rec.Date()
	raw, err := rec.Block().RawBytes()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(raw)
	status, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	r.StatusLine = strings.TrimRight(status, "\r\n")
	parts := strings.SplitN(r.StatusLine, " ", 3)
	if len(parts) < 2 {
		return nil, errors.New("bad status line")
	}
	if r.Status, err = strconv.Atoi(parts[1]); err != nil {
		return nil, err
	}
	if r.Header, err = readHeader(br); err != nil {
		return nil, err
	}
	if r.Body, err = io.ReadAll(io.LimitReader(br, maxBody)); err != nil {
		return nil, err
	}
	return r, nil
}

// sameResponse reports how two responses differ ("" if they do not).
func sameResponse(a, b *Response) string {
	switch {
	case a.URL != b.URL:
		return fmt.Sprintf("url %q / %q", a.URL, b.URL)
	case !a.Date.Equal(b.Date):
		return fmt.Sprintf("date %v / %v", a.Date, b.Date)
	case a.Status != b.Status || a.StatusLine != b.StatusLine:
		return fmt.Sprintf("status %d %q / %d %q", a.Status, a.StatusLine, b.Status, b.StatusLine)
	case !reflect.DeepEqual(a.Header, b.Header):
		return fmt.Sprintf("header %v / %v", a.Header, b.Header)
	case !bytes.Equal(a.Body, b.Body):
		return fmt.Sprintf("body %d / %d bytes", len(a.Body), len(b.Body))
	case a.Truncated != b.Truncated || a.Revisit != b.Revisit:
		return fmt.Sprintf("truncated %q revisit %v / %q %v", a.Truncated, a.Revisit, b.Truncated, b.Revisit)
	}
	return ""
}

// harvested is every kind of response record the harvester writes.
func harvested(t testing.TB) []*Exchange {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "pages", "sqlite-lang.html"))
	if err != nil {
		t.Fatal(err)
	}
	small := exchange("http://a.cl/small", []byte("<html><title>x</title>hola</html>"))
	large := exchange("http://a.cl/large", page) // compressed member
	empty := exchange("http://a.cl/empty", nil)
	cut := exchange("http://a.cl/cut", page[:len(page)/2])
	cut.Truncated = "length"
	cut.Metadata = []Field{{"fetchTimeMs", "12"}, {"wire-error", "timeout"}}
	notMod := exchange("http://a.cl/304", nil)
	notMod.StatusLine = "HTTP/1.1 304 Not Modified"
	notMod.Header = http.Header{"Etag": {`"abc"`}, "Last-Modified": {"Tue, 01 Nov 2022 10:00:00 GMT"}}
	png := exchange("http://a.cl/img.png", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\r\n\r\n"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 3000)...))
	png.Header = http.Header{"Content-Type": {"image/png"}}
	missing := exchange("http://a.cl/404", []byte("not found"))
	missing.StatusLine = "HTTP/1.1 404 Not Found"
	moved := exchange("http://a.cl/301", nil)
	moved.StatusLine = "HTTP/1.0 301"
	moved.Header = http.Header{"Location": {"/there"}, "Set-Cookie": {"a=1", "b=2"}, "X-Robots-Tag": {"noindex", "bot: nofollow"}}
	gz := exchange("http://a.cl/gz", []byte("\x1f\x8b\x08\x00 not really gzip"))
	gz.Header = http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}}
	return []*Exchange{small, large, empty, cut, notMod, png, missing, moved, gz}
}

// TestReaderHarvested writes every kind of record the harvester writes
// with this package's writer and reads each back with a Reader, with the
// package's ReadResponse and with gowarc: the three agree with each other
// and with what was written.
func TestReaderHarvested(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.warc.gz")
	w, err := CreateWithInfo(path, Info{{"software", "wire test"}})
	if err != nil {
		t.Fatal(err)
	}
	xs := harvested(t)
	type pos struct{ off, n int64 }
	var ps []pos
	for _, x := range xs {
		off, n, err := w.Write(x)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pos{off, n})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd := NewReader()
	defer rd.Close()
	for i, x := range xs {
		p := ps[i]
		got, err := rd.ReadResponse(path, p.off, p.n, 1<<30)
		if err != nil {
			t.Fatalf("%s: %v", x.URL, err)
		}
		// What was written.
		status, _ := strconv.Atoi(strings.Fields(x.StatusLine)[1])
		wantBody := x.Body
		if x.NotModified() {
			wantBody = nil
		}
		if got.URL != x.URL || got.Status != status || got.StatusLine != x.StatusLine || !bytes.Equal(got.Body, wantBody) ||
			got.Truncated != x.Truncated || got.Revisit != x.NotModified() || !got.Date.Equal(x.Date) {
			t.Errorf("%s: read %+v", x.URL, got)
		}
		for k, v := range x.Header {
			if !reflect.DeepEqual(got.Header[k], v) {
				t.Errorf("%s: header %s %q, wrote %q", x.URL, k, got.Header[k], v)
			}
		}
		// The package function and gowarc read the same.
		pkg, err := ReadResponse(path, p.off, p.n, 1<<30)
		if err != nil {
			t.Fatalf("%s: ReadResponse: %v", x.URL, err)
		}
		if d := sameResponse(got, pkg); d != "" {
			t.Errorf("%s: Reader and ReadResponse differ: %s", x.URL, d)
		}
		viaGowarc, err := gowarcRead(gunzip(t, data[p.off:p.off+p.n]), 1<<30)
		if err != nil {
			t.Fatalf("%s: gowarc: %v", x.URL, err)
		}
		if d := sameResponse(got, viaGowarc); d != "" {
			t.Errorf("%s: Reader and gowarc differ: %s", x.URL, d)
		}
		// Cut bodies: the Reader and gowarc agree, with and without
		// checking the digest over the whole block.
		for _, maxBody := range []int64{0, 10, int64(len(wantBody)) - 1} {
			if maxBody < 0 {
				continue
			}
			for _, verify := range []bool{false, true} {
				rd.VerifyDigest = verify
				cut, err := rd.ReadResponse(path, p.off, p.n, maxBody)
				if err != nil {
					t.Fatalf("%s: max %d verify %v: %v", x.URL, maxBody, verify, err)
				}
				g, _ := gowarcRead(gunzip(t, data[p.off:p.off+p.n]), maxBody)
				if d := sameResponse(cut, g); d != "" || int64(len(cut.Body)) > maxBody {
					t.Errorf("%s: max %d: %s (%d bytes)", x.URL, maxBody, d, len(cut.Body))
				}
			}
			rd.VerifyDigest = false
		}
	}
	// The whole file is still standard WARC for gowarc's strict reader.
	if _, err := Verify(path); err != nil {
		t.Fatal(err)
	}
}

// TestReaderBodyReuse: a Reader's next read reuses the buffer the
// previous Body was in; the package function's bodies are independent.
func TestReaderBodyReuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.warc.gz")
	w, _ := Create(path)
	a1, n1, _ := w.Write(exchange("http://a.cl/1", bytes.Repeat([]byte("a"), 5000)))
	a2, n2, _ := w.Write(exchange("http://a.cl/2", bytes.Repeat([]byte("b"), 5000)))
	w.Close()
	r1, err := ReadResponse(path, a1, n1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResponse(path, a2, n2, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r1.Body, bytes.Repeat([]byte("a"), 5000)) {
		t.Error("ReadResponse's body changed under the next read")
	}
	rd := NewReader()
	defer rd.Close()
	x1, _ := rd.ReadResponse(path, a1, n1, 1<<20)
	u1 := x1.URL
	if _, err := rd.ReadResponse(path, a2, n2, 1<<20); err != nil {
		t.Fatal(err)
	}
	if x1.URL != u1 || x1.Header.Get("Content-Type") == "" {
		t.Error("a Reader's response lost its fields to the next read")
	}
}

// TestReaderRejects: damaged records are errors wrapping ErrRecord, and
// VerifyDigest catches a block that does not match its digest.
func TestReaderRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.warc.gz")
	w, _ := Create(path)
	body := bytes.Repeat([]byte("<p>hola mundo, lorem ipsum dolor sit amet</p>\n"), 300)
	off, n, _ := w.Write(exchange("http://a.cl/", body))
	w.Close()
	data, _ := os.ReadFile(path)
	rd := NewReader()
	defer rd.Close()

	flipped := bytes.Clone(data)
	flipped[off+n/2] ^= 0x40
	bad := filepath.Join(dir, "flipped.warc.gz")
	os.WriteFile(bad, flipped, 0o644)
	for _, tc := range []struct {
		name      string
		path      string
		off, n    int64
		maxBody   int64
		wantError bool
	}{
		{"whole", path, off, n, 1 << 20, false},
		{"flipped byte (CRC)", bad, off, n, 1 << 20, true},
		{"torn member", path, off, n / 2, 1 << 20, true},
		{"wrong offset", path, off + 7, n - 7, 1 << 20, true},
		{"beyond the file", path, off, n + 100, 1 << 20, true},
		{"zero length", path, off, 0, 1 << 20, true},
	} {
		_, err := rd.ReadResponse(tc.path, tc.off, tc.n, tc.maxBody)
		if tc.wantError != (err != nil) || (err != nil && !errors.Is(err, ErrRecord) && !strings.Contains(err.Error(), "read member")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}

	// A record recompressed with a changed body: the gzip CRC is right,
	// the WARC digest is not. Only VerifyDigest sees it, also when the
	// change is beyond the part of the body the caller asked for.
	raw := gunzip(t, data[off:off+n])
	forgedRaw := bytes.Replace(raw, []byte("amet</p>\n<p>hola"), []byte("AMET</p>\n<p>hola"), 1)
	forgedRaw = append(forgedRaw[:len(forgedRaw)-50], bytes.ToUpper(forgedRaw[len(forgedRaw)-50:])...)
	m, err := recompress(forgedRaw)
	if err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(dir, "forged.warc.gz")
	os.WriteFile(forged, m, 0o644)
	if _, err := rd.ReadResponse(forged, 0, int64(len(m)), 1<<20); err != nil {
		t.Errorf("forged digest without VerifyDigest: %v", err)
	}
	rd.VerifyDigest = true
	for _, maxBody := range []int64{1 << 20, 100} {
		if _, err := rd.ReadResponse(forged, 0, int64(len(m)), maxBody); !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), "digest") {
			t.Errorf("forged digest, max body %d, with VerifyDigest: %v", maxBody, err)
		}
	}
	if _, err := rd.ReadResponse(path, off, n, 100); err != nil {
		t.Errorf("good record, cut, with VerifyDigest: %v", err)
	}

	// Content-Length longer than the block, in a sound gzip member.
	short := bytes.Replace(raw, []byte("Content-Length: "), []byte("Content-Length: 9"), 1)
	m, _ = recompress(short)
	os.WriteFile(forged, m, 0o644)
	if _, err := rd.ReadResponse(forged, 0, int64(len(m)), 1<<20); !errors.Is(err, ErrRecord) {
		t.Errorf("Content-Length beyond the record: %v", err)
	}
}

// TestParseRecord covers the WARC header syntax the parser accepts.
func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		status  int
		url     string
	}{
		{"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.cl/\r\nContent-Length: 19\r\n\r\nHTTP/1.1 200 OK\r\n\r\n\r\n\r\n", "", 200, "http://a.cl/"},
		{"WARC/1.0\nwarc-type: Response\nwarc-target-uri:  http://a.cl/x \ncontent-length: 13\n\nHTTP/1.1 404\n", "", 404, "http://a.cl/x"},
		{"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.cl/\r\n  folded\r\nContent-Length: 13\r\n\r\nHTTP/1.1 200\n", "", 200, "http://a.cl/ folded"},
		{"WARC/1.1\r\nWARC-Type: request\r\nContent-Length: 4\r\n\r\nGET ", "want response", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 99\r\n\r\nHTTP/1.1 200\n", "Content-Length", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: -1\r\n\r\n", "Content-Length", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\n\r\nHTTP/1.1 200\n", "no Content-Length", 0, ""},
		{"WARC/1.1\r\nContent-Length: 0\r\n\r\n", "no WARC-Type", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 0\r\n", "not terminated", 0, ""},
		{"WARC/1.1\r\nWARC-Type response\r\n\r\n", "bad WARC header line", 0, ""},
		{"HTTP/1.1 200 OK\r\n\r\n", "not a WARC record", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 8\r\n\r\nHTTP/1.1", "status line", 0, ""},
		{"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 13\r\n\r\nHTTP/1.1 abc\n", "bad status line", 0, ""},
	} {
		rec, err := parseRecord([]byte(tc.in), true)
		var r *Response
		if err == nil {
			r, err = rec.response(1 << 20)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (r.Status != tc.status || r.URL != tc.url):
			t.Errorf("%q: read %+v", tc.in, r)
		}
	}
}

// recordSeeds are the plain texts of real records the writer makes: the
// response of each kind of exchange the harvester stores.
func recordSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for _, x := range harvested(t) {
		if len(x.Body) > 1500 {
			x.Body = x.Body[:1500] // keep the fuzzer fast
		}
		enc, err := Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gunzip(t, enc.buf.Bytes()[enc.respOff:enc.respOff+enc.respLen]))
		enc.Release()
	}
	return out
}

// FuzzParseRecord: no input, as the plain text of a record (gzipped as
// one member) or as raw bytes, panics or hangs the Reader, and whatever
// it accepts stays within its input; when gowarc also reads a well-formed
// record (CRLF line endings), the two read the same status and body.
// Seeded with real records from the writer.
func FuzzParseRecord(f *testing.F) {
	for _, s := range recordSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte("WARC/1.1\r\nWARC-Type: revisit\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader()
		for i, in := range [][]byte{mustGzip(t, data), data} {
			r, err := rd.read(bytes.NewReader(in), "fuzz", 0, int64(len(in)), 1<<20)
			if err != nil {
				if !errors.Is(err, ErrRecord) {
					t.Fatalf("error not wrapping ErrRecord: %v", err)
				}
				continue
			}
			if i == 0 && !bytes.Contains(data, r.Body) {
				t.Fatalf("body not from the record")
			}
			if i != 0 || bytes.Contains(data, []byte("\n\n")) || bytes.Count(data, []byte("\n")) != bytes.Count(data, []byte("\r\n")) {
				continue
			}
			done := make(chan *Response, 1)
			go func() {
				g, err := gowarcRead(data, 1<<20)
				if err != nil {
					g = nil
				}
				done <- g
			}()
			select {
			case g := <-done:
				if g != nil && (g.Status != r.Status || !bytes.Equal(g.Body, r.Body) || g.Revisit != r.Revisit) {
					t.Fatalf("gowarc reads status %d, %d body bytes; the Reader %d, %d bytes", g.Status, len(g.Body), r.Status, len(r.Body))
				}
			case <-time.After(5 * time.Second):
				// gowarc's own hang, not the Reader's: nothing to compare.
			}
		}
	})
}

// FuzzRoundTrip: any exchange the writer accepts (with an absolute URL,
// as the harvester's are) is read back by the
// Reader as written, and gowarc reads the same record to the same bytes.
func FuzzRoundTrip(f *testing.F) {
	f.Add("", "HTTP/1.1 200 OK", "text/html", []byte("<html>hola</html>"), "")
	f.Add("x?y", "HTTP/1.1 304 Not Modified", `"etag"`, []byte{}, "")
	f.Add("a/b.png", "HTTP/1.0 200", "image/png", bytes.Repeat([]byte{0, 1, 0xfe}, 2000), "length")
	f.Fuzz(func(t *testing.T, path, status, value string, body []byte, truncated string) {
		url := "http://a.cl/" + path // the harvester writes absolute URLs
		x := exchange(url, body)
		x.StatusLine, x.Truncated = status, truncated
		x.Header = http.Header{"X-Value": {value}}
		enc, err := Encode(x)
		if err != nil {
			return // the writer refuses it; nothing is written
		}
		defer enc.Release()
		member := enc.buf.Bytes()[enc.respOff : enc.respOff+enc.respLen]
		rd := NewReader()
		rd.VerifyDigest = true
		r, err := rd.read(bytes.NewReader(member), "fuzz", 0, int64(len(member)), 1<<30)
		code, cerr := 0, errors.New("no code")
		if len(strings.SplitN(status, " ", 3)) >= 2 {
			code, cerr = strconv.Atoi(strings.SplitN(status, " ", 3)[1])
		}
		if cerr != nil {
			if err == nil {
				t.Fatalf("status line %q without a code read as %d", status, r.Status)
			}
			return
		}
		if err != nil {
			t.Fatalf("%v", err)
		}
		wantBody := body
		if x.NotModified() {
			wantBody = nil
		}
		if r.URL != url || r.Status != code || r.StatusLine != status || !bytes.Equal(r.Body, wantBody) || r.Truncated != truncated {
			t.Fatalf("read %+v", r)
		}
		g, err := gowarcRead(gunzip(t, member), 1<<30)
		if err != nil {
			t.Fatalf("gowarc: %v", err)
		}
		if d := sameResponse(r, g); d != "" {
			t.Fatalf("Reader and gowarc differ: %s", d)
		}
	})
}

// TestWriterMembersWhole: the members this package writes — stored ones
// (appendStored) and those compressed as the writer compresses (klauspost
// at the fastest level) — are decoded whole by inflate.Gunzip, the
// Reader's fast path.
func TestWriterMembersWhole(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "pages", "sqlite-lang.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{nil, []byte("x"), page, bytes.Repeat(page, 20)} {
		kz, err := recompress(data)
		if err != nil {
			t.Fatal(err)
		}
		for name, m := range map[string][]byte{"stored": appendStored(nil, data), "klauspost": kz} {
			got, err := inflate.Gunzip(make([]byte, 0, len(data)), m, len(data))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s member of %d bytes: %d bytes, %v", name, len(data), len(got), err)
			}
		}
	}
}

// TestReaderFallsBack: a record whose ISIZE trailer lies is not decoded
// by inflate.Gunzip; the streaming decompressor then reports the damage, as
// before the fast path existed.
func TestReaderFallsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.warc.gz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	x := harvested(t)[1] // the large page, a compressed member
	off, n, err := w.Write(x)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	member := data[off : off+n]
	plain := gunzip(t, member)
	if got, err := inflate.Gunzip(make([]byte, 0, len(plain)), member, len(plain)); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the writer's member is not decoded whole: %v", err)
	}
	for _, tc := range []struct {
		name    string
		at      int64 // byte of the member to flip
		wantErr string
	}{
		{"ISIZE, high byte", n - 1, "checksum"}, // announces 16 MB more than there is
		{"ISIZE, low byte", n - 4, "checksum"},
		{"CRC-32", n - 8, "checksum"},
	} {
		bad := append([]byte{}, data...)
		bad[off+tc.at] ^= 1
		badPath := filepath.Join(t.TempDir(), "bad.warc.gz")
		if err := os.WriteFile(badPath, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		rd := NewReader()
		_, err := rd.ReadResponse(badPath, off, n, 1<<30)
		rd.Close()
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s damaged: %v, want an error with %q", tc.name, err, tc.wantErr)
		}
	}
}

// BenchmarkInflate compares the decoding of a page's member by
// inflate.Gunzip with the streaming decompressor's.
func BenchmarkInflate(b *testing.B) {
	page, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "pages", "sqlite-lang.html"))
	if err != nil {
		b.Fatal(err)
	}
	m, err := recompress(page)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		out := make([]byte, 0, len(page))
		var t inflate.Tables
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := t.Gunzip(out, m, len(page)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("corpus", func(b *testing.B) {
		// Every page of the corpus, compressed as the writer compresses
		// a record (gzipPool: klauspost's fastest level).
		files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
		var pages, members [][]byte
		var n int64
		for _, f := range files {
			page, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			var m bytes.Buffer
			zw := gzipPool.Get().(*gzip.Writer)
			zw.Reset(&m)
			if _, err := zw.Write(page); err != nil {
				b.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				b.Fatal(err)
			}
			gzipPool.Put(zw)
			pages, members = append(pages, page), append(members, m.Bytes())
			n += int64(len(page))
		}
		out := make([]byte, 0, 1<<20)
		var t inflate.Tables
		b.SetBytes(n)
		for b.Loop() {
			for i, m := range members {
				if _, err := t.Gunzip(out, m, len(pages[i])); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("streaming", func(b *testing.B) {
		var r Reader
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			// As Reader.inflate without its fast path: a limit below the
			// content's size.
			if _, _, err := r.inflate(bytes.NewReader(m), 0, int64(len(m)), int64(len(page))); err != nil {
				b.Fatal(err)
			}
		}
	})
}
