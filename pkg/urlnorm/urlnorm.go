// Package urlnorm is the one URL normaliser of the project: every stage
// that compares, stores or schedules URLs passes them through it, so that
// one page has one spelling and therefore one id.
//
// The rules, each documented with examples in docs/urlnorm.md, follow
// RFC 3986 §6.2.2 (syntax-based normalisation) and §6.2.3 (scheme-based):
//
//   - scheme and host lower-cased; only http and https are accepted
//   - internationalised host names converted to punycode (IDNA lookup)
//   - a trailing dot of the host removed; default ports (80, 443) removed
//   - user information removed
//   - dot segments resolved (§5.2.4); an empty path becomes "/"
//   - percent-encoding normalised: unreserved characters decoded, the
//     other escapes upper-cased, characters that must be escaped escaped
//   - the fragment dropped; an empty query dropped
//   - configured session-id parameters removed from the query
package urlnorm

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
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
	u := e.URL
	if len(u) > 200 {
		u = u[:200] + "..."
	}
	if e.Err != nil {
		return fmt.Sprintf("url %q: %s: %v", u, e.Reason, e.Err)
	}
	return fmt.Sprintf("url %q: %s", u, e.Reason)
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

// DefaultSessionParams are query parameters that carry session ids.
var defaultSessionParams = []string{"jsessionid", "phpsessid", "sid", "sessionid", "session_id", "aspsessionid", "cfid", "cftoken"}

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
	return &Normalizer{MaxLength: maxLength, SessionParams: append([]string(nil), defaultSessionParams...)}
}

var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// Normalize returns the normal form of an absolute http or https URL.
func (n *Normalizer) Normalize(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > n.maxLen()*3 {
		return "", &Error{URL: raw, Reason: ReasonTooLong}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", &Error{URL: raw, Reason: ReasonUnparsable, Err: unwrapURLError(err)}
	}
	return n.normalizeURL(raw, u)
}

// Resolve resolves ref against base (an absolute, already normal URL, such
// as a page's final URL or its <base href>) and normalises the result.
func (n *Normalizer) Resolve(base *url.URL, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if len(ref) > n.maxLen()*3 {
		return "", &Error{URL: ref, Reason: ReasonTooLong}
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", &Error{URL: ref, Reason: ReasonUnparsable, Err: unwrapURLError(err)}
	}
	u := base.ResolveReference(r)
	return n.normalizeURL(ref, u)
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

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (n *Normalizer) normalizeURL(raw string, u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", &Error{URL: raw, Reason: ReasonScheme}
	}
	if u.Opaque != "" {
		return "", &Error{URL: raw, Reason: ReasonNoHost}
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return "", &Error{URL: raw, Reason: ReasonBadHost, Err: err}
	}
	if host == "" {
		return "", &Error{URL: raw, Reason: ReasonNoHost}
	}
	port := u.Port()
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p > 65535 {
			return "", &Error{URL: raw, Reason: ReasonBadPort}
		}
		port = strconv.Itoa(p)
		if (scheme == "http" && p == 80) || (scheme == "https" && p == 443) {
			port = ""
		}
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if strings.Contains(host, ":") {
		b.WriteString("[" + host + "]")
	} else {
		b.WriteString(host)
	}
	if port != "" {
		b.WriteString(":" + port)
	}
	p := removeDotSegments(normalizePercent(u.EscapedPath(), false))
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	b.WriteString(p)
	if q := n.normalizeQuery(u.RawQuery); q != "" {
		b.WriteString("?" + q)
	}
	s := b.String()
	if len(s) > n.maxLen() {
		return "", &Error{URL: raw, Reason: ReasonTooLong}
	}
	return s, nil
}

// normalizeHost lower-cases a host name and converts it to punycode; IP
// addresses are returned in their canonical form.
func normalizeHost(h string) (string, error) {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", nil
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	if strings.Contains(h, "%") {
		dec, err := url.PathUnescape(h)
		if err != nil {
			return "", fmt.Errorf("bad escape in host: %w", err)
		}
		h = dec
	}
	if !utf8.ValidString(h) {
		return "", fmt.Errorf("host name is not valid UTF-8")
	}
	a, err := profile.ToASCII(h)
	if err != nil {
		return "", err
	}
	a = strings.ToLower(a)
	// The punycode form must itself be a valid host name, so that
	// normalising twice gives the same result.
	if b, err := profile.ToASCII(a); err != nil || b != a {
		return "", fmt.Errorf("host name %q does not round-trip through IDNA", h)
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("character %q not allowed in host name", c)
		}
	}
	if strings.Contains(a, "..") || strings.HasPrefix(a, ".") || strings.HasSuffix(a, ".") {
		return "", fmt.Errorf("empty label in host name")
	}
	if len(a) > 253 {
		return "", fmt.Errorf("host name longer than 253 bytes")
	}
	return a, nil
}

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

// allowed reports whether c may stand unescaped in a path (or a query).
func allowed(c byte, query bool) bool {
	if isUnreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/':
		return true
	case '?':
		return query
	}
	return false
}

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
		rest = rest[:j]
	}
	return normalURL[:i+3] + rest
}

// IsDynamic tells whether a normal URL has a query (a dynamic page in the
// papers' sense).
func IsDynamic(normalURL string) bool { return strings.Contains(normalURL, "?") }
