// Package extract turns a fetched page into what the crawler keeps of
// it: the text decoded to UTF-8 and normalised, the title, the links with
// their anchor text, and the robots directives. docs/gatherer.md says
// what counts as text and what counts as a link.
package extract

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Limits on the strings taken from a page; longer ones are cut at a rune
// boundary.
const (
	MaxTitleBytes       = 1024
	MaxDescriptionBytes = 1024
	MaxAnchorBytes      = 1024
	MaxHeadingBytes     = 1024
	MaxHeadings         = 1024 // headings kept per page, in document order
	MaxLangBytes        = 35   // the longest well-formed BCP 47 tag in common use
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
	// Fallback is the label of the encoding of a page that declares none,
	// is not UTF-8 and whose encoding detection is unsure (WHATWG HTML
	// §13.2.3.2, step 9: "an implementation-defined or user-specified
	// default"); "" or an unknown label means windows-1252. See
	// LookupCharset.
	Fallback string
}

// Extractor extracts text and links. It holds no per-page state and is
// safe for concurrent use.
type Extractor struct {
	norm     *urlnorm.Normalizer
	agent    string
	fallback fallback
	pool     sync.Pool // of *state: buffers reused from page to page
}

// state is the memory one extraction needs, kept in a pool so that a
// page reuses the buffers of the one before.
type state struct {
	p parser
	// seen finds the page's exact duplicate links (same URL, anchor and
	// nofollow).
	seen  linkSet
	cache resolutions // kept from page to page
	// decoded is the buffer a page in a legacy encoding is converted
	// into; what the Result keeps of it is copied.
	decoded []byte
	// links is resolve's scratch: the links kept (copied to the Result
	// at their size).
	links []Link
}

// resolutions remembers URL resolutions from page to page, keyed by the
// href and its scope (the part of the base a resolution depends on, see
// scopesOf): an open-addressing table (linear probing) of indexes into
// entries, at least twice their number in size. A page looks up its few
// scopes once (scopeID); each link then costs one hash of its href,
// which a miss reuses to insert its resolution. A slot also keeps the
// low 32 bits of its entry's hash (where it goes in the table, and a
// first comparison), so that a probe reads an entry only when they
// match. reserve grows entries with the table, at least doubling, so
// that adding to it never copies it.
type resolutions struct {
	slots   []uint64 // 0 for none; else hash<<32 | (1 + index in entries)
	entries []resolution
	scopes  map[string]int32 // scope -> its id in entries
}

// resolution is one remembered resolution: of href, in scope; url is the
// normalised URL, or the reason (a urlnorm.Reason) why it has none if
// failed.
type resolution struct {
	href    string
	url     string
	urlHash uint64 // maphash of url under linkSeed, for linkHash
	scope   int32
	failed  bool
}

// resolutionHash hashes an href of a scope (an id of resolutions.scopes).
func resolutionHash(scope int32, href string) uint64 {
	return maphash.String(linkSeed, href) ^ uint64(scope+1)*0x9E3779B97F4A7C15
}

// scopeID returns the id of scope s, giving it one if it has none.
func (c *resolutions) scopeID(s string) int32 {
	id, ok := c.scopes[s]
	if !ok {
		if c.scopes == nil {
			c.scopes = map[string]int32{}
		}
		id = int32(len(c.scopes))
		c.scopes[strings.Clone(s)] = id
	}
	return id
}

// reserve makes room for n more entries without growing the table or
// entries.
func (c *resolutions) reserve(n int) {
	if want := len(c.entries) + n; want > cap(c.entries) {
		entries := make([]resolution, len(c.entries), max(want, 2*cap(c.entries), 256))
		copy(entries, c.entries)
		c.entries = entries
	}
	need := 2 * (len(c.entries) + n)
	if need <= len(c.slots) {
		return
	}
	size := 1024
	for size < need {
		size <<= 1
	}
	old := c.slots
	c.slots = make([]uint64, size)
	mask := uint64(size - 1)
	for _, v := range old {
		if v == 0 {
			continue
		}
		i := v >> 32 & mask // the hash's low bits
		for c.slots[i] != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = v
	}
}

// find returns the index in entries of href's resolution in scope (h its
// resolutionHash), or -1 and the slot where it goes.
func (c *resolutions) find(scope int32, h uint64, href string) (int, uint64) {
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := c.slots[i]
		if v == 0 {
			return -1, i
		}
		if v>>32 == h&0xFFFFFFFF {
			if e := &c.entries[uint32(v)-1]; e.scope == scope && e.href == href {
				return int(uint32(v) - 1), i
			}
		}
	}
}

