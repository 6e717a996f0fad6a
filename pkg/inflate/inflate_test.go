package inflate

import (
	"bytes"
	"compress/flate"
	stdgzip "compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// gzipMember compresses data as one gzip member with compress/gzip at
// the given level (flags as a gzip.Header sets them).
func gzipMember(t testing.TB, data []byte, level int, h stdgzip.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := stdgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	zw.Header = h
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// inflateSamples are contents that exercise every kind of deflate block:
// stored, fixed and dynamic codes, long and overlapping matches.
func inflateSamples(t testing.TB) map[string][]byte {
	page, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "pages", "sqlite-lang.html"))
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 200_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"empty":      {},
		"one byte":   {'x'},
		"short text": []byte("<html><title>x</title>hola, hola, hola</html>"),
		"page":       page,
		"run":        bytes.Repeat([]byte{'a'}, 100_000),
		"period 3":   bytes.Repeat([]byte("abc"), 50_000),
		"noise":      noise,
		"mixed":      append(append(append([]byte{}, page...), noise[:70_000]...), page...),
	}
}

// TestGunzip: Gunzip decodes what the gzip writers write (Go's at every
// level, klauspost's at its fastest, as pkg/warcio's writer compresses,
// and at the level servers use) to the bytes written, and refuses what
// it cannot vouch for, which the caller then hands to a streaming
// decompressor.
func TestGunzip(t *testing.T) {
	for name, data := range inflateSamples(t) {
		members := map[string][]byte{}
		for _, level := range []int{stdgzip.NoCompression, stdgzip.BestSpeed, stdgzip.DefaultCompression, stdgzip.BestCompression, stdgzip.HuffmanOnly} {
			members["level "+strconv.Itoa(level)] = gzipMember(t, data, level, stdgzip.Header{})
		}
		members["name and comment"] = gzipMember(t, data, stdgzip.BestSpeed, stdgzip.Header{Name: "a.html", Comment: "c", Extra: []byte("xx")})
		for _, level := range []int{gzip.BestSpeed, 6} {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, level)
			zw.Write(data)
			zw.Close()
			members["klauspost level "+strconv.Itoa(level)] = b.Bytes()
		}
		for mname, m := range members {
			got, err := Gunzip(make([]byte, 0, len(data)), m, len(data))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, %s: %d bytes, %v; want %d bytes", name, mname, len(got), err, len(data))
			}
		}
	}
	page := inflateSamples(t)["page"]
	good := gzipMember(t, page, stdgzip.BestSpeed, stdgzip.Header{})
	damage := func(f func(m []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	for _, tc := range []struct {
		name   string
		member []byte
		size   int
	}{
		{"wrong CRC", damage(func(m []byte) []byte { m[len(m)-8] ^= 1; return m }), len(page)},
		{"wrong size", damage(func(m []byte) []byte { m[len(m)-4] ^= 1; return m }), len(page)},
		{"size given too small", good, len(page) - 1},
		{"size given too large", good, len(page) + 1},
		{"flipped bit in the stream", damage(func(m []byte) []byte { m[len(m)/2] ^= 0x10; return m }), len(page)},
		{"truncated stream", good[:len(good)/2], len(page)},
		{"no trailer", good[:len(good)-8], len(page)},
		{"bytes after the member", append(append([]byte{}, good...), 0), len(page)},
		{"a second member of the same size", append(append([]byte{}, good...), good...), len(page)},
		{"not gzip", damage(func(m []byte) []byte { m[0] = 'x'; return m }), len(page)},
		{"header CRC", gzipWithHeaderCRC(good), len(page)},
		{"empty", nil, 0},
	} {
		if got, err := Gunzip(make([]byte, 0, tc.size), tc.member, tc.size); err == nil {
			t.Errorf("%s: decoded %d bytes, want an error", tc.name, len(got))
		}
	}
}

// gzipWithHeaderCRC returns the member m with the FHCRC flag and a
// (correct) header CRC.
func gzipWithHeaderCRC(m []byte) []byte {
	h := append([]byte{}, m[:10]...)
	h[3] |= 1 << 1
	crc := crc32.ChecksumIEEE(h)
	return append(append(h, byte(crc), byte(crc>>8)), m[10:]...)
}

// FuzzInflate compares Inflate with compress/flate: on the
// deflate streams compress/flate writes for the input (every level), it
// must decode them; on the input taken as a deflate stream, whatever it
// decodes compress/flate decodes the same, and it ends where
// compress/flate stops reading.
func FuzzInflate(f *testing.F) {
	for _, data := range inflateSamples(f) {
		if len(data) > 5000 {
			data = data[:5000]
		}
		f.Add(data, uint8(1))
		f.Add(gzipMember(f, data, stdgzip.DefaultCompression, stdgzip.Header{})[10:], uint8(6))
	}
	f.Add([]byte{0x03, 0x00}, uint8(0))                   // an empty fixed block
	f.Add([]byte{0x01, 0x00, 0x00, 0xff, 0xff}, uint8(0)) // an empty stored block
	f.Fuzz(func(t *testing.T, data []byte, level uint8) {
		if len(data) > 32<<10 {
			return // as much as a short input tells, and fast
		}
		lv := int(level%11) - 1 // -1 (default) to 9
		if level == 255 {
			lv = flate.HuffmanOnly
		}
		var b bytes.Buffer
		zw, err := flate.NewWriter(&b, lv)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(data)
		zw.Close()
		stream := append(b.Bytes(), "trailing"...)
		// Without room past the content (the last symbols in the slow
		// loop) and with it (the fast loop to the end).
		for _, room := range []int{0, FastOut} {
			got, end, err := Inflate(make([]byte, 0, len(data)+room), stream)
			if err != nil || !bytes.Equal(got, data) || end != b.Len() {
				t.Fatalf("level %d, room %d: %d bytes, end %d of %d, %v", lv, room, len(got), end, b.Len(), err)
			}
		}

		// The input itself as a stream.
		br := bytes.NewReader(data)
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(br), 4<<20))
		if len(want) == 4<<20 {
			return // a stream that expands without end
		}
		consumed := len(data) - br.Len()
		for _, room := range []int{64, 64 + FastOut} {
			got, end, err := Inflate(make([]byte, 0, len(want)+room), data)
			if err == nil {
				if werr != nil {
					t.Fatalf("room %d: decoded %d bytes where compress/flate fails: %v", room, len(got), werr)
				}
				if !bytes.Equal(got, want) || end != consumed {
					t.Fatalf("room %d: decoded %q, end %d; compress/flate %q, end %d", room, got, end, want, consumed)
				}
			} else if werr == nil {
				t.Fatalf("room %d: failed (%v) where compress/flate decodes %d bytes", room, err, len(want))
			}
		}
	})
}
