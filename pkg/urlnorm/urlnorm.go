// Package urlnorm is the one URL normaliser of the project: every stage
// that compares, stores or schedules URLs passes them through it, so that
// one page has one spelling and therefore one id.
//
// URLs are parsed, and links resolved, as browsers do: by the WHATWG URL
// Standard's basic URL parser (github.com/nlnwa/whatwg-url), which strips
// tabs, newlines and surrounding C0 controls and spaces, reads a
// backslash as a slash, parses IPv4 addresses in their number forms
// ("http://999999999" is 59.154.201.255) and IPv6 addresses, maps host
// names through UTS #46 (IDNA) and removes dot segments. The crawler's
// own rules, each documented with examples in docs/urlnorm.md, then apply
// on top (RFC 3986 §6.2.2 and §6.2.3):
//
//   - only http and https are accepted
//   - a trailing dot of the host removed; the host must be a DNS name
//     (letters, digits, hyphens, underscores) or an IP address
//   - user information removed; port 0 rejected
//   - an empty path becomes "/"
//   - percent-encoding normalised: unreserved characters decoded, the
//     other escapes upper-cased, characters outside RFC 3986 escaped
//   - the fragment dropped; an empty query dropped
//   - configured session-id parameters removed from the query and from
//     the path parameters (";jsessionid=…")
package urlnorm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	weberrors "github.com/nlnwa/whatwg-url/errors"
	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/publicsuffix"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Reason says why a URL was rejected; the seeder counts rejections by it.
type Reason string

// The reasons a URL can be rejected.
const (
	ReasonUnparsable Reason = "unparsable"
	ReasonScheme     Reason = "scheme"
	ReasonTooLong    Reason = "too-long"
	ReasonNoHost     Reason = "no-host"
	ReasonBadHost    Reason = "bad-host"
	ReasonBadPort    Reason = "bad-port"
)

// Error is a rejected URL with the reason.
type Error struct {
	URL    string
	Reason Reason
	Err    error
}

