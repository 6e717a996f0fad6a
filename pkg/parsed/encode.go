package parsed

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// appendDoc appends d as one JSON line, byte for byte what encoding/json's
// Encoder (with SetEscapeHTML(false)) writes for it: the fields in order,
// the omitempty ones left out when empty, strings escaped as
// encoding/json escapes them. It spares the reflection of encoding/json,
// which cost the gatherer's writer most of its time; TestAppendDoc and
// FuzzAppendDoc compare the two.
func appendDoc(b []byte, d *Doc) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(d.V), 10)
	b = append(b, `,"docid":`...)
	b = strconv.AppendUint(b, d.DocID, 10)
	b = append(b, `,"url":`...)
	b = appendString(b, d.URL)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(d.Status), 10)
	b = appendField(b, `,"error":`, d.Err)
	b = append(b, `,"fetched":"`...)
	b, err := d.Fetched.AppendText(b) // what Time.MarshalJSON quotes
	if err != nil {
		return b, err
	}
	b = append(b, '"')
	b = appendField(b, `,"mime":`, d.MIME)
	b = appendField(b, `,"charset":`, d.Charset)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, d.Bytes, 10)
	b = appendField(b, `,"title":`, d.Title)
	b = appendField(b, `,"description":`, d.Description)
	b = appendField(b, `,"lang":`, d.Lang)
	b = appendField(b, `,"detectedLang":`, d.DetectedLang)
	if d.LangConf != 0 {
		b = append(b, `,"langConfidence":`...)
		b = strconv.AppendInt(b, int64(d.LangConf), 10)
	}
	b = appendField(b, `,"lastModified":`, d.LastModified)
	b = appendField(b, `,"etag":`, d.ETag)
	b = appendField(b, `,"hash":`, d.Hash)
	b = appendField(b, `,"simhash":`, d.Simhash)
	b = appendField(b, `,"duplicateOf":`, d.DuplicateOf)
	if d.TextBytes != 0 {
		b = append(b, `,"textBytes":`...)
		b = strconv.AppendInt(b, int64(d.TextBytes), 10)
	}
	b = appendField(b, `,"redirect":`, d.Redirect)
	b = appendField(b, `,"canonical":`, d.Canonical)
	b = appendTrue(b, `,"noindex":true`, d.NoIndex)
	b = appendTrue(b, `,"nofollow":true`, d.NoFollow)
	b = appendTrue(b, `,"unchanged":true`, d.Unchanged)
	b = appendTrue(b, `,"revisit":true`, d.Revisit)
	b = appendField(b, `,"recordId":`, d.RecordID)
	b = appendField(b, `,"recordDate":`, d.RecordDate)
	b = appendField(b, `,"payloadDigest":`, d.PayloadDigest)
	if len(d.Links) > 0 {
		b = append(b, `,"links":[`...)
		for i, l := range d.Links {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"url":`...)
			b = appendString(b, l.URL)
			b = appendField(b, `,"anchor":`, l.Anchor)
			b = appendTrue(b, `,"nofollow":true`, l.NoFollow)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n'), nil
}

// appendField appends an omitempty string field: its key and value, or
// nothing when the value is empty.
func appendField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(b, key...), v)
}

// appendTrue appends an omitempty bool field when it is true.
func appendTrue(b []byte, field string, v bool) []byte {
	if !v {
		return b
	}
	return append(b, field...)
}

// Bytes of a little-endian word, for safeRun.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// safeRun returns the end of the run of bytes from i that appendString
// copies as they are, found eight bytes at a time: printable ASCII other
// than '"' and '\\' (and DEL). It may stop early; appendString's byte
// loop goes on from there. The word that ends the run gives the position
// of its first byte to escape (or to decode); the last bytes of a string
// are looked at as the word that ends it.
func safeRun(s string, i int) int {
	for i+8 <= len(s) {
		if m := unsafeBytes(word(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	if i < len(s) && len(s) >= 8 {
		j := len(s) - 8
		// The bytes before i, which appendString has dealt with, do not
		// count; one of them may mark a safe byte above it (a borrow),
		// which only ends the run early.
		m := unsafeBytes(word(s, j)) &^ (1<<(8*(i-j)) - 1)
		if m == 0 {
			return len(s)
		}
		return j + bits.TrailingZeros64(m)>>3
	}
	return i
}

// word is the eight bytes of s from i, little-endian.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// unsafeBytes returns the high bit of each byte of w that is below 0x20,
// at or above 0x80, a quote or a backslash. It never misses one; above
// the lowest one, it may mark a byte that is not (a borrow).
func unsafeBytes(w uint64) uint64 {
	q, bs := w^(ones*'"'), w^(ones*'\\')
	return (w-ones*0x20)&^w&highs | w&highs | (q-ones)&^q&highs | (bs-ones)&^bs&highs
}

// appendString appends s as a JSON string as encoding/json does without
// HTML escaping: '"' and '\\' escaped, control characters as \b, \f, \n,
// \r, \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := safeRun(s, 0); i < len(s); i = safeRun(s, i) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
