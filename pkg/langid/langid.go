// Package langid tells the language of a page from its text, with the
// n-gram models of github.com/pemistahl/lingua-go (the choice and its
// measurements are in docs/dependencies.md). The gatherer records the
// result beside the language the page declares.
//
// A detector looks at a sample of the text, not all of it: lines of
// running text (LongLineWords words or more, then MinLineWords or more;
// not menus, buttons and headings), in document order, at most LineBytes
// of each so that the sample spreads over several paragraphs, up to the
// sample size (DefaultSampleBytes), found in the first ScanBytes of the
// text. A thousand bytes of running text tell a language as well as the
// whole page, at a cost that does not grow with the page.
//
// It tells the language in two steps. First the script of the sample's
// letters: a script only one of the detector's languages is written in
// (Greek, Hebrew, Hangul, Japanese kana, Han, Devanagari for the default
// languages) answers alone, as lingua's rules do. A sample with Chinese,
// Japanese or Korean letters is told by the script of its running text,
// leaving out Latin-script code, menus and names (cjk.go). Otherwise the languages
// written in that script (Latin, Cyrillic ...) are scored as lingua scores
// them in its low-accuracy mode, the one it uses for any text of 120
// characters or more: the sum of the logarithms of the probabilities of
// the sample's distinct letter trigrams, a trigram a language's model
// lacks standing for its bigram prefix, else its first letter. The models
// are lingua's, unchanged but for rounding (scripts/langeval/langmodel
// writes them to model.bin, read in place: model.go); the scoring is done
// here, on one table for all languages, because lingua's own costs
// several hundred microseconds a call even on a short sample (regular
// expressions, a goroutine per n-gram size and arbitrary-precision
// arithmetic on every call), and its models, parsed into maps, hold
// tens of megabytes of heap. Scoring stops once a language leads the
// others by StopMargin. docs/dependencies.md has the measurements.
package langid

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Unknown is the language recorded when the text is too short or too
// mixed to tell.
const Unknown = "unknown"

