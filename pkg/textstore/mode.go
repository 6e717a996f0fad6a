package textstore

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Mode says what a segment keeps of each page's text
// (config gatherer.text_mode).
type Mode uint16

// The text modes.
const (
	ModeFull    Mode = 0 // the whole normalised text
	ModeSummary Mode = 1 // the first summary_words words
	ModeNone    Mode = 2 // no text; entries still hold the hash and metadata
)

var modeNames = []string{"full", "summary", "none"}

func (m Mode) valid() bool { return int(m) < len(modeNames) }

// String returns the config name of the mode.
func (m Mode) String() string {
	if m.valid() {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint16(m))
}

// ParseMode reads a config name: full, summary or none.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown text mode %q (want full, summary or none)", s)
}

// Keep returns what mode m keeps of text.
func (m Mode) Keep(text string, summaryWords int) string {
	switch m {
	case ModeNone:
		return ""
	case ModeSummary:
		return FirstWords(text, summaryWords)
	}
	return text
}

// FirstWords returns text up to the end of its n-th word (words are runs
// of non-space characters), keeping the separators between them.
func FirstWords(text string, n int) string {
	if n <= 0 {
		return ""
	}
	in := false
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if unicode.IsSpace(r) {
			if in {
				n--
				if n == 0 {
					return text[:i]
				}
			}
			in = false
		} else {
			in = true
		}
		i += size
	}
	return text
}
