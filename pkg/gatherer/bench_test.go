package gatherer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
)

// BenchmarkGather runs the whole stage (WARC reads, charset decoding,
// parsing, docs.jsonl, text segment, fsyncs) over a batch of the fixture
// pages of pkg/extract, 30 copies each under different URLs; MB/s is of
// HTML bodies.
func BenchmarkGather(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		b.Fatal("no fixture pages")
	}
	var pages []gathertest.Page
	var n int64
	for copyN := range 30 {
		for i, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			id := uint64(len(pages) + 1)
			pages = append(pages, gathertest.Page{DocID: id, URL: "http://www" + strconv.Itoa(copyN) + ".example.cl/" + strconv.Itoa(i) + ".html",
				Status: 200, Header: html("text/html"), Body: body})
			n += int64(len(body))
		}
	}
	col := newCollection(b)
	bt := gathertest.Batch(b, col, 1, pages)
	o, err := OptionsFromConfig(config.Defaults())
	if err != nil {
		b.Fatal(err)
	}
	o.BatchDir, o.TextDir = bt.Dir, col.TextPath()
	b.SetBytes(n)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}