// Defaults.
const (
	// DefaultSampleBytes is how much running text a detector looks at.
	DefaultSampleBytes = 1024
	// LineBytes is the most bytes of one line that go into a sample, so
	// that a sample holds several paragraphs: a page partly left
	// untranslated (commonly its first paragraph, in English) is told by
	// the rest.
	LineBytes = 128
	// StopMargin is the lead, in nats (natural logarithm of the ratio of
	// two languages' probabilities), after which scoring stops: the rest
	// of the sample could not change the answer but for a text of mixed
	// languages. It is checked every 16 trigrams, taken in an order
	// unrelated to the text's.
	StopMargin = 20
	// ScanBytes is how far into a text a detector looks for lines for its
	// sample: the running text of a page is seldom further, and a long
	// page of short lines (a table, code, an index) costs no more than
	// its beginning.
	ScanBytes = 16 << 10
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

// Detector detects languages. It is safe for concurrent use.
type Detector struct {
	scratch sync.Pool // of *scratch, memory reused from call to call
	sample  int
	allowed uint64 // bit i: the model's language i is a candidate
}

// Languages returns the languages a detector can tell (ISO 639-1 codes),
// those of its model.
func Languages() []string {
	codes, _, _, err := header(modelFile)
	if err != nil {
		panic(err) // the embedded file is checked by TestModel
	}
	return codes
}

// New returns a detector that looks at up to sampleBytes of each text
// (DefaultSampleBytes when 0 or less) and chooses among languages, given
// by ISO 639-1 codes (all of Languages() when empty). Codes the model
// does not know are left out, and reported. New is cheap: the model is
// loaded on the first Detect of the process.
func New(sampleBytes int, languages []string) (*Detector, []string) {
	if sampleBytes <= 0 {
		sampleBytes = DefaultSampleBytes
	}
	d := &Detector{sample: sampleBytes}
	codes := Languages()
	var unknown []string
	for _, code := range languages {
		i := slices.Index(codes, code)
		if i < 0 {
			unknown = append(unknown, code)
			continue
		}
		d.allowed |= 1 << i
	}
	if len(languages) == 0 {
		d.allowed = 1<<len(codes) - 1
	}
	return d, unknown
}

// DefaultLanguages are the languages a detector chooses among unless
// configured otherwise: those a national web of the Americas or Europe
// sees most (the languages of .cl pages, where the project's crawls run,
// and of its neighbours and visitors), and those of the test data. A
// smaller set is faster and errs less between close languages of
// different places (Russian and Bulgarian, Spanish and Galician).
var DefaultLanguages = []string{"es", "en", "pt", "fr", "de", "it", "nl", "sv", "da", "nb", "fi", "pl", "cs", "hu", "ro", "ru", "uk", "el", "tr", "ar", "he", "ja", "ko", "zh", "hi", "eo", "ca", "eu"}

// Detect returns the language of text, as an ISO 639-1 code ("es", "en",
// ...) or Unknown, and a confidence from 0 to 100 (0 with Unknown when
// the sample has fewer than MinWords words). The confidence of a language
// told by its script is the share of the sample's words in that script;
// that of a scored language is lingua's: its probability against the
// other candidates of the script (the softmax of their scores).
func (d *Detector) Detect(text string) (lang string, confidence int) {
	s, words := Sample(text, d.sample)
	if words < MinWords {
		return Unknown, 0
	}
	m := loadModel()
	buf, _ := d.scratch.Get().(*scratch)
	if buf == nil {
		buf = new(scratch)
	}
	defer d.scratch.Put(buf)
	sc := scan{trigrams: buf.trigrams[:0]}
	sc.read(s)
	buf.trigrams = sc.trigrams
	// A text no longer than a sample is counted whole for its CJK
	// script: its short lines (headings, menu items), which the sample
	// leaves out, hold most of its CJK letters.
	whole := len(text) <= d.sample
	if whole {
		s = text
	}
	script, share := sc.dominant(s, whole)
	var cands uint64
	for i, sn := range m.scripts {
		if d.allowed&(1<<i) != 0 && sn == script {
			cands |= 1 << i
		}
	}
	switch {
	case cands == 0:
		return Unknown, 0
	case cands&(cands-1) == 0: // one language is written in that script
		conf := int(100*share + 0.5)
		if conf < MinConfidence {
			return Unknown, conf
		}
		return m.codes[bits.TrailingZeros64(cands)], conf
	}
	best, conf := m.score(sc.trigrams, cands, StopMargin*qScale, buf)
	confidence = int(100*conf + 0.5)
	if best < 0 || confidence < MinConfidence {
		return Unknown, confidence
	}
	return m.codes[best], confidence
}

// score returns the candidate (cands: a bit set of language indexes)
// whose model gives the distinct trigrams the highest probability, and
// its probability against the other candidates; -1 when no candidate's
// model has any of them. It stops once a candidate leads the others by
// stop (in model units).
func (m *model) score(trigrams []uint64, cands uint64, stop int64, buf *scratch) (int, float64) {
	// The distinct trigrams, in the order of a hash table: an order
	// unrelated to the text's, so that stopping early looks at a
	// sample of the whole.
	size := 64
	for size < 2*len(trigrams) {
		size *= 2
	}
	set := buf.set[:]
	if size > len(set) {
		set = make([]uint64, size)
	}
	set = set[:size]
	shift := 64 - bits.TrailingZeros(uint(size))
	for _, k := range trigrams {
		for h := k * hashMul >> shift; ; h = (h + 1) & uint64(size-1) {
			if set[h] == 0 {
				set[h] = k
				break
			} else if set[h] == k {
				break
			}
		}
	}
	keys := buf.keys[:0]
	for i, k := range set {
		if k != 0 {
			keys = append(keys, k)
			set[i] = 0
		}
	}
	buf.keys = keys
	var sums [maxLanguages]int64
	var hit uint64
	// By batches, the look-ups of a batch first: they are independent,
	// and the processor can wait for their memory at once.
	const batch = 16
	var found [batch]string
	for start := 0; start < len(keys); start += batch {
		if start > 0 && margin(&sums, hit) > stop {
			break
		}
		chunk := keys[start:min(start+batch, len(keys))]
		for i, k := range chunk {
			found[i] = m.tri.lookup(k)
		}
		for i, k := range chunk {
			// The trigram, else its bigram prefix, else its first
			// letter: the first of them a language's model has counts
			// for it.
			seen := add(&sums, cands, 0, found[i])
			for _, key := range [2]uint64{k >> 21, k >> 42} {
				if seen == cands {
					break
				}
				seen = add(&sums, cands, seen, m.low.lookup(key))
			}
			hit |= seen
		}
	}
	best := -1
	for l := range m.codes {
		if hit&(1<<l) != 0 && (best < 0 || sums[l] < sums[best]) {
			best = l
		}
	}
	if best < 0 {
		return -1, 0
	}
	// Softmax of the log-probabilities -sums/qScale.
	total := 0.0
	for l := range m.codes {
		if hit&(1<<l) != 0 {
			total += math.Exp(-float64(sums[l]-sums[best]) / qScale)
		}
	}
	return best, 1 / total
}

// add adds to sums the log-probabilities of entries for the candidates
// not yet seen, and returns seen with those languages.
func add(sums *[maxLanguages]int64, cands, seen uint64, entries string) uint64 {
	for i := 0; i+entryBytes <= len(entries); i += entryBytes {
		if l := entries[i]; cands&^seen&(1<<l) != 0 {
			seen |= 1 << l
			sums[l] += int64(entries[i+1]) | int64(entries[i+2])<<8
		}
	}
	return seen
}

// scratch is the memory of a call of Detect, kept for the next.
type scratch struct {
	set      [2048]uint64 // hash set of trigrams, all zero between calls
	trigrams []uint64
	keys     []uint64
}

// margin returns the lead of the best-scored language over the second.
func margin(sums *[maxLanguages]int64, hit uint64) int64 {
	b1, b2 := int64(1<<62), int64(1<<62)
	for l := range maxLanguages {
		if hit&(1<<l) == 0 {
			continue
		}
		if s := sums[l]; s < b1 {
			b1, b2 = s, b1
		} else if s < b2 {
			b2 = s
		}
	}
	return b2 - b1
}

// scan is what a sample's letters say: how many words of each script,
// and the sample's letter trigrams (lower case, within words; repeated
// as often as they occur).
type scan struct {
	words    [numScripts]int // by the script of their first letter
	trigrams []uint64
}

// Scripts, as the model names them (Kana stands for Japanese).
const (
	latin = iota
	cyrillic
	greek
	arabic
	hebrew
	han
	kana
	hangul
	devanagari
	thai
	otherScript
	numScripts
)

var scriptNames = [numScripts]string{"Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Han", "Kana", "Hangul", "Devanagari", "Thai", ""}

var scriptTables = [numScripts]*unicode.RangeTable{unicode.Latin, unicode.Cyrillic, unicode.Greek, unicode.Arabic, unicode.Hebrew, unicode.Han, nil, unicode.Hangul, unicode.Devanagari, unicode.Thai, nil}

// scriptOf returns the script of a letter. The prolonged sound mark
// (ー, and its half-width form), common to hiragana and katakana, is
// kana: only Japanese writes it.
func scriptOf(r rune) int {
	switch {
	case r < 0x250: // ASCII, Latin-1, Latin Extended-A and -B
		return latin
	case unicode.In(r, unicode.Hiragana, unicode.Katakana) || r == 0x30fc || r == 0xff70:
		return kana
	}
	for s, t := range scriptTables {
		if t != nil && unicode.Is(t, r) {
			return s
		}
	}
	return otherScript
}

// read scans s: its words by script, and their trigrams. Words
// are runs of letters, except that a letter of Han, kana or Hangul is a
// word of its own (as lingua splits words).
func (sc *scan) read(s string) {
	var w [3]rune // the last letters of the current word
	n := 0        // letters of the current word
	for _, r := range s {
		if r < utf8.RuneSelf {
			switch {
			case r >= 'a' && r <= 'z':
			case r >= 'A' && r <= 'Z':
				r += 'a' - 'A'
			default:
				n = 0
				continue
			}
			if n == 0 {
				sc.words[latin]++
			}
		} else {
			if !unicode.IsLetter(r) {
				n = 0
				continue
			}
			r = unicode.ToLower(r)
			s := scriptOf(r)
			if s == han || s == kana || s == hangul {
				sc.words[s]++
				n = 0
				continue
			}
			if n == 0 {
				sc.words[s]++
			}
		}
		w[0], w[1], w[2] = w[1], w[2], r
		if n++; n >= 3 {
			sc.trigrams = append(sc.trigrams, uint64(w[0])<<42|uint64(w[1])<<21|uint64(w[2]))
		}
	}
}

// dominant returns the main script of text, whose sample's words sc
// counted, and its share of the words. With CJK letters (in the sample,
// or anywhere in a text counted whole), that of its running text
// (countCJK); otherwise, or when the running text in other scripts has
// more words than the CJK lines have letters, the script most of the
// sample's words are in (as lingua's rules count them) among the others.
func (sc *scan) dominant(text string, whole bool) (string, float64) {
	counts := sc.words
	total := 0
	for _, c := range counts {
		total += c
	}
	if counts[han]+counts[kana]+counts[hangul] > 0 || whole && strings.ContainsFunc(text, func(r rune) bool { return cjkScript(r) >= 0 }) {
		c := countCJK(text)
		if script, share := c.main(); script != "" {
			return script, share
		}
		counts[han], counts[kana], counts[hangul] = 0, 0, 0
	}
	best := -1
	for s, c := range counts {
		if s != otherScript && c > 0 && (best < 0 || c > counts[best]) {
			best = s
		}
	}
	if best < 0 {
		return "", 0
	}
	return scriptNames[best], float64(counts[best]) / float64(total)
}

// Sample returns the part of text a detector looks at, at most max bytes
// (cut at a character boundary), and its number of words: the lines of
// the first ScanBytes of text with LongLineWords words or more, then
// those with MinLineWords or more, each in document order and cut to
// LineBytes, joined by newlines; if they hold fewer than MinWords words,
// the whole text's first max bytes.
func Sample(text string, max int) (string, int) {
	var b strings.Builder
	b.Grow(max)
	words := 0
	add := func(line string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if room := min(max-b.Len(), LineBytes); len(line) > room {
			line = cut(line, room)
		}
		b.WriteString(line)
		words += countWords(line)
	}
	// Paragraphs first (lines of LongLineWords words or more), then the
	// shorter lines of running text, each in document order. One pass
	// over the text: the shorter lines are noted on the way, as many as
	// could fill the sample.
	var shorter []string
	room := max // for the shorter lines noted
	for rest := cut(text, ScanBytes); rest != "" && b.Len() < max; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		switch n := countWordsUpTo(line, LongLineWords); {
		case n >= LongLineWords:
			add(line)
		case n >= MinLineWords && room > 0:
			shorter = append(shorter, line)
			room -= min(len(line), LineBytes) + 1
		}
	}
	for _, line := range shorter {
		if b.Len() >= max {
			break
		}
		add(line)
	}
	if words >= MinWords {
		return b.String(), words
	}
	s := cut(text, max)
	return s, countWords(s)
}