// add remembers r, of hash h, in the empty slot find returned (reserve
// has made room for it) and returns its index.
func (c *resolutions) add(slot, h uint64, r resolution) int {
	c.entries = append(c.entries, r)
	c.slots[slot] = h<<32 | uint64(len(c.entries))
	return len(c.entries) - 1
}

// forget empties the memory, keeping its buffers.
func (c *resolutions) forget() {
	clear(c.slots)
	clear(c.entries)
	c.entries = c.entries[:0]
	clear(c.scopes)
}

// linkSeed seeds linkHash.
var linkSeed = maphash.MakeSeed()

// linkHash hashes what identifies a link for removing exact duplicates:
// its URL (urlHash, its maphash under linkSeed, remembered with its
// resolution), anchor and nofollow. Equal hashes are compared in full.
func linkHash(urlHash uint64, anchor string, nofollow bool) uint64 {
	h := urlHash*0x9E3779B97F4A7C15 ^ maphash.String(linkSeed, anchor)
	if nofollow {
		h = ^h
	}
	return h & linkHashMask
}

// linkHashMask is all ones; tests narrow it to make hashes collide.
var linkHashMask = ^uint64(0)

// maxCached bounds the URL resolutions a pooled state remembers from
// page to page (pages of a site repeat their menus).
const maxCached = 1 << 14

// maxPooled is the largest buffer (in bytes, or entries) kept in the pool
// after a page: a huge page's buffers are left to the garbage collector.
const maxPooled = 1 << 20

// New returns an Extractor.
func New(o Options) *Extractor {
	n := o.Normalizer
	if n == nil {
		n = urlnorm.New(o.MaxURLLength)
	}
	return &Extractor{norm: n, agent: strings.ToLower(o.Agent), fallback: newFallback(o.Fallback)}
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

// Heading is one h1-h6 element of a page.
type Heading struct {
	Level int    `json:"level"` // 1 to 6
	Text  string `json:"text"`  // its visible text on one line, with the alt of images inside
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
	Headings      []Heading      `json:"headings,omitempty"`      // visible h1-h6 with text, in document order
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
	st, _ := e.pool.Get().(*state)
	if st == nil {
		st = &state{}
	}
	defer e.release(st)
	d, converted := e.fallback.decodeInto(body, contentType, st.decoded)
	r.Charset, r.CharsetSource = d.Charset, d.Source
	if converted && cap(d.Text) <= maxPooled {
		st.decoded = d.Text[:0] // a converted page: its buffer serves the next one
	}
	p := &st.p
	p.reset(e.agent)
	if want := len(d.Text) / 3; cap(p.text.b) < want {
		if len(d.Text) > maxPooled {
			// A large page: room for its whole text at once (text is
			// never longer than its page), rather than copies as it grows.
			want = len(d.Text) + 64
		}
		p.text.b = make([]byte, 0, want)
	}
	p.run(d.Text)
	r.Text = p.text.take()
	r.Hash = TextHash(r.Text)
	r.Title = p.title
	r.Description = p.desc
	r.Headings = p.headings
	r.Lang = p.lang
	if r.Lang == "" {
		r.Lang = p.metaLang
	}
	r.NoIndex, r.NoFollow = p.robots.NoIndex, p.robots.NoFollow
	e.resolve(r, st, pageURL)
	return r
}

// release returns st to the pool unless its buffers grew too large.
func (e *Extractor) release(st *state) {
	p := &st.p
	if cap(p.text.b) > maxPooled || cap(p.links) > maxPooled/64 || cap(st.links) > maxPooled/64 || cap(st.seen.slots) > maxPooled/32 {
		return
	}
	if len(st.cache.entries) > maxCached {
		if cap(st.cache.entries) > 4*maxCached {
			st.cache = resolutions{} // grown by a huge page
		} else {
			st.cache.forget()
		}
	}
	// Drop references to the page's strings. Only the page's entries need
	// it: those beyond them were cleared when an earlier page left them,
	// or never used.
	clear(p.links)
	clear(st.links)
	e.pool.Put(st)
}

// cleanHref strips what the URL parser strips (WHATWG URL §4.4, basic URL
// parser, first steps): leading and trailing C0 controls and spaces, and
// every tab and newline.
func cleanHref(s string) string {
	if !hasSpaceOrControl(s) {
		return s // most hrefs
	}
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	return s
}

// word returns the eight bytes of s at i, little-endian.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:i+8]), 8))
}

// hasSpaceOrControl reports whether s has a byte at or below ' ', eight
// bytes at a time; the last word overlaps the one before it.
func hasSpaceOrControl(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' {
				return true
			}
		}
		return false
	}
	// The high bit of a byte below 0x21 is set in w - 0x21 bytes and not
	// in w. Exact: a borrow comes only from such a byte.
	for i := 0; i+8 < len(s); i += 8 {
		if w := word(s, i); (w-0x21*ones)&^w&highs != 0 {
			return true
		}
	}
	w := word(s, len(s)-8)
	return (w-0x21*ones)&^w&highs != 0
}

