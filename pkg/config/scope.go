package config

import (
	"strings"
)

// Scope says which URLs the seeder lets into the crawl.
type Scope struct {
	Domains           []string `toml:"domains" doc:"Domain suffixes in scope (e.g. cl or gob.cl); a host is in scope when it equals or ends with .suffix."`
	ExcludeExtensions []string `toml:"exclude_extensions" doc:"File extensions (without dot) whose URLs are never fetched."`
	MaxURLLength      int      `toml:"max_url_length" doc:"URLs longer than this many bytes are rejected."`
	MaxPagesPerSite   int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site are taken into the crawl; 0 means no cap."`
}

func defaultScope() Scope {
	return Scope{
		Domains: []string{"cl"},
		ExcludeExtensions: []string{
			"jpg", "jpeg", "png", "gif", "bmp", "ico", "svg", "webp", "tif", "tiff",
			"zip", "gz", "tgz", "bz2", "xz", "rar", "7z", "tar", "iso", "exe", "dmg",
			"mp3", "mp4", "avi", "mov", "wmv", "flv", "mkv", "ogg", "wav", "webm",
			"css", "js", "woff", "woff2", "ttf",
		},
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
			bad("scope.domains", "invalid suffix %q", d)
		}
	}
	if c.MaxURLLength < 16 {
		bad("scope.max_url_length", "must be at least 16, got %d", c.MaxURLLength)
	}
	if c.MaxPagesPerSite < 0 {
		bad("scope.max_pages_per_site", "must not be negative")
	}
}
