// Package langid tells the language of a page from its text, with
// github.com/abadojack/whatlanggo (trigram profiles of 84 languages; the
// choice and its measurements are in docs/dependencies.md). The gatherer
// records the result beside the language the page declares.
//
// A detector looks at a sample of the text, not all of it: the lines of
// at least MinLineWords words (running text rather than menus, buttons
// and headings), in order, up to the sample size. The library's cost is
// mostly per call and grows with the sample, and a few hundred bytes of
// running text tell a language as well as the whole page.
package langid

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// Unknown is the language recorded when the text is too short or too
// mixed to tell.
const Unknown = "unknown"

// Defaults.
const (
	// DefaultSampleBytes is how much running text a detector looks at.
	DefaultSampleBytes = 512
	// MinWords is the fewest words of sample under which the language is
	// Unknown.
	MinWords = 10
	// MinLineWords is the fewest words a line needs to go into the sample
	// while longer lines remain.
	MinLineWords = 5
	// LongLineWords is the fewest words of a line taken first: a
	// paragraph of running text rather than a caption, a menu path or a
	// line of code (which is often left in English in a translated page).
	LongLineWords = 12
	// MinConfidence is the lowest confidence (0-100) of a result that is
	// not Unknown: below it the text is too mixed, or too close to two
	// languages, to tell.
	MinConfidence = 20
)

// Detector detects languages. It holds no per-call state and is safe for
// concurrent use.
type Detector struct {
	sample int
	opts   whatlanggo.Options
	codes  []string // by whatlanggo.Lang: ISO 639-1, else 639-3
}

// New returns a detector that looks at up to sampleBytes of each text
// (DefaultSampleBytes when 0 or less) and chooses among languages, given
// by ISO 639-1 or 639-3 codes (all of the library's when empty). Codes
// the library does not know are left out, and reported.
func New(sampleBytes int, languages []string) (*Detector, []string) {
	if sampleBytes <= 0 {
		sampleBytes = DefaultSampleBytes
	}
	d := &Detector{sample: sampleBytes}
	byCode := map[string]whatlanggo.Lang{}
	for l := whatlanggo.Afr; l <= whatlanggo.Zul; l++ {
		c := l.Iso6391()
		if c == "" {
			c = l.Iso6393()
		}
		d.codes = append(d.codes, c)
		byCode[l.Iso6391()], byCode[l.Iso6393()] = l, l
	}
	delete(byCode, "")
	var unknown []string
	for _, code := range languages {
		l, ok := byCode[code]
		if !ok {
			unknown = append(unknown, code)
			continue
		}
		if d.opts.Whitelist == nil {
			d.opts.Whitelist = map[whatlanggo.Lang]bool{}
		}
		d.opts.Whitelist[l] = true
	}
	return d, unknown
}

// DefaultLanguages are the languages a detector chooses among unless
// configured otherwise: those a national web of the Americas or Europe
// sees most (the languages of .cl pages, where the project's crawls run,
// and of its neighbours and visitors), and those of the test data. A
// smaller set is faster and errs less between close languages of
// different places (Russian and Bulgarian, Spanish and Galician).
var DefaultLanguages = []string{"es", "en", "pt", "fr", "de", "it", "nl", "sv", "da", "nb", "fi", "pl", "cs", "hu", "ro", "ru", "uk", "el", "tr", "ar", "he", "ja", "ko", "zh", "hi", "eo"}

// Detect returns the language of text, as an ISO 639-1 code ("es", "en",
// ...; ISO 639-3 for the few languages without one) or Unknown, and a
// confidence from 0 to 100 (0 with Unknown when the sample has fewer than
// MinWords words).
func (d *Detector) Detect(text string) (lang string, confidence int) {
	s, words := Sample(text, d.sample)
	if words < MinWords {
		return Unknown, 0
	}
	info := whatlanggo.DetectWithOptions(s, d.opts)
	confidence = int(info.Confidence*100 + 0.5)
	if info.Lang < 0 || confidence < MinConfidence {
		return Unknown, confidence
	}
	if int(info.Lang) >= len(d.codes) {
		return Unknown, confidence
	}
	return d.codes[info.Lang], confidence
}

// Sample returns the part of text a detector looks at, at most max bytes
// (cut at a character boundary), and its number of words: the lines of
// MinLineWords words or more, joined by newlines; if they hold fewer than
// MinWords words, the whole text's first max bytes.
func Sample(text string, max int) (string, int) {
	var b strings.Builder
	words := 0
	// Paragraphs first (lines of LongLineWords words or more), then the
	// shorter lines of running text, each pass in document order.
	for _, least := range [2]int{LongLineWords, MinLineWords} {
		for rest := text; rest != "" && b.Len() < max; {
			line := rest
			if i := strings.IndexByte(rest, '\n'); i >= 0 {
				line, rest = rest[:i], rest[i+1:]
			} else {
				rest = ""
			}
			n := countWords(line)
			if least == LongLineWords && n < least || least == MinLineWords && (n >= LongLineWords || n < least) {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			if room := max - b.Len(); len(line) > room {
				line = cut(line, room)
				n = countWords(line)
			}
			b.WriteString(line)
			words += n
		}
	}
	if words >= MinWords {
		return b.String(), words
	}
	s := cut(text, max)
	return s, countWords(s)
}

// dense reports whether a line is in a script written without spaces
// between words (Han, kana, Thai ...), where counting words says little:
// such a line is taken when it has 20 characters or more.
func dense(line string) bool {
	n := 0
	for _, r := range line {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
			n++
		}
	}
	return n >= 20
}

// countWords counts runs of letters and digits; in scripts written
// without spaces, every two characters count as a word.
func countWords(s string) int {
	n, in, dense := 0, false, 0
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			l := r|0x20 >= 'a' && r|0x20 <= 'z' || r >= '0' && r <= '9'
			if l && !in {
				n++
			}
			in = l
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
	}
	return n + dense/2
}

// cut returns the longest prefix of s of at most max bytes that ends at a
// character boundary.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