// hasEscapeOrControl reports whether s has a '%', a C0 control or DEL,
// eight bytes at a time (as hasSpaceOrControl).
func hasEscapeOrControl(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '%' || c < 0x20 || c == 0x7f {
				return true
			}
		}
		return false
	}
	// A byte below 0x20 as in hasSpaceOrControl; a byte equal to '%' or
	// DEL is a zero byte of w^'%' or w^DEL, found the same way.
	found := func(w uint64) bool {
		p, d := w^('%'*ones), w^(0x7f*ones)
		return ((w-0x20*ones)&^w|(p-ones)&^p|(d-ones)&^d)&highs != 0
	}
	for i := 0; i+8 < len(s); i += 8 {
		if found(word(s, i)) {
			return true
		}
	}
	return found(word(s, len(s)-8))
}

// resolve turns the raw links into absolute, normalised ones.
func (e *Extractor) resolve(r *Result, st *state, pageURL string) {
	p := &st.p
	self, err := e.norm.Normalize(pageURL)
	page := &url.URL{}
	if err == nil {
		if u, err := url.Parse(self); err == nil {
			page = u
		}
	}
	base, baseStr := page, ""
	if err == nil {
		baseStr = self
	}
	if p.haveBase {
		if b, err := e.norm.Resolve(page, cleanHref(p.base)); err == nil {
			if u, err := url.Parse(b); err == nil {
				base, r.Base, baseStr = u, b, b
			}
		}
	}
	if p.canonical != "" {
		if c, err := e.norm.Resolve(base, cleanHref(p.canonical)); err == nil {
			r.Canonical = c
		}
	}
	// The normaliser is a pure function, so its results are remembered
	// from page to page: menus repeat the same links on every page of a
	// site. A key is the href and the part of the base its resolution
	// depends on.
	st.seen.reset(len(p.links))
	st.cache.reserve(len(p.links))
	scopes := scopesOf(baseStr)
	var ids [numScopes]int32 // this page's scopes' ids, looked up once
	for k := range ids {
		ids[k] = -1
	}
	var prepared *urlnorm.Base // the base, prepared on the first miss
	links := st.links[:0]
	for _, l := range p.links {
		href := e.dropFragment(cleanHref(l.href))
		k := scopeKind(href)
		if ids[k] < 0 {
			ids[k] = st.cache.scopeID(scopes[k])
		}
		h := resolutionHash(ids[k], href)
		j, slot := st.cache.find(ids[k], h, href)
		if j < 0 {
			if prepared == nil {
				prepared = e.norm.Prepare(base, baseStr)
			}
			// An href may refer to the page's bytes (readHrefRel): the
			// memory of resolutions outlives the page.
			href = strings.Clone(href)
			res := resolution{href: href, scope: ids[k]}
			res.url, res.failed = e.resolveHref(prepared, baseStr, href)
			if !res.failed {
				res.urlHash = maphash.String(linkSeed, res.url)
			}
			j = st.cache.add(slot, h, res)
		}
		res := &st.cache.entries[j]
		if res.failed {
			r.drop(res.url)
			continue
		}
		u := res.url
		if l.tag == TagRefresh && r.Refresh == "" && u != self {
			r.Refresh = u
		}
		if st.seen.has(links, linkHash(res.urlHash, l.anchor, l.nofollow), u, l.anchor, l.nofollow) {
			continue
		}
		links = append(links, Link{URL: u, Anchor: l.anchor, NoFollow: l.nofollow, Tag: l.tag})
	}
	st.links = links
	if len(p.links) > 0 {
		r.Links = append(make([]Link, 0, len(links)), links...) // at its size
	}
}

// linkSet holds the links kept from a page, to find exact duplicates:
// an open-addressing table (linear probing) of their indexes, by their
// hash (linkHash), at least twice the page's links in size, cleared for
// each page. Links of equal hashes are compared in full.
type linkSet struct {
	slots  []int32  // 1 + index of a kept link; 0 for none
	hashes []uint64 // the hash of each kept link, by index
}

// reset empties the set for a page of n links.
func (s *linkSet) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		clear(s.slots)
	} else {
		s.slots = make([]int32, size)
	}
	s.hashes = s.hashes[:0]
}

