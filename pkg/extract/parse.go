package extract

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unsafe"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/wirecrawl/wire/pkg/extract/internal/htmltok"
)

// rawLink is a link as written in the page, before resolution.
type rawLink struct {
	href     string // may refer to the page's bytes: valid during Extract only
	anchor   string
	tag      string
	nofollow bool
}

// parser is the state of one pass of the tokenizer over a page. It keeps
// counters, not a stack of open elements, so its memory does not grow
// with nesting depth.
type parser struct {
	agent    string
	noframes bool // parse the content of <noframes> for links (top level only)

	text     textBuf
	anchor   textBuf // text of the open <a>
	open     int     // index in links of the open <a>, -1 if none
	links    []rawLink
	raw      atom.Atom // raw-text element whose content the tokenizer returns next
	template int       // depth of <template>: its content is inert
	pre      int       // depth of <pre>/<listing>: newlines are kept

	// A region hidden by the hidden attribute (HTML §6.1): the elements
	// open in it, the hidden one first, as the HTML parser would keep
	// them (implied end tags, end tags closing what they enclose), up to
	// maxHiddenStack; deeper ones are only counted (hiddenExtra). The
	// region ends when its first element is closed, or when an end tag
	// matches none of them (an ancestor was closed).
	hidden      []element
	hiddenExtra int

	scratch  []byte  // an attribute value being decoded
	strs     []byte  // where keep copies anchors and headings (append only)
	heading  textBuf // text of the open h1-h6
	level    int     // level of the open heading, 0 if none
	headings []Heading

	title        string
	haveTitle    bool // the first <title> has been seen (it wins even if empty)
	inFirstTitle bool
	desc         string
	haveDesc     bool
	lang         string
	metaLang     string
	seenHTML     bool
	base         string
	haveBase     bool
	canonical    string
	robots       Robots
}

// element is an open element of a hidden region: its atom, or its name
// when it has none.
type element struct {
	a    atom.Atom
	name string
}

// maxHiddenStack bounds the elements remembered in a hidden region.
const maxHiddenStack = 256

// attrs holds the attributes the parser looks at; the first of duplicate
// attributes wins, as in the HTML parser.
type attrs struct {
	href, rel, src, alt, title, name, content, httpEquiv, lang, xmlLang, typ, value string
	hasHref, hidden                                                                 bool
	seen                                                                            uint32
}

// Bits of attrs.seen.
const (
	aHref = 1 << iota
	aRel
	aSrc
	aAlt
	aTitle
	aName
	aContent
	aHTTPEquiv
	aLang
	aXMLLang
	aType
	aValue
	aHidden
)

// readHrefRel reads the href and rel attributes of an <a> tag as
// readAttrs does, except that an href that needs no decoding is not
// copied: it refers to the page's bytes (it is a rawLink's href, which
// resolve copies before it keeps it beyond the page).
// It fills a, which is zero, in place: an <a> is the commonest tag read,
// and the struct is large to copy.
func (p *parser) readHrefRel(z *htmltok.Tokenizer, a *attrs) {
	want := uint32(aHref | aRel | aHidden)
	if !spanAttrsInto(z, want, aHref, &p.scratch, a) {
		*a = tokenAttrs(z.Raw(), want)
	}
}

// readAttrs reads the attributes of the current tag. Only the ones the
// parser uses are converted to strings. Most tags are read from the raw
// keys and values the tokenizer found (spanAttrs); the others through
// x/net/html's TagAttr (tokenAttrs). want selects the attributes (a* bits)
// to convert; hidden is always read.
func (p *parser) readAttrs(z *htmltok.Tokenizer, want uint32) attrs {
	want |= aHidden
	var a attrs
	if !spanAttrsInto(z, want, 0, &p.scratch, &a) {
		return tokenAttrs(z.Raw(), want)
	}
	return a
}

