package langid

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The main script of a sample with letters of Chinese, Japanese or
// Korean (CJK) script. A page in one of these languages often has more
// Latin-script words than CJK letters: code samples, command lines, file
// names, tables of package names, menu items and names of people are
// left in Latin script. Counted word by word, such a page reads as
// English (issue 37: a Japanese chapter of a manual whose code samples
// are in Latin script). So, when a sample has CJK letters, its lines
// (each cut to LineBytes, as in a sample) are sorted first:
//
//   - a CJK line, whose CJK letters are at least as many as its words of
//     running text in other scripts: its letters count for their script
//     (Han, kana, Hangul), one word each as lingua counts them; the
//     Latin-script words in it (names, menu items, commands quoted in a
//     sentence) do not count;
//   - a line of running text in another script: at least half of its
//     words are words of running text (proseWord: letters only, no
//     digits, dots, slashes or underscores), and at most half of those
//     begin with a capital letter (a list of names, menu items or titles
//     has them all capitalised). Those words count for their script; CJK
//     letters in the line (a name in its own script) do not;
//   - anything else is code, a table row, a list of names or a menu: it
//     does not count.
//
// When the CJK letters of CJK lines are at least as many as the words
// of running text, a CJK script is the sample's: Korean when Hangul are
// at least as many as the Han and kana, else Japanese when kana are at
// least KanaShare of the Han and kana (Japanese mixes the two; Chinese
// has no kana), else Chinese. Otherwise the words of the other scripts
// decide, as for a sample without CJK letters.

// KanaShare is the least share of kana among the Han and kana letters of
// a sample told as Japanese rather than Chinese: Japanese prose is
// mostly kana (56 % or more on every page of testdata/cjk), and a
// Chinese text has none but in a quoted Japanese name.
const KanaShare = 0.05

// cjkCounts is what the lines of a sample with CJK letters say.
type cjkCounts struct {
	letters [numScripts]int // CJK letters of CJK lines, by script (han, kana, hangul)
	prose   [numScripts]int // words of running text of the other lines, by script
}

// countCJK sorts the lines of sample as the comment above says.
func countCJK(sample string) cjkCounts {
	var c cjkCounts
	for rest := sample; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		var letters, prose [numScripts]int
		cjk, words, proseWords, capitals := 0, 0, 0, 0
		for tokens := cut(line, LineBytes); tokens != ""; {
			var tok string
			tok, tokens = nextToken(tokens)
			n := countCJKLetters(tok, &letters)
			if n > 0 || !hasWordRune(tok) {
				cjk += n
				continue
			}
			words++
			if script, capital, ok := proseWord(tok); ok {
				proseWords++
				prose[script]++
				if capital {
					capitals++
				}
			}
		}
		switch {
		case cjk > 0 && cjk >= proseWords:
			for s, n := range letters {
				c.letters[s] += n
			}
		case proseWords > 0 && 2*proseWords >= words && 2*capitals <= proseWords:
			for s, n := range prose {
				c.prose[s] += n
			}
		}
	}
	return c
}

// nextToken returns the first run of non-space runes of s (white space,
// the ideographic space included, separates them), and the rest of s
// after it; tok is "" when s holds only spaces.
func nextToken(s string) (tok, rest string) {
	isSpace := func(r rune) bool { return r == ' ' || r == '\t' || r >= utf8.RuneSelf && unicode.IsSpace(r) }
	start := strings.IndexFunc(s, func(r rune) bool { return !isSpace(r) })
	if start < 0 {
		return "", ""
	}
	s = s[start:]
	end := strings.IndexFunc(s, isSpace)
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// countCJKLetters adds the CJK letters of tok to letters, by script, and
// returns how many there are.
func countCJKLetters(tok string, letters *[numScripts]int) int {
	n := 0
	for _, r := range tok {
		if r >= 0x1100 {
			if s := cjkScript(r); s >= 0 {
				letters[s]++
				n++
			}
		}
	}
	return n
}

// main returns the CJK script of the counts, and its share of the words
// that count, or "" when the words of running text in other scripts are
// more than the CJK letters.
func (c *cjkCounts) main() (string, float64) {
	cjk := c.letters[han] + c.letters[kana] + c.letters[hangul]
	prose := 0
	for _, n := range c.prose {
		prose += n
	}
	if cjk == 0 || cjk < prose {
		return "", 0
	}
	share := float64(cjk) / float64(cjk+prose)
	switch hk := c.letters[han] + c.letters[kana]; {
	case c.letters[hangul] >= hk:
		return scriptNames[hangul], share
	case float64(c.letters[kana]) >= KanaShare*float64(hk):
		return scriptNames[kana], share
	default:
		return scriptNames[han], share
	}
}

// cjkScript returns han, kana or hangul for a letter of those scripts,
// else -1. The blocks most of their letters are in are told without the
// Unicode tables.
func cjkScript(r rune) int {
	switch {
	case r < 0x1100:
		return -1
	case r >= 0x4e00 && r <= 0x9fff: // CJK Unified Ideographs
		return han
	case r >= 0x3041 && r <= 0x3096 || r >= 0x30a1 && r <= 0x30fa || r == 0x30fc: // hiragana, katakana, ー
		return kana
	case r >= 0xac00 && r <= 0xd7a3: // Hangul syllables
		return hangul
	case !unicode.IsLetter(r):
		return -1
	}
	switch s := scriptOf(r); s {
	case han, kana, hangul:
		return s
	}
	return -1
}

// hasWordRune tells whether a token has a letter or a digit: a token
// that has neither (a dash, a bullet, a prompt "$") is no word.
func hasWordRune(tok string) bool {
	for _, r := range tok {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// proseWord tells whether a token (a run of non-space runes) is a word
// of running text in a script other than the CJK ones, and if so its script and
// whether it begins with a capital letter: letters of one script, with
// hyphens or apostrophes between them, after opening and before closing
// punctuation ("(word", "word,", "«Wort»."). Tokens with digits, dots,
// slashes, underscores, equal signs, leading dashes and the like are
// code, paths, versions or options.
func proseWord(tok string) (script int, capital, ok bool) {
	core := strings.TrimRight(strings.TrimLeft(tok, openPunct), closePunct)
	script = -1
	prev := ' '
	for _, r := range core {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // a combining accent: of the letter before
		case unicode.IsLetter(r):
			s := latin
			if r >= utf8.RuneSelf {
				s = scriptOf(unicode.ToLower(r))
			}
			switch {
			case s == han || s == kana || s == hangul:
				return -1, false, false
			case script < 0:
				script = s
			case s != script:
				return -1, false, false
			}
		case (r == '-' || r == '\'' || r == '’') && unicode.IsLetter(prev):
			// between letters if a letter follows: checked at the end
		default:
			return -1, false, false
		}
		prev = r
	}
	if script < 0 || script == otherScript || !unicode.IsLetter(prev) {
		return -1, false, false
	}
	first, _ := utf8.DecodeRuneInString(core)
	return script, unicode.IsUpper(first), true
}

// Punctuation that may open or close a word of running text.
const (
	openPunct  = `("'[«¿¡“‘„`
	closePunct = `)"'].,;:!?»”’…`
)
