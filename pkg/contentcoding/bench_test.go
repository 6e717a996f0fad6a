package contentcoding

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// BenchmarkBrotli decodes the 20 real pages of pkg/extract/testdata/pages
// (brotli level 5, as servers send them) as the gatherer does, with
// Decoder.Append into a reused buffer: "build" with this build's decoder
// (BrotliLibrary: libbrotlidec with cgo), "andybalholm" with
// github.com/andybalholm/brotli's Reader in the same loop, the pure-Go
// build's decoder. MB are of decoded HTML, per second and per CPU-second.
func BenchmarkBrotli(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		b.Fatal("no fixture pages")
	}
	var bodies [][]byte
	var n int64
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		w := brotli.NewWriterLevel(&buf, 5)
		w.Write(page)
		w.Close()
		bodies = append(bodies, buf.Bytes())
		n += int64(len(page))
	}
	for _, name := range []string{"build", "andybalholm"} {
		b.Run(name, func(b *testing.B) {
			var d Decoder
			ref := brotli.NewReader(nil)
			var src bytes.Reader
			var out []byte
			b.SetBytes(n)
			start := cpuTime()
			for b.Loop() {
				for _, body := range bodies {
					var err error
					if name == "build" {
						out, _, err = d.Append(out[:0], Brotli, body, 1<<30)
					} else {
						src.Reset(body)
						ref.Reset(&src)
						out, err = appendAll(out[:0], ref)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			if cpu := cpuTime() - start; cpu > 0 {
				b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
			}
		})
	}
}

// appendAll appends r's content to dst, as Append reads a decoder.
func appendAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