// countWords counts runs of letters and digits; in scripts written
// without spaces, every two characters count as a word.
func countWords(s string) int { return countWordsUpTo(s, math.MaxInt) }

// alnum tells the ASCII letters and digits.
var alnum = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9'
	}
	return t
}()

// isWordRune tells the runes words are made of: letters, digits and
// nonspacing marks.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// wordRune is isWordRune of the runes of one or two bytes in UTF-8 (under
// U+0800), looked up rather than searched for in the Unicode tables: the
// letters with accents of Latin scripts, the no-break space of HTML
// text. The scripts written without spaces all lie above.
var wordRune = func() (t [0x800]bool) {
	for r := range rune(len(t)) {
		t[r] = isWordRune(r)
	}
	return t
}()

// noWordRune tells the blocks of punctuation and symbols frequent in
// page texts, that have neither a rune of a word nor one of a script
// written without spaces (TestNoWordRune checks them against the
// Unicode tables): quotes, dashes, bullets and spaces, currency signs,
// arrows and technical signs, box drawing (text tables), geometric
// shapes, dingbats, and U+FFF0 to U+FFFF (the replacement character).
func noWordRune(r rune) bool {
	return r >= 0x2000 && r <= 0x206f || r >= 0x20a0 && r <= 0x20cf ||
		r >= 0x2190 && r <= 0x23ff || r >= 0x2500 && r <= 0x27bf || r >= 0xfff0 && r <= 0xffff
}

