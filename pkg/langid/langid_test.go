package langid

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// TestGIMP: the detector tells the language of the translated pages of
// the GIMP manual in testdata/gimp (every language of the data, Catalan
// included) on 97 % or more of those of 50 words or more, the target of
// issue 20; it logs every miss and the share per language.
func TestGIMP(t *testing.T) {
	d, unknown := New(0, DefaultLanguages)
	if len(unknown) > 0 {
		t.Fatalf("default languages the model does not know: %v", unknown)
	}
	names, _ := filepath.Glob("testdata/gimp/*.txt")
	if len(names) < 30 {
		t.Fatalf("%d texts in testdata/gimp", len(names))
	}
	total, right := 0, 0
	perLang := map[string][2]int{}
	for _, name := range names {
		want := strings.SplitN(filepath.Base(name), "-", 2)[0]
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(strings.Fields(string(b))) < 50 {
			continue
		}
		got, conf := d.Detect(string(b))
		c := perLang[want]
		c[1]++
		total++
		if got == want {
			right++
			c[0]++
		} else {
			t.Logf("%s: %s (confidence %d)", name, got, conf)
		}
		perLang[want] = c
	}
	t.Logf("%d of %d texts right (%.1f %%); by language: %v", right, total, 100*float64(right)/float64(total), perLang)
	if total < 30 || right*100 < 97*total {
		t.Errorf("%d of %d texts right, under 97 %%", right, total)
	}
}

func TestDetect(t *testing.T) {
	d, _ := New(0, nil)
	tests := []struct {
		text, want string
	}{
		{"", Unknown},
		{"Inicio\nContacto\nMapa del sitio", Unknown}, // too few words
		{"La Municipalidad informa a los vecinos que el servicio de recolección de basura funcionará con normalidad durante el fin de semana largo.", "es"},
		{"The municipality informs residents that the garbage collection service will work normally during the long weekend.", "en"},
		{"Menu\nHome\nLa Municipalidad informa a los vecinos que el servicio de recolección de basura funcionará con normalidad durante el fin de semana largo.\nOK", "es"},
	}
	for _, tt := range tests {
		if got, _ := d.Detect(tt.text); got != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
	if _, unknown := New(0, []string{"es", "spa", "xx", "ca"}); strings.Join(unknown, " ") != "spa xx" {
		t.Errorf("unknown codes: %v", unknown)
	}
}

func TestSample(t *testing.T) {
	text := "Inicio\nuna línea corta\n" + strings.Repeat("palabra ", 14) + "\notra línea de cinco palabras\n"
	s, n := Sample(text, 1000)
	if want := strings.Repeat("palabra ", 14) + "\notra línea de cinco palabras"; s != want || n != 19 {
		t.Errorf("Sample = %q, %d", s, n)
	}
	if s, _ := Sample(strings.Repeat("ñandú ", 100), 11); s != "ñandú ña" {
		t.Errorf("cut sample %q", s)
	}
	if countWords("画像の一部") != 2 || countWords("it's a co-op, 2026") != 6 {
		t.Errorf("countWords: %d %d", countWords("画像の一部"), countWords("it's a co-op, 2026"))
	}
}

func BenchmarkDetect(b *testing.B) {
	d, _ := New(0, DefaultLanguages)
	text, err := os.ReadFile("testdata/gimp/es-gimp-filter-nl-filter.txt")
	if err != nil {
		names, _ := filepath.Glob("testdata/gimp/es-*.txt")
		text, _ = os.ReadFile(names[0])
	}
	for b.Loop() {
		d.Detect(string(text))
	}
}

// FuzzDetect: any text gives a language code or Unknown, a confidence
// within 0-100, and a sample no longer than asked, cut at a character
// boundary.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{"", "hola", strings.Repeat("la casa es grande y blanca ", 10), "\xff\xfe", "画像の一部を切り抜きます。画像の一部を切り抜きます。"} {
		f.Add(s, 64)
	}
	// Pages of CJK script with Latin-script code, menus and names, and
	// Latin-script pages with CJK names (testdata/cjk).
	cjk, _ := filepath.Glob("testdata/cjk/*-control-*.txt")
	more, _ := filepath.Glob("testdata/cjk/*-short-*.txt")
	for _, name := range append(cjk, more...) {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b), 1024)
		}
	}
	d, _ := New(0, DefaultLanguages)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%2048 + 1
		if max <= 0 {
			max += 2048
		}
		sample, _ := Sample(s, max)
		if len(sample) > max && sample != s {
			t.Fatalf("sample of %d bytes, max %d", len(sample), max)
		}
		lang, conf := d.Detect(s)
		if lang == "" || conf < 0 || conf > 100 {
			t.Fatalf("Detect(%q) = %q, %d", s, lang, conf)
		}
	})
}

