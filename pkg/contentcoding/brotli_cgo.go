//go:build cgo && !nocbrotli

package contentcoding

// The brotli decoder of builds with cgo: Google's C library (libbrotlidec),
// about 1.7 times as fast as github.com/andybalholm/brotli, its port to
// Go, on the gatherer's corpus (BenchmarkBrotli; docs/harvester.md, "How
// responses are stored"). It is linked statically from Debian's
// libbrotli-dev (scripts/test-deps.sh installs it), so that the binaries
// need nothing at run time but the C library they already link. A build
// without cgo, or with the tag nocbrotli, decodes with the port instead
// (brotli_purego.go); both read and report alike (TestBrotliReader).

/*
#cgo LDFLAGS: -l:libbrotlidec.a -l:libbrotlicommon.a
#include <stdint.h>
#include <brotli/decode.h>

// wire_brotli_step is what one BrotliDecoderDecompressStream call did.
typedef struct {
	int result;      // a BrotliDecoderResult
	size_t in_used;  // bytes of input it took
	size_t out_used; // bytes of output it wrote
} wire_brotli_step;

// wire_brotli_decode is one BrotliDecoderDecompressStream call from in
// to out (Go passes C no pointer to a Go pointer, and the counts come
// back by value, so nothing of Go's escapes to the heap for it).
static wire_brotli_step wire_brotli_decode(BrotliDecoderState* s, const uint8_t* in, size_t in_len, uint8_t* out, size_t out_len) {
	size_t avail_in = in_len, avail_out = out_len;
	const uint8_t* next_in = in;
	uint8_t* next_out = out;
	wire_brotli_step st;
	st.result = (int)BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
	st.in_used = in_len - avail_in;
	st.out_used = out_len - avail_out;
	return st;
}
*/
import "C"

import (
	"io"
	"runtime"
	"strings"
	"unsafe"
)

// BrotliLibrary names the brotli decoder of this build.
const BrotliLibrary = "libbrotlidec (cgo)"

// brotliReader decodes one brotli stream after another (reset) from the
// reader under it, as github.com/andybalholm/brotli's Reader does: the
// same results, the same errors for damaged data ("brotli: " and the
// library's name of the error) and for input after the end of the
// stream ("brotli: excessive input"), io.ErrUnexpectedEOF for a stream
// cut short, and the errors of the reader under it as they are.
type brotliReader struct {
	st   *brotliState // the C decoder of the current stream; nil before and after it
	src  io.Reader
	buf  []byte // what was read from src
	in   []byte // the part of buf the decoder has not taken yet
	done bool   // the stream ended
	err  error  // the stream's error, once it has one
}

// brotliState holds a C decoder, which its cleanup frees should the
// stream be left before its end (a body cut at the cap, a connection
// lost) and the reader dropped; otherwise release frees it.
type brotliState struct {
	p       *C.BrotliDecoderState
	cleanup runtime.Cleanup
}

// brotliReadSize is how much of the compressed stream is read at a time.
const brotliReadSize = 32 << 10

// reset starts a new stream read from src.
func (b *brotliReader) reset(src io.Reader) error {
	b.release()
	b.src, b.in, b.done, b.err = src, nil, false, nil
	return nil
}

// release frees the C decoder, if any.
func (b *brotliReader) release() {
	if b.st == nil {
		return
	}
	b.st.cleanup.Stop()
	C.BrotliDecoderDestroyInstance(b.st.p)
	b.st = nil
}

// Read decodes into p.
func (b *brotliReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.buf == nil {
		b.buf = make([]byte, brotliReadSize)
	}
	if b.done {
		// Past the end of the stream: EOF, unless the body goes on.
		if len(b.in) == 0 {
			m, err := b.src.Read(b.buf)
			if m == 0 {
				return 0, err
			}
			b.in = b.buf[:m]
		}
		b.err = brotliError("excessive input")
		return 0, b.err
	}
	if b.st == nil {
		c := C.BrotliDecoderCreateInstance(nil, nil, nil)
		if c == nil {
			return 0, brotliError("cannot allocate a decoder")
		}
		b.st = &brotliState{p: c}
		b.st.cleanup = runtime.AddCleanup(b.st, func(c *C.BrotliDecoderState) { C.BrotliDecoderDestroyInstance(c) }, c)
	}
	n := 0
	for {
		var in *C.uint8_t
		if len(b.in) > 0 {
			in = (*C.uint8_t)(unsafe.Pointer(&b.in[0]))
		}
		out := p[n:]
		step := C.wire_brotli_decode(b.st.p, in, C.size_t(len(b.in)), (*C.uint8_t)(unsafe.Pointer(&out[0])), C.size_t(len(out)))
		b.in = b.in[step.in_used:]
		n += int(step.out_used)
		switch step.result {
		case C.BROTLI_DECODER_RESULT_SUCCESS:
			b.release()
			b.done = true
			if len(b.in) > 0 {
				b.err = brotliError("excessive input")
				return n, b.err
			}
			return n, nil
		case C.BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
			if n == 0 {
				return 0, io.ErrShortBuffer
			}
			return n, nil
		case C.BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
			// It took all of b.in (the library's promise: reading
			// src into b.buf would otherwise lose the rest).
			if len(b.in) > 0 {
				b.release()
				b.err = brotliError("invalid state")
				return n, b.err
			}
			// Reading src may block: return what there is first.
			if n > 0 {
				return n, nil
			}
			m, err := b.src.Read(b.buf)
			if m == 0 {
				if err == io.EOF {
					b.release()
					b.err = io.ErrUnexpectedEOF
					return 0, b.err
				}
				return 0, err
			}
			b.in = b.buf[:m]
		default: // BROTLI_DECODER_RESULT_ERROR
			code := C.BrotliDecoderGetErrorCode(b.st.p)
			b.release()
			name := C.GoString(C.BrotliDecoderErrorString(code))
			name = strings.TrimPrefix(strings.TrimPrefix(name, "_ERROR_FORMAT_"), "_ERROR_")
			b.err = brotliError(name)
			return n, b.err
		}
	}
}

// brotliError is an error of the decoder: damaged data.
type brotliError string

func (e brotliError) Error() string { return "brotli: " + string(e) }