// countWordsUpTo is countWords, that stops counting at limit. Eight
// bytes of ASCII are counted at once (asciiWordStarts); the count only
// grows, so checking the limit after each eight bytes rather than each
// byte gives the same result.
func countWordsUpTo(s string, limit int) int {
	n, in, dense := 0, false, 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			if x := le64(s[i:]); x&0x8080808080808080 == 0 {
				starts, last := asciiWordStarts(x, in)
				n += starts
				in = last
				i += 8
				if n+dense/2 >= limit {
					return limit
				}
				continue
			}
		}
		if c := s[i]; c < utf8.RuneSelf {
			i++
			l := alnum[c]
			if l && !in {
				if n++; n+dense/2 >= limit {
					return limit
				}
			}
			in = l
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r < 0x800: // Latin, Greek, Cyrillic, Hebrew, Arabic...: no dense script
			if !wordRune[r] {
				in = false
			} else if !in {
				n++
				in = true
			}
		case noWordRune(r):
			in = false
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
			dense++
			in = false
		case isWordRune(r):
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

// asciiWordStarts counts the words that start in eight bytes of ASCII x
// (little-endian: its low byte first), given whether the byte before
// them is a letter or digit (in), and tells whether its last byte is
// one: a start is a letter or digit after a byte that is not. Every byte
// is classified at once (SWAR): for bytes under 0x80, (b|0x80)-a has its
// high bit set when b >= a, without borrowing from the next byte.
func asciiWordStarts(x uint64, in bool) (int, bool) {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	ge := func(x uint64, a byte) uint64 { return ((x | high) - ones*uint64(a)) & high }
	lower := x | 0x2020202020202020
	letters := ge(lower, 'a') &^ ge(lower, 'z'+1)
	digits := ge(x, '0') &^ ge(x, '9'+1)
	m := letters | digits // the high bit of each letter or digit
	prev := m << 8
	if in {
		prev |= 0x80
	}
	return bits.OnesCount64(m &^ prev), m>>63 != 0
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
