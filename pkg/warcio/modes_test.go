package warcio

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"

	"github.com/wirecrawl/wire/pkg/contentcoding"
)

// BenchmarkHarvestCoded is the harvester's CPU for a compressed page in
// each harvester.warc_mode, past the network: the body decoded as it
// arrives (into a buffer in decoded mode, into nothing in raw mode,
// where it is only counted) and the exchange made into records (the
// decoded page compressed into its member; the encoded body stored as
// it is). The pages are the 20 of pkg/extract/testdata/pages, gzip level
// 6 or brotli level 5 as servers send them; MB are of decoded HTML. The
// gatherer's side is BenchmarkGatherRaw (pkg/gatherer): together they
// say what a raw harvest costs the whole crawl (docs/harvester.md, "How
// responses are stored").
func BenchmarkHarvestCoded(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		b.Fatal("no fixture pages")
	}
	for _, coding := range []contentcoding.Coding{contentcoding.Gzip, contentcoding.Brotli} {
		var bodies [][]byte
		var n int64
		for _, f := range files {
			page, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			var w io.WriteCloser
			if coding == contentcoding.Gzip {
				w, _ = gzip.NewWriterLevel(&buf, 6)
			} else {
				w = brotli.NewWriterLevel(&buf, 5)
			}
			w.Write(page)
			w.Close()
			bodies = append(bodies, buf.Bytes())
			n += int64(len(page))
		}
		for _, raw := range []bool{false, true} {
			name := string(coding) + "/decoded"
			if raw {
				name = string(coding) + "/raw"
			}
			b.Run(name, func(b *testing.B) {
				var d contentcoding.Decoder
				var plain bytes.Buffer
				b.SetBytes(n)
				for b.Loop() {
					for _, body := range bodies {
						r, err := d.NewReader(coding, bytes.NewReader(body))
						if err != nil {
							b.Fatal(err)
						}
						x := exchange("http://www.a.cl/", nil)
						if raw {
							if _, err := io.Copy(io.Discard, r); err != nil {
								b.Fatal(err)
							}
							x.Header.Set("Content-Encoding", string(coding))
							x.Body = body
						} else {
							plain.Reset()
							if _, err := io.Copy(&plain, r); err != nil {
								b.Fatal(err)
							}
							x.Body = plain.Bytes()
						}
						enc, err := Encode(x)
						if err != nil {
							b.Fatal(err)
						}
						enc.Release()
					}
				}
			})
		}
	}
}
