package extract

import (
	"unicode"
	"unicode/utf8"
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
			// copy the run of visible ASCII at once
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && !isSpaceByte(s[j]) {
				j++
			}
			t.put(s[i:j])
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

// writeString is write for a string.
func (t *textBuf) writeString(s string) { t.write([]byte(s), false) }

// put appends visible characters after any owed separator.
func (t *textBuf) put(p []byte) {
	if len(t.b) > 0 {
		if t.brk {
			t.b = append(t.b, '\n')
		} else if t.space {
			t.b = append(t.b, ' ')
		}
	}
	t.brk, t.space = false, false
	if t.limit > 0 && len(t.b)+len(p) > t.limit {
		// cut at a rune boundary and stop
		n := t.limit - len(t.b)
		for n > 0 && n < len(p) && !utf8.RuneStart(p[n]) {
			n--
		}
		if n > 0 {
			t.b = append(t.b, p[:n]...)
		}
		t.full = true
		return
	}
	t.b = append(t.b, p...)
}

// block marks a block boundary: the next text starts on a new line.
func (t *textBuf) block() { t.brk = true }

// sep marks a word boundary without a line break (table cells, images).
func (t *textBuf) sep() { t.space = true }

func (t *textBuf) String() string { return string(t.b) }

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

// blockElements start and end on a line of their own in the text
// (roughly the elements the HTML rendering section displays as blocks,
// §15.3.3, plus br and the table rows).
var blockElements = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "body": true,
	"br": true, "caption": true, "center": true, "dd": true, "details": true,
	"dialog": true, "dir": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true,
	"frameset": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "header": true, "hgroup": true, "hr": true, "html": true,
	"legend": true, "li": true, "listing": true, "main": true, "menu": true,
	"nav": true, "ol": true, "optgroup": true, "option": true, "p": true,
	"plaintext": true, "pre": true, "search": true, "section": true, "select": true,
	"summary": true, "table": true, "tbody": true, "textarea": true, "tfoot": true,
	"thead": true, "tr": true, "ul": true, "xmp": true,
}

// cellElements are separated by a space (innerText uses a tab).
var cellElements = map[string]bool{"td": true, "th": true, "img": true, "input": true, "button": true}
