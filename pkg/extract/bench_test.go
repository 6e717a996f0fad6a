package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
)

// corpus is every fixture page with its Content-Type.
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

// BenchmarkExtract runs the whole extraction (charset, tokenizer, text,
// links) over the fixture pages; MB/s is of HTML input.
func BenchmarkExtract(b *testing.B) {
	docs, n := corpus(b)
	e := New(Options{})
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for i, d := range docs {
			e.Extract(d, pages[i].contentType, pages[i].url)
		}
	}
}

// BenchmarkTokenizerOnly is the floor: the x/net/html tokenizer over the
// same pages, reading every token and nothing else.
func BenchmarkTokenizerOnly(b *testing.B) {
	docs, n := corpus(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			z := html.NewTokenizer(bytes.NewReader(d))
			for z.Next() != html.ErrorToken {
			}
		}
	}
}
