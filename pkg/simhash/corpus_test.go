package simhash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/wirecrawl/wire/pkg/extract"
)

// corpusTexts is the visible text of the extractor's fixture pages (real
// HTML of 8 generators, pkg/extract/testdata/pages) and the GIMP manual's
// texts in 14 languages (pkg/langid/testdata/gimp: Greek, Russian,
// Japanese, Korean and Latin scripts), the texts the gatherer hashes.
func corpusTexts(tb testing.TB) []string {
	tb.Helper()
	pages, err := filepath.Glob("../extract/testdata/pages/*.html")
	if err != nil || len(pages) == 0 {
		tb.Fatalf("fixture pages: %v (%d)", err, len(pages))
	}
	ex := extract.New(extract.Options{})
	var out []string
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, ex.Extract(b, "text/html", "http://example.cl/"+filepath.Base(p)).Text)
	}
	gimp, err := filepath.Glob("../langid/testdata/gimp/*.txt")
	if err != nil || len(gimp) == 0 {
		tb.Fatalf("GIMP texts: %v (%d)", err, len(gimp))
	}
	for _, p := range gimp {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestSumSameAsReference: Sum gives the fingerprint of the plain
// implementation of its definition (refSum) on real texts of many
// scripts, on their raw HTML, on pieces cut at any byte (words and runes
// cut in two), on words longer than the 64 bits they are folded into,
// and on texts of every class of character.
func TestSumSameAsReference(t *testing.T) {
	texts := corpusTexts(t)
	raw, _ := filepath.Glob("../extract/testdata/pages/*.html")
	for _, p := range raw {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	texts = append(texts, "", "a", "ab cd", "ab cd ef", "12 34", "x1 2y 3 z", "Ünïcödé ÀÉÎ straße ΣΊΣΥΦΟΣ",
		"漢字かなカナ한국어ไทย ー々〆", "a\xffb\xc3 c\xe3\x81", strings.Repeat("w ", MaxShingles+10),
		strings.Repeat("語", MaxShingles+10), "mañana\u0301 e\u0300 x\u200bz \u00a0y\u2019s", kana(5, 3000),
		strings.Join(words(9, 5000), " "),
		strings.Join(words(3, MaxShingles+Shingle), " "), strings.Join(words(4, MaxShingles+1), "’"), kana(4, MaxShingles+Shingle),
		strings.Join(words(5, MaxShingles+Shingle), "語"), strings.Join(words(6, MaxShingles+Shingle), " 12 "),
		"internationalization characterization антиконституционность Ünïcödé-long-wordsÀÉÎÕ übermäßigkeitsgrenzwert",
		strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 40), strings.Repeat("a", 70)+" "+strings.Repeat("b", 71))
	// every rune of the Basic Multilingual Plane and some beyond, in words
	// of one to four runes
	var b strings.Builder
	for r := rune(0); r < 0x30000; r++ {
		if r >= 0x10000 && r%7 != 0 {
			continue
		}
		b.WriteRune(r)
		if r%4 == 0 {
			b.WriteByte(' ')
		}
		if b.Len() > 4000 {
			texts = append(texts, b.String())
			b.Reset()
		}
	}
	texts = append(texts, b.String())
	n := 0
	for i, text := range texts {
		if got, want := Sum(text), refSum(text); got != want {
			t.Errorf("text %d (%.40q): Sum %016x, reference %016x", i, text, got, want)
		}
		for _, cut := range []int{1, 2, 3, 5, 7, 11, 13, 64, 100, 1001} {
			if 2*cut >= len(text) {
				continue
			}
			for _, s := range []string{text[cut:], text[:len(text)-cut], text[cut : len(text)-cut/2]} {
				n++
				if got, want := Sum(s), refSum(s); got != want {
					t.Fatalf("text %d cut %d (%.40q): Sum %016x, reference %016x", i, cut, s, got, want)
				}
			}
		}
	}
	t.Logf("%d texts, %d pieces", len(texts), n)
}

// TestSumKnown pins fingerprints of version 2 (Version): they are
// stored in graph.db and compared with the next crawl's, so a change of
// them is a change of Version (docs/gatherer.md, "Near-duplicates").
func TestSumKnown(t *testing.T) {
	tests := []struct {
		text string
		want uint64
	}{
		{"hola", 0xeec408501623de13},
		{"hola mundo", 0x090be25e4e075a8e},
		{"Hola, MUNDO: 27 de noviembre de 2026.", 0xdbb3ac5c4d4dacfa},
		{"Versión para imprimir", 0x33e42dffc86fbf8d},
		{"El niño comió una manzana en la mañana", 0x888ea0201781a2fd},
		{"Το GIMP είναι ένα πρόγραμμα επεξεργασίας εικόνας", 0x55e556c3ed2431d2},
		{"Привет, мир! Это тест.", 0x590002a40a30a820},
		{"画像の一部を選択します", 0xc9a1f2eb324eac49},
		{"이미지의 일부를 선택합니다", 0x06478409210615b7},
		{"ภาษาไทยง่ายนิดเดียว", 0x1d8cc61648cbb4f8},
		{strings.Join(words(1, 600), " "), 0x410883e5a4750834},
		{kana(1, 800), 0x2889e816f6b30a9c},
		{"Internationalization and characterization", 0x72cda2c10c967963},
	}
	for _, tt := range tests {
		if got := Sum(tt.text); got != tt.want {
			t.Errorf("Sum(%q) = %#016x, want %#016x", tt.text, got, tt.want)
		}
	}
}

// TestShingleBits: over the shingles of the corpus, each bit of the
// shingles' hashes is set in half of them (within 2 %), as the majority
// vote of simhash needs.
func TestShingleBits(t *testing.T) {
	var n int
	var ones [64]int
	for _, text := range corpusTexts(t) {
		w := refWords(text)
		for i := Shingle - 1; i < len(w); i++ {
			h := shingle(w[i-2], w[i-1], w[i])
			n++
			for b := range ones {
				ones[b] += int(h >> b & 1)
			}
		}
	}
	for b, c := range ones {
		if f := float64(c) / float64(n); f < 0.48 || f > 0.52 {
			t.Errorf("bit %d set in %.3f of %d shingles", b, f, n)
		}
	}
}

// BenchmarkSumCorpus hashes the visible text of the fixture pages and the
// GIMP texts; MB/s is of text. BenchmarkSumCorpusReference is the same
// with the plain implementation of the definition (refSum).
func BenchmarkSumCorpus(b *testing.B) { benchCorpus(b, Sum) }

// BenchmarkSumPages hashes the visible text of the fixture pages alone,
// the texts of the gatherer's benchmark (BenchmarkGather); MB/s is of
// text.
func BenchmarkSumPages(b *testing.B) {
	texts := corpusTexts(b)
	pages, _ := filepath.Glob("../extract/testdata/pages/*.html")
	texts = texts[:len(pages)] // the pages come first
	var n int64
	for _, s := range texts {
		n += int64(len(s))
	}
	b.SetBytes(n)
	for b.Loop() {
		for _, s := range texts {
			Sum(s)
		}
	}
}

// BenchmarkSumCorpusReference is BenchmarkSumCorpus with refSum.
func BenchmarkSumCorpusReference(b *testing.B) { benchCorpus(b, refSum) }

func benchCorpus(b *testing.B, sum func(string) uint64) {
	texts := corpusTexts(b)
	var n int64
	for _, s := range texts {
		n += int64(len(s))
	}
	b.SetBytes(n)
	for b.Loop() {
		for _, s := range texts {
			sum(s)
		}
	}
}

// TestSpaceless: the bounds spaceless tells blocks by agree with the
// Unicode tables on every rune from U+0E00 up.
func TestSpaceless(t *testing.T) {
	for r := rune(0x0e00); r <= unicode.MaxRune; r++ {
		if got, want := spaceless(r), unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Hangul); got != want {
			t.Fatalf("spaceless(%U) = %v, want %v", r, got, want)
		}
	}
}

// BenchmarkSumScripts hashes the GIMP texts of one language at a time:
// Latin letters, Cyrillic and Greek (two bytes a letter in UTF-8), and
// Japanese and Korean (three bytes a character, each a word); MB/s is of
// text.
func BenchmarkSumScripts(b *testing.B) {
	for _, lang := range []string{"en", "es", "ru", "el", "ja", "ko"} {
		files, err := filepath.Glob("../langid/testdata/gimp/" + lang + "-*.txt")
		if err != nil || len(files) == 0 {
			b.Fatalf("GIMP texts in %s: %v", lang, err)
		}
		var texts []string
		var n int64
		for _, f := range files {
			d, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			texts = append(texts, string(d))
			n += int64(len(d))
		}
		b.Run(lang, func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				for _, s := range texts {
					Sum(s)
				}
			}
		})
	}
}

// TestPunctuation: the General Punctuation block, which Sum takes as
// separators without the Unicode tables, has no letter, digit or
// nonspacing mark.
func TestPunctuation(t *testing.T) {
	for r := rune(0x2000); r <= 0x206f; r++ {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			t.Errorf("%U is a letter, digit or mark", r)
		}
	}
}