// TestConcurrent: one detector used by several goroutines at once (as the
// gatherer's parse workers do) answers as it does alone.
func TestConcurrent(t *testing.T) {
	d, _ := New(0, DefaultLanguages)
	names, _ := filepath.Glob("testdata/gimp/*.txt")
	var texts, want []string
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := d.Detect(string(b))
		texts, want = append(texts, string(b)), append(want, l)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range texts {
				k := (i + 7*g) % len(texts)
				if got, _ := d.Detect(texts[k]); got != want[k] {
					t.Errorf("%s: %s concurrently, %s alone", names[k], got, want[k])
				}
			}
		})
	}
	wg.Wait()
}

// TestCountWordsSWAR: countWordsUpTo, which counts eight bytes of ASCII at
// once, agrees with a byte-at-a-time count on every ASCII byte at every
// position, on texts mixing ASCII and other scripts, and on every line
// of the GIMP texts and of the fixture pages' texts, at several limits.
func TestCountWordsSWAR(t *testing.T) {
	slow := func(s string, limit int) int {
		n, in, dense := 0, false, 0
		for _, r := range s {
			switch {
			case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
				dense++
				in = false
			case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
				if !in {
					n++
				}
				in = true
			default:
				in = false
			}
			if n+dense/2 >= limit {
				return limit
			}
		}
		return n + dense/2
	}
	var texts []string
	for c := range 128 {
		for pos := range 17 {
			b := []byte("ab cd9 ef-gh ij_kl mn")
			b[pos%len(b)] = byte(c)
			texts = append(texts, string(b))
		}
	}
	texts = append(texts, "Él está aquí, ¿no? 画像の一部 и это всё. x1 Y2 @Z [q] `w` {e} ~r~ /t/ :u:",
		"Ωmega ωμέγα 2026-11-27 ÀÉÎÕÜ àéîõü ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789")
	gimp, _ := filepath.Glob("testdata/gimp/*.txt")
	for _, f := range gimp {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.Split(string(b), "\n")...)
	}
	for _, page := range corpusTexts(t) {
		texts = append(texts, strings.Split(page, "\n")...)
	}
	for _, s := range texts {
		for _, limit := range []int{1, 5, 12, 40, math.MaxInt} {
			if got, want := countWordsUpTo(s, limit), slow(s, limit); got != want {
				t.Fatalf("countWordsUpTo(%q, %d) = %d, want %d", s, limit, got, want)
			}
		}
	}
}

// TestNoWordRune: the blocks countWordsUpTo skips without the Unicode
// tables have no letter, digit or mark, and no rune of a script written
// without spaces; wordRune agrees with isWordRune.
func TestNoWordRune(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r < 0x800 && wordRune[r] != isWordRune(r) {
			t.Errorf("wordRune[%U] = %v", r, wordRune[r])
		}
		if noWordRune(r) && (isWordRune(r) || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)) {
			t.Errorf("noWordRune(%U), but it is a letter, digit, mark or dense", r)
		}
	}
}
