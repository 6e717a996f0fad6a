package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/wirecrawl/wire/pkg/extract"
)

// cjkSource is a manual in Chinese, Japanese or Korean as Debian installs
// it: its HTML files (a glob under the root), the language, a short name
// for the fixture's file names, whether a file is split into pages by
// its numbered sections, and a line of every page that is a menu (not
// checked for English prose).
type cjkSource struct {
	glob, lang, name string
	split            bool
	menu             string
}

// gimpFooter is the last line of every page of the GIMP manual, in
// English in every translation: two links.
const gimpFooter = "Report a bug in GIMP Report a documentation error"

var cjkSources = []cjkSource{
	{"usr/share/debian-reference/*.ja.html", "ja", "debref", true, ""},
	{"usr/share/debian-reference/*.zh-cn.html", "zh", "debref.zh-cn", true, ""},
	{"usr/share/debian-reference/*.zh-tw.html", "zh", "debref.zh-tw", true, ""},
	{"usr/share/doc/maint-guide-ja/html/*.html", "ja", "maintguide", true, ""},
	{"usr/share/doc/maint-guide-zh-cn/html/*.html", "zh", "maintguide.zh-cn", true, ""},
	{"usr/share/doc/maint-guide-zh-tw/html/*.html", "zh", "maintguide.zh-tw", true, ""},
	{"usr/share/doc/debian/FAQ/ko/*.html", "ko", "faq", true, ""},
	{"usr/share/gimp/2.0/help/ja/*.html", "ja", "gimp", false, gimpFooter},
	{"usr/share/gimp/2.0/help/ko/*.html", "ko", "gimp", false, gimpFooter},
	{"usr/share/gimp/2.0/help/zh_CN/*.html", "zh", "gimp.zh-cn", false, gimpFooter},
}

// cjkPage is one page of a CJK source, with what its kind is told from.
type cjkPage struct {
	name, text        string
	cjk, latin, words int
	kind              string // code, mixed or short
}

// Limits of the CJK fixture.
const (
	cjkFixtureBytes = 4096 // a page's text is cut at a line's end before this
	cjkMinLetters   = 20   // fewer CJK letters: not a page in a CJK language
	cjkMixedPer     = 4    // mixed pages per source at most
	cjkShortPer     = 5    // short pages per source at most
)

// writeCJKFixture writes the texts of pages in Chinese, Japanese or Korean
// with Latin-script code, menus or names, and of short pages, to dir
// (LANG-KIND-SOURCE-PAGE.txt); root is where the Debian packages are
// installed (or unpacked). The pages are the sections of the manuals (a
// page each, as a site serving a manual by section has them) and the
// GIMP manual's pages, without those that hold a line of English prose
// (an untranslated paragraph: their language is not the package's) or
// fewer than cjkMinLetters CJK letters. Kinds: code, every page with at
// least twice as many Latin letters as CJK ones; mixed, cjkMixedPer of
// each source with between one and two times as many, spread over it;
// short, cjkShortPer of each source of fewer than 50 words (two CJK
// letters a word), spread over it.
func writeCJKFixture(root, dir string) {
	ex := extract.New(extract.Options{})
	n := 0
	for _, src := range cjkSources {
		files, _ := filepath.Glob(filepath.Join(root, src.glob))
		sort.Strings(files)
		var pages []cjkPage
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				fail(err)
			}
			text := ex.Extract(b, "text/html; charset=utf-8", "http://example.cl/"+filepath.Base(f)).Text
			base := strings.SplitN(filepath.Base(f), ".", 2)[0]
			parts := []string{text}
			if src.split {
				parts = sections(text)
			}
			for k, part := range parts {
				name := base
				if src.split {
					name = fmt.Sprintf("%s.%02d", base, k)
				}
				if p, ok := classify(name, part, src.menu); ok {
					pages = append(pages, p)
				}
			}
		}
		var mixed, short []cjkPage
		for _, p := range pages {
			switch p.kind {
			case "code":
				writePage(dir, src, p)
				n++
			case "mixed":
				mixed = append(mixed, p)
			case "short":
				short = append(short, p)
			}
		}
		for _, set := range []struct {
			pages []cjkPage
			max   int
		}{{mixed, cjkMixedPer}, {short, cjkShortPer}} {
			for _, p := range spread(set.pages, set.max) {
				writePage(dir, src, p)
				n++
			}
		}
	}
	fmt.Printf("%d pages written to %s\n", n, dir)
}

