package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wirecrawl/wire/pkg/extract/internal/htmltok"
)

// corpus is every fixture page of testdata/pages (real HTML, 1.1 MB)
// with the Content-Type and URL of the pages table.
func corpus(b *testing.B) ([][]byte, int64) {
	b.Helper()
	var docs [][]byte
	var n int64
	for _, p := range pages {
		body, err := os.ReadFile(filepath.Join("testdata", "pages", p.file))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, body)
		n += int64(len(body))
	}
	return docs, n
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the metric MB/cpu-s: megabytes of input per second of
// CPU time, which other jobs on the machine disturb less than MB/s.
func reportCPU(b *testing.B, start time.Duration, bytes int64) {
	if cpu := cpuTime() - start; cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// urlsFor returns the page URLs of pass n over the corpus, on host names
// of their own, so that the Extractor's memory of URL resolutions does
// not find the relative links of an earlier pass (a crawl does not read
// the same page twice); absolute links to other sites still repeat.
func urlsFor(n int64) []string {
	out := make([]string, len(pages))
	prefix := "://p" + strconv.FormatInt(n, 10) + "."
	for i, p := range pages {
		out[i] = strings.Replace(p.url, "://", prefix, 1)
	}
	return out
}

// BenchmarkExtract runs the whole extraction (charset, tokenizer, text,
// links) over the fixture pages on one goroutine; MB/s is of HTML input.
func BenchmarkExtract(b *testing.B) {
	docs, n := corpus(b)
	e := New(Options{})
	b.SetBytes(n)
	b.ReportAllocs()
	start := cpuTime()
	var pass int64
	for b.Loop() {
		urls := urlsFor(pass)
		pass++
		for i, d := range docs {
			e.Extract(d, pages[i].contentType, urls[i])
		}
	}
	reportCPU(b, start, n)
}

// BenchmarkTokenizerOnly is the limit of this design: the x/net/html
// tokenizer over the same pages, reading every token and nothing else.
func BenchmarkTokenizerOnly(b *testing.B) {
	docs, n := corpus(b)
	b.SetBytes(n)
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		for _, d := range docs {
			tokenize(d)
		}
	}
	reportCPU(b, start, n)
}

func tokenize(d []byte) {
	z := html.NewTokenizer(bytes.NewReader(d))
	for z.Next() != html.ErrorToken {
	}
}

// BenchmarkHtmltokOnly is BenchmarkTokenizerOnly with the extractor's
// copy of the tokenizer (internal/htmltok), which reads the page in place.
func BenchmarkHtmltokOnly(b *testing.B) {
	docs, n := corpus(b)
	b.SetBytes(n)
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		for _, d := range docs {
			z := htmltok.New(d)
			for z.Next() != htmltok.ErrorToken {
			}
		}
	}
	reportCPU(b, start, n)
}

// BenchmarkExtractParallel is BenchmarkExtract on every core
// (GOMAXPROCS goroutines), as the gatherer's workers run it.
func BenchmarkExtractParallel(b *testing.B) {
	docs, n := corpus(b)
	e := New(Options{})
	b.SetBytes(n)
	start := cpuTime()
	var pass atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			urls := urlsFor(pass.Add(1))
			for i, d := range docs {
				e.Extract(d, pages[i].contentType, urls[i])
			}
		}
	})
	reportCPU(b, start, n)
}

// BenchmarkTokenizerParallel is BenchmarkTokenizerOnly on every core.
func BenchmarkTokenizerParallel(b *testing.B) {
	docs, n := corpus(b)
	b.SetBytes(n)
	start := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for _, d := range docs {
				tokenize(d)
			}
		}
	})
	reportCPU(b, start, n)
}
