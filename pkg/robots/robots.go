// Package robots decides what the crawler may fetch from a site under the
// Robots Exclusion Protocol (RFC 9309). It wraps the line parser of
// github.com/jimsmart/grobotstxt (a port of Google's reference parser,
// which the RFC follows) and adds what that library leaves to its caller:
// the meaning of each HTTP status of robots.txt (§2.3.1), the size cap
// (§2.5), the implicit permission of /robots.txt itself (§2.2.2), the
// percent-decoding of unreserved characters (§2.2.2), Crawl-delay, and a
// matcher built once per site instead of reparsing the file for every URL.
package robots

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jimsmart/grobotstxt"
)

// Path is the location of the file on every site (RFC 9309 §2.3).
const Path = "/robots.txt"

// MaxRedirects is how many consecutive redirects the harvester follows to
// reach a robots.txt (RFC 9309 §2.3.1.2: at least five).
const MaxRedirects = 5

// Mode says how a site's rules were decided.
type Mode int

// The modes, after the status of the robots.txt response (RFC 9309 §2.3.1).
const (
	// ModeRules: the file was fetched (2xx) and its rules apply.
	ModeRules Mode = iota
	// ModeAllowAll: the file is unavailable (4xx, or redirects exhausted),
	// so every path may be crawled (§2.3.1.3).
	ModeAllowAll
	// ModeDisallowAll: the server is unreachable (5xx, 429, network
	// error), so nothing may be crawled for now (§2.3.1.4).
	ModeDisallowAll
)

func (m Mode) String() string {
	switch m {
	case ModeRules:
		return "rules"
	case ModeAllowAll:
		return "allow-all"
	case ModeDisallowAll:
		return "disallow-all"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// rule is one Allow or Disallow line of the group that applies.
type rule struct {
	pattern string
	allow   bool
}

// Rules are the robots.txt rules of one site for one product token, parsed
// once. The zero value allows everything. Rules are safe for concurrent
// use once built.
type Rules struct {
	mode Mode
	// specific holds the rules of the groups naming the product token;
	// global those of the '*' groups. Groups naming the same agent are
	// merged, as RFC 9309 §2.2.1 requires.
	specific, global []rule
	// hasSpecific is true when some group named the product token: then
	// the '*' groups are ignored altogether.
	hasSpecific bool
	// delay is the Crawl-delay of the applicable groups (the largest if
	// several lines give one), or 0.
	delay time.Duration
	// status is the HTTP status the rules were derived from (0: none).
	status int
}

// AllowAll returns rules that allow every path.
func AllowAll() *Rules { return &Rules{mode: ModeAllowAll} }

// DisallowAll returns rules that forbid every path but /robots.txt.
func DisallowAll() *Rules { return &Rules{mode: ModeDisallowAll} }

// ForStatus returns the rules a robots.txt response implies (RFC 9309
// §2.3.1): 2xx parses body; 3xx (redirects exhausted) and 4xx mean the
// file is unavailable and allow everything; 5xx, 429 (Too Many Requests,
// treated as Google does) and status 0 (no response: DNS, connection or
// timeout) mean the server is unreachable and disallow everything. The
// body should already be clipped with Clip.
func ForStatus(status int, body []byte, token string) *Rules {
	var r *Rules
	switch {
	case status >= 200 && status < 300:
		r = Parse(body, token)
	case status == 429:
		r = DisallowAll()
	case status >= 300 && status < 500:
		r = AllowAll()
	default: // 0, 1xx that escaped the client, 5xx and anything above
		r = DisallowAll()
	}
	r.status = status
	return r
}

// ForFetch returns the rules of a robots.txt fetch as the harvester
// records it (a robots.jsonl line): a fetch that failed or was cut short
// (fetchErr not empty) is unreachable whatever status came with it,
// otherwise ForStatus decides. The seeder uses it to apply the same rules
// the harvester obeyed.
func ForFetch(status int, body, fetchErr, token string) *Rules {
	if fetchErr != "" {
		r := DisallowAll()
		r.status = status
		return r
	}
	return ForStatus(status, []byte(body), token)
}

// Clip caps a robots.txt body at max bytes (RFC 9309 §2.5 asks crawlers
// to parse at least 500 KiB). When the body was cut (truncated is true, or
// it is longer than max) the last, partial line is dropped too, so that a
// rule cut in its middle ("Disallow: /private" read as "Disallow: /p") is
// never applied.
func Clip(body []byte, max int64, truncated bool) []byte {
	if max > 0 && int64(len(body)) > max {
		body = body[:max]
		truncated = true
	}
	if truncated {
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i+1]
		}
	}
	return body
}

