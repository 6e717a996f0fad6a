package langid

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wirecrawl/wire/pkg/extract"
)

// corpusTexts returns the text of the gatherer's benchmark pages
// (pkg/extract/testdata/pages) as the gatherer extracts it.
func corpusTexts(tb testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join("..", "extract", "testdata", "pages", "*.html"))
	if len(files) == 0 {
		tb.Fatal("no fixture pages")
	}
	ex := extract.New(extract.Options{})
	var texts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		texts = append(texts, ex.Extract(b, "text/html", "http://example.cl/"+filepath.Base(f)).Text)
	}
	return texts
}

// BenchmarkDetectCorpus detects the language of each page of the
// gatherer's benchmark corpus, as the gatherer does (the cost per page
// is ns/op).
func BenchmarkDetectCorpus(b *testing.B) {
	texts := corpusTexts(b)
	d, _ := New(0, DefaultLanguages)
	d.Detect(texts[0]) // load the model
	b.ResetTimer()
	i := 0
	for b.Loop() {
		d.Detect(texts[i%len(texts)])
		i++
	}
}

// BenchmarkSampleCorpus: what choosing the sample costs, on the same pages.
func BenchmarkSampleCorpus(b *testing.B) {
	texts := corpusTexts(b)
	i := 0
	for b.Loop() {
		Sample(texts[i%len(texts)], DefaultSampleBytes)
		i++
	}
}
