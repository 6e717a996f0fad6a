package extract

import (
	"bytes"
	"encoding/binary"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/wlynxg/chardet"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Where the charset of a page came from, in the order they are tried
// (WHATWG HTML §13.2.3.2 "Determining the character encoding").
const (
	SourceBOM      = "bom"      // a byte order mark
	SourceHeader   = "header"   // the charset parameter of the HTTP Content-Type
	SourceMeta     = "meta"     // <meta charset> or <meta http-equiv=Content-Type> in the first 1024 bytes
	SourceUTF8     = "utf-8"    // undeclared, and the whole body is valid UTF-8
	SourceMixed    = "mixed"    // undeclared, mostly UTF-8 with some bytes that are not: those read as windows-1252
	SourceDetected = "detected" // undeclared, not UTF-8, and detected from the bytes
	SourceDefault  = "default"  // undeclared, not UTF-8, detection unsure: the fallback (windows-1252 unless configured)
)

// Detection limits: the detector reads at most detectBytes from a little
// before the first non-ASCII byte, and its guess is used only with at
// least minConfidence.
const (
	detectBytes   = 64 << 10
	detectBefore  = 1 << 10
	minConfidence = 0.5
)

// prescanBytes is how far into the body a <meta> declaration counts
// (WHATWG HTML §13.2.3.2, step 5: "the first 1024 bytes").
const prescanBytes = 1024

var boms = []struct {
	bom  []byte
	name string
}{
	{[]byte{0xEF, 0xBB, 0xBF}, "utf-8"},
	{[]byte{0xFE, 0xFF}, "utf-16be"},
	{[]byte{0xFF, 0xFE}, "utf-16le"},
}

// Decoded is a body converted to UTF-8.
type Decoded struct {
	Text    []byte // the body as valid UTF-8, byte order mark removed
	Charset string // WHATWG name of the encoding it was decoded from
	Source  string // Source* constant: where the encoding came from
}

// Decode converts an HTML body to UTF-8 the way browsers do (WHATWG HTML
// §13.2.3.2): a byte order mark wins, then the charset parameter of the
// Content-Type header, then a <meta> declaration in the first 1024 bytes;
// an undeclared body that is valid UTF-8 stays UTF-8; anything else is
// detected from its bytes (github.com/wlynxg/chardet) or, when detection
// is unsure, read as windows-1252. Labels are resolved with the WHATWG
// Encoding Standard's table, so "iso-8859-1" and "ascii" mean
// windows-1252 and "gb2312" means GBK. The result is always valid UTF-8:
// bytes that do not decode become U+FFFD.
func Decode(body []byte, contentType string) Decoded {
	return newFallback("").decode(body, contentType)
}

// LookupCharset resolves an encoding label with the WHATWG Encoding
// Standard's table and returns the encoding's canonical name; ok is false
// for unknown labels and for encodings a page cannot be decoded from
// ("replacement", UTF-16 without a byte order mark).
func LookupCharset(label string) (name string, ok bool) {
	enc, name := charset.Lookup(label)
	if enc == nil || !usable(name) {
		return "", false
	}
	return name, true
}

// usable reports whether an encoding found by detection or configured as
// the fallback can decode a page.
func usable(name string) bool {
	switch name {
	case "replacement", "utf-16be", "utf-16le", "x-user-defined":
		return false
	}
	return true
}

// fallback is the encoding of undeclared pages that are not UTF-8 and
// whose detection is unsure.
type fallback struct {
	enc  encoding.Encoding
	name string
}

func newFallback(label string) fallback {
	if label != "" {
		if enc, name := charset.Lookup(label); enc != nil && usable(name) {
			return fallback{enc, name}
		}
	}
	enc, name := charset.Lookup("windows-1252")
	return fallback{enc, name}
}

func (f fallback) decode(body []byte, contentType string) Decoded {
	d, _ := f.decodeInto(body, contentType, nil)
	return d
}

// decodeInto is decode that writes a body it has to convert into dst's
// storage when it is large enough (a buffer reused from page to page);
// converted reports that Text is not (part of) body.
func (f fallback) decodeInto(body []byte, contentType string, dst []byte) (d Decoded, converted bool) {
	enc, name, source, skip := f.determine(body, contentType)
	body = body[skip:]
	var out []byte
	if source == SourceMixed {
		out = decodeMixed(body)
	} else if name == "utf-8" {
		if utf8.Valid(body) {
			return Decoded{Text: body, Charset: name, Source: source}, false
		}
		out = decodeWith(unicode.UTF8, name, body, dst)
	} else {
		out = decodeWith(enc, name, body, dst)
	}
	if !utf8.Valid(out) { // a decoder's bug must not leak into the output
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return Decoded{Text: out, Charset: name, Source: source}, true
}

// decodeWith decodes body from enc, whose WHATWG name is name, into dst's
// storage if it is large enough.
func decodeWith(enc encoding.Encoding, name string, body, dst []byte) []byte {
	// Room for the usual expansion at once (two bytes of UTF-8 per byte
	// of a legacy single-byte page in a non-Latin script), rather than
	// growing a buffer of the body's size by copies.
	if want := 2*len(body) + 64; cap(dst) < want {
		dst = make([]byte, 0, want)
	}
	if cm := singleByte(name); cm != nil {
		return decodeCharmap(cm, body, dst[:0])
	}
	out, _, err := transform.Append(enc.NewDecoder(), dst[:0], body)
	if err != nil {
		// x/text decoders replace bad input rather than fail; if one
		// fails anyway, keep what can be kept.
		return bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	return out
}

// singleByte returns the single-byte encoding the WHATWG name names, or
// nil. charset.Lookup wraps the same encoding (x/text's htmlindex) for
// its encoder, not its decoder.
func singleByte(name string) *charmap.Charmap {
	enc, err := htmlindex.Get(name)
	if err != nil {
		return nil
	}
	cm, _ := enc.(*charmap.Charmap)
	return cm
}

// utf8Byte is the UTF-8 of the character a byte stands for in a
// single-byte encoding.
type utf8Byte struct {
	b [utf8.UTFMax]byte
	n uint8
}

// decodeCharmap appends body decoded from the single-byte encoding cm to
// dst: each byte becomes the UTF-8 of cm.DecodeByte, which is what cm's
// x/text decoder writes, and runs of ASCII are copied at once when cm
// maps ASCII to itself (every WHATWG single-byte encoding does).
func decodeCharmap(cm *charmap.Charmap, body, dst []byte) []byte {
	var table [256]utf8Byte
	ascii := true
	for i := range table {
		r := cm.DecodeByte(byte(i))
		table[i].n = uint8(utf8.EncodeRune(table[i].b[:], r))
		if i < utf8.RuneSelf && r != rune(i) {
			ascii = false
		}
	}
	for i := 0; i < len(body); {
		if ascii {
			j := i
			for j+8 <= len(body) && binary.LittleEndian.Uint64(body[j:])&highs == 0 {
				j += 8
			}
			for j < len(body) && body[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, body[i:j]...)
			if i = j; i == len(body) {
				break
			}
		}
		e := &table[body[i]]
		dst = append(dst, e.b[:e.n]...)
		i++
	}
	return dst
}

// determine picks the encoding of body; skip is the length of a byte
// order mark to drop.
func (f fallback) determine(body []byte, contentType string) (enc encoding.Encoding, name, source string, skip int) {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			enc, name = charset.Lookup(b.name)
			return enc, name, SourceBOM, len(b.bom)
		}
	}
	if label := contentTypeCharset(contentType); label != "" {
		if enc, name = charset.Lookup(label); enc != nil {
			return enc, name, SourceHeader, 0
		}
	}
	head := body
	if len(head) > prescanBytes {
		head = head[:prescanBytes]
	}
	if enc, name = prescan(head); enc != nil { // (prescan returns at once without "<meta")
		return enc, name, SourceMeta, 0
	}
	if validUTF8Prefix(body) {
		enc, name = charset.Lookup("utf-8")
		return enc, name, SourceUTF8, 0
	}
	if mostlyUTF8(body) {
		enc, name = charset.Lookup("utf-8")
		return enc, name, SourceMixed, 0
	}
	if enc, name = detect(body); enc != nil {
		return enc, name, SourceDetected, 0
	}
	return f.enc, f.name, SourceDefault, 0
}

// detect guesses the encoding of a body that is not UTF-8 from its
// bytes, as browsers do for undeclared pages (§13.2.3.2 step 8, "the user
// agent may attempt to autodetect the character encoding"). It returns
// nil when the detector is unsure or names an encoding a page cannot be
// decoded from.
func detect(body []byte) (encoding.Encoding, string) {
	i := 0
	for i < len(body) && body[i] < utf8.RuneSelf {
		i++
	}
	start := max(0, i-detectBefore)
	end := min(len(body), start+detectBytes)
	r := chardet.Detect(body[start:end])
	if r.Confidence < minConfidence {
		return nil, ""
	}
	for _, label := range []string{r.Encoding, r.Charset} {
		switch strings.ToLower(label) {
		case "cp932":
			label = "shift_jis"
		case "cp949":
			label = "euc-kr"
		}
		if enc, name := charset.Lookup(label); enc != nil && usable(name) {
			return enc, name
		}
	}
	return nil, ""
}

// mostlyUTF8 reports whether a body that is not valid UTF-8 has at least
// as many valid multi-byte UTF-8 sequences as bytes that are not UTF-8
// (and at least two): a UTF-8 page with a few legacy bytes pasted in, as
// templates filled from an old database make. Legacy text rarely forms
// valid UTF-8 sequences by chance.
func mostlyUTF8(b []byte) bool {
	good, bad := 0, 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		} else {
			good++
		}
		i += n
	}
	return good >= 2 && good >= bad
}