// Parse reads the rules of a robots.txt body (already clipped) that apply
// to the product token (RFC 9309 §2.2.1: matched case-insensitively
// against the token part of each User-agent line; groups naming it are
// merged; without any, the '*' groups apply). The parse follows Google's
// reference parser: a UTF-8 BOM is skipped, lines end at CR, LF or CRLF,
// common typos of Disallow are accepted, lines longer than 16 KiB are cut.
func Parse(body []byte, token string) *Rules {
	c := &collector{token: token}
	r := &Rules{mode: ModeRules}
	func() {
		// The library panics on a few impossible states; a hostile file
		// must never take the harvester down, so such a file is treated
		// as unreachable.
		defer func() {
			if p := recover(); p != nil {
				r = DisallowAll()
			}
		}()
		grobotstxt.Parse(string(body), c)
		r.specific, r.global, r.hasSpecific = c.specific, c.global, c.everSpecific
		if c.everSpecific {
			r.delay = c.delaySpecific
		} else {
			r.delay = c.delayGlobal
		}
	}()
	return r
}

// Mode tells how the rules were decided.
func (r *Rules) Mode() Mode {
	if r == nil {
		return ModeAllowAll
	}
	return r.mode
}

// Status is the HTTP status the rules came from (0 when built otherwise).
func (r *Rules) Status() int {
	if r == nil {
		return 0
	}
	return r.status
}

// CrawlDelay is the Crawl-delay given to the product token's group (or to
// '*' when no group names the token), or 0. Crawl-delay is not part of RFC
// 9309; the harvester caps it.
func (r *Rules) CrawlDelay() time.Duration {
	if r == nil {
		return 0
	}
	return r.delay
}

// Allowed tells whether the URL (absolute, or a path starting with '/')
// may be fetched. /robots.txt is always allowed (RFC 9309 §2.2.2). Rules
// are matched by longest match, Allow winning ties (§2.2.2), with '*' and
// a final '$' as special characters (§2.2.3). A URL that cannot be parsed
// is not allowed.
func (r *Rules) Allowed(rawURL string) bool {
	path, ok := matchPath(rawURL)
	if !ok {
		return false
	}
	if path == Path {
		return true
	}
	if r == nil {
		return true
	}
	switch r.mode {
	case ModeAllowAll:
		return true
	case ModeDisallowAll:
		return false
	}
	if a, d := best(r.specific, path); a > 0 || d > 0 {
		return a >= d
	}
	if r.hasSpecific {
		// A group names us but none of its rules match (or only empty
		// ones): allowed, and the '*' groups do not apply.
		return true
	}
	if a, d := best(r.global, path); a > 0 || d > 0 {
		return a >= d
	}
	return true
}

// best returns the priority (pattern length) of the longest matching
// Allow and Disallow among rules, -1 when none matches.
func best(rules []rule, path string) (allow, disallow int) {
	allow, disallow = -1, -1
	for _, ru := range rules {
		if !grobotstxt.Matches(path, ru.pattern) {
			continue
		}
		p := len(ru.pattern)
		if ru.allow {
			allow = max(allow, p)
		} else {
			disallow = max(disallow, p)
		}
	}
	return allow, disallow
}

// matchPath returns the path, parameters and query of a URL, as robots
// rules see them: starting with '/', percent-encoding normalised (escapes
// of unreserved characters decoded, others upper-cased, non-ASCII bytes
// escaped).
func matchPath(raw string) (string, bool) {
	if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", false
		}
		raw = u.EscapedPath()
		if u.RawQuery != "" || u.ForceQuery {
			raw += "?" + u.RawQuery
		}
		if raw == "" || raw[0] != '/' {
			raw = "/" + raw
		}
	} else if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	return normalizeEscapes(raw), true
}

