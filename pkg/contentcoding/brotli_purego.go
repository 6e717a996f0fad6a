//go:build !cgo || nocbrotli

package contentcoding

// The brotli decoder of builds without cgo, or with the tag nocbrotli:
// github.com/andybalholm/brotli, the port of Google's C library to Go
// (brotli_cgo.go has why builds with cgo use the C library itself).

import (
	"io"

	"github.com/andybalholm/brotli"
)

// BrotliLibrary names the brotli decoder of this build.
const BrotliLibrary = "github.com/andybalholm/brotli (pure Go)"

// brotliReader decodes one brotli stream after another (reset) from the
// reader under it.
type brotliReader struct {
	r *brotli.Reader
}

// reset starts a new stream read from src.
func (b *brotliReader) reset(src io.Reader) error {
	if b.r == nil {
		b.r = brotli.NewReader(src)
		return nil
	}
	return b.r.Reset(src)
}

// Read decodes into p.
func (b *brotliReader) Read(p []byte) (int, error) { return b.r.Read(p) }
