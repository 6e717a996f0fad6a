// Package scope decides which normalised URLs belong to a crawl: hosts
// under the configured domain suffixes with a registrable domain (public
// suffix list), no IP addresses, no excluded file extensions, no overlong
// URLs, and the include and exclude patterns. The rules are those of the
// [scope] section of the config (docs/seeder.md, "Scope").
package scope

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Reason says why a URL is out of the crawl; the seeder counts rejections
// by it, next to the urlnorm reasons.
type Reason string

// The reasons Check gives.
const (
	// ReasonScheme: the URL is not http or https.
	ReasonScheme Reason = "scheme"
	// ReasonNoHost: the URL has no host.
	ReasonNoHost Reason = "no-host"
	// ReasonTooLong: the URL is longer than scope.max_url_length.
	ReasonTooLong Reason = "too-long"
	// ReasonIPHost: the host is an IP address, which belongs to no domain.
	ReasonIPHost Reason = "ip-host"
	// ReasonOutOfScope: the host is not under any scope.domains suffix, or
	// it has no registrable domain (a bare public suffix such as "gob.cl",
	// or a single label such as "localhost").
	ReasonOutOfScope Reason = "out-of-scope"
	// ReasonExtension: the last path segment ends with an excluded
	// extension (scope.exclude_extensions).
	ReasonExtension Reason = "extension"
	// ReasonExcluded: the URL matches a pattern of scope.exclude.
	ReasonExcluded Reason = "excluded"
	// ReasonNotIncluded: scope.include has patterns and the URL matches
	// none of them.
	ReasonNotIncluded Reason = "not-included"
)

// Error is a URL that Check keeps out, with the reason.
type Error struct {
	URL    string
	Reason Reason
	Detail string // optional, e.g. the extension or the host
}

func (e *Error) Error() string {
	u := excerpt.Quote(e.URL)
	if e.Detail != "" {
		return fmt.Sprintf("url %s: %s: %s", u, e.Reason, e.Detail)
	}
	return fmt.Sprintf("url %s: %s", u, e.Reason)
}

// Scope is the compiled [scope] configuration. It is safe for concurrent
// use.
type Scope struct {
	domains    []string
	extensions map[string]bool
	maxLength  int
	include    []*regexp.Regexp
	exclude    []*regexp.Regexp

	mu    sync.Mutex
	hosts map[string]hostVerdict // cache of checkHost
}

// MustNew compiles scope settings that are known to be valid: those of a
// config that config.Load, config.Parse or Config.Validate accepted (they
// reject bad patterns), or fixed ones in a test. It panics on a pattern
// that does not compile; settings not checked go through Compile.
func MustNew(cfg config.Scope) *Scope {
	s, err := Compile(cfg)
	if err != nil {
		panic(err)
	}
	return s
}

// Compile compiles the scope settings. Suffixes and extensions are
// compared case-insensitively; leading dots are ignored. It fails on an
// include or exclude pattern that is not a valid regular expression.
func Compile(cfg config.Scope) (*Scope, error) {
	s := &Scope{extensions: map[string]bool{}, maxLength: cfg.MaxURLLength, hosts: map[string]hostVerdict{}}
	for _, p := range cfg.Include {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("scope.include %q: %w", p, err)
		}
		s.include = append(s.include, re)
	}
	for _, p := range cfg.Exclude {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("scope.exclude %q: %w", p, err)
		}
		s.exclude = append(s.exclude, re)
	}
	for _, d := range cfg.Domains {
		d = strings.Trim(strings.ToLower(strings.TrimSpace(d)), ".")
		if d != "" {
			s.domains = append(s.domains, d)
		}
	}
	for _, e := range cfg.ExcludeExtensions {
		e = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(e)), ".")
		if e != "" {
			s.extensions[e] = true
		}
	}
	return s, nil
}

// Check returns nil if the normalised URL belongs to the crawl, or an
// *Error with the reason it does not. The rules, in the order applied:
//
//  1. at most scope.max_url_length bytes (0 means no limit here);
//  2. scheme http or https, with a host;
//  3. the host is not an IP address;
//  4. the host equals a suffix of scope.domains or ends with "."+suffix
//     (matched on whole labels: "notcl" is not under "cl");
//  5. the host has a registrable domain (publicsuffix eTLD+1): a bare
//     public suffix or a single label is not a site of the crawl;
//  6. the last path segment has no excluded extension (case-insensitive;
//     the query does not count);
//  7. the URL matches no scope.exclude pattern;
//  8. if scope.include has patterns, the URL matches one of them.
//
// Patterns are unanchored regular expressions (RE2) on the whole normal
// URL: "^https?://[^/]*\.uchile\.cl/" or "/calendar/".
func (s *Scope) Check(normalURL string) error {
	if s.maxLength > 0 && len(normalURL) > s.maxLength {
		return &Error{URL: normalURL, Reason: ReasonTooLong, Detail: fmt.Sprintf("%d bytes, limit %d", len(normalURL), s.maxLength)}
	}
	scheme, host, path, ok := split(normalURL)
	if err := s.checkSiteParts(normalURL, scheme, host, ok); err != nil {
		return err
	}
	return s.checkPath(normalURL, path)
}

// CheckSite applies the rules of Check that depend only on the site key
// ("scheme://host[:port]", urlnorm.SiteKey) of a normal URL: rules 2 to
// 5. A caller that resolves many URLs of few sites checks each site once
// and each URL with CheckInSite.
func (s *Scope) CheckSite(siteKey string) error {
	scheme, host, _, ok := split(siteKey)
	return s.checkSiteParts(siteKey, scheme, host, ok)
}

