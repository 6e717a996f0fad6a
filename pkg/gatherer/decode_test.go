package gatherer

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/contentcoding"
)

// compressed returns data compressed for a Content-Encoding: kind 0 gzip,
// 1 zlib ("deflate" as RFC 9110 means it), 2 raw deflate (what some
// servers send as "deflate").
func compressed(t testing.TB, kind int, data []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch kind {
	case 0:
		w = gzip.NewWriter(&b)
	case 1:
		w = zlib.NewWriter(&b)
	default:
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawEncodings are the Content-Encoding values FuzzDecodeContent gives
// bodies that are not compressed by the test itself; all but compress
// are decoded.
var rawEncodings = []string{"gzip", "x-gzip", "deflate", "br", "compress"}

// FuzzDecodeContent checks decodeContent, which decodes again a body the
// harvester stored with its Content-Encoding, on what the fuzzer makes of
// it. mode 0-3: data is compressed here (gzip as "gzip", gzip as "x-gzip",
// zlib and raw deflate as "deflate"); the whole body decodes to data cut
// at max, and a body cut at cut bytes (a record the harvester cut short)
// decodes, if at all, to a beginning of data. mode 4 and above: data is
// the stored body itself, under one of rawEncodings; the output is at
// most max bytes and, for gzip, what a full gzip decoder gives, cut at max
// (an empty body is an empty page).
func FuzzDecodeContent(f *testing.F) {
	page := []byte("<!DOCTYPE html><html><head><title>Universidad de Chile</title></head><body><p>Año académico 2026</p><a href=\"/admision\">Admisión</a></body></html>\n")
	for mode := uint8(0); mode < 4; mode++ {
		f.Add(mode, page, uint32(0), uint32(1<<20))
		f.Add(mode, page, uint32(40), uint32(1<<20)) // cut short
		f.Add(mode, page, uint32(0), uint32(32))     // over the cap
		f.Add(mode, []byte{}, uint32(0), uint32(1<<20))
	}
	f.Add(uint8(0), bytes.Repeat([]byte{0}, 1<<20), uint32(0), uint32(4096)) // a small gzip bomb
	f.Add(uint8(3), []byte("\xff\x00\x01"), uint32(1), uint32(100))
	kinds := []int{0, 0, 1, 2}
	for i, enc := range rawEncodings {
		mode := uint8(4 + i)
		switch enc {
		case "gzip", "x-gzip":
			gz := compressed(f, 0, page)
			f.Add(mode, gz, uint32(0), uint32(1<<20))
			f.Add(mode, append(gz, compressed(f, 0, []byte("second member"))...), uint32(0), uint32(1<<20))
			f.Add(mode, append(gz, "trailing junk"...), uint32(0), uint32(1<<20))
			f.Add(mode, gz[:10], uint32(0), uint32(1<<20)) // header only
		case "deflate":
			f.Add(mode, compressed(f, 1, page), uint32(0), uint32(1<<20))
			f.Add(mode, compressed(f, 2, page), uint32(0), uint32(1<<20))
			f.Add(mode, []byte("\x78\x9c"), uint32(0), uint32(1<<20))
		}
		f.Add(mode, page, uint32(0), uint32(1<<20)) // not compressed at all
	}
	f.Fuzz(func(t *testing.T, mode uint8, data []byte, cut, maxv uint32) {
		max := int64(maxv % (1 << 20))
		var d contentcoding.Decoder
		if mode >= 4 {
			enc := rawEncodings[int(mode-4)%len(rawEncodings)]
			out, err := decodeContent(&d, nil, enc, data, max)
			if err != nil {
				if out != nil {
					t.Fatalf("%s: error %v with %d bytes", enc, err, len(out))
				}
				if enc != "compress" {
					return
				}
			} else if enc == "compress" {
				t.Fatalf("%s decoded", enc)
			}
			if int64(len(out)) > max {
				t.Fatalf("%s: %d bytes out, cap %d", enc, len(out), max)
			}
			if enc != "gzip" && enc != "x-gzip" {
				return
			}
			if len(data) == 0 {
				// An empty body announced as gzip is an empty page, as the
				// harvester stores it in decoded mode.
				if len(out) != 0 {
					t.Fatalf("%s: %q from an empty body", enc, out)
				}
				return
			}
			// A full decoder, stopped one byte past the cap: when it reads
			// the stream without an error or passes the cap, decodeContent
			// gives the same bytes, cut at the cap.
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: decoded what gzip.NewReader refuses: %v", enc, err)
			}
			ref, err := io.ReadAll(io.LimitReader(zr, max+1))
			if err == nil || int64(len(ref)) > max {
				ref = ref[:min(int64(len(ref)), max)]
				if !bytes.Equal(out, ref) {
					t.Fatalf("%s: got %q, a full decoder %q", enc, out, ref)
				}
			}
			return
		}
		kind := kinds[mode]
		enc := []string{"gzip", "x-gzip", "deflate", "deflate"}[mode]
		body := compressed(t, kind, data)
		want := data[:min(int64(len(data)), max)]
		if k := int(cut); k > 0 && k < len(body) {
			out, err := decodeContent(&d, nil, enc, body[:k], max)
			if err != nil {
				return // too short to give anything
			}
			if int64(len(out)) > max || !bytes.HasPrefix(want, out) {
				t.Fatalf("%s cut at %d of %d bytes: got %q, not a beginning of %q", enc, k, len(body), out, want)
			}
			return
		}
		out, err := decodeContent(&d, nil, enc, body, max)
		if err != nil || !bytes.Equal(out, want) && len(out)+len(want) > 0 {
			t.Fatalf("%s (kind %d): got %q, %v; want %q", enc, kind, out, err, want)
		}
	})
}

// TestDecodeContentUnsupported: an encoding the gatherer cannot decode
// is an error naming it, not a body.
func TestDecodeContentUnsupported(t *testing.T) {
	var d contentcoding.Decoder
	out, err := decodeContent(&d, nil, "compress", []byte("\x1f\x9d\x90hello"), 1<<20)
	if err == nil || out != nil || !strings.Contains(err.Error(), `"compress"`) {
		t.Errorf("compress: %q, %v", out, err)
	}
}
