package htmltok

import (
	"bytes"
	"unicode/utf8"
)

// UnescapeSimple decodes, in place, the character references of b when
// every one of them is simple: a numeric reference ended by a semicolon
// (at most 6 digits, naming a character other than NUL, a surrogate and
// U+0080 to U+009F) or one of &amp; &lt; &gt; &quot; &apos; &nbsp;. Such
// references decode the same in text and in attribute values, as
// x/net/html decodes them. ok is false (and b unchanged) when a reference
// is not simple: the caller then decodes with x/net/html.
func UnescapeSimple(b []byte) (out []byte, ok bool) {
	i := bytes.IndexByte(b, '&')
	if i < 0 {
		return b, true
	}
	for j := i; j < len(b); {
		if b[j] != '&' {
			j++
			continue
		}
		_, n := simpleRef(b[j:])
		if n == 0 {
			return b, false
		}
		j += n
	}
	w := i
	for r := i; r < len(b); {
		if b[r] != '&' {
			b[w] = b[r]
			w++
			r++
			continue
		}
		c, n := simpleRef(b[r:])
		w += utf8.EncodeRune(b[w:], c) // never longer than the reference
		r += n
	}
	return b[:w], true
}

// simpleRef decodes the simple character reference at the start of s
// (which starts with '&'): its character and length, or n == 0.
func simpleRef(s []byte) (c rune, n int) {
	if len(s) < 3 {
		return 0, 0
	}
	if s[1] != '#' {
		return simpleName(s)
	}
	i, base := 2, rune(10)
	if s[i] == 'x' || s[i] == 'X' {
		i, base = 3, 16
	}
	start := i
	var x rune
	for ; i < len(s) && i-start <= 6; i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		x = x*base + d
	}
	if i == start || i-start > 6 || i >= len(s) || s[i] != ';' {
		return 0, 0
	}
	if x == 0 || 0x80 <= x && x <= 0x9f || 0xd800 <= x && x <= 0xdfff || x > 0x10ffff {
		return 0, 0
	}
	return x, i + 1
}

// simpleName decodes &amp; &lt; &gt; &quot; &apos; or &nbsp; at the
// start of s.
func simpleName(s []byte) (c rune, n int) {
	semi := bytes.IndexByte(s[:min(len(s), 6)], ';')
	if semi < 0 {
		return 0, 0
	}
	switch string(s[1:semi]) {
	case "amp":
		c = '&'
	case "lt":
		c = '<'
	case "gt":
		c = '>'
	case "quot":
		c = '"'
	case "apos":
		c = '\''
	case "nbsp":
		c = '\u00a0'
	default:
		return 0, 0
	}
	return c, semi + 1
}

// digit is the value of c as a digit in base (10 or 16), or -1.
func digit(c byte, base rune) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case base == 16 && 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case base == 16 && 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}