// tokenAttrs reads the attributes of the start tag raw (a start tag's raw
// bytes, which tokenize alone as they did in their page) through
// html.Tokenizer.TagAttr, which decodes character references (in
// attribute mode), NULs and newlines, and copies every key and value.
func tokenAttrs(raw []byte, want uint32) attrs {
	z := html.NewTokenizer(bytes.NewReader(raw))
	z.Next()
	return tagAttrs(z, want)
}

// tagAttrs reads the attributes of the current tag of z through TagAttr.
func tagAttrs(z *html.Tokenizer, want uint32) attrs {
	var a attrs
	more := true
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		if string(k) == "hidden" {
			if a.seen&aHidden == 0 {
				a.seen |= aHidden
				// hidden="until-found" content is meant to be found by
				// searching the page: it counts as visible.
				a.hidden = !strings.EqualFold(strings.TrimSpace(string(v)), "until-found")
			}
			continue
		}
		bit, dst := a.field(k)
		if dst == nil || bit&want == 0 {
			continue
		}
		a.set(bit, dst, v)
	}
	return a
}

// set records the first value of an attribute.
func (a *attrs) set(bit uint32, dst *string, v []byte) {
	if a.seen&bit != 0 {
		return
	}
	a.seen |= bit
	*dst = string(v)
	if bit == aHref {
		a.hasHref = true
	}
}

// field returns the attrs field of a lower-case attribute name the parser
// uses.
func (a *attrs) field(key []byte) (uint32, *string) {
	switch string(key) {
	case "href":
		return aHref, &a.href
	case "rel":
		return aRel, &a.rel
	case "src":
		return aSrc, &a.src
	case "alt":
		return aAlt, &a.alt
	case "title":
		return aTitle, &a.title
	case "name":
		return aName, &a.name
	case "content":
		return aContent, &a.content
	case "http-equiv":
		return aHTTPEquiv, &a.httpEquiv
	case "lang":
		return aLang, &a.lang
	case "xml:lang":
		return aXMLLang, &a.xmlLang
	case "type":
		return aType, &a.typ
	case "value":
		return aValue, &a.value
	}
	return 0, nil
}

// spanAttrs reads the attributes of the current start tag from the raw
// keys and values the tokenizer found (duplicates already removed, the
// first kept), without copying the values it does not use. Values with
// simple character references (htmltok.UnescapeSimple) are decoded in
// scratch. It gives up (ok false) when a key has a NUL or bytes beyond
// ASCII, or a value the parser uses needs other decoding (another
// reference, a carriage return or a NUL): tokenAttrs then does it.
func spanAttrs(z *htmltok.Tokenizer, want uint32, scratch *[]byte) (a attrs, ok bool) {
	if !spanAttrsInto(z, want, 0, scratch, &a) {
		return attrs{}, false
	}
	return a, true
}

