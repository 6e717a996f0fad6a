package parsed

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeLine decodes one line of a docs file: record number n (from 1) of
// the file name (both for messages). The record's strings share line's
// memory. It returns what Reader.Next returns
// for it: the record, or an error wrapping ErrFormat when the line is not
// a record of this version. Safe for concurrent use, so that the records
// of a file can be decoded on every core.
func DecodeLine(line string, name string, n int) (*Doc, error) {
	d := new(Doc)
	if err := unmarshal(line, d); err != nil {
		return nil, fmt.Errorf("%w: %s record %d: %w", ErrFormat, name, n, err)
	}
	if d.V < MinVersion || d.V > Version {
		return nil, fmt.Errorf("%w: %s record %d: version %d, this program reads %d to %d", ErrVersion, name, n, d.V, MinVersion, Version)
	}
	return d, nil
}

// Unmarshal decodes one JSON record into d, which must be zero, as
// json.Unmarshal does. Records as the Writer writes them (keys spelled as
// written, each once, no nulls, integers written as integers) are decoded
// by hand: a tenth of the allocations of encoding/json and a fraction of
// its time, the record's strings sharing one copy of the line. Anything
// else falls back to encoding/json, whose result and errors are the
// reference (FuzzUnmarshal compares the two).
func Unmarshal(line []byte, d *Doc) error { return unmarshal(string(line), d) }

func unmarshal(s string, d *Doc) error {
	if fastDecode(s, d) {
		return nil
	}
	*d = Doc{}
	return json.Unmarshal([]byte(s), d)
}

// scanner reads a record from its string; ok turns false at the first
// thing the fast path does not handle.
type scanner struct {
	s  string
	i  int
	ok bool
}

func (p *scanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// expect consumes c after optional white space.
func (p *scanner) expect(c byte) {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return
	}
	p.ok = false
}

// peek returns the next byte after white space (0 at the end).
func (p *scanner) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// str reads a JSON string. Without escapes it is a substring of the line.
func (p *scanner) str() string {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		p.ok = false
		return ""
	}
	p.i++
	start := p.i
	ascii := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			p.i++ // printable ASCII, as is
			continue
		}
		switch {
		case c == '"':
			v := p.s[start:p.i]
			p.i++
			if !ascii && !utf8.ValidString(v) {
				p.ok = false // encoding/json replaces invalid bytes with U+FFFD
			}
			return v
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			p.ok = false
			return ""
		case c >= 0x80:
			ascii = false
		}
		p.i++
	}
	p.ok = false
	return ""
}

// escaped reads the rest of a string that has escapes, from start (just
// after the opening quote); p.i is at the first backslash.
func (p *scanner) escaped(start int) string {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(b) {
				p.ok = false
			}
			return string(b)
		case c < 0x20:
			p.ok = false
			return ""
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			p.ok = false
			return ""
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if p.i+4 > len(p.s) {
				p.ok = false
				return ""
			}
			r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				p.ok = false // surrogates: left to encoding/json
				return ""
			}
			p.i += 4
			b = utf8.AppendRune(b, rune(r))
		default:
			p.ok = false
			return ""
		}
	}
	p.ok = false
	return ""
}

// integer reads a JSON integer of at most 18 digits (no fraction or
// exponent).
func (p *scanner) integer() int64 {
	p.space()
	neg := false
	if p.i < len(p.s) && p.s[p.i] == '-' {
		neg = true
		p.i++
	}
	start := p.i
	var v int64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		v = v*10 + int64(p.s[p.i]-'0')
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 18 || (n > 1 && p.s[start] == '0') {
		p.ok = false
		return 0
	}
	if p.i < len(p.s) {
		if c := p.s[p.i]; c == '.' || c == 'e' || c == 'E' {
			p.ok = false
			return 0
		}
	}
	if neg {
		return -v
	}
	return v
}

// boolean reads true or false.
func (p *scanner) boolean() bool {
	p.space()
	switch {
	case len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "true":
		p.i += 4
		return true
	case len(p.s)-p.i >= 5 && p.s[p.i:p.i+5] == "false":
		p.i += 5
		return false
	}
	p.ok = false
	return false
}

// object consumes the '{' of an object and tells whether a member
// follows (false for "{}" or a syntax error).
func (p *scanner) object() bool {
	p.expect('{')
	if p.ok && p.peek() == '}' {
		p.i++
		return false
	}
	return p.ok
}

// key reads a member's key and its colon.
func (p *scanner) key() string {
	k := p.str()
	p.expect(':')
	return k
}