func (e *Error) Error() string {
	u := excerpt.Quote(e.URL)
	if e.Err != nil {
		return fmt.Sprintf("url %s: %s: %v", u, e.Reason, e.Err)
	}
	return fmt.Sprintf("url %s: %s", u, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the rejection reason of err, or "" if err is not a
// *Error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// defaultSessionParams are query parameters that carry session ids.
var defaultSessionParams = []string{"jsessionid", "phpsessid", "sid", "sessionid", "session_id", "aspsessionid", "cfid", "cftoken"}

// DefaultSessionParams returns the query parameter names that New removes
// (a fresh copy): the default of scope.session_params.
func DefaultSessionParams() []string { return append([]string(nil), defaultSessionParams...) }

// DefaultMaxLength is the default longest URL accepted, in bytes.
const DefaultMaxLength = 2048

// Normalizer normalises URLs. The zero value uses DefaultMaxLength and
// removes no session parameters; use New for the defaults.
type Normalizer struct {
	// MaxLength rejects longer URLs (before and after normalising);
	// 0 means DefaultMaxLength.
	MaxLength int
	// SessionParams are query parameter names (case-insensitive) removed
	// from every URL.
	SessionParams []string
}

// New returns a normaliser with the default session parameters.
func New(maxLength int) *Normalizer {
	return &Normalizer{MaxLength: maxLength, SessionParams: DefaultSessionParams()}
}

// NewWithParams returns a normaliser that removes the given session
// parameters (scope.session_params; none if the list is empty).
func NewWithParams(maxLength int, sessionParams []string) *Normalizer {
	return &Normalizer{MaxLength: maxLength, SessionParams: append([]string(nil), sessionParams...)}
}

// webParser is the WHATWG URL parser with the Standard's options; it
// holds no state between calls.
var webParser = whatwg.NewParser()

// Normalize returns the normal form of an absolute http or https URL.
func (n *Normalizer) Normalize(raw string) (string, error) {
	if n.isNormal(raw) {
		return raw, nil // the common case: a link the gatherer already normalised
	}
	if s, ok := n.nearlyNormal(raw); ok {
		return s, nil
	}
	return n.normalizeFull(raw)
}

// normalizeFull is Normalize by parsing: the full path.
func (n *Normalizer) normalizeFull(raw string) (string, error) {
	return n.resolveWeb("", raw)
}

// Resolve resolves ref against base (an absolute URL, such as a page's
// final URL or its <base href>) as a browser does, and normalises the
// result. An empty base (the zero url.URL) resolves ref alone.
func (n *Normalizer) Resolve(base *url.URL, ref string) (string, error) {
	bs := base.String()
	if s, ok := n.resolveFast(bs, ref); ok {
		return s, nil
	}
	return n.resolveWeb(bs, ref)
}

// ResolveString is Resolve with the base as a string: any absolute URL,
// parsed as a browser parses it ("" for none).
func (n *Normalizer) ResolveString(base, ref string) (string, error) {
	if s, ok := n.resolveFast(base, ref); ok {
		return s, nil
	}
	return n.resolveWeb(base, ref)
}

// ResolveNormal is Resolve for a caller that also holds the base's normal
// form baseStr (the normalised string base was parsed from), which spares
// formatting it: a simple reference against it is resolved by string
// operations alone. A baseStr that is not in normal form only costs the
// fast path; an empty one means base.String().
func (n *Normalizer) ResolveNormal(base *url.URL, baseStr, ref string) (string, error) {
	if baseStr == "" {
		baseStr = base.String()
	}
	if s, ok := n.resolveFast(baseStr, ref); ok {
		return s, nil
	}
	return n.resolveWeb(baseStr, ref)
}

// Base is a base URL prepared for resolving many references against it
// (the links of one page): whether its normal form is normal, and where
// its path and directory end, are found once (Prepare) rather than for
// every reference. ResolveBase gives what ResolveNormal gives.
type Base struct {
	str    string // the base's normal form, or base.String()
	normal bool   // str passed isNormal: the fast path may join against it
	fast   fastBase
}

// Prepare returns base (baseStr its normal form, as for ResolveNormal)
// prepared for ResolveBase.
func (n *Normalizer) Prepare(base *url.URL, baseStr string) *Base {
	if baseStr == "" {
		baseStr = base.String()
	}
	b := &Base{str: baseStr, normal: n.isNormal(baseStr)}
	if b.normal {
		b.fast = newFastBase(baseStr)
	}
	return b
}

// ResolveBase is ResolveNormal against a prepared base.
func (n *Normalizer) ResolveBase(b *Base, ref string) (string, error) {
	if n.isNormal(ref) {
		return ref, nil
	}
	if b.normal {
		if s, ok := n.joinFast(&b.fast, ref); ok {
			return s, nil
		}
	}
	return n.resolveWeb(b.str, ref)
}

// fastBase is a base in normal form (isNormal) cut where resolveFast's
// joins need it.
type fastBase struct {
	s      string // scheme://authority/path[?query], the path never empty
	origin int    // where the path starts
	path   string // s without its query
	dir    string // path up to and with its last "/"
}

// newFastBase cuts s, a URL that passed isNormal.
func newFastBase(s string) fastBase {
	origin := strings.Index(s, "://") + 3
	origin += strings.IndexByte(s[origin:], '/')
	path, _, _ := strings.Cut(s, "?")
	return fastBase{s: s, origin: origin, path: path, dir: path[:strings.LastIndexByte(path, '/')+1]}
}

// resolveFast resolves, without parsing, the common references: an
// absolute URL already in normal form, or a relative path (and query) of
// characters that need no escaping, or escapes, and no colon, against a
// base in normal form.
// Dot segments of the joined path are removed; the result must then pass
// isNormal (no session parameter, ...); anything else reports false and
// takes resolveWeb
// (FuzzResolveFast checks that both agree).
func (n *Normalizer) resolveFast(base, ref string) (string, bool) {
	if n.isNormal(ref) {
		return ref, true
	}
	if !n.isNormal(base) {
		return "", false
	}
	b := newFastBase(base)
	return n.joinFast(&b, ref)
}

// joinFast is resolveFast for a relative reference (one that is not
// normal on its own) against a base in normal form.
//
// Only the reference is checked: the result's scheme, host, port and the
// part of its path that comes from the base passed isNormal(base), and
// what isNormal checks is local to each part. Escapes cannot straddle
// the joint (the base's part ends with "/"), the query is the
// reference's own, dot segments are resolved here (none is left), and
// the base's path has no ";" when session parameters are removed. So
// the result is normal when the reference's path and query are
// (normalRef), as isNormal(s) would find by reading it all.
func (n *Normalizer) joinFast(b *fastBase, ref string) (string, bool) {
	if ref == "" {
		return b.s, true
	}
	if strings.HasPrefix(ref, "//") || strings.IndexByte(ref, ':') >= 0 {
		// A network-path reference (another host); a colon could make
		// the reference absolute.
		return "", false
	}
	if !n.normalRef(ref) {
		return "", false
	}
	origin := b.origin
	var s string
	switch ref[0] {
	case '/':
		s = b.s[:origin] + ref
	case '?':
		s = b.path + ref
	default:
		s = b.dir + ref
	}
	if path, query, hasQuery := strings.Cut(s[origin:], "?"); strings.Contains(path, "/.") {
		// Dot segments ("../x", "./x") resolved as the full path does:
		// the base has none, and the reference's are plain dots (an
		// escaped dot fails normalRef).
		s = s[:origin] + removeDotSegments(path)
		if hasQuery {
			s += "?" + query
		}
	}
	if len(s) > n.maxLen() || len(s) <= origin || s[origin] != '/' {
		return "", false
	}
	return s, true
}

// normalRef is normalPathQuery for the path (possibly empty, or
// relative) and query of a reference: what isNormal checks of them,
// but for dot segments, which joinFast resolves.
func (n *Normalizer) normalRef(ref string) bool {
	path, query, hasQuery := strings.Cut(ref, "?")
	if hasQuery && query == "" {
		return false
	}
	if !normalEscaped(path, false) || (hasQuery && !normalEscaped(query, true)) {
		return false
	}
	if len(n.SessionParams) > 0 {
		if strings.IndexByte(path, ';') >= 0 {
			return false
		}
		for q := query; hasQuery && q != ""; {
			var param string
			param, q, _ = strings.Cut(q, "&")
			name, _, _ := strings.Cut(param, "=")
			if n.isSessionParam(name) {
				return false
			}
		}
	}
	return true
}

// resolveWeb resolves ref against base (an absolute URL, or "" for none)
// with the WHATWG URL parser, then applies the crawler's rules
// (normalizeWeb). A base the parser rejects counts as none.
func (n *Normalizer) resolveWeb(base, ref string) (string, error) {
	if len(ref) > n.maxLen()*3 {
		return "", &Error{URL: ref, Reason: ReasonTooLong}
	}
	var b *whatwg.Url
	if base != "" {
		b, _ = webParser.Parse(base)
	}
	u, err := webParser.BasicParser(ref, b, nil, whatwg.NoState)
	if err != nil {
		return "", &Error{URL: ref, Reason: webReason(err), Err: err}
	}
	return n.normalizeWeb(ref, u)
}

// webReason maps a failure of the WHATWG parser to a rejection reason.
func webReason(err error) Reason {
	switch weberrors.Type(err) {
	case weberrors.MissingSchemeNonRelativeURL:
		return ReasonScheme
	case weberrors.HostMissing:
		return ReasonNoHost
	case weberrors.PortOutOfRange, weberrors.PortInvalid:
		return ReasonBadPort
	}
	return ReasonUnparsable
}

// Parse normalises raw and returns it parsed.
func (n *Normalizer) Parse(raw string) (*url.URL, error) {
	s, err := n.Normalize(raw)
	if err != nil {
		return nil, err
	}
	return url.Parse(s)
}

func (n *Normalizer) maxLen() int {
	if n.MaxLength > 0 {
		return n.MaxLength
	}
	return DefaultMaxLength
}

// normalizeWeb applies the crawler's rules to a URL the WHATWG parser
// produced from raw: http or https only, a DNS name or IP address as
// host, no user information, no fragment, no port 0, percent-encoding
// normalised, session parameters removed.
func (n *Normalizer) normalizeWeb(raw string, u *whatwg.Url) (string, error) {
	scheme := u.Scheme()
	if scheme != "http" && scheme != "https" {
		return "", &Error{URL: raw, Reason: ReasonScheme}
	}
	host := u.Hostname()
	if !u.IsIPv4() && !u.IsIPv6() {
		host = strings.TrimSuffix(host, ".")
		if err := dnsName(host); err != nil {
			if host == "" {
				return "", &Error{URL: raw, Reason: ReasonNoHost}
			}
			return "", &Error{URL: raw, Reason: ReasonBadHost, Err: err}
		}
	}
	port := u.Port() // the parser removed a default port
	if port == "0" {
		return "", &Error{URL: raw, Reason: ReasonBadPort}
	}
	var b strings.Builder
	b.Grow(len(raw) + 16)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	p := removeDotSegments(n.stripPathSessions(normalizePercent(u.Pathname(), false)))
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	b.WriteString(p)
	if q := n.normalizeQuery(u.Query()); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	s := b.String()
	if len(s) > n.maxLen() {
		return "", &Error{URL: raw, Reason: ReasonTooLong}
	}
	return s, nil
}

// dnsName checks the crawler's rule for a host name the WHATWG parser
// accepted (already mapped by UTS #46 and in punycode): a name DNS can
// look up, of letters, digits, hyphens and underscores, no empty label,
// at most 253 bytes. Browsers also accept names such as "a*b" or
// "a$b", which no resolver finds.
func dnsName(h string) error {
	if h == "" {
		return fmt.Errorf("empty host name")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name longer than 253 bytes")
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("character %q not allowed in host name", c)
		}
	}
	if strings.Contains(h, "..") || h[0] == '.' || h[len(h)-1] == '.' {
		return fmt.Errorf("empty label in host name")
	}
	return nil
}

// isNormal tells, without parsing or allocating, whether raw is already
// in normal form, for the common shape of URL: http or https, a plain
// lower-case host name, an optional non-default port, a path and query of
// characters that need no escaping (escapes upper-case and of reserved
// characters only), no dot segment, no fragment, no empty query and no
// session parameter. Anything else takes the full path (FuzzIsNormal
// checks that both agree).
func (n *Normalizer) isNormal(raw string) bool {
	var rest string
	var https bool
	switch {
	case strings.HasPrefix(raw, "http://"):
		rest = raw[len("http://"):]
	case strings.HasPrefix(raw, "https://"):
		rest, https = raw[len("https://"):], true
	default:
		return false
	}
	if len(raw) > n.maxLen() {
		return false
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return false
	}
	host, port, hasPort := strings.Cut(rest[:slash], ":")
	if !plainHost(host) {
		return false // upper case, IDN, IP literals, odd names: the full path
	}
	if hasPort {
		if len(port) == 0 || len(port) > 5 || port[0] == '0' {
			return false
		}
		p := 0
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return false
			}
			p = p*10 + int(port[i]-'0')
		}
		if p > 65535 || (!https && p == 80) || (https && p == 443) {
			return false
		}
	}
	return n.normalPathQuery(rest[slash:])
}

