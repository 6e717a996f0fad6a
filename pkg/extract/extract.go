// Package extract turns a fetched page into what the crawler keeps of
// it: the text decoded to UTF-8 and normalised, the title, the links with
// their anchor text, and the robots directives. docs/gatherer.md says
// what counts as text and what counts as a link.
package extract

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/net/html"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Limits on the strings taken from a page; longer ones are cut at a rune
// boundary.
const (
	MaxTitleBytes       = 1024
	MaxDescriptionBytes = 1024
	MaxAnchorBytes      = 1024
	MaxLangBytes        = 35 // the longest well-formed BCP 47 tag in common use
)

// Element names a Link can come from.
const (
	TagA       = "a"
	TagArea    = "area"
	TagFrame   = "frame"
	TagIFrame  = "iframe"
	TagLink    = "link"    // <link rel=alternate|next|prev>
	TagRefresh = "refresh" // <meta http-equiv=refresh>
)

// Options configure an Extractor.
type Options struct {
	// Normalizer resolves and normalises links; nil means
	// urlnorm.New(MaxURLLength).
	Normalizer *urlnorm.Normalizer
	// MaxURLLength is passed to urlnorm.New when Normalizer is nil; 0
	// means urlnorm.DefaultMaxLength.
	MaxURLLength int
	// Agent is the crawler's robots.txt product token: <meta name=Agent>
	// counts like <meta name=robots>, and X-Robots-Tag values prefixed by
	// "Agent:" apply.
	Agent string
}

// Extractor extracts text and links. It holds no per-page state and is
// safe for concurrent use.
type Extractor struct {
	norm  *urlnorm.Normalizer
	agent string
}

// New returns an Extractor.
func New(o Options) *Extractor {
	n := o.Normalizer
	if n == nil {
		n = urlnorm.New(o.MaxURLLength)
	}
	return &Extractor{norm: n, agent: strings.ToLower(o.Agent)}
}

// Agent returns the product token given in Options.
func (e *Extractor) Agent() string { return e.agent }

// Link is one out-link of a page.
type Link struct {
	URL      string `json:"url"`                // absolute, normalised, without fragment
	Anchor   string `json:"anchor,omitempty"`   // anchor text, alt text of images inside the anchor, area alt, or the title attribute
	NoFollow bool   `json:"nofollow,omitempty"` // rel=nofollow
	Tag      string `json:"tag"`                // element it came from: a Tag* constant
}

// Result is what Extract learned about one page. Every string is valid
// UTF-8.
type Result struct {
	MIME          string         `json:"mime"`                    // media type, lower case, without parameters
	HTML          bool           `json:"html"`                    // parsed as HTML; false: nothing below is set
	Charset       string         `json:"charset,omitempty"`       // WHATWG name of the encoding decoded from
	CharsetSource string         `json:"charsetSource,omitempty"` // Source* constant
	Lang          string         `json:"lang,omitempty"`          // <html lang> (or xml:lang, or Content-Language meta)
	Title         string         `json:"title,omitempty"`         // first <title>, normalised
	Description   string         `json:"description,omitempty"`   // <meta name=description>, normalised
	Text          string         `json:"text"`                    // visible text, normalised; blocks on lines of their own
	Hash          uint64         `json:"-"`                       // xxhash64 of Text (HashHex formats it)
	Base          string         `json:"base,omitempty"`          // <base href>, resolved, if one was used
	Canonical     string         `json:"canonical,omitempty"`     // <link rel=canonical>, resolved
	Refresh       string         `json:"refresh,omitempty"`       // <meta http-equiv=refresh> target, resolved
	NoIndex       bool           `json:"noindex,omitempty"`       // meta robots noindex or none
	NoFollow      bool           `json:"nofollow,omitempty"`      // meta robots nofollow or none
	Links         []Link         `json:"links,omitempty"`         // in document order, exact duplicates removed
	Dropped       map[string]int `json:"dropped,omitempty"`       // links that failed normalisation, by urlnorm.Reason
}

// HashHex formats a text hash as in parsed.Doc.Hash: 16 lower-case hex
// digits.
func HashHex(h uint64) string { return fmt.Sprintf("%016x", h) }

// TextHash is the hash of a normalised text (xxhash64).
func TextHash(text string) uint64 { return xxhash.Sum64String(text) }

// IsHTML reports whether a media type is parsed as HTML: text/html and
// XHTML (parsed as HTML, as a crawler cannot trust it to be well formed).
func IsHTML(mediaType string) bool {
	switch mediaType {
	case "text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml":
		return true
	}
	return false
}

