package config

import (
	"strings"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Crawl identifies the crawler to the servers it visits.
type Crawl struct {
	UserAgent    string `toml:"user_agent" doc:"User-Agent header sent with every request; give a contact URL."`
	ProductToken string `toml:"product_token" doc:"Product token matched against robots.txt User-agent lines."`
}

func defaultCrawl() Crawl {
	return Crawl{
		UserAgent:    "wirebot/0.1 (+https://example.org/wirebot.html)",
		ProductToken: "wirebot",
	}
}

// validate reports the settings of the section that are out of range.
func (c *Crawl) validate(bad func(key, format string, args ...any)) {
	if strings.TrimSpace(c.UserAgent) == "" {
		bad("crawl.user_agent", "must not be empty")
	}
	if strings.ContainsAny(c.UserAgent, "\r\n") {
		bad("crawl.user_agent", "must be one line")
	}
	if c.ProductToken == "" || strings.ContainsAny(c.ProductToken, " \t/\r\n") {
		bad("crawl.product_token", "must be one word without '/', got %s", excerpt.Quote(c.ProductToken))
	}
}