// decodeMixed decodes UTF-8, reading each byte that is not part of a
// valid sequence as windows-1252.
func decodeMixed(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			r = charmap.Windows1252.DecodeByte(b[i])
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// validUTF8Prefix reports whether b is valid UTF-8, allowing an
// incomplete sequence at the very end (a body cut at the size limit).
func validUTF8Prefix(b []byte) bool {
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if b[i] < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return utf8.Valid(b)
}

// MediaType returns the lower-case media type of a Content-Type value
// without its parameters ("" if there is none).
func MediaType(contentType string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// contentTypeCharset returns the charset parameter of a Content-Type
// value, also from values that mime.ParseMediaType rejects.
func contentTypeCharset(contentType string) string {
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		return params["charset"]
	}
	return charsetFromContent(contentType)
}

// prescan looks for a <meta charset> or <meta http-equiv=Content-Type
// content="...; charset=..."> in head (WHATWG HTML §13.2.3.3, "prescan a
// byte stream", approximated with the tokenizer so comments and broken
// markup are skipped the same way as in the real parse).
func prescan(head []byte) (encoding.Encoding, string) {
	if !hasMeta(head) {
		return nil, ""
	}
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil, ""
		case html.StartTagToken, html.SelfClosingTagToken:
			tag, hasAttr := z.TagName()
			if string(tag) != "meta" {
				continue
			}
			var (
				pragma  bool   // http-equiv="content-type" seen
				label   string // charset found
				viaMeta bool   // label came from charset= (needs no pragma)
				seen    = map[string]bool{}
			)
			for hasAttr {
				var key, val []byte
				key, val, hasAttr = z.TagAttr()
				k := string(key)
				if seen[k] {
					continue
				}
				seen[k] = true
				switch k {
				case "http-equiv":
					pragma = strings.EqualFold(strings.TrimSpace(string(val)), "content-type")
				case "content":
					if label == "" {
						label = charsetFromContent(string(val))
					}
				case "charset":
					label, viaMeta = strings.TrimSpace(string(val)), true
				}
			}
			if label == "" || (!viaMeta && !pragma) {
				continue
			}
			enc, name := charset.Lookup(label)
			if enc == nil {
				continue
			}
			switch name {
			case "utf-16be", "utf-16le": // §13.2.3.3 step: a meta cannot declare UTF-16
				return charset.Lookup("utf-8")
			case "x-user-defined":
				return charset.Lookup("windows-1252")
			}
			return enc, name
		}
	}
}