// classify tells a page's kind, and whether it belongs in the fixture:
// not when the words of its lines of English prose (an untranslated
// paragraph, a sentence left in English) are a fifth or more of its CJK
// words (two letters a word): a page left partly untranslated is not of
// the package's language, as langeval leaves out a page of the GIMP
// manual with a fifth of its text untranslated. menu, a line of every
// page, is not checked.
func classify(name, text, menu string) (cjkPage, bool) {
	text = cutAtLine(text, cjkFixtureBytes)
	p := cjkPage{name: name, text: text}
	english := 0
	for _, l := range strings.Split(text, "\n") {
		if l != menu && englishProse(l) {
			english += len(strings.FieldsFunc(l, func(r rune) bool { return !unicode.Is(unicode.Latin, r) }))
		}
	}
	inWord := false
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) && unicode.IsLetter(r):
			p.cjk++
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.Is(unicode.Latin, r) {
				p.latin++
			}
			if !inWord {
				p.words++
			}
			inWord = true
		default:
			inWord = false
		}
	}
	p.words += p.cjk / 2
	switch {
	case p.cjk < cjkMinLetters || 5*english >= p.cjk/2:
		return p, false
	case p.words < 50:
		p.kind = "short"
	case p.latin >= 2*p.cjk:
		p.kind = "code"
	case p.latin >= p.cjk:
		p.kind = "mixed"
	default:
		return p, false
	}
	return p, true
}

// englishWords are frequent words of English prose, rare in code and
// in names.
var englishWords = map[string]bool{"the": true, "of": true, "and": true, "to": true, "a": true, "in": true, "is": true, "you": true, "that": true, "it": true, "for": true, "on": true, "are": true, "with": true, "as": true, "this": true, "be": true, "by": true, "can": true, "or": true, "not": true, "an": true, "from": true, "at": true, "your": true, "which": true, "will": true, "have": true, "has": true, "if": true, "when": true, "there": true, "use": true, "these": true, "they": true, "one": true, "all": true, "more": true, "also": true, "into": true}

// englishProse reports whether a line is English prose: 4 words or more,
// at least two of them, and a fifth, frequent English words.
func englishProse(line string) bool {
	words := strings.FieldsFunc(strings.ToLower(line), func(r rune) bool { return !unicode.IsLetter(r) })
	n := 0
	for _, w := range words {
		if englishWords[w] {
			n++
		}
	}
	return len(words) >= 4 && n >= 2 && 5*n >= len(words)
}

// heading is a numbered section heading of a DocBook manual ("5.1.2. ").
var heading = regexp.MustCompile(`^([0-9]+\.)+([0-9]+\.?)? `)

// sections splits a chapter's text into its sections: the table of
// contents (the first run of heading lines) names them, and each starts
// at the line that repeats a heading of it. What comes before the first
// section (the chapter's title, its contents, its introduction) is left
// out.
func sections(text string) []string {
	lines := strings.Split(text, "\n")
	toc := map[string]bool{}
	i := 0
	for ; i < len(lines); i++ {
		if heading.MatchString(lines[i]) {
			toc[lines[i]] = true
		} else if len(toc) > 0 {
			break
		}
	}
	var out []string
	start := -1
	for ; i < len(lines); i++ {
		if toc[lines[i]] {
			if start >= 0 {
				out = append(out, strings.Join(lines[start:i], "\n"))
			}
			start = i
		}
	}
	if start >= 0 {
		out = append(out, strings.Join(lines[start:], "\n"))
	}
	return out
}

// spread returns at most max pages, spread evenly over pages.
func spread(pages []cjkPage, max int) []cjkPage {
	if len(pages) <= max {
		return pages
	}
	out := make([]cjkPage, max)
	for i := range out {
		out[i] = pages[i*len(pages)/max]
	}
	return out
}

// cutAtLine cuts s before max bytes, at a line's end.
func cutAtLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return s
}

func writePage(dir string, src cjkSource, p cjkPage) {
	name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%s.txt", src.lang, p.kind, src.name, p.name))
	if err := os.WriteFile(name, []byte(strings.TrimRight(p.text, "\n")+"\n"), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
