package extract

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/net/html/atom"
)

// textBuf accumulates text with whitespace normalised: every run of
// white space becomes one space, a run that contains a block boundary
// becomes one newline, and there is no white space at either end.
type textBuf struct {
	b     []byte
	limit int  // stop after this many bytes; 0 = no limit
	space bool // a space is owed before the next character
	brk   bool // a newline is owed before the next character
	full  bool // limit reached
}

// isSpaceByte reports whether an ASCII byte counts as white space: HTML's
// ASCII white space plus the other control characters, which are never
// visible.
func isSpaceByte(c byte) bool { return c <= ' ' || c == 0x7f }

// write appends s. In preformatted text (pre) a newline is a line break.
func (t *textBuf) write(s []byte, pre bool) {
	for i := 0; i < len(s) && !t.full; {
		c := s[i]
		if c < utf8.RuneSelf {
			if isSpaceByte(c) {
				if pre && c == '\n' {
					t.brk = true
				} else {
					t.space = true
				}
				i++
				continue
			}
			// Copy at once a run of visible ASCII words separated by
			// single spaces, which is what most text is: eight bytes at
			// a time, then a byte (or a space and a byte) where wordRun
			// stops, and eight at a time again.
			j := i + 1
			for {
				j = wordRun(s, j)
				if j >= len(s) {
					break
				}
				if d := s[j]; d > ' ' && d < 0x7f {
					j++
				} else if d == ' ' && j+1 < len(s) && s[j+1] > ' ' && s[j+1] < 0x7f {
					j += 2
				} else {
					break
				}
			}
			if t.limit > 0 {
				t.putLimited(s[i:j])
			} else { // put, inlined for the commonest case
				if sep := t.owed(); sep != 0 {
					t.b = append(t.b, sep)
				}
				t.b = append(t.b, s[i:j]...)
			}
			i = j
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if unicode.IsSpace(r) || (r >= 0x80 && r < 0xA0) {
			t.space = true
		} else {
			t.put(s[i : i+n])
		}
		i += n
	}
}

// Bytes of a little-endian word, for wordRun.
const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	spaces = 0x2020202020202020
)

// wordRun returns how far the run of visible ASCII words separated by
// single spaces that write copies at once extends from j (s[j-1] is
// visible ASCII), eight bytes at a time; write's byte loop finishes it.
// Each eight-byte word is taken up to the first byte that ends the run
// (a byte that is not visible ASCII, or the first of two spaces), less a
// space just before it; a word that ends in a space is taken but for
// that space, which the next word starts with. When fewer than eight
// bytes are left, they are read as one word whose bytes past the end are
// NULs, which end the run: eight bytes of the buffer under s (its
// capacity allows it; the bytes past its length are masked off, never
// used), or else the last eight bytes of s shifted down. wordRun may
// stop early (a '!' just after a space can read as a space), never late.
func wordRun(s []byte, j int) int {
	for {
		var w uint64
		n := len(s) - j
		switch {
		case n >= 8:
			w = binary.LittleEndian.Uint64(s[j:])
		case n <= 0:
			return j
		case cap(s)-j >= 8: // a short text within a larger buffer
			w = binary.LittleEndian.Uint64(s[j:cap(s)]) & (1<<(8*n) - 1)
		case len(s) >= 8:
			w = binary.LittleEndian.Uint64(s[len(s)-8:]) >> (8 * (8 - n))
		default:
			return j
		}
		// The high bit of each byte below 0x20 or above 0x7e; exact up
		// to the lowest one (a borrow or carry only runs upwards from a
		// byte that is itself marked).
		bad := ((w-spaces)&^w | (w + ones) | w) & highs
		// The high bit of each byte that is a space, exact up to the
		// lowest one (above a space, a 0x21 may be marked too).
		x := w ^ spaces
		sp := (x - ones) &^ x & highs
		stop := bad | sp&(sp>>8) // and the first of two spaces
		if stop == 0 {
			if sp>>63 != 0 {
				j += 7 // leave the space at the end for the next word
			} else {
				j += 8
			}
			continue
		}
		g := bits.TrailingZeros64(stop) >> 3
		if g > 0 && sp>>(8*g-1)&1 != 0 {
			g-- // a run ends before its space
		}
		return j + g
	}
}

// writeString is write for a string.
func (t *textBuf) writeString(s string) { t.write([]byte(s), false) }

// put appends visible characters after any owed separator. With a
// limit, putLimited does.
func (t *textBuf) put(p []byte) {
	if t.limit > 0 {
		t.putLimited(p)
		return
	}
	if sep := t.owed(); sep != 0 {
		t.b = append(t.b, sep)
	}
	t.b = append(t.b, p...)
}

// owed returns the separator owed before the next character, or 0 if
// none is (nothing is owed at the start), and clears it.
func (t *textBuf) owed() byte {
	var sep byte
	if t.brk {
		sep = '\n'
	} else if t.space {
		sep = ' '
	}
	if len(t.b) == 0 {
		sep = 0
	}
	t.brk, t.space = false, false
	return sep
}

