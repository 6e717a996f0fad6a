package contentcoding

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Coding
		ok   bool
	}{
		{"", Identity, true},
		{"identity", Identity, true},
		{" GZIP ", Gzip, true},
		{"x-gzip", Gzip, true}, // RFC 9110 §8.4.1.3
		{"deflate", Deflate, true},
		{"br", Brotli, true},
		{"zstd", Identity, false},
		{"compress", Identity, false},
		{"gzip, br", Identity, false}, // two codings, applied in order: not decoded here
	} {
		got, ok := Parse(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// encode compresses plain with coding c (deflate as zlib, or raw deflate
// with raw).
func encode(t testing.TB, c Coding, plain []byte, raw bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch {
	case c == Gzip:
		w = gzip.NewWriter(&b)
	case c == Deflate && raw:
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	case c == Deflate:
		w = zlib.NewWriter(&b)
	case c == Brotli:
		w = brotli.NewWriter(&b)
	default:
		return plain
	}
	w.Write(plain)
	w.Close()
	return b.Bytes()
}

func TestAppend(t *testing.T) {
	plain := []byte(strings.Repeat("Año nuevo, vida nueva. ", 2000))
	var d Decoder // one decoder for every case: its decompressors are reused
	for _, c := range []struct {
		name   string
		coding Coding
		body   []byte
		max    int64
		want   []byte
		cut    bool
		err    string
	}{
		{"identity", Identity, plain, 1 << 20, plain, false, ""},
		{"identity cut", Identity, plain, 100, plain[:100], true, ""},
		{"gzip", Gzip, encode(t, Gzip, plain, false), 1 << 20, plain, false, ""},
		{"gzip cut at max", Gzip, encode(t, Gzip, plain, false), 1000, plain[:1000], true, ""},
		{"gzip of exactly max", Gzip, encode(t, Gzip, plain, false), int64(len(plain)), plain, false, ""},
		{"two gzip members", Gzip, append(encode(t, Gzip, plain[:10], false), encode(t, Gzip, plain[10:], false)...), 1 << 20, plain, false, ""},
		{"deflate as zlib (RFC 9110 §8.4.1.2)", Deflate, encode(t, Deflate, plain, false), 1 << 20, plain, false, ""},
		{"raw deflate, as some servers send", Deflate, encode(t, Deflate, plain, true), 1 << 20, plain, false, ""},
		{"br", Brotli, encode(t, Brotli, plain, false), 1 << 20, plain, false, ""},
		{"br cut at max", Brotli, encode(t, Brotli, plain, false), 7, plain[:7], true, ""},
		{"empty gzip body", Gzip, nil, 100, nil, false, ""},
		{"empty br body", Brotli, nil, 100, nil, false, ""},
		{"not gzip", Gzip, []byte("<html>plain</html>"), 100, nil, false, "gzip: invalid header"},
		{"gzip cut short", Gzip, encode(t, Gzip, plain, false)[:100], 1 << 20, nil, false, "gzip: unexpected EOF"},
		{"damaged br", Brotli, []byte("\xff\xff\xff\xff garbage"), 100, nil, false, "br: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, cut, err := d.Append([]byte("x"), c.coding, c.body, c.max)
			if c.err != "" {
				var ce *Error
				if err == nil || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want *Error %q…", err, c.err)
				}
				if !bytes.HasPrefix(out, []byte("x")) {
					t.Errorf("dst lost: %q", out[:min(len(out), 10)])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, append([]byte("x"), c.want...)) || cut != c.cut {
				t.Errorf("got %d bytes cut %v, want %d cut %v", len(out)-1, cut, len(c.want), c.cut)
			}
		})
	}
}

// TestBomb: 32 MiB of zeros in 32 KiB of gzip, and the same in brotli,
// stop at the cap, read through NewReader as the harvester reads a body
// and through Append as the gatherer does, with little memory.
func TestBomb(t *testing.T) {
	zeros := make([]byte, 1<<20)
	var gz, br bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	bw := brotli.NewWriterLevel(&br, 1)
	for range 32 {
		zw.Write(zeros)
		bw.Write(zeros)
	}
	zw.Close()
	bw.Close()
	const max = 64 << 10
	var d Decoder
	for _, c := range []struct {
		coding Coding
		body   []byte
	}{{Gzip, gz.Bytes()}, {Brotli, br.Bytes()}} {
		out, cut, err := d.Append(nil, c.coding, c.body, max)
		if err != nil || !cut || len(out) != max || cap(out) > 2*max {
			t.Errorf("%s Append: %d bytes (cap %d), cut %v, %v", c.coding, len(out), cap(out), cut, err)
		}
		r, err := d.NewReader(c.coding, bytes.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, io.LimitReader(r, max+1))
		if err != nil || n != max+1 {
			t.Errorf("%s NewReader: %d bytes, %v", c.coding, n, err)
		}
	}
}

// TestSourceErrors: an error of the reader under a decompressor is
// passed on as it is, not taken for damaged data; the decompressor's
// own are *Error.
func TestSourceErrors(t *testing.T) {
	body := encode(t, Gzip, []byte(strings.Repeat("a", 100000)), false)
	reset := errors.New("connection reset by peer")
	var d Decoder
	r, err := d.NewReader(Gzip, io.MultiReader(bytes.NewReader(body[:100]), errReader{reset}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, r)
	if !errors.Is(err, reset) || IsDecodeError(err) {
		t.Errorf("source error came out as %v (decode error %v)", err, IsDecodeError(err))
	}
	r, _ = d.NewReader(Gzip, bytes.NewReader(append(body[:50:50], bytes.Repeat([]byte{0xff}, 100)...)))
	if _, err = io.Copy(io.Discard, r); !IsDecodeError(err) {
		t.Errorf("damaged data: %v, want a decode error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// FuzzAppend: any body in any coding decodes without panic to at most
// max bytes, and a body this package's writers made decodes to what was
// written.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "hola", strings.Repeat("abc", 300)} {
		for _, c := range []Coding{Identity, Gzip, Deflate, Brotli} {
			f.Add(string(c), encode(f, c, []byte(s), false), int64(1000), s)
		}
		f.Add(string(Deflate), encode(f, Deflate, []byte(s), true), int64(1000), s)
	}
	f.Add("gzip", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"), int64(10), "")
	f.Fuzz(func(t *testing.T, coding string, body []byte, max int64, plain string) {
		c, ok := Parse(coding)
		if !ok {
			return
		}
		max = max % (1 << 20)
		var d Decoder
		out, cut, err := d.Append(nil, c, body, max)
		if max > 0 && int64(len(out)) > max {
			t.Fatalf("%d bytes out, max %d", len(out), max)
		}
		if cut && err != nil {
			t.Fatalf("cut and %v", err)
		}
		if string(encode(t, c, []byte(plain), false)) == string(body) && int64(len(plain)) <= max && (err != nil || string(out) != plain) {
			t.Fatalf("a body of ours decoded to %q, %v; want %q", out, err, plain)
		}
	})
}