// spanAttrsInto is spanAttrs filling a, which is zero, in place (it is
// left partly filled when it gives up), except that the values of the
// attributes in borrow (a* bits) that need no decoding are not copied:
// they refer to the tokenizer's input.
func spanAttrsInto(z *htmltok.Tokenizer, want, borrow uint32, scratch *[]byte, a *attrs) bool {
	var lowered [16]byte
	for i := range z.NumAttr() {
		key, val := z.Attr(i)
		if len(key) > len(lowered) {
			if bytes.IndexByte(key, 0) >= 0 {
				return false
			}
			continue // longer than any name the parser uses
		}
		lk := lowered[:len(key)]
		for j, c := range key {
			switch {
			case c == 0 || c >= 0x80:
				return false
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			lk[j] = c
		}
		if string(lk) == "hidden" {
			if a.seen&aHidden == 0 {
				var ok bool
				if val, ok = decodeValue(val, scratch); !ok {
					return false
				}
				a.seen |= aHidden
				a.hidden = !strings.EqualFold(strings.TrimSpace(string(val)), "until-found")
			}
		} else if bit, dst := a.field(lk); dst != nil && bit&want != 0 && a.seen&bit == 0 {
			if bit&borrow != 0 && !needsDecoding(val) {
				a.seen |= bit
				*dst = unsafe.String(unsafe.SliceData(val), len(val))
				if bit == aHref {
					a.hasHref = true
				}
				continue
			}
			var ok bool
			if val, ok = decodeValue(val, scratch); !ok {
				return false
			}
			a.set(bit, dst, val)
		}
	}
	return true
}

// decodeValue returns an attribute value decoded, if it needs no decoding
// or only that of simple character references (decoded in a copy in
// scratch); ok is false for any other.
func decodeValue(v []byte, scratch *[]byte) (decoded []byte, ok bool) {
	if !needsDecoding(v) {
		return v, true
	}
	if bytes.IndexByte(v, '\r') >= 0 || bytes.IndexByte(v, 0) >= 0 {
		return nil, false
	}
	*scratch = append((*scratch)[:0], v...)
	return htmltok.UnescapeSimple(*scratch)
}

// needsDecoding reports whether an attribute value differs from its raw
// bytes: it has a character reference, a carriage return or a NUL.
func needsDecoding(v []byte) bool {
	return bytes.IndexByte(v, '&') >= 0 || bytes.IndexByte(v, '\r') >= 0 || bytes.IndexByte(v, 0) >= 0
}

// mayBeHidden reports whether the current tag has an attribute named
// hidden (in any ASCII case): a cheap test on the keys the tokenizer
// found, which spares reading the attributes of the tags the parser does
// not otherwise look at.
func mayBeHidden(z *htmltok.Tokenizer) bool {
	for i := range z.NumAttr() {
		if k, _ := z.Attr(i); len(k) == len("hidden") && (k[0]|0x20) == 'h' && strings.EqualFold(string(k), "hidden") {
			return true
		}
	}
	return false
}

// relHas reports whether the space-separated rel list has token.
func relHas(rel, token string) bool {
	for t := range strings.FieldsSeq(rel) { // no slice of fields to allocate
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// tagName returns the atom of the current tag and, for a tag without an
// atom, its lower-case name. It lower-cases the name the tokenizer found
// in place of the copy html.Tokenizer.TagName makes; names with NUL or
// non-ASCII bytes, or longer than 64 bytes, go through TagName.
func tagName(z *htmltok.Tokenizer) (atom.Atom, string) {
	raw := z.TagNameRaw()
	if a := commonTag(raw); a != 0 {
		return a, ""
	}
	var buf [64]byte
	name := buf[:0]
	if len(raw) <= len(buf) {
		for _, c := range raw {
			if c == 0 || c >= 0x80 {
				name = nil
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			name = append(name, c)
		}
	} else {
		name = nil
	}
	if name == nil {
		name, _ = z.TagName()
	}
	if a := atom.Lookup(name); a != 0 {
		return a, ""
	}
	return 0, string(name)
}

// commonTag returns the atom of a raw tag name (in any ASCII case) that
// is one of the names most tags have, and 0 for any other name, which
// atom.Lookup then looks up: the name, lower-cased into one word, is
// compared with constants instead of being hashed and looked up.
//
// The name is read as one word: eight bytes of the buffer under it when
// its capacity allows (the bytes past its length masked off, never used),
// else byte by byte. Its A-Z bytes are lower-cased all at once. A NUL
// inside the name leaves a zero byte below a non-zero one, which no
// constant has; a NUL at its end would read as a shorter name, so it
// returns 0.
func commonTag(raw []byte) atom.Atom {
	n := len(raw)
	if n == 0 || n > 8 {
		return 0
	}
	var w uint64
	if cap(raw) >= 8 {
		w = binary.LittleEndian.Uint64(raw[:8])
		k := uint(64-8*n) & 63 // 0 to 56: the mask spares the shifts' checks
		w = w << k >> k
	} else {
		for i, c := range raw {
			w |= uint64(c) << (8 * i)
		}
	}
	if w>>(uint(8*(n-1))&63) == 0 {
		return 0 // ends with a NUL
	}
	// The high bit of each byte in A-Z: at least 'A' and not above 'Z'
	// in its low seven bits (no carry leaves a byte), and no high bit.
	h := w &^ highs
	upper := (h + (0x80-'A')*ones) &^ (h + (0x80-'Z'-1)*ones) &^ w & highs
	w |= upper >> 2 // 0x80 >> 2 is 'a' - 'A'
	switch w {
	case 'a':
		return atom.A
	case 'b':
		return atom.B
	case 'i':
		return atom.I
	case 'p':
		return atom.P
	case 'b' | 'r'<<8:
		return atom.Br
	case 'd' | 'd'<<8:
		return atom.Dd
	case 'd' | 'l'<<8:
		return atom.Dl
	case 'd' | 't'<<8:
		return atom.Dt
	case 'e' | 'm'<<8:
		return atom.Em
	case 'h' | '1'<<8:
		return atom.H1
	case 'h' | '2'<<8:
		return atom.H2
	case 'h' | '3'<<8:
		return atom.H3
	case 'h' | '4'<<8:
		return atom.H4
	case 'h' | '5'<<8:
		return atom.H5
	case 'h' | '6'<<8:
		return atom.H6
	case 'h' | 'r'<<8:
		return atom.Hr
	case 'l' | 'i'<<8:
		return atom.Li
	case 'o' | 'l'<<8:
		return atom.Ol
	case 't' | 'd'<<8:
		return atom.Td
	case 't' | 'h'<<8:
		return atom.Th
	case 't' | 'r'<<8:
		return atom.Tr
	case 'u' | 'l'<<8:
		return atom.Ul
	case 'd' | 'i'<<8 | 'v'<<16:
		return atom.Div
	case 'i' | 'm'<<8 | 'g'<<16:
		return atom.Img
	case 'n' | 'a'<<8 | 'v'<<16:
		return atom.Nav
	case 'p' | 'r'<<8 | 'e'<<16:
		return atom.Pre
	case 's' | 'u'<<8 | 'p'<<16:
		return atom.Sup
	case 'w' | 'b'<<8 | 'r'<<16:
		return atom.Wbr
	case 'c' | 'o'<<8 | 'd'<<16 | 'e'<<24:
		return atom.Code
	case 'l' | 'i'<<8 | 'n'<<16 | 'k'<<24:
		return atom.Link
	case 'm' | 'e'<<8 | 't'<<16 | 'a'<<24:
		return atom.Meta
	case 's' | 'p'<<8 | 'a'<<16 | 'n'<<24:
		return atom.Span
	case 'f' | 'o'<<8 | 'n'<<16 | 't'<<24:
		return atom.Font
	case 'f' | 'o'<<8 | 'r'<<16 | 'm'<<24:
		return atom.Form
	case 'h' | 'e'<<8 | 'a'<<16 | 'd'<<24:
		return atom.Head
	case 'b' | 'o'<<8 | 'd'<<16 | 'y'<<24:
		return atom.Body
	case 'h' | 't'<<8 | 'm'<<16 | 'l'<<24:
		return atom.Html
	case 'm' | 'a'<<8 | 'i'<<16 | 'n'<<24:
		return atom.Main
	case 's' | 'm'<<8 | 'a'<<16 | 'l'<<24 | 'l'<<32:
		return atom.Small
	case 't' | 'a'<<8 | 'b'<<16 | 'l'<<24 | 'e'<<32:
		return atom.Table
	case 't' | 'b'<<8 | 'o'<<16 | 'd'<<24 | 'y'<<32:
		return atom.Tbody
	case 't' | 'h'<<8 | 'e'<<16 | 'a'<<24 | 'd'<<32:
		return atom.Thead
	case 't' | 'i'<<8 | 't'<<16 | 'l'<<24 | 'e'<<32:
		return atom.Title
	case 'i' | 'n'<<8 | 'p'<<16 | 'u'<<24 | 't'<<32:
		return atom.Input
	case 'l' | 'a'<<8 | 'b'<<16 | 'e'<<24 | 'l'<<32:
		return atom.Label
	case 's' | 't'<<8 | 'y'<<16 | 'l'<<24 | 'e'<<32:
		return atom.Style
	case 's' | 't'<<8 | 'r'<<16 | 'o'<<24 | 'n'<<32 | 'g'<<40:
		return atom.Strong
	case 's' | 'c'<<8 | 'r'<<16 | 'i'<<24 | 'p'<<32 | 't'<<40:
		return atom.Script
	case 'b' | 'u'<<8 | 't'<<16 | 't'<<24 | 'o'<<32 | 'n'<<40:
		return atom.Button
	case 'h' | 'e'<<8 | 'a'<<16 | 'd'<<24 | 'e'<<32 | 'r'<<40:
		return atom.Header
	case 'f' | 'o'<<8 | 'o'<<16 | 't'<<24 | 'e'<<32 | 'r'<<40:
		return atom.Footer
	case 'a' | 's'<<8 | 'i'<<16 | 'd'<<24 | 'e'<<32:
		return atom.Aside
	case 's' | 'e'<<8 | 'c'<<16 | 't'<<24 | 'i'<<32 | 'o'<<40 | 'n'<<48:
		return atom.Section
	case 'a' | 'r'<<8 | 't'<<16 | 'i'<<24 | 'c'<<32 | 'l'<<40 | 'e'<<48:
		return atom.Article
	case 's' | 'u'<<8 | 'm'<<16 | 'm'<<24 | 'a'<<32 | 'r'<<40 | 'y'<<48:
		return atom.Summary
	case 'd' | 'e'<<8 | 't'<<16 | 'a'<<24 | 'i'<<32 | 'l'<<40 | 's'<<48:
		return atom.Details
	}
	return 0
}

func (p *parser) run(doc []byte) {
	z := htmltok.New(doc)
	for {
		switch tt := z.Next(); tt {
		case htmltok.ErrorToken: // io.EOF: the input is in memory
			p.closeAnchor()
			p.closeHeading()
			return
		case htmltok.TextToken:
			raw := p.raw
			p.raw = 0
			if p.template > 0 {
				continue
			}
			switch raw {
			case 0:
				if p.pre == 0 && blank(z.Raw()) {
					p.addSpace() // most text tokens between tags: spare Text's unescaping
				} else {
					p.addText(z.Text(), p.pre > 0)
				}
			case atom.Title:
				if p.inFirstTitle {
					p.title = normalize(z.Text(), MaxTitleBytes)
				}
			case atom.Textarea, atom.Xmp, atom.Plaintext:
				p.addText(z.Text(), true)
			case atom.Noframes:
				if p.noframes {
					p.noframesLinks(z.Text())
				}
			default:
				// script, style, noscript, iframe, noembed: not rendered
				// (iframe content is a fallback for browsers without
				// frames).
			}
		case htmltok.StartTagToken, htmltok.SelfClosingTagToken:
			p.raw = 0
			p.inFirstTitle = false
			a, name := tagName(z)
			p.startTag(z, a, name, tt == htmltok.SelfClosingTagToken)
		case htmltok.EndTagToken:
			p.raw = 0
			p.inFirstTitle = false
			a, name := tagName(z)
			p.endTag(a, name)
		default: // comments, doctypes
			p.raw = 0
		}
	}
}

// reset prepares a pooled parser for a new page, keeping the capacity of
// its buffers.
func (p *parser) reset(agent string) {
	text, anchor, heading, links, hidden, scratch, strs := p.text.b[:0], p.anchor.b[:0], p.heading.b[:0], p.links[:0], p.hidden[:0], p.scratch[:0], p.strs
	*p = parser{agent: agent, open: -1, noframes: true, links: links, hidden: hidden, strs: strs}
	p.text.b, p.anchor.b, p.heading.b = text, anchor, heading
	p.anchor.limit = MaxAnchorBytes
	p.heading.limit = MaxHeadingBytes
	if cap(scratch) <= maxPooledScratch {
		p.scratch = scratch
	}
}

// maxPooledScratch is the largest attribute buffer kept from page to page.
const maxPooledScratch = 64 << 10

// strsBlock is the size of the blocks keep copies strings into.
const strsBlock = 8 << 10

// keep returns b as a string, copied into a block shared by many such
// strings instead of an allocation of its own (anchors and headings are
// short and many). The block is only ever appended to, so the strings
// handed out, which Results keep, never change; a new block is started
// when b does not fit.
func (p *parser) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(p.strs)-len(p.strs) < len(b) {
		p.strs = make([]byte, 0, max(strsBlock, len(b)))
	}
	i := len(p.strs)
	p.strs = append(p.strs, b...)
	return unsafe.String(&p.strs[i], len(b))
}

// noframesLinks takes the links out of the content of a <noframes>
// element, which the tokenizer returns as raw text: what a browser
// without frames would show. Its text is not the page's text.
func (p *parser) noframesLinks(content []byte) {
	sub := parser{agent: p.agent, open: -1, strs: p.strs}
	sub.anchor.limit = MaxAnchorBytes
	sub.run(content)
	p.strs = sub.strs
	p.links = append(p.links, sub.links...)
}

func (p *parser) addText(s []byte, pre bool) {
	if !p.inHidden() {
		p.text.write(s, pre)
		if p.level > 0 {
			p.heading.write(s, false)
		}
	}
	if p.open >= 0 {
		p.anchor.write(s, false)
	}
}

// blank reports whether s is only ASCII white space.
func blank(s []byte) bool {
	for _, c := range s {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\f' {
			return false
		}
	}
	return true
}

// addSpace is addText for white space outside pre.
func (p *parser) addSpace() {
	if !p.inHidden() {
		p.text.sep()
		if p.level > 0 {
			p.heading.sep()
		}
	}
	if p.open >= 0 {
		p.anchor.sep()
	}
}

func (p *parser) closeAnchor() {
	if p.open >= 0 {
		p.links[p.open].anchor = p.keep(p.anchor.b)
		p.open = -1
	}
}

func (p *parser) closeHeading() {
	if p.level > 0 {
		if p.heading.len() > 0 && len(p.headings) < MaxHeadings {
			p.headings = append(p.headings, Heading{Level: p.level, Text: p.keep(p.heading.b)})
		}
		p.level = 0
	}
}

// imageAlt adds the alt text of an image to the open anchor and heading.
func (p *parser) imageAlt(alt string) {
	if alt == "" {
		return
	}
	if p.open >= 0 {
		p.anchor.sep()
		p.anchor.writeString(alt)
		p.anchor.sep()
	}
	if p.level > 0 && !p.inHidden() {
		p.heading.sep()
		p.heading.writeString(alt)
		p.heading.sep()
	}
}

// inHidden reports whether the parser is in a hidden region.
func (p *parser) inHidden() bool { return len(p.hidden) > 0 }

func (p *parser) endHidden() { p.hidden, p.hiddenExtra = p.hidden[:0], 0 }

// hiddenStart updates the hidden region for a start tag: elements the tag
// closes implicitly are popped, and the tag is pushed if it stays open.
func (p *parser) hiddenStart(a atom.Atom, name string, opens bool) {
	if p.hiddenExtra == 0 {
		for len(p.hidden) > 0 && closesImplicitly(p.hidden[len(p.hidden)-1].a, a) {
			p.hidden = p.hidden[:len(p.hidden)-1]
		}
		if len(p.hidden) == 0 {
			return // the hidden element itself was closed
		}
	}
	if !opens {
		return
	}
	if len(p.hidden) < maxHiddenStack && p.hiddenExtra == 0 {
		p.hidden = append(p.hidden, element{a, name})
	} else {
		p.hiddenExtra++
	}
}

// hiddenEnd updates the hidden region for an end tag.
func (p *parser) hiddenEnd(a atom.Atom, name string) {
	if p.hiddenExtra > 0 {
		p.hiddenExtra--
		return
	}
	for i := len(p.hidden) - 1; i >= 0; i-- {
		if e := p.hidden[i]; e.a == a && (a != 0 || e.name == name) {
			p.hidden = p.hidden[:i] // closes what it encloses; i == 0 ends the region
			return
		}
	}
	// No open element of the region matches: a stray end tag, which the
	// HTML parser ignores (</p> and void elements), or the end of an
	// ancestor, which ends the region.
	if a != atom.P && flagsOf(a)&fVoid == 0 {
		p.endHidden()
	}
}

func (p *parser) startTag(z *htmltok.Tokenizer, a atom.Atom, name string, selfClosing bool) {
	fl := flagsOf(a)
	if fl&fRaw != 0 {
		p.raw = a // the tokenizer returns their content as one raw text token
	}
	if a == atom.Template {
		if !selfClosing {
			p.template++
		}
		return
	}
	if p.template > 0 {
		return
	}
	opens := fl&fVoid == 0 && !selfClosing // the element stays open
	if p.inHidden() {
		p.hiddenStart(a, name, opens)
	}
	p.boundary(fl)
	if fl&fHeading != 0 {
		p.closeHeading() // a heading closes an open one, as in the HTML parser
		if !p.inHidden() && !selfClosing {
			p.level = headingLevel(a)
			p.heading.reset()
		}
	}
	var hidden bool // the tag has a hidden attribute (that hides)
	switch a {
	case atom.Html:
		at := p.readAttrs(z, aLang|aXMLLang)
		hidden = at.hidden
		if !p.seenHTML {
			p.seenHTML = true
			lang := at.lang
			if strings.TrimSpace(lang) == "" {
				lang = at.xmlLang
			}
			p.lang = normalize([]byte(lang), MaxLangBytes)
		}
	case atom.Title:
		if !p.haveTitle {
			p.haveTitle, p.inFirstTitle = true, true
		}
		hidden = p.maybeHidden(z)
	case atom.Base:
		at := p.readAttrs(z, aHref)
		hidden = at.hidden
		if !p.haveBase && at.hasHref {
			p.base, p.haveBase = at.href, true
		}
	case atom.A:
		p.closeAnchor() // an <a> closes any open one (the adoption agency, §13.2.6.4.7)
		var at attrs
		p.readHrefRel(z, &at)
		hidden = at.hidden
		if at.hasHref {
			p.links = append(p.links, rawLink{href: at.href, tag: TagA, nofollow: relHas(at.rel, "nofollow")})
			p.open = len(p.links) - 1
			p.anchor.reset()
		}
	case atom.Area:
		at := p.readAttrs(z, aHref|aRel|aAlt)
		hidden = at.hidden
		if at.hasHref {
			p.links = append(p.links, rawLink{href: at.href, tag: TagArea, anchor: normalize([]byte(at.alt), MaxAnchorBytes), nofollow: relHas(at.rel, "nofollow")})
		}
	case atom.Frame, atom.Iframe:
		at := p.readAttrs(z, aSrc|aTitle)
		hidden = at.hidden
		if at.src != "" {
			p.links = append(p.links, rawLink{href: at.src, tag: a.String(), anchor: normalize([]byte(at.title), MaxAnchorBytes)})
		}
	case atom.Link:
		at := p.readAttrs(z, aHref|aRel|aTitle)
		hidden = at.hidden
		p.link(at)
	case atom.Meta:
		at := p.readAttrs(z, aName|aContent|aHTTPEquiv)
		hidden = at.hidden
		p.meta(at)
	case atom.Img:
		if p.open >= 0 || (p.level > 0 && !p.inHidden()) { // alt text counts in anchors and headings
			p.imageAlt(p.readAttrs(z, aAlt).alt)
		}
	case atom.Input:
		at := p.readAttrs(z, aType|aValue)
		hidden = at.hidden
		switch strings.ToLower(strings.TrimSpace(at.typ)) {
		case "submit", "button", "reset": // their value is the visible label
			if !p.inHidden() && !at.hidden {
				p.text.writeString(at.value)
				p.text.sep()
			}
		}
	case atom.Pre, atom.Listing:
		if !selfClosing {
			p.pre++
		}
		hidden = p.maybeHidden(z)
	default:
		hidden = p.maybeHidden(z)
	}
	if hidden && !p.inHidden() && opens {
		p.hidden = append(p.hidden, element{a, name})
		if fl&fHeading != 0 {
			p.level = 0 // a hidden heading is not a heading of the page
		}
	}
}

// maybeHidden reports whether a tag has a hidden attribute that hides
// (attrs.hidden), reading its attributes only if it may have one.
func (p *parser) maybeHidden(z *htmltok.Tokenizer) bool {
	if p.inHidden() || !mayBeHidden(z) {
		return false
	}
	return p.readAttrs(z, 0).hidden
}

func (p *parser) link(a attrs) {
	if !a.hasHref {
		return
	}
	switch {
	case relHas(a.rel, "canonical"):
		if p.canonical == "" {
			p.canonical = a.href
		}
	case relHas(a.rel, "stylesheet"), relHas(a.rel, "icon"):
		// "alternate stylesheet" is a style, not a page
	case relHas(a.rel, "alternate"), relHas(a.rel, "next"), relHas(a.rel, "prev"):
		p.links = append(p.links, rawLink{href: a.href, tag: TagLink, anchor: normalize([]byte(a.title), MaxAnchorBytes), nofollow: relHas(a.rel, "nofollow")})
	}
}

func (p *parser) meta(a attrs) {
	name := strings.ToLower(strings.TrimSpace(a.name))
	switch {
	case name == "robots" || (p.agent != "" && name == p.agent):
		p.robots = p.robots.Merge(ParseRobots(a.content))
	case name == "description":
		if !p.haveDesc {
			p.desc, p.haveDesc = normalize([]byte(a.content), MaxDescriptionBytes), true
		}
	}
	switch strings.ToLower(strings.TrimSpace(a.httpEquiv)) {
	case "refresh":
		if u := parseRefresh(a.content); u != "" {
			p.links = append(p.links, rawLink{href: u, tag: TagRefresh})
		}
	case "content-language":
		if p.metaLang == "" {
			l, _, _ := strings.Cut(a.content, ",")
			p.metaLang = normalize([]byte(l), MaxLangBytes)
		}
	}
}

func (p *parser) endTag(a atom.Atom, name string) {
	if a == atom.Template {
		if p.template > 0 {
			p.template--
		}
		return
	}
	if p.template > 0 {
		return
	}
	fl := flagsOf(a)
	if p.inHidden() {
		p.hiddenEnd(a, name)
	}
	switch {
	case a == atom.A:
		p.closeAnchor()
	case a == atom.Pre || a == atom.Listing:
		if p.pre > 0 {
			p.pre--
		}
	case fl&fHeading != 0:
		p.closeHeading() // any </hN> closes an open heading
	}
	p.boundary(fl)
}

// boundary separates the text before and after a block or cell element.
func (p *parser) boundary(fl uint8) {
	switch {
	case fl&fBlock != 0:
		p.text.block()
	case fl&fCell != 0:
		p.text.sep()
	default:
		return
	}
	if p.open >= 0 {
		p.anchor.sep()
	}
	if p.level > 0 {
		p.heading.sep()
	}
}