// checkSiteParts applies rules 2 to 5 to the parts split found in u.
func (s *Scope) checkSiteParts(u, scheme, host string, ok bool) error {
	if !ok || (scheme != "http" && scheme != "https") {
		return &Error{URL: u, Reason: ReasonScheme}
	}
	if host == "" {
		return &Error{URL: u, Reason: ReasonNoHost}
	}
	if v := s.checkHost(host); v.reason != "" {
		return &Error{URL: u, Reason: v.reason, Detail: v.detail}
	}
	return nil
}

// CheckInSite is Check for a normal URL whose first siteKeyLen bytes are
// its site key, given what CheckSite said of that key (siteErr): the
// same verdict, from the same rules in the same order, without the
// host's.
func (s *Scope) CheckInSite(normalURL string, siteKeyLen int, siteErr error) error {
	if s.maxLength > 0 && len(normalURL) > s.maxLength {
		return &Error{URL: normalURL, Reason: ReasonTooLong, Detail: fmt.Sprintf("%d bytes, limit %d", len(normalURL), s.maxLength)}
	}
	if siteErr != nil {
		var e *Error
		if errors.As(siteErr, &e) {
			return &Error{URL: normalURL, Reason: e.Reason, Detail: e.Detail}
		}
		return siteErr
	}
	return s.checkPath(normalURL, trimQuery(normalURL[siteKeyLen:]))
}

// checkPath applies rules 6 to 8 to a normal URL and its path (without
// query).
func (s *Scope) checkPath(normalURL, path string) error {
	if ext := extension(path); ext != "" && s.extensions[ext] {
		return &Error{URL: normalURL, Reason: ReasonExtension, Detail: ext}
	}
	for _, re := range s.exclude {
		if re.MatchString(normalURL) {
			return &Error{URL: normalURL, Reason: ReasonExcluded, Detail: "matches " + re.String()}
		}
	}
	if len(s.include) == 0 {
		return nil
	}
	for _, re := range s.include {
		if re.MatchString(normalURL) {
			return nil
		}
	}
	return &Error{URL: normalURL, Reason: ReasonNotIncluded}
}

// hostVerdict is the outcome of rules 3 to 5 for one host.
type hostVerdict struct {
	reason Reason // "" when the host is in scope
	detail string
}

// hostCacheSize bounds the host verdicts a Scope remembers; the cache is
// emptied when full. Links of a batch name far fewer hosts than URLs, so
// most checks skip the public suffix lookup.
const hostCacheSize = 1 << 16

// checkHost applies rules 3 to 5, remembering the verdict per host.
func (s *Scope) checkHost(host string) hostVerdict {
	s.mu.Lock()
	v, ok := s.hosts[host]
	s.mu.Unlock()
	if ok {
		return v
	}
	switch {
	case host[0] == '[' || net.ParseIP(host) != nil:
		v = hostVerdict{ReasonIPHost, host}
	case !s.inDomains(host):
		v = hostVerdict{ReasonOutOfScope, "host " + host + " is not under " + strings.Join(s.domains, ", ")}
	default:
		if _, err := publicsuffix.EffectiveTLDPlusOne(host); err != nil {
			v = hostVerdict{ReasonOutOfScope, "host " + host + " has no registrable domain"}
		}
	}
	s.mu.Lock()
	if len(s.hosts) >= hostCacheSize {
		clear(s.hosts)
	}
	s.hosts[host] = v
	s.mu.Unlock()
	return v
}

// inDomains matches host against the suffixes on label boundaries.
func (s *Scope) inDomains(host string) bool {
	for _, d := range s.domains {
		if host == d || (len(host) > len(d) && strings.HasSuffix(host, d) && host[len(host)-len(d)-1] == '.') {
			return true
		}
	}
	return false
}

// split cuts a URL into its lower-cased scheme, its lower-cased host
// (without user information, port or trailing dot) and its path (without
// query or fragment). It allocates only when it has to lower-case.
func split(u string) (scheme, host, path string, ok bool) {
	i := strings.Index(u, "://")
	if i <= 0 {
		return "", "", "", false
	}
	scheme = strings.ToLower(u[:i])
	rest := u[i+3:]
	authority := rest
	if end := indexPathStart(rest); end >= 0 {
		authority, path = rest[:end], rest[end:]
	}
	if j := strings.LastIndexByte(authority, '@'); j >= 0 {
		authority = authority[j+1:]
	}
	host = authority
	if strings.HasPrefix(host, "[") {
		// IPv6 literal: keep the bracket so that the caller sees an IP.
		return scheme, host, trimQuery(path), true
	}
	if j := strings.LastIndexByte(host, ':'); j >= 0 {
		host = host[:j]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return scheme, host, trimQuery(path), true
}

// indexPathStart returns the index of the first '/', '?' or '#' of s, or
// -1 (strings.IndexAny without its set, which costs more than the scan
// on short authorities).
func indexPathStart(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '?' || c == '#' {
			return i
		}
	}
	return -1
}

// trimQuery cuts a path at its query or fragment.
func trimQuery(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '?' || c == '#' {
			return p[:i]
		}
	}
	return p
}

// extension returns the lower-cased extension of the last segment of an
// escaped path ("/a/B.PDF" → "pdf", "/a.tar.gz" → "gz"), or "" if the
// segment has no dot or ends with one.
func extension(path string) string {
	seg := path
	if j := strings.LastIndexByte(seg, '/'); j >= 0 {
		seg = seg[j+1:]
	}
	// A ";param" (RFC 3986 §3.3) is not part of the name.
	if j := strings.IndexByte(seg, ';'); j >= 0 {
		seg = seg[:j]
	}
	j := strings.LastIndexByte(seg, '.')
	if j < 0 || j == len(seg)-1 {
		return ""
	}
	return strings.ToLower(seg[j+1:])
}

// ReasonOf returns the reason of a *Error, or "" for any other error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}