// Extract reads a page: body is the response body (Content-Encoding
// already removed), contentType the Content-Type header value and pageURL
// the page's absolute URL, against which links are resolved unless the
// page has a <base href>. A body of another media type is recorded
// without being parsed. A body without Content-Type is parsed when it
// sniffs as HTML (http.DetectContentType).
func (e *Extractor) Extract(body []byte, contentType, pageURL string) *Result {
	r := &Result{MIME: MediaType(contentType)}
	if !IsHTML(r.MIME) && !(r.MIME == "" && strings.HasPrefix(http.DetectContentType(body), "text/html")) {
		return r
	}
	r.HTML = true
	d := Decode(body, contentType)
	r.Charset, r.CharsetSource = d.Charset, d.Source
	p := parser{agent: e.agent, open: -1}
	p.text.b = make([]byte, 0, len(d.Text)/3)
	p.anchor.limit = MaxAnchorBytes
	p.run(d.Text)
	r.Text = p.text.String()
	r.Hash = TextHash(r.Text)
	r.Title = p.title
	r.Description = p.desc
	r.Lang = p.lang
	if r.Lang == "" {
		r.Lang = p.metaLang
	}
	r.NoIndex, r.NoFollow = p.robots.NoIndex, p.robots.NoFollow
	e.resolve(r, &p, pageURL)
	return r
}

// rawLink is a link as written in the page, before resolution.
type rawLink struct {
	href     string
	anchor   string
	tag      string
	nofollow bool
}

// parser is the state of one pass of the tokenizer over a page. It keeps
// counters, not a stack of open elements, so its memory does not grow
// with nesting depth.
type parser struct {
	agent string

	text     textBuf
	anchor   textBuf // text of the open <a>
	open     int     // index in links of the open <a>, -1 if none
	links    []rawLink
	raw      string // raw-text element whose content the tokenizer returns next
	template int    // depth of <template>: its content is inert
	pre      int    // depth of <pre>/<listing>: newlines are kept

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

// attrs holds the attributes the parser looks at; the first of duplicate
// attributes wins, as in the HTML parser.
type attrs struct {
	href, rel, src, alt, title, name, content, httpEquiv, lang, xmlLang, typ, value string
	hasHref                                                                         bool
	seen                                                                            uint32
}

var attrBits = map[string]uint32{
	"href": 1 << 0, "rel": 1 << 1, "src": 1 << 2, "alt": 1 << 3, "title": 1 << 4,
	"name": 1 << 5, "content": 1 << 6, "http-equiv": 1 << 7, "lang": 1 << 8,
	"xml:lang": 1 << 9, "type": 1 << 10, "value": 1 << 11,
}

func readAttrs(z *html.Tokenizer, more bool) attrs {
	var a attrs
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		bit, ok := attrBits[string(k)]
		if !ok || a.seen&bit != 0 {
			continue
		}
		a.seen |= bit
		s := string(v)
		switch bit {
		case 1 << 0:
			a.href, a.hasHref = s, true
		case 1 << 1:
			a.rel = s
		case 1 << 2:
			a.src = s
		case 1 << 3:
			a.alt = s
		case 1 << 4:
			a.title = s
		case 1 << 5:
			a.name = s
		case 1 << 6:
			a.content = s
		case 1 << 7:
			a.httpEquiv = s
		case 1 << 8:
			a.lang = s
		case 1 << 9:
			a.xmlLang = s
		case 1 << 10:
			a.typ = s
		case 1 << 11:
			a.value = s
		}
	}
	return a
}

