// Package cdxj writes and reads CDXJ indexes of the harvester's WARC
// files, in the form pywb and OpenWayback use: one line per capture,
// "SURT-KEY TIMESTAMP {JSON}", sorted, so that one URL's captures are
// found by a binary search rather than a scan of every WARC file.
// docs/format/harvest.md ("CDXJ indexes") is the format.
package cdxj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrFormat marks an index line that cannot be read.
var ErrFormat = errors.New("not a CDXJ index line")

// TimestampLayout is the layout of a line's timestamp: 14 digits, UTC
// (WARC-Date to the second).
const TimestampLayout = "20060102150405"

// MIMERevisit is the mime of a revisit record's line (a 304 Not
// Modified, or a 2xx whose payload was the stored capture's): pywb's
// convention, which replay tools follow to the capture the revisit
// stands for.
const MIMERevisit = "warc/revisit"

// MIMEUnknown is the mime of a response without a Content-Type (pywb's).
const MIMEUnknown = "unk"

// Line is one capture: a response or revisit record of a WARC file.
type Line struct {
	Key       string // the URL's SURT (urlnorm.SURT)
	Timestamp string // WARC-Date, 14 digits (TimestampLayout)
	URL       string // WARC-Target-URI
	MIME      string // media type of the response, MIMERevisit for a revisit, MIMEUnknown if none
	Status    int    // HTTP status of a response record; 0 = none (left out: revisits, a block without a status line)
	Digest    string // WARC-Payload-Digest, a SHA-1 without its "sha1:" label (a revisit's: the payload it refers to); "" = none (left out: a revisit whose capture was not known)
	Length    int64  // length of the record's gzip member
	Offset    int64  // its offset in the WARC file
	Filename  string // the WARC file's name
}

// Time is the line's timestamp as a time (zero if it does not parse).
func (l *Line) Time() time.Time {
	t, _ := time.Parse(TimestampLayout, l.Timestamp)
	return t
}

// Append appends the line, with its line end, in pywb's form: the key, a
// space, the timestamp, a space and a JSON object with url, mime,
// status, digest, length, offset and filename in that order, every value
// a string, status and digest left out when unknown:
//
//	cl,uchile)/ 20261122020312 {"url": "http://www.uchile.cl/", "mime": "text/html", "status": "200", "digest": "2CKOYS3I…", "length": "2447", "offset": "1240", "filename": "wire-….warc.gz"}
func (l *Line) Append(b []byte) []byte {
	b = append(b, l.Key...)
	b = append(b, ' ')
	b = append(b, l.Timestamp...)
	b = append(b, ` {"url": `...)
	b = appendString(b, l.URL)
	b = append(b, `, "mime": `...)
	b = appendString(b, l.MIME)
	if l.Status != 0 {
		b = append(b, `, "status": "`...)
		b = strconv.AppendInt(b, int64(l.Status), 10)
		b = append(b, '"')
	}
	if l.Digest != "" {
		b = append(b, `, "digest": `...)
		b = appendString(b, l.Digest)
	}
	b = append(b, `, "length": "`...)
	b = strconv.AppendInt(b, l.Length, 10)
	b = append(b, `", "offset": "`...)
	b = strconv.AppendInt(b, l.Offset, 10)
	b = append(b, `", "filename": `...)
	b = appendString(b, l.Filename)
	return append(b, "}\n"...)
}

// String is the line without its line end.
func (l *Line) String() string {
	b := l.Append(nil)
	return string(b[:len(b)-1])
}

// appendString appends s as a JSON string, escaping as Python's
// json.dumps does (pywb's writer): quotes, backslashes, control
// characters and every non-ASCII character (\uXXXX, surrogate pairs
// above the BMP); invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || (r >= 0x7f && r < 0x10000):
			b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		case r >= 0x10000:
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			b = append(b, '\\', 'u', hex[hi>>12&15], hex[hi>>8&15], hex[hi>>4&15], hex[hi&15])
			b = append(b, '\\', 'u', hex[lo>>12&15], hex[lo>>8&15], hex[lo>>4&15], hex[lo&15])
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

// fields is a line's JSON object as read: strings, or numbers (other
// indexers write length and offset as numbers).
type fields struct {
	URL      string     `json:"url"`
	MIME     string     `json:"mime"`
	Status   flexNumber `json:"status"`
	Digest   string     `json:"digest"`
	Length   flexNumber `json:"length"`
	Offset   flexNumber `json:"offset"`
	Filename string     `json:"filename"`
}

// flexNumber is a non-negative integer written as a JSON string ("200")
// or number (200); absent or "-" is -1.
type flexNumber int64

func (n *flexNumber) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "-" || s == "" {
			*n = -1
			return nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("want a non-negative integer, got %s", b)
	}
	*n = flexNumber(v)
	return nil
}

// Parse reads one index line (without or with its line end): a key
// without white space, a 14-digit timestamp and a JSON object with at
// least url, offset, length and filename. Anything else is an error
// wrapping ErrFormat.
func Parse(line []byte) (Line, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	fail := func(format string, args ...any) (Line, error) {
		return Line{}, fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	key, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || len(key) == 0 {
		return fail("want KEY TIMESTAMP {JSON}")
	}
	for _, c := range key {
		if c < ' ' || c == 0x7f {
			return fail("control character in the key")
		}
	}
	ts, js, ok := bytes.Cut(rest, []byte(" "))
	if !ok || len(ts) != len(TimestampLayout) {
		return fail("want a 14-digit timestamp after the key")
	}
	if _, err := time.Parse(TimestampLayout, string(ts)); err != nil {
		return fail("timestamp %q: not YYYYMMDDhhmmss", ts)
	}
	if !utf8.Valid(js) || len(js) == 0 || js[0] != '{' {
		return fail("want a JSON object after the timestamp")
	}
	f := fields{Status: -1, Length: -1, Offset: -1}
	if err := json.Unmarshal(js, &f); err != nil {
		return fail("%v", err)
	}
	switch {
	case f.URL == "":
		return fail("no url")
	case f.Filename == "":
		return fail("no filename")
	case f.Offset < 0:
		return fail("no offset")
	case f.Length <= 0:
		return fail("no length")
	case f.Status > 999:
		return fail("status %d", f.Status)
	}
	l := Line{Key: string(key), Timestamp: string(ts), URL: f.URL, MIME: f.MIME, Digest: f.Digest,
		Length: int64(f.Length), Offset: int64(f.Offset), Filename: f.Filename}
	if f.Status > 0 {
		l.Status = int(f.Status)
	}
	return l, nil
}