// hasMeta reports whether b contains "<meta", in any case.
func hasMeta(b []byte) bool {
	for i := 0; i+5 <= len(b); i++ {
		if b[i] == '<' && b[i+1]|0x20 == 'm' && b[i+2]|0x20 == 'e' && b[i+3]|0x20 == 't' && b[i+4]|0x20 == 'a' {
			return true
		}
	}
	return false
}

// charsetFromContent extracts the encoding label from a Content-Type-like
// string (WHATWG HTML §2.5.5 "extracting a character encoding from a meta
// element").
func charsetFromContent(s string) string {
	// "charset" is matched ASCII case-insensitively, as the standard
	// says, in a copy of s lowered byte for byte: positions in it are
	// positions in s (strings.ToLower turns a byte that is not UTF-8 into
	// three, and a few characters into others of another length).
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	lower := string(b)
	for pos := 0; ; {
		i := strings.Index(lower[pos:], "charset")
		if i < 0 {
			return ""
		}
		pos += i + len("charset")
		rest := strings.TrimLeft(s[pos:], " \t\n\f\r")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\f\r")
		if rest == "" {
			return ""
		}
		if q := rest[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return ""
			}
			return rest[1 : 1+end]
		}
		end := strings.IndexAny(rest, " \t\n\f\r;")
		if end < 0 {
			end = len(rest)
		}
		return rest[:end]
	}
}
