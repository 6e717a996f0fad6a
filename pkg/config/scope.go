package config

import (
	"regexp"
	"strings"

	"github.com/wirecrawl/wire/pkg/urlnorm"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Scope says which URLs the seeder lets into the crawl.
type Scope struct {
	Domains           []string `toml:"domains" doc:"Domain suffixes in scope (e.g. cl or gob.cl); a host is in scope when it equals or ends with .suffix and has a registrable domain (public suffix list)."`
	Include           []string `toml:"include" doc:"Regular expressions (RE2) on the normalised URL; when any is given, a URL must match one of them to be in scope."`
	Exclude           []string `toml:"exclude" doc:"Regular expressions (RE2) on the normalised URL; a URL matching any of them is out of scope."`
	ExcludeExtensions []string `toml:"exclude_extensions" doc:"File extensions (without dot) whose URLs are never fetched."`
	SessionParams     []string `toml:"session_params" doc:"Query and path parameter names (case-insensitive) that carry session ids; the seeder removes them from every URL."`
	MaxURLLength      int      `toml:"max_url_length" doc:"URLs longer than this many bytes are rejected."`
	MaxPagesPerSite   int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site are taken into the crawl; 0 means no cap."`
}

func defaultScope() Scope {
	return Scope{
		Domains: []string{"cl"},
		Include: []string{},
		Exclude: []string{},
		ExcludeExtensions: []string{
			"jpg", "jpeg", "png", "gif", "bmp", "ico", "svg", "webp", "tif", "tiff",
			"zip", "gz", "tgz", "bz2", "xz", "rar", "7z", "tar", "iso", "exe", "dmg",
			"mp3", "mp4", "avi", "mov", "wmv", "flv", "mkv", "ogg", "wav", "webm",
			"css", "js", "woff", "woff2", "ttf",
		},
		SessionParams:   urlnorm.DefaultSessionParams(),
		MaxURLLength:    2048,
		MaxPagesPerSite: 25000,
	}
}

// validate reports the settings of the section that are out of range.
func (c *Scope) validate(bad func(key, format string, args ...any)) {
	if len(c.Domains) == 0 {
		bad("scope.domains", "at least one domain suffix is needed")
	}
	for _, d := range c.Domains {
		if d == "" || strings.ContainsAny(d, " /:") {
			bad("scope.domains", "invalid suffix %s", excerpt.Quote(d))
		}
	}
	for _, p := range c.Include {
		if _, err := regexp.Compile(p); err != nil {
			bad("scope.include", "invalid regular expression %s: %v", excerpt.Quote(p), err)
		}
	}
	for _, p := range c.Exclude {
		if _, err := regexp.Compile(p); err != nil {
			bad("scope.exclude", "invalid regular expression %s: %v", excerpt.Quote(p), err)
		}
	}
	for _, p := range c.SessionParams {
		if p == "" || strings.ContainsAny(p, "=&;/?# ") {
			bad("scope.session_params", "invalid parameter name %s", excerpt.Quote(p))
		}
	}
	if c.MaxURLLength < 16 {
		bad("scope.max_url_length", "must be at least 16, got %d", c.MaxURLLength)
	}
	if c.MaxPagesPerSite < 0 {
		bad("scope.max_pages_per_site", "must not be negative")
	}
}

// Normalizer returns the project's URL normaliser with this scope's
// limits (max_url_length, session_params): every stage that normalises
// URLs builds it here, so they all agree on one spelling per page.
func (c Scope) Normalizer() *urlnorm.Normalizer {
	return urlnorm.NewWithParams(c.MaxURLLength, c.SessionParams)
}