// more consumes what follows a member's value: true after a comma, false
// after the closing brace (or a syntax error).
func (p *scanner) more() bool {
	switch p.peek() {
	case ',':
		p.i++
		return p.ok
	case '}':
		p.i++
	default:
		p.ok = false
	}
	return false
}

// fastDecode decodes a record as the Writer writes it; false when it
// meets anything else (d is then partly filled).
func fastDecode(s string, d *Doc) bool {
	p := &scanner{s: s, ok: true}
	var seen uint32
	once := func(bit uint32) {
		if seen&bit != 0 {
			p.ok = false // a key twice: encoding/json's rules apply
		}
		seen |= bit
	}
	for more := p.object(); more && p.ok; more = p.more() {
		switch p.key() {
		case "v":
			once(1 << 0)
			d.V = int(p.integer())
		case "docid":
			once(1 << 1)
			v := p.integer()
			if v < 0 {
				p.ok = false
			}
			d.DocID = uint64(v)
		case "url":
			once(1 << 2)
			d.URL = p.str()
		case "status":
			once(1 << 3)
			d.Status = int(p.integer())
		case "error":
			once(1 << 4)
			d.Err = p.str()
		case "fetched":
			once(1 << 5)
			start := p.i
			p.str()
			if p.ok {
				// Exactly what encoding/json does with a time.Time.
				if err := d.Fetched.UnmarshalJSON([]byte(p.s[start:p.i])); err != nil {
					p.ok = false
				}
			}
		case "mime":
			once(1 << 6)
			d.MIME = p.str()
		case "charset":
			once(1 << 7)
			d.Charset = p.str()
		case "bytes":
			once(1 << 8)
			d.Bytes = p.integer()
		case "title":
			once(1 << 9)
			d.Title = p.str()
		case "description":
			once(1 << 10)
			d.Description = p.str()
		case "lang":
			once(1 << 11)
			d.Lang = p.str()
		case "lastModified":
			once(1 << 12)
			d.LastModified = p.str()
		case "etag":
			once(1 << 13)
			d.ETag = p.str()
		case "hash":
			once(1 << 14)
			d.Hash = p.str()
		case "duplicateOf":
			once(1 << 15)
			d.DuplicateOf = p.str()
		case "textBytes":
			once(1 << 16)
			d.TextBytes = int(p.integer())
		case "redirect":
			once(1 << 17)
			d.Redirect = p.str()
		case "canonical":
			once(1 << 18)
			d.Canonical = p.str()
		case "noindex":
			once(1 << 19)
			d.NoIndex = p.boolean()
		case "nofollow":
			once(1 << 20)
			d.NoFollow = p.boolean()
		case "unchanged":
			once(1 << 21)
			d.Unchanged = p.boolean()
		case "links":
			once(1 << 22)
			d.Links = p.links()
		case "detectedLang":
			once(1 << 23)
			d.DetectedLang = p.str()
		case "langConfidence":
			once(1 << 24)
			d.LangConf = int(p.integer())
		case "simhash":
			once(1 << 25)
			d.Simhash = p.str()
		case "revisit":
			once(1 << 26)
			d.Revisit = p.boolean()
		case "recordId":
			once(1 << 27)
			d.RecordID = p.str()
		case "recordDate":
			once(1 << 28)
			d.RecordDate = p.str()
		case "payloadDigest":
			once(1 << 29)
			d.PayloadDigest = p.str()
		default:
			p.ok = false // unknown keys, other spellings: encoding/json
		}
	}
	if !p.ok {
		return false
	}
	p.space()
	return p.i == len(p.s)
}

// links reads the array of links, sized by a first count of its objects.
func (p *scanner) links() []Link {
	p.expect('[')
	if !p.ok {
		return nil
	}
	out := make([]Link, 0, countLinks(p.s[p.i:]))
	if p.peek() == ']' {
		p.i++
		return out
	}
	for p.ok {
		var l Link
		var seen uint8
		for more := p.object(); more && p.ok; more = p.more() {
			var bit uint8
			switch p.key() {
			case "url":
				bit = 1
				l.URL = p.str()
			case "anchor":
				bit = 2
				l.Anchor = p.str()
			case "nofollow":
				bit = 4
				l.NoFollow = p.boolean()
			default:
				p.ok = false
			}
			if seen&bit != 0 {
				p.ok = false
			}
			seen |= bit
		}
		out = append(out, l)
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return out
		default:
			p.ok = false
		}
	}
	return nil
}

// countLinks counts the link objects in s, the rest of a record after the
// '[' of its links, for records as written: links come last and each
// starts with `{"url":`, which cannot occur inside a JSON string (its
// quotes would be escaped). Only a capacity: any count is safe.
func countLinks(s string) int {
	return strings.Count(s, `{"url":`)
}