// relHas reports whether the space-separated rel list has token.
func relHas(rel, token string) bool {
	for _, t := range strings.Fields(rel) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

func (p *parser) run(doc []byte) {
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken: // io.EOF: the input is in memory
			p.closeAnchor()
			return
		case html.TextToken:
			raw := p.raw
			p.raw = ""
			if p.template > 0 {
				continue
			}
			switch raw {
			case "":
				p.addText(z.Text(), p.pre > 0)
			case "title":
				if p.inFirstTitle {
					p.title = normalize(z.Text(), MaxTitleBytes)
				}
			case "textarea", "xmp", "plaintext":
				p.addText(z.Text(), true)
			default:
				// script, style, noscript, iframe, noembed, noframes: not
				// rendered (iframe and noframes content is a fallback for
				// browsers without frames).
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			p.raw = ""
			p.inFirstTitle = false
			name, more := z.TagName()
			p.startTag(z, string(name), more, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			p.raw = ""
			p.inFirstTitle = false
			name, _ := z.TagName()
			p.endTag(string(name))
		default: // comments, doctypes
			p.raw = ""
		}
	}
}

func (p *parser) addText(s []byte, pre bool) {
	p.text.write(s, pre)
	if p.open >= 0 {
		p.anchor.write(s, false)
	}
}

func (p *parser) closeAnchor() {
	if p.open >= 0 {
		p.links[p.open].anchor = p.anchor.String()
		p.open = -1
	}
}

func (p *parser) startTag(z *html.Tokenizer, name string, more, selfClosing bool) {
	switch name {
	case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
		p.raw = name // the tokenizer returns their content as one raw text token
	}
	if name == "template" {
		if !selfClosing {
			p.template++
		}
		return
	}
	if p.template > 0 {
		return
	}
	p.boundary(name)
	switch name {
	case "html":
		if !p.seenHTML {
			p.seenHTML = true
			a := readAttrs(z, more)
			lang := a.lang
			if strings.TrimSpace(lang) == "" {
				lang = a.xmlLang
			}
			p.lang = normalize([]byte(lang), MaxLangBytes)
		}
	case "title":
		if !p.haveTitle {
			p.haveTitle, p.inFirstTitle = true, true
		}
	case "base":
		if !p.haveBase {
			if a := readAttrs(z, more); a.hasHref {
				p.base, p.haveBase = a.href, true
			}
		}
	case "a":
		p.closeAnchor() // an <a> closes any open one (the adoption agency, §13.2.6.4.7)
		a := readAttrs(z, more)
		if a.hasHref {
			p.links = append(p.links, rawLink{href: a.href, tag: TagA, nofollow: relHas(a.rel, "nofollow")})
			p.open = len(p.links) - 1
			p.anchor.reset()
		}
	case "area":
		if a := readAttrs(z, more); a.hasHref {
			p.links = append(p.links, rawLink{href: a.href, tag: TagArea, anchor: normalize([]byte(a.alt), MaxAnchorBytes), nofollow: relHas(a.rel, "nofollow")})
		}
	case "frame", "iframe":
		if a := readAttrs(z, more); a.src != "" {
			p.links = append(p.links, rawLink{href: a.src, tag: name, anchor: normalize([]byte(a.title), MaxAnchorBytes)})
		}
	case "link":
		a := readAttrs(z, more)
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
	case "meta":
		p.meta(readAttrs(z, more))
	case "img":
		if p.open >= 0 {
			if a := readAttrs(z, more); a.alt != "" {
				p.anchor.sep()
				p.anchor.writeString(a.alt)
				p.anchor.sep()
			}
		}
	case "input":
		a := readAttrs(z, more)
		switch strings.ToLower(strings.TrimSpace(a.typ)) {
		case "submit", "button", "reset": // their value is the visible label
			p.text.writeString(a.value)
			p.text.sep()
		}
	case "pre", "listing":
		if !selfClosing {
			p.pre++
		}
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

func (p *parser) endTag(name string) {
	switch name {
	case "template":
		if p.template > 0 {
			p.template--
		}
		return
	}
	if p.template > 0 {
		return
	}
	switch name {
	case "a":
		p.closeAnchor()
	case "pre", "listing":
		if p.pre > 0 {
			p.pre--
		}
	}
	p.boundary(name)
}

// boundary separates the text before and after a block or cell element.
func (p *parser) boundary(name string) {
	if blockElements[name] {
		p.text.block()
	} else if cellElements[name] {
		p.text.sep()
	} else {
		return
	}
	if p.open >= 0 {
		p.anchor.sep()
	}
}

// cleanHref strips what the URL parser strips (WHATWG URL §4.4, basic URL
// parser, first steps): leading and trailing C0 controls and spaces, and
// every tab and newline.
func cleanHref(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	return s
}

// resolve turns the raw links into absolute, normalised ones.
func (e *Extractor) resolve(r *Result, p *parser, pageURL string) {
	self, err := e.norm.Normalize(pageURL)
	page := &url.URL{}
	if err == nil {
		if u, err := url.Parse(self); err == nil {
			page = u
		}
	}
	base := page
	if p.haveBase {
		if b, err := e.norm.Resolve(page, cleanHref(p.base)); err == nil {
			if u, err := url.Parse(b); err == nil {
				base, r.Base = u, b
			}
		}
	}
	if p.canonical != "" {
		if c, err := e.norm.Resolve(base, cleanHref(p.canonical)); err == nil {
			r.Canonical = c
		}
	}
	type key struct {
		url, anchor string
		nofollow    bool
	}
	type resolved struct {
		url    string
		reason string
	}
	seen := make(map[key]bool, len(p.links))
	cache := make(map[string]resolved, len(p.links)) // menus repeat hrefs
	for _, l := range p.links {
		res, ok := cache[l.href]
		if !ok {
			u, err := e.norm.Resolve(base, cleanHref(l.href))
			res.url = u
			if err != nil {
				res.reason = string(urlnorm.ReasonOf(err))
				if res.reason == "" {
					res.reason = string(urlnorm.ReasonUnparsable)
				}
			}
			cache[l.href] = res
		}
		if res.reason != "" {
			r.drop(res.reason)
			continue
		}
		u := res.url
		if l.tag == TagRefresh && r.Refresh == "" && u != self {
			r.Refresh = u
		}
		k := key{u, l.anchor, l.nofollow}
		if seen[k] {
			continue
		}
		seen[k] = true
		r.Links = append(r.Links, Link{URL: u, Anchor: l.anchor, NoFollow: l.nofollow, Tag: l.tag})
	}
}

func (r *Result) drop(reason string) {
	if r.Dropped == nil {
		r.Dropped = map[string]int{}
	}
	r.Dropped[reason]++
}
