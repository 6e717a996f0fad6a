// Package excerpt cuts outside input to a short, escaped prefix before it
// is echoed in an error message or a report: a rejected seed line, a bad
// setting's value, a stray argument, a malformed line of a file. One
// long line (a 20 MB seed line) then gives one short line of output, and
// control characters or invalid UTF-8 never reach the terminal raw.
package excerpt

import (
	"strconv"
	"unicode/utf8"
)

// Max is how many bytes of the input an excerpt keeps at most.
const Max = 80

// Quote returns s as a Go-quoted string (control characters, quotes and
// invalid UTF-8 escaped), cut to at most Max bytes of s on a character
// boundary; a cut excerpt is followed by "..." and the input's length,
// e.g. "http://example.com/aaaa"... (20971520 bytes).
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	return cut(s[:Max+1], len(s))
}

// Bytes is Quote for a byte slice; only the prefix is copied.
func Bytes(b []byte) string {
	if len(b) <= Max {
		return strconv.Quote(string(b))
	}
	return cut(string(b[:Max+1]), len(b))
}

// cut quotes the first Max bytes of prefix (which has Max+1), backing up
// to a character boundary, and says how long the whole input was.
func cut(prefix string, total int) string {
	n := Max
	for n > Max-utf8.UTFMax && !utf8.RuneStart(prefix[n]) {
		n--
	}
	if !utf8.RuneStart(prefix[n]) {
		n = Max // not UTF-8 there anyway: cut at Max, the bytes are escaped
	}
	return strconv.Quote(prefix[:n]) + "... (" + strconv.Itoa(total) + " bytes)"
}