// normalizeEscapes decodes %XX escapes of unreserved characters (RFC 3986
// §2.3), upper-cases the hex digits of the others and escapes bytes
// outside US-ASCII, as RFC 9309 §2.2.2 requires before comparing.
func normalizeEscapes(s string) string {
	if !strings.ContainsAny(s, "%") && isASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[d>>4])
				b.WriteByte(hex[d&15])
			}
			i += 2
		case c >= 0x80:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// collector receives the parser's callbacks and keeps the rules of the
// groups that apply to its token. Its group logic mirrors
// grobotstxt.RobotsMatcher (Google's reference): a User-agent line after
// a rule starts a new group; rules before any User-agent line are ignored.
type collector struct {
	token                      string
	inSpecific, inGlobal       bool
	seenRule                   bool
	everSpecific               bool
	specific, global           []rule
	delaySpecific, delayGlobal time.Duration
}

func (c *collector) HandleRobotsStart() {}
func (c *collector) HandleRobotsEnd()   {}

func (c *collector) HandleUserAgent(_ int, value string) {
	if c.seenRule {
		c.inSpecific, c.inGlobal, c.seenRule = false, false, false
	}
	// Google: '*' followed by a space and more text is still the global
	// agent.
	if len(value) >= 1 && value[0] == '*' && (len(value) == 1 || unicode.IsSpace(rune(value[1]))) {
		c.inGlobal = true
		return
	}
	if c.token != "" && strings.EqualFold(agentToken(value), c.token) {
		c.inSpecific, c.everSpecific = true, true
	}
}

// agentToken is the product token of a User-agent value: its leading run
// of token characters (RFC 9110 §5.6.2), e.g. "wirebot" of "wirebot/1.0".
func agentToken(v string) string {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("~#$%'*+-.^_`|", c) >= 0) {
			return v[:i]
		}
	}
	return v
}

func (c *collector) add(value string, allow bool) {
	if !c.inSpecific && !c.inGlobal {
		return
	}
	c.seenRule = true
	value = normalizeEscapes(value)
	rules := []rule{{pattern: value, allow: allow}}
	if allow {
		// Google: "Allow: /dir/index.htm[l]" also allows "/dir/".
		if i := strings.LastIndexByte(value, '/'); i >= 0 && strings.HasPrefix(value[i:], "/index.htm") {
			rules = append(rules, rule{pattern: value[:i+1] + "$", allow: true})
		}
	}
	if c.inSpecific {
		c.specific = append(c.specific, rules...)
	} else {
		c.global = append(c.global, rules...)
	}
}

func (c *collector) HandleAllow(_ int, value string)    { c.add(value, true) }
func (c *collector) HandleDisallow(_ int, value string) { c.add(value, false) }
func (c *collector) HandleSitemap(int, string)          {}

func (c *collector) HandleUnknownAction(_ int, action, value string) {
	if !strings.EqualFold(strings.TrimSpace(action), "crawl-delay") || (!c.inSpecific && !c.inGlobal) {
		return
	}
	d, ok := parseDelay(value)
	if !ok {
		return
	}
	if c.inSpecific {
		c.delaySpecific = max(c.delaySpecific, d)
	} else {
		c.delayGlobal = max(c.delayGlobal, d)
	}
}

// maxDelay bounds what parseDelay returns, so that a huge value cannot
// overflow; the harvester applies its own, much lower cap.
const maxDelay = 24 * time.Hour

// parseDelay reads a Crawl-delay value in seconds ("10", "0.5"); anything
// that is not a finite non-negative number is ignored.
func parseDelay(v string) (time.Duration, bool) {
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0, false
	}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil || math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		return 0, false
	}
	if s > maxDelay.Seconds() {
		return maxDelay, true
	}
	return time.Duration(s * float64(time.Second)), true
}

// Sitemaps returns the values of a robots.txt's Sitemap: lines, in file
// order, as written (sitemaps.org: absolute URLs, outside any group).
func Sitemaps(body string) []string {
	return grobotstxt.Sitemaps(body)
}
