package gatherer

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/contentcoding"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
)

// BenchmarkGather runs the whole stage (WARC reads, charset decoding,
// parsing on every core, docs.jsonl, text segment, fsyncs) over a batch
// of every fixture page of pkg/extract/testdata/pages (real HTML), ten
// copies each under different host names (11 MB), into an empty text
// store each time; MB/s is of HTML bodies. It runs with the garbage
// collector's setting of the gatherer command (TuneGC).
// scripts/bench-gatherer.sh compares it with the x/net/html tokenizer
// alone on the same pages.
func BenchmarkGather(b *testing.B) { benchGather(b, 10) }

// BenchmarkGatherLarge is BenchmarkGather on a batch of forty copies of
// the pages (44 MB): the costs of a run that do not grow with the batch
// (opening the store, starting the workers, the fsyncs and renames of the
// commit) weigh a quarter as much as in the 11 MB batch, closer to a real
// harvest of hundreds of megabytes.
func BenchmarkGatherLarge(b *testing.B) { benchGather(b, 40) }

// BenchmarkGatherNoLanguage is BenchmarkGather with language detection
// off (gatherer.language_sample = 0): what the detection costs is the
// difference (docs/gatherer.md, "Performance").
func BenchmarkGatherNoLanguage(b *testing.B) {
	benchGather(b, 10, func(o *Options) { o.LanguageSample = 0 })
}

// BenchmarkGatherRaw is BenchmarkGather on records as a raw harvest
// (harvester.warc_mode raw, the default) stores them: each page
// gzip-compressed at the usual server level (6), under Content-Encoding:
// gzip, which the gatherer decodes itself. MB/s is of the decoded HTML,
// as in BenchmarkGather: scripts/bench-gatherer.sh compares the two, run
// by run (docs/harvester.md, "How responses are stored").
func BenchmarkGatherRaw(b *testing.B) { benchGatherCoded(b, 10, "gzip") }

// BenchmarkGatherRawBrotli is BenchmarkGatherRaw with the pages
// brotli-compressed (level 5, a server's on-the-fly level), under
// Content-Encoding: br. It logs the decoder of the build
// (contentcoding.BrotliLibrary), which scripts/bench-gatherer.sh prints.
func BenchmarkGatherRawBrotli(b *testing.B) {
	b.Logf("brotli decoder: %s", contentcoding.BrotliLibrary)
	benchGatherCoded(b, 10, "br")
}

// benchGather gathers the fixture pages, copies times each, as one
// batch, with the default configuration changed by change.
func benchGather(b *testing.B, copies int, change ...func(*Options)) {
	benchGatherCoded(b, copies, "", change...)
}

// encodeBody compresses a page as a server would send it in coding
// ("gzip" or "br"; "" leaves it as it is).
func encodeBody(b *testing.B, coding string, page []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "":
		return page
	case "gzip":
		w, _ = gzip.NewWriterLevel(&buf, 6)
	case "br":
		w = brotli.NewWriterLevel(&buf, 5)
	}
	if _, err := w.Write(page); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchGatherCoded is benchGather with the bodies stored in a content
// coding ("": decoded).
func benchGatherCoded(b *testing.B, copies int, coding string, change ...func(*Options)) {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		b.Fatal("no fixture pages")
	}
	var pages []gathertest.Page
	var n int64
	for copyN := range copies {
		for i, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			id := uint64(len(pages) + 1)
			header := html("text/html")
			if coding != "" {
				header.Set("Content-Encoding", coding)
			}
			pages = append(pages, gathertest.Page{DocID: id, URL: "http://www" + strconv.Itoa(copyN) + ".example.cl/" + strconv.Itoa(i) + ".html",
				Status: 200, Header: header, Body: encodeBody(b, coding, body), Bytes: int64(len(body))})
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
	for _, c := range change {
		c(&o)
	}
	defer TuneGC()() // as the gatherer command runs
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