// normalPathQuery is the part of isNormal after the host and port: the
// path (starting with "/") and the query of a URL whose scheme, host and
// port are in normal form.
func (n *Normalizer) normalPathQuery(pathAndQuery string) bool {
	path, _, _ := strings.Cut(pathAndQuery, "?")
	if strings.Contains(path, "/./") || strings.Contains(path, "/../") || strings.HasSuffix(path, "/.") || strings.HasSuffix(path, "/..") {
		return false
	}
	return n.normalRef(pathAndQuery)
}

// nearlyNormal normalises, without parsing, a URL that is normal but for
// a fragment or for upper case in its scheme and host name (ASCII only),
// two common spellings of links; ok is false for anything else, which
// takes the full path (FuzzNearlyNormal checks that both agree). The
// fragment must be one that url.Parse accepts: every % followed by two
// hex digits.
func (n *Normalizer) nearlyNormal(raw string) (string, bool) {
	if len(raw) > n.maxLen()*3 {
		return "", false // the full path rejects it as too long
	}
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		if !wellEscaped(raw[i+1:]) {
			return "", false
		}
		if raw = raw[:i]; n.isNormal(raw) {
			return raw, true
		}
	}
	// The scheme and the authority: up to the first / after "://".
	scheme := strings.Index(raw, "://")
	if scheme != len("http") && scheme != len("https") {
		return "", false
	}
	slash := strings.IndexByte(raw[scheme+3:], '/')
	if slash < 0 {
		return "", false
	}
	head := raw[:scheme+3+slash]
	upper := false
	for i := 0; i < len(head); i++ {
		switch c := head[i]; {
		case c >= 0x80:
			return "", false // the full path's IDNA mapping
		case c >= 'A' && c <= 'Z':
			upper = true
		}
	}
	if !upper {
		return "", false
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(head); i++ {
		c := head[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	copy(b[len(head):], raw[len(head):])
	if s := string(b); n.isNormal(s) {
		return s, true
	}
	return "", false
}

// wellEscaped tells whether every % of s is followed by two hex digits.
func wellEscaped(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		s = s[i+3:]
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// plainHost tells whether h is a host name that the full path leaves
// unchanged: lower-case letters, digits and hyphens in labels that are
// not empty, do not start or end with a hyphen and have no hyphens in
// their third and fourth places (as the "xn--" of punycode, which UTS #46
// checks), at most 253 bytes, and a last label that is not a number (all
// digits, or "0x" and hex digits), which the WHATWG parser would read as
// an IPv4 address. One pass, no allocation, for isNormal
// (FuzzPlainHost checks it against the full path).
func plainHost(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			label := h[start:i]
			if len(label) == 0 || label[0] == '-' || label[len(label)-1] == '-' || (len(label) >= 4 && label[2] == '-' && label[3] == '-') {
				return false
			}
			start = i + 1
			continue
		}
		switch c := h[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c == '-':
		default:
			return false
		}
	}
	return !numeric(h[strings.LastIndexByte(h, '.')+1:])
}

// numeric tells whether a label may be a number for the WHATWG IPv4
// parser ("ends in a number"): digits only, or "0x" followed by hex
// digits only (lower case: plainHost has no upper case). It also says
// yes to digits with hyphens ("0-0"): the library parses numbers with
// strconv.ParseInt, which takes a sign, so it reads "0-0" as the number
// 0 where browsers see a name (docs/urlnorm.md); such hosts take the
// full path, which gives the library's answer. So does a label that
// starts with a digit and 16 or more digits or hex letters
// ("20000000000000000000a"): strconv.ParseInt reports such a number out
// of range before it sees a letter, and the library takes out of range
// for a number.
func numeric(label string) bool {
	if label != "" && label[0] >= '0' && label[0] <= '9' {
		i := 0
		for i < len(label) && (label[i] >= '0' && label[i] <= '9' || label[i] >= 'a' && label[i] <= 'f' || label[i] == 'x') {
			i++
		}
		if i >= 16 {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef-") == ""
	}
	return strings.Trim(label, "0123456789-") == ""
}

// normalEscaped tells whether normalizePercent would leave s unchanged.
func normalEscaped(s string, query bool) bool {
	var bit byte = inPath
	if query {
		bit = inQuery
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if allowedIn[c]&bit != 0 {
			continue // most bytes
		}
		if c == '%' {
			if i+2 >= len(s) {
				return false
			}
			hi, lo := s[i+1], s[i+2]
			if !isUpperHex(hi) || !isUpperHex(lo) {
				return false
			}
			h, _ := unhex(hi)
			l, _ := unhex(lo)
			if isUnreserved(h<<4 | l) {
				return false
			}
			i += 2
			continue
		}
		return false // a byte to escape
	}
	return true
}

func isUpperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func (n *Normalizer) normalizeQuery(q string) string {
	if q == "" {
		return ""
	}
	q = normalizePercent(q, true)
	if len(n.SessionParams) == 0 {
		return q
	}
	parts := strings.Split(q, "&")
	kept := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		if n.isSessionParam(name) {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}

// stripPathSessions removes session parameters written as path
// parameters (RFC 3986 §3.3), as Java servers do:
// "/a.jsp;jsessionid=0AF3?x=1" → "/a.jsp?x=1". A parameter runs from its
// ';' to the next ';' or '/'.
func (n *Normalizer) stripPathSessions(p string) string {
	if len(n.SessionParams) == 0 || !strings.Contains(p, ";") {
		return p
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(p, ';')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i])
		rest := p[i+1:]
		end := strings.IndexAny(rest, ";/")
		if end < 0 {
			end = len(rest)
		}
		name, _, _ := strings.Cut(rest[:end], "=")
		if !n.isSessionParam(name) {
			b.WriteString(p[i : i+1+end])
		}
		p = rest[end:]
	}
}

func (n *Normalizer) isSessionParam(name string) bool {
	for _, s := range n.SessionParams {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

const upperhex = "0123456789ABCDEF"

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// allowed reports whether c may stand unescaped in a path (or a query):
// the unreserved characters, the sub-delimiters and ":", "@" and "/"
// (RFC 3986 §3.3), and "?" in a query. In a query the apostrophe is
// escaped, as browsers escape it in the query of an http(s) URL (the
// WHATWG special-query percent-encode set).
func allowed(c byte, query bool) bool {
	if query {
		return allowedIn[c]&inQuery != 0
	}
	return allowedIn[c]&inPath != 0
}

// allowedIn has, for each byte, inPath if allowed(c, false) and inQuery
// if allowed(c, true): one look-up a byte for normalEscaped
// (TestAllowed checks it against the character classes).
const allowedIn = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x03\x00\x00\x03\x00\x03\x01\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x00\x03\x00\x02" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x00\x00\x00\x00\x03" +
	"\x00\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x00\x00\x00\x03\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// Bits of allowedIn.
const (
	inPath  = 1
	inQuery = 2
)

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normalizePercent decodes escapes of unreserved characters, upper-cases
// the others, escapes a lone '%' and every character that must be escaped.
func normalizePercent(s string, query bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					d := hi<<4 | lo
					if isUnreserved(d) {
						b.WriteByte(d)
					} else {
						b.WriteByte('%')
						b.WriteByte(upperhex[d>>4])
						b.WriteByte(upperhex[d&15])
					}
					i += 2
					continue
				}
			}
			b.WriteString("%25")
			continue
		}
		if allowed(c, query) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperhex[c>>4])
		b.WriteByte(upperhex[c&15])
	}
	return b.String()
}

// removeDotSegments implements RFC 3986 §5.2.4 on an escaped path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// Host returns the host name (without port) of a normal URL, or "".
func Host(normalURL string) string {
	u, err := url.Parse(normalURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Registrable returns the registrable domain of a host name (its
// public suffix plus one label: "www.x.cl" and "m.x.cl" → "x.cl"), or
// the name itself when it has none (an IP literal, a public suffix).
// Host names of one registrable domain on one address are one server for
// the harvester's politeness.
func Registrable(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// SiteKey returns the site of a normal URL: its scheme, host and port as
// written in the URL ("http://www.x.cl", "https://a.cl:8443"). Pages of
// one site share robots.txt and politeness.
func SiteKey(normalURL string) string {
	i := strings.Index(normalURL, "://")
	if i < 0 {
		return ""
	}
	rest := normalURL[i+3:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		return normalURL[:i+3+j] // a substring: no allocation
	}
	return normalURL
}

// IsDynamic tells whether a normal URL has a query (a dynamic page in the
// papers' sense).
func IsDynamic(normalURL string) bool { return strings.Contains(normalURL, "?") }
