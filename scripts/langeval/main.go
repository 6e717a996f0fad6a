// Command langeval measures language identification libraries on pages of
// known language: the GIMP manual's translations as Debian installs them
// (gimp-help-de, -es, ...: /usr/share/gimp/2.0/help/LANG/*.html). It is a
// module of its own so that the libraries it compares are not
// dependencies of the crawler; docs/dependencies.md has its figures.
//
//	cd scripts/langeval && go run . [-dir /usr/share/gimp/2.0/help] [-max 200]
//
// The text of each page is what the gatherer extracts (pkg/extract); the
// declared language is never shown to the detectors. A page whose text is
// the same as the English page of the same name is untranslated and left
// out. Pages are counted as long (50 words or more) or short.
//
// It measures whatlanggo (whole text), lingua-go restricted to
// pkg/langid's default languages in its low-accuracy mode (whole text and
// pkg/langid's samples), and pkg/langid (lingua's models scored by
// pkg/langid) at several sample sizes, with the accuracy per language of
// pkg/langid's default, and how often pkg/langid and lingua agree on the
// same sample. -lingua=false leaves lingua out (it takes minutes).
//
// -fixture DIR writes pkg/langid/testdata/gimp; -cjk-fixture DIR writes
// pkg/langid/testdata/cjk from the Chinese, Japanese and Korean manuals
// listed in cjkfixture.go (installed under -root).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/abadojack/whatlanggo"
	"github.com/pemistahl/lingua-go"
	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/langid"
)

type page struct {
	lang, name, text string
	words            int
}

type detector struct {
	name string
	load time.Duration
	fn   func(string) string
}

