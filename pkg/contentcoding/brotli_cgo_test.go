//go:build cgo && !nocbrotli

package contentcoding

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// TestBrotliDecoderFreed: the C decoder's memory (its ring buffer of up
// to 16 MiB, its tables) is given back whatever way a body ends: read to
// its end, damaged, cut short, closed part way by its reader, or left
// part way and dropped without a close (a body abandoned at the
// harvester's cap or by a lost connection), the last through the
// reader's cleanup once the garbage collector finds it unreachable.
func TestBrotliDecoderFreed(t *testing.T) {
	plain := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range plain {
		plain[i] = byte('a' + rng.IntN(8))
	}
	var b bytes.Buffer
	w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 1, LGWin: 22})
	w.Write(plain)
	w.Close()
	stream := b.Bytes()
	damaged := bytes.Clone(stream)
	for i := len(damaged) / 2; i < len(damaged)/2+64; i++ {
		damaged[i] ^= 0x5a
	}
	base := brotliLiveBlocks()
	for _, tc := range []struct {
		name string
		use  func() // decodes with a reader of its own
	}{
		{"read to the end", func() {
			var r brotliReader
			r.reset(bytes.NewReader(stream))
			if got, err := io.ReadAll(&r); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("read to the end: %d bytes, %v", len(got), err)
			}
		}},
		{"damaged", func() {
			var r brotliReader
			r.reset(bytes.NewReader(damaged))
			if _, err := io.ReadAll(&r); err == nil {
				t.Error("damaged stream read without an error")
			}
		}},
		{"cut short", func() {
			var r brotliReader
			r.reset(bytes.NewReader(stream[:len(stream)/2]))
			if _, err := io.ReadAll(&r); err != io.ErrUnexpectedEOF {
				t.Errorf("cut stream: %v, want io.ErrUnexpectedEOF", err)
			}
		}},
		{"reset part way", func() {
			var r brotliReader
			r.reset(bytes.NewReader(stream))
			io.CopyN(io.Discard, &r, 64<<10)
			r.reset(bytes.NewReader(nil))
			if brotliLiveBlocks() != base {
				t.Errorf("reset part way: %d blocks held after the reset", brotliLiveBlocks()-base)
			}
		}},
		{"dropped part way", func() {
			r := new(brotliReader)
			r.reset(bytes.NewReader(stream))
			io.CopyN(io.Discard, r, 64<<10)
			if brotliLiveBlocks() == base {
				t.Error("a decoder part way holds no memory: the count shows nothing")
			}
		}},
	} {
		for range 10 {
			tc.use()
		}
		// The cleanups of dropped readers run after a collection, on a
		// goroutine of the runtime's.
		deadline := time.Now().Add(5 * time.Second)
		for brotliLiveBlocks() != base && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		if n := brotliLiveBlocks() - base; n != 0 {
			t.Errorf("%s: %d blocks of the C decoder still held after 10 bodies", tc.name, n)
		}
	}
}