// putLimited is put with a limit: the separator and the characters
// together stay within it. What does not fit is cut at a rune boundary
// (and before a space), and a separator is written only if at least one
// character follows it, so the text neither exceeds its limit nor ends
// with white space.
func (t *textBuf) putLimited(p []byte) {
	sep := t.owed()
	n := len(t.b) + len(p)
	if sep != 0 {
		n++
	}
	if n > t.limit {
		// cut at a rune boundary and stop
		k := t.limit - len(t.b)
		if sep != 0 {
			k--
		}
		for k > 0 && k < len(p) && !utf8.RuneStart(p[k]) {
			k--
		}
		if k > 0 && p[k-1] == ' ' {
			k-- // a cut run of words (write) ends before its space
		}
		if k > 0 {
			if sep != 0 {
				t.b = append(t.b, sep)
			}
			t.b = append(t.b, p[:k]...)
		}
		t.full = true
		return
	}
	if sep != 0 {
		t.b = append(t.b, sep)
	}
	t.b = append(t.b, p...)
}

// block marks a block boundary: the next text starts on a new line.
func (t *textBuf) block() { t.brk = true }

// sep marks a word boundary without a line break (table cells, images).
func (t *textBuf) sep() { t.space = true }

func (t *textBuf) String() string { return string(t.b) }

// take returns the text. A buffer too large to be pooled is handed over
// without a copy and the textBuf forgets it.
func (t *textBuf) take() string {
	if cap(t.b) <= maxPooled {
		return string(t.b)
	}
	s := unsafe.String(unsafe.SliceData(t.b), len(t.b))
	t.b = nil
	return s
}

// len is the number of bytes written.
func (t *textBuf) len() int { return len(t.b) }

func (t *textBuf) reset() {
	t.b = t.b[:0]
	t.space, t.brk, t.full = false, false, false
}

// normalize returns s with its white space normalised as textBuf does,
// on one line, cut to at most limit bytes (0 = no limit).
func normalize(s []byte, limit int) string {
	t := textBuf{limit: limit}
	t.write(s, false)
	return t.String()
}

// Element flags.
const (
	fBlock   = 1 << iota // starts and ends a line of text
	fCell                // separated from its neighbours by a space
	fVoid                // has no content and no end tag
	fRaw                 // the tokenizer returns its content as raw text
	fHeading             // h1-h6
)

// flagsOf classifies an element. Blocks are roughly the elements the HTML
// rendering section displays as blocks (§15.3.3), plus br and the table
// rows; cells are table cells, images and form controls (innerText uses
// a tab between cells); void elements are those of §13.1.2; raw-text
// elements are those the x/net/html tokenizer returns as one text token.
func flagsOf(a atom.Atom) uint8 {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.Frameset, atom.Header, atom.Hgroup, atom.Html, atom.Legend, atom.Li,
		atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup, atom.Option, atom.P,
		atom.Pre, atom.Search, atom.Section, atom.Select, atom.Summary, atom.Table, atom.Tbody,
		atom.Tfoot, atom.Thead, atom.Tr, atom.Ul:
		return fBlock
	case atom.Listing:
		return fBlock
	case atom.Br, atom.Hr:
		return fBlock | fVoid
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return fBlock | fHeading
	case atom.Plaintext, atom.Textarea, atom.Xmp:
		return fBlock | fRaw
	case atom.Td, atom.Th, atom.Button:
		return fCell
	case atom.Img, atom.Input:
		return fCell | fVoid
	case atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Script, atom.Style, atom.Title:
		return fRaw
	case atom.Area, atom.Base, atom.Col, atom.Embed, atom.Link, atom.Meta, atom.Param,
		atom.Source, atom.Track, atom.Wbr, atom.Frame, atom.Keygen:
		return fVoid
	}
	return 0
}

// headingLevel is 1 for h1 ... 6 for h6.
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	}
	return 6
}

// closesImplicitly reports whether a start tag of element next closes an
// open element of kind open that is the current node, as the HTML parser's
// rules for optional end tags do (§13.1.2.4): a block closes a p, li
// closes li, dt and dd close each other, and so on.
func closesImplicitly(open, next atom.Atom) bool {
	switch open {
	case atom.P:
		return flagsOf(next)&(fBlock|fHeading) != 0 && next != atom.Body && next != atom.Html && next != atom.Br &&
			next != atom.Caption && next != atom.Legend && next != atom.Optgroup && next != atom.Option &&
			next != atom.Select && next != atom.Tbody && next != atom.Tfoot && next != atom.Thead && next != atom.Tr &&
			next != atom.Frameset && next != atom.Textarea
	case atom.Li:
		return next == atom.Li
	case atom.Dt, atom.Dd:
		return next == atom.Dt || next == atom.Dd
	case atom.Option:
		return next == atom.Option || next == atom.Optgroup
	case atom.Tr:
		return next == atom.Tr
	case atom.Td, atom.Th:
		return next == atom.Td || next == atom.Th || next == atom.Tr
	}
	return false
}
