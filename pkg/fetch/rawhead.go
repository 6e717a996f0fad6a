package fetch

import (
	"bytes"
)

// rawHead makes the head of a response stored as received (raw mode,
// Response.Head) from the bytes of the head read off the connection
// (conn2.readHead): its lines as they came — the status line, the header
// fields with their names' case, their order, repeats and folded
// continuation lines — each ending in CRLF, then the empty line. Two
// things change, so that every WARC reader finds the head and the body:
//
//   - a line ending in a bare LF (RFC 9112 §2.2 lets a recipient accept
//     it) ends in CRLF: readers such as warcio.js look for CRLF CRLF to
//     find the end of the head;
//   - when the body came chunked (dechunked), the Transfer-Encoding
//     fields are left out, and Content-Length fields too (RFC 9112 §6.3:
//     a recipient ignores Content-Length beside Transfer-Encoding): the
//     body is stored de-chunked, as most archives store it and every
//     replay tool reads it, and its end is the record's end.
//
// The result is a new slice. Input without an empty line (which the
// parser never lets through) gets one.
func rawHead(raw []byte, dechunked bool) []byte {
	out := make([]byte, 0, len(raw)+32)
	first, dropping := true, false
	for len(raw) > 0 {
		var line []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			line, raw = raw, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 && !first {
			break // the empty line that ends the head
		}
		switch {
		case first:
			first = false
		case line[0] == ' ' || line[0] == '\t':
			// A folded continuation of the field before it (obs-fold,
			// RFC 9112 §5.2): kept or left out with that field.
			if dropping {
				continue
			}
		default:
			dropping = dechunked && framingField(line)
			if dropping {
				continue
			}
		}
		out = append(out, line...)
		out = append(out, "\r\n"...)
	}
	return append(out, "\r\n"...)
}

// framingField tells whether a header line is a Transfer-Encoding or
// Content-Length field (names are case-insensitive, RFC 9110 §5.1).
func framingField(line []byte) bool {
	name, _, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return false
	}
	name = bytes.TrimRight(name, " \t")
	return bytes.EqualFold(name, []byte("Transfer-Encoding")) || bytes.EqualFold(name, []byte("Content-Length"))
}