func main() {
	dir := flag.String("dir", "/usr/share/gimp/2.0/help", "GIMP manual directory (one subdirectory per language)")
	max := flag.Int("max", 200, "pages per language at most")
	exclude := flag.String("exclude", "", "comma-separated languages to leave out (e.g. ca, which whatlanggo does not know)")
	withLingua := flag.Bool("lingua", true, "measure lingua-go too (slow)")
	dump := flag.String("dump", "", "write the text of every page of 50 words or more here (LANG-NAME.txt) and stop")
	fixture := flag.String("fixture", "", "write a sample of the pages' texts here (LANG-NAME.txt, 3 long pages a language) and stop")
	cjkFixture := flag.String("cjk-fixture", "", "write the texts of pages in Chinese, Japanese and Korean with Latin-script code, menus or names, and of short ones, here (LANG-KIND-SOURCE-PAGE.txt) and stop")
	root := flag.String("root", "/", "with -cjk-fixture: where the Debian packages are installed or unpacked")
	flag.Parse()
	if *cjkFixture != "" {
		writeCJKFixture(*root, *cjkFixture)
		return
	}
	pages, skipped := load(*dir, *max, strings.Split(*exclude, ","))
	if *dump != "" {
		for _, p := range pages {
			if p.words >= 50 {
				if err := os.WriteFile(filepath.Join(*dump, p.lang+"-"+filepath.Base(p.name)+".txt"), []byte(p.text), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
		}
		return
	}
	fmt.Printf("pages: %d (partly or wholly untranslated, left out: %d)\n", len(pages), skipped)
	if *fixture != "" {
		writeFixture(*fixture, pages)
		return
	}

	var ds []detector
	ds = append(ds, detector{name: "whatlanggo, whole text, all languages", fn: func(s string) string {
		info := whatlanggo.Detect(s)
		if info.Lang < 0 {
			return "unknown"
		}
		return whatlang(info.Lang)
	}})
	if *withLingua {
		var isos []lingua.IsoCode639_1
		for _, l := range langid.DefaultLanguages {
			isos = append(isos, lingua.GetIsoCode639_1FromValue(l))
		}
		start := time.Now()
		ld := lingua.NewLanguageDetectorBuilder().FromIsoCodes639_1(isos...).WithLowAccuracyMode().WithPreloadedLanguageModels().Build()
		load := time.Since(start)
		fn := func(s string) string {
			l, ok := ld.DetectLanguageOf(s)
			if !ok {
				return "unknown"
			}
			return strings.ToLower(l.IsoCode639_1().String())
		}
		n := len(langid.DefaultLanguages)
		ds = append(ds, detector{name: fmt.Sprintf("lingua, %d languages, low accuracy, whole text", n), load: load, fn: fn})
		for _, size := range []int{192, 512} {
			ds = append(ds, detector{name: fmt.Sprintf("lingua, %d languages, low accuracy, pkg/langid's sample of %d bytes", n, size), fn: func(s string) string {
				sample, _ := langid.Sample(s, size)
				return fn(sample)
			}})
		}
	}
	for _, n := range []int{256, 512, 1024, 1 << 30} {
		ld, _ := langid.New(n, langid.DefaultLanguages)
		name := fmt.Sprintf("pkg/langid, default languages, sample of %d bytes", n)
		if n == 1<<30 {
			name = "pkg/langid, default languages, whole text"
		}
		ds = append(ds, detector{name: name, fn: func(s string) string {
			l, _ := ld.Detect(s)
			return l
		}})
	}
	if *withLingua {
		// How often pkg/langid and lingua agree on the same sample.
		var isos []lingua.IsoCode639_1
		for _, l := range langid.DefaultLanguages {
			isos = append(isos, lingua.GetIsoCode639_1FromValue(l))
		}
		ld := lingua.NewLanguageDetectorBuilder().FromIsoCodes639_1(isos...).WithLowAccuracyMode().Build()
		own, _ := langid.New(0, langid.DefaultLanguages)
		same, n := 0, 0
		for _, p := range pages {
			sample, _ := langid.Sample(p.text, langid.DefaultSampleBytes)
			l, ok := ld.DetectLanguageOf(sample)
			want := "unknown"
			if ok {
				want = strings.ToLower(l.IsoCode639_1().String())
			}
			got, _ := own.Detect(p.text)
			if p.words >= 50 {
				n++
				if got == want {
					same++
				} else {
					fmt.Fprintf(os.Stderr, "differ: %s: pkg/langid %s, lingua %s\n", p.name, got, want)
				}
			}
		}
		fmt.Printf("pkg/langid (default) and lingua on the same %d-byte sample agree on %d of %d long pages\n", langid.DefaultSampleBytes, same, n)
	}
	runtime.GC()
	perLang := ""
	fmt.Printf("\n| detector | load | long pages correct | short pages correct | unknown (long) | µs/page | MB/s |\n|---|---|---|---|---|---|---|\n")
	for _, d := range ds {
		var okLong, nLong, okShort, nShort, unkLong, bytes int
		wrong := map[string]int{}
		start := time.Now()
		for _, p := range pages {
			got := d.fn(p.text)
			bytes += len(p.text)
			if p.words >= 50 {
				nLong++
				if got == p.lang {
					okLong++
				} else {
					wrong[p.lang+"→"+got]++
					if got == "unknown" {
						unkLong++
					}
				}
			} else {
				nShort++
				if got == p.lang {
					okShort++
				}
			}
		}
		el := time.Since(start)
		fmt.Printf("| %s | %s | %d/%d = %.1f %% | %d/%d = %.1f %% | %d | %.0f | %.1f |\n", d.name, d.load.Round(time.Millisecond),
			okLong, nLong, 100*float64(okLong)/float64(nLong), okShort, nShort, 100*float64(okShort)/float64(max1(nShort)), unkLong,
			float64(el.Microseconds())/float64(len(pages)), float64(bytes)/1e6/el.Seconds())
		fmt.Fprintf(os.Stderr, "%s: errors on long pages: %v\n", d.name, top(wrong))
		if d.name == fmt.Sprintf("pkg/langid, default languages, sample of %d bytes", langid.DefaultSampleBytes) {
			perLang = perLanguage(d, pages)
		}
	}
	fmt.Print(perLang)
}

// perLanguage tells the share of long pages right per language.
func perLanguage(d detector, pages []page) string {
	right, all := map[string]int{}, map[string]int{}
	var langs []string
	for _, p := range pages {
		if p.words < 50 {
			continue
		}
		if all[p.lang] == 0 {
			langs = append(langs, p.lang)
		}
		all[p.lang]++
		if d.fn(p.text) == p.lang {
			right[p.lang]++
		}
	}
	sort.Strings(langs)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s, long pages right by language:\n\n| language | right |\n|---|---|\n", d.name)
	for _, l := range langs {
		fmt.Fprintf(&b, "| %s | %d/%d = %.1f %% |\n", l, right[l], all[l], 100*float64(right[l])/float64(all[l]))
	}
	return b.String()
}

func max1(n int) int {
	if n == 0 {
		return 1
	}
	return n
}

func top(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	var b strings.Builder
	for i, e := range s {
		if i == 12 {
			break
		}
		fmt.Fprintf(&b, "%s %d, ", e.k, e.v)
	}
	return b.String()
}

// whatlang names whatlanggo's languages by ISO 639-1 where one exists
// (its Iso6391 is empty for some).
func whatlang(l whatlanggo.Lang) string {
	if c := l.Iso6391(); c != "" {
		return c
	}
	return l.Iso6393()
}

func load(dir string, max int, exclude []string) ([]page, int) {
	ex := extract.New(extract.Options{})
	text := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		return ex.Extract(b, "text/html; charset=utf-8", "http://example.cl/"+filepath.Base(path)).Text
	}
	langs, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out []page
	skipped := 0
	for _, l := range langs {
		if slices.Contains(exclude, strings.SplitN(l.Name(), "_", 2)[0]) {
			continue
		}
		names, _ := filepath.Glob(filepath.Join(dir, l.Name(), "*.html"))
		sort.Strings(names)
		if len(names) > max {
			// Every k-th page, across the whole manual.
			picked := make([]string, max)
			for i := range picked {
				picked[i] = names[i*len(names)/max]
			}
			names = picked
		}
		for _, name := range names {
			t := text(name)
			if l.Name() != "en" && untranslated(t, text(filepath.Join(dir, "en", filepath.Base(name)))) {
				skipped++
				continue
			}
			code := strings.ToLower(strings.SplitN(l.Name(), "_", 2)[0])
			out = append(out, page{lang: code, name: name, text: t, words: len(strings.Fields(t))})
		}
	}
	return out, skipped
}

// untranslated reports whether a page is left (partly) in English: a
// fifth or more of its text's bytes are in lines the English page has too
// (the manual's translations fall back to English paragraph by paragraph).
// Lines of fewer than 30 bytes (names, menu paths, numbers) do not count.
func untranslated(t, en string) bool {
	lines := map[string]bool{}
	for _, l := range strings.Split(en, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	shared, total := 0, 0
	for _, l := range strings.Split(t, "\n") {
		l = strings.TrimSpace(l)
		if len(l) < 30 {
			continue
		}
		total += len(l)
		if lines[l] {
			shared += len(l)
		}
	}
	return total == 0 || shared*5 >= total
}

// writeFixture writes the texts of three long pages of each language,
// spread over the manual, each cut to 2,000 bytes at a line's end.
func writeFixture(dir string, pages []page) {
	by := map[string][]page{}
	for _, p := range pages {
		if p.words >= 80 {
			by[p.lang] = append(by[p.lang], p)
		}
	}
	for lang, ps := range by {
		for k := 0; k < 3 && k < len(ps); k++ {
			p := ps[k*len(ps)/3]
			t := p.text
			if len(t) > 2000 {
				t = t[:2000]
				if i := strings.LastIndexByte(t, '\n'); i > 0 {
					t = t[:i]
				}
			}
			name := filepath.Join(dir, lang+"-"+strings.TrimSuffix(filepath.Base(p.name), ".html")+".txt")
			if err := os.WriteFile(name, []byte(t+"\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}
