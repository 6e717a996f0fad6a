package contentcoding

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/andybalholm/brotli"
)

// readAll reads r to its end or first error with reads of at most size
// bytes, as a caller with a buffer of that size would, and stops after
// 8 MiB.
func readAll(r io.Reader, size int) ([]byte, error) {
	var out []byte
	p := make([]byte, size)
	for idle := 0; idle < 100; { // a reader that never ends is a failure, not a hang
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if err != nil {
			return out, err
		}
		if len(out) > 8<<20 {
			return out, errors.New("8 MiB read")
		}
		if n == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	return out, errors.New("100 reads in a row gave nothing")
}

// brotliStreams are brotli streams of every kind a body can be:
// whole, of one and of many meta-blocks, cut short, damaged, followed by
// more bytes, and not brotli at all.
func brotliStreams(t testing.TB) map[string][]byte {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "extract", "testdata", "pages", "vim-russian.html"))
	if err != nil {
		t.Fatal(err)
	}
	enc := func(quality, lgwin int, plain []byte) []byte {
		var b bytes.Buffer
		w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
		w.Write(plain)
		w.Close()
		return b.Bytes()
	}
	whole := enc(5, 0, page)
	damaged := bytes.Clone(whole)
	for i := len(damaged) / 3; i < len(damaged)/3+16; i++ {
		damaged[i] ^= 0x5a
	}
	return map[string][]byte{
		"page q5":                  whole,
		"page q11":                 enc(11, 0, page),
		"page q1 window 10":        enc(1, 10, page),
		"1 MiB in a 64 KiB window": enc(1, 16, bytes.Repeat(page[:1000], 1<<10)),
		"empty content":            enc(5, 0, nil),
		"one byte":                 enc(5, 0, []byte("x")),
		"cut in the middle":        whole[:len(whole)/2],
		"cut one byte short":       whole[:len(whole)-1],
		"only the first byte":      whole[:1],
		"damaged":                  damaged,
		"then garbage":             append(bytes.Clone(whole), "garbage"...),
		"then a second stream":     append(bytes.Clone(whole), whole...),
		"not brotli":               []byte("\xff\xff\xff\xff garbage"),
		"html":                     page[:4000],
		"nothing":                  nil,
	}
}

// TestBrotliReader: the brotli decoder of this build (libbrotlidec with
// cgo, else github.com/andybalholm/brotli) gives what andybalholm's
// Reader gives, content and error alike, on every kind of stream, read
// in small and large pieces from a source that gives a byte at a time
// or all it has, and one after another on the same reader.
func TestBrotliReader(t *testing.T) {
	t.Logf("decoder: %s", BrotliLibrary)
	streams := brotliStreams(t)
	var mine brotliReader
	for name, body := range streams {
		for _, size := range []int{1, 7, 4096, 1 << 20} {
			if plain, _ := readAll(brotli.NewReader(bytes.NewReader(body)), 1<<20); size < 4096 && len(plain) > 64<<10 {
				continue // long enough read in large pieces
			}
			for _, oneByte := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/read %d/one byte %v", name, size, oneByte), func(t *testing.T) {
					src := func() io.Reader {
						if oneByte {
							return iotest.OneByteReader(bytes.NewReader(body))
						}
						return bytes.NewReader(body)
					}
					want, wantErr := readAll(brotli.NewReader(src()), size)
					if err := mine.reset(src()); err != nil {
						t.Fatal(err)
					}
					got, err := readAll(&mine, size)
					if !bytes.Equal(got, want) {
						t.Errorf("%d bytes, want %d", len(got), len(want))
					}
					// Given a byte at a time, andybalholm's Reader (v1.2.8)
					// can take the end of a valid stream for "excessive
					// input"; read whole, it does not, nor does
					// libbrotlidec.
					_, whole := readAll(brotli.NewReader(bytes.NewReader(body)), size)
					if oneByte && whole == io.EOF && err == io.EOF {
						wantErr = io.EOF
					}
					if fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Errorf("error %v, want %v", err, wantErr)
					}
					if wantErr != io.EOF && IsDecodeError(err) != IsDecodeError(wantErr) {
						t.Errorf("%v is a decode error: %v; want %v", err, IsDecodeError(err), IsDecodeError(wantErr))
					}
				})
			}
		}
	}
}

// TestBrotliSourceError: an error of the reader under the decoder is
// passed on as it is, at the start of a stream and within it.
func TestBrotliSourceError(t *testing.T) {
	body := brotliStreams(t)["page q5"]
	reset := errors.New("connection reset by peer")
	var mine brotliReader
	for _, at := range []int{0, 1, len(body) / 2} {
		mine.reset(io.MultiReader(bytes.NewReader(body[:at]), iotest.ErrReader(reset)))
		if _, err := readAll(&mine, 4096); !errors.Is(err, reset) || IsDecodeError(err) {
			t.Errorf("source error after %d bytes came out as %v", at, err)
		}
	}
}

// FuzzBrotliReader: on any input the decoder of this build gives what
// andybalholm's Reader gives.
func FuzzBrotliReader(f *testing.F) {
	streams := brotliStreams(f)
	for _, name := range []string{"empty content", "one byte", "only the first byte", "not brotli", "then garbage", "page q1 window 10"} {
		f.Add(streams[name][:min(len(streams[name]), 2000)], uint16(100))
	}
	f.Add([]byte{0x0b, 0x02, 0x80, 'h', 'o', 'l', 'a', 0x03}, uint16(3))
	var mine brotliReader
	f.Fuzz(func(t *testing.T, body []byte, size uint16) {
		size = max(size, 64)
		want, wantErr := readAll(brotli.NewReader(bytes.NewReader(body)), int(size))
		mine.reset(bytes.NewReader(body))
		got, err := readAll(&mine, int(size))
		if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%d bytes, %v; want %d bytes, %v", len(got), err, len(want), wantErr)
		}
	})
}