// has reports whether links, the links kept so far, has one with this
// URL, anchor and nofollow, whose hash is h; if not, the link is taken
// to be the next one kept (index len(links)). At most half the table is
// ever full, so a probe finds an empty slot.
func (s *linkSet) has(links []Link, h uint64, url, anchor string, nofollow bool) bool {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		j := s.slots[i]
		if j == 0 {
			s.slots[i] = int32(len(s.hashes)) + 1
			s.hashes = append(s.hashes, h)
			return false
		}
		if s.hashes[j-1] == h {
			if l := &links[j-1]; l.URL == url && l.Anchor == anchor && l.NoFollow == nofollow {
				return true
			}
		}
	}
}

// resolveHref resolves and normalises a cleaned href against the base
// (prepared; baseStr its normal form, "" if unusable): the URL, or the
// reason (a urlnorm.Reason) why it has none and failed.
func (e *Extractor) resolveHref(base *urlnorm.Base, baseStr, href string) (string, bool) {
	if baseStr != "" && (href == "" || href[0] == '#') {
		// A fragment (or nothing) refers to the base itself, which is
		// already normal; the normaliser drops fragments.
		return baseStr, false
	}
	u, err := e.norm.ResolveBase(base, href)
	if err != nil {
		reason := string(urlnorm.ReasonOf(err))
		if reason == "" {
			reason = string(urlnorm.ReasonUnparsable)
		}
		return reason, true
	}
	return u, false
}

// dropFragment removes the fragment of an href when that cannot change
// what the normaliser makes of it (it drops fragments): the fragment has
// no percent sign (a bad escape fails url.Parse) and no control character
// (which fails it too), and the href is not too long to be looked at.
// Links to the sections of a page then share one resolution.
func (e *Extractor) dropFragment(href string) string {
	i := strings.IndexByte(href, '#')
	if i <= 0 { // no fragment, or a fragment alone: resolved without the normaliser
		return href
	}
	limit := e.norm.MaxLength
	if limit <= 0 {
		limit = urlnorm.DefaultMaxLength
	}
	if len(href) > 3*limit {
		return href
	}
	if hasEscapeOrControl(href[i+1:]) {
		return href
	}
	return href[:i]
}

// The kinds of reference, by the part of the base their resolution
// depends on.
const (
	scopeAbsolute = iota // an absolute URL: nothing
	scopeNetwork         // //host/path: the scheme
	scopePath            // /path: the origin
	scopeBase            // "", ?query, #fragment: the whole base
	scopeRelative        // path: the directory
	numScopes
)

// scopesOf returns the scope of each kind of reference against the normal
// URL base: the part of base the resolution of such a reference depends
// on (RFC 3986 §5.2.2): nothing for an absolute URL, the scheme for a
// network-path reference, the origin for an absolute path, the directory
// for a relative path, the whole base for a query. An unusable base ("")
// makes its own scope. Every scope is a prefix of base (or "\x01").
func scopesOf(base string) [numScopes]string {
	if base == "" {
		return [numScopes]string{"\x01", "\x01", "\x01", "\x01", "\x01"}
	}
	i := strings.Index(base, "://")
	if i < 0 {
		return [numScopes]string{base, base, base, base, base}
	}
	path := len(base) // start of the path
	if j := strings.IndexByte(base[i+3:], '/'); j >= 0 {
		path = i + 3 + j
	}
	end := len(base)
	if q := strings.IndexByte(base, '?'); q >= 0 {
		end = q
	}
	if d := strings.LastIndexByte(base[:end], '/'); d >= path {
		end = d + 1
	}
	return [numScopes]string{scopeAbsolute: "", scopeNetwork: base[:i+1], scopePath: base[:path], scopeBase: base, scopeRelative: base[:end]}
}

// scopeKind classifies href for resolution against a normal URL base (an
// unusable base gives every kind the same scope).
func scopeKind(href string) int {
	switch {
	case hasScheme(href):
		return scopeAbsolute
	case strings.HasPrefix(href, "//"):
		if len(href) == 2 || href[2] == '/' || href[2] == '?' || href[2] == '#' {
			// An empty authority: url.Parse leaves no host, and the
			// reference resolves as a path or query would, against the
			// base's host; the whole base is a scope that holds.
			return scopeBase
		}
		return scopeNetwork
	case strings.HasPrefix(href, "/"):
		return scopePath
	case href == "" || href[0] == '?' || href[0] == '#':
		return scopeBase
	}
	return scopeRelative
}

// hasScheme reports whether href starts with a URL scheme and a colon
// (RFC 3986 §3.1), as url.Parse reads it.
func hasScheme(href string) bool {
	colon := strings.IndexByte(href, ':') // none in most relative references
	if colon <= 0 {
		return false
	}
	for i := 0; i < colon; i++ {
		switch c := href[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (r *Result) drop(reason string) {
	if r.Dropped == nil {
		r.Dropped = map[string]int{}
	}
	r.Dropped[reason]++
}
