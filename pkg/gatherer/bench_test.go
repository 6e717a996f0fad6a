package gatherer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
)

// BenchmarkGather runs the whole stage (WARC reads, charset decoding,
// parsing on every core, docs.jsonl, text segment, fsyncs) over a batch
// of every fixture page of pkg/extract/testdata/pages (real HTML), ten
// copies each under different host names, into an empty text store each
// time; MB/s is of HTML bodies. scripts/bench-gatherer.sh compares it
// with the x/net/html tokenizer alone on the same pages.
func BenchmarkGather(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		b.Fatal("no fixture pages")
	}
	var pages []gathertest.Page
	var n int64
	for copyN := range 10 {
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
	o.BatchDir = bt.Dir
	b.SetBytes(n)
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		o.TextDir = filepath.Join(b.TempDir(), "text")
		if _, err := Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
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
