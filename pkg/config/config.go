// Package config holds the crawl configuration shared by the four stages:
// its defaults, its strict TOML file, and the one loader that layers
// flags over environment variables over the file over the defaults.
//
// Every setting is a leaf field of Config with a `toml` tag (its key inside
// its section) and a `doc` tag (one sentence for users). From these tags the
// package derives the flag name (--section-key), the environment variable
// (WIRE_SECTION_KEY), the commented sample file and the reference in
// docs/config.md, so a setting is declared exactly once.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// FileName is the name of the config file inside a collection directory.
const FileName = "wire.toml"

// EnvPrefix starts the name of every environment variable the loader reads.
const EnvPrefix = "WIRE_"

// Config is the whole configuration of a crawl.
type Config struct {
	Crawl     Crawl     `toml:"crawl" doc:"Who the crawler is and what it crawls."`
	Scope     Scope     `toml:"scope" doc:"Which URLs belong to the crawl (applied by the seeder)."`
	Manager   Manager   `toml:"manager" doc:"Long-term scheduling: the value function and the batch limits."`
	Harvester Harvester `toml:"harvester" doc:"Short-term scheduling and network transfer."`
	Gatherer  Gatherer  `toml:"gatherer" doc:"Parsing and the text store."`
}

// Crawl identifies the crawler to the servers it visits.
type Crawl struct {
	UserAgent    string `toml:"user_agent" doc:"User-Agent header sent with every request; give a contact URL."`
	ProductToken string `toml:"product_token" doc:"Product token matched against robots.txt User-agent lines."`
}

// Scope says which URLs the seeder lets into the crawl.
type Scope struct {
	Domains           []string `toml:"domains" doc:"Domain suffixes in scope (e.g. cl or gob.cl); a host is in scope when it equals or ends with .suffix."`
	ExcludeExtensions []string `toml:"exclude_extensions" doc:"File extensions (without dot) whose URLs are never fetched."`
	MaxURLLength      int      `toml:"max_url_length" doc:"URLs longer than this many bytes are rejected."`
	MaxPagesPerSite   int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site are taken into the crawl; 0 means no cap."`
}

// Manager holds the settings of the value function and of batches.
type Manager struct {
	Strategy        string   `toml:"strategy" doc:"Intrinsic-quality estimator: breadth-first, backlink or pagerank."`
	Alpha           float64  `toml:"alpha" doc:"Exponent of intrinsic quality in V(p) = IQ^alpha * RQ^beta * F^gamma."`
	Beta            float64  `toml:"beta" doc:"Exponent of representational quality."`
	Gamma           float64  `toml:"gamma" doc:"Exponent of freshness."`
	Damping         float64  `toml:"damping" doc:"PageRank damping factor (pagerank strategy)."`
	BatchSize       int      `toml:"batch_size" doc:"At most this many URLs in one batch."`
	MaxPagesPerSite int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site in one batch."`
	MaxDepthStatic  int      `toml:"max_depth_static" doc:"Pages of static URLs deeper than this (links from the site's entry page) are not scheduled."`
	MaxDepthDynamic int      `toml:"max_depth_dynamic" doc:"Pages of dynamic URLs (with a query) deeper than this are not scheduled."`
	MinRevisit      Duration `toml:"min_revisit" doc:"A fetched page is not scheduled again before this much time has passed."`
}

// Harvester holds the politeness rules and network limits of the harvester.
type Harvester struct {
	Connections    int      `toml:"connections" doc:"Simultaneous connections overall (one per host at most)."`
	Wait           Duration `toml:"wait" doc:"Time to wait between two requests to the same host."`
	ConnectTimeout Duration `toml:"connect_timeout" doc:"Time limit to open a connection."`
	ReadTimeout    Duration `toml:"read_timeout" doc:"Time limit between two reads of one response."`
	TotalTimeout   Duration `toml:"total_timeout" doc:"Time limit for a whole request, body included."`
	MaxBodyBytes   int64    `toml:"max_body_bytes" doc:"Bodies are cut after this many bytes (and marked truncated)."`
	MaxRobotsBytes int64    `toml:"max_robots_bytes" doc:"robots.txt files are read up to this many bytes."`
	AllowPrivate   bool     `toml:"allow_private" doc:"Allow loopback, private and link-local addresses (only for tests and the demo)."`
	DNSServer      string   `toml:"dns_server" doc:"DNS server as host:port; empty uses the system resolver."`
}

// Gatherer holds the settings of parsing and the text store.
type Gatherer struct {
	Workers      int    `toml:"workers" doc:"Parsing goroutines; 0 uses every core."`
	TextMode     string `toml:"text_mode" doc:"What the text store keeps of each page: full, summary or none."`
	SummaryWords int    `toml:"summary_words" doc:"Words kept per page when text_mode is summary."`
}

// Defaults returns the configuration used where nothing else is set. The
// values follow the papers (Baeza-Yates et al. 2005, section 4): 25,000
// pages per site, depth 5 for dynamic and 15 for static pages.
func Defaults() Config {
	return Config{
		Crawl: Crawl{
			UserAgent:    "wirebot/0.1 (+https://example.org/wirebot.html)",
			ProductToken: "wirebot",
		},
		Scope: Scope{
			Domains: []string{"cl"},
			ExcludeExtensions: []string{
				"jpg", "jpeg", "png", "gif", "bmp", "ico", "svg", "webp", "tif", "tiff",
				"zip", "gz", "tgz", "bz2", "xz", "rar", "7z", "tar", "iso", "exe", "dmg",
				"mp3", "mp4", "avi", "mov", "wmv", "flv", "mkv", "ogg", "wav", "webm",
				"css", "js", "woff", "woff2", "ttf",
			},
			MaxURLLength:    2048,
			MaxPagesPerSite: 25000,
		},
		Manager: Manager{
			Strategy:        "pagerank",
			Alpha:           1,
			Beta:            1,
			Gamma:           1,
			Damping:         0.85,
			BatchSize:       100000,
			MaxPagesPerSite: 1000,
			MaxDepthStatic:  15,
			MaxDepthDynamic: 5,
			MinRevisit:      Duration(7 * 24 * time.Hour),
		},
		Harvester: Harvester{
			Connections:    500,
			Wait:           Duration(15 * time.Second),
			ConnectTimeout: Duration(10 * time.Second),
			ReadTimeout:    Duration(20 * time.Second),
			TotalTimeout:   Duration(60 * time.Second),
			MaxBodyBytes:   2 << 20,
			MaxRobotsBytes: 500 << 10,
			AllowPrivate:   false,
			DNSServer:      "",
		},
		Gatherer: Gatherer{
			Workers:      0,
			TextMode:     "full",
			SummaryWords: 200,
		},
	}
}

// Strategies lists the intrinsic-quality estimators the manager knows.
var strategies = []string{"breadth-first", "backlink", "pagerank"}

// Strategies returns the names accepted by manager.strategy.
func Strategies() []string { return append([]string(nil), strategies...) }

// Validate reports every setting that is out of range, all at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if strings.TrimSpace(c.Crawl.UserAgent) == "" {
		bad("crawl.user_agent", "must not be empty")
	}
	if strings.ContainsAny(c.Crawl.UserAgent, "\r\n") {
		bad("crawl.user_agent", "must be one line")
	}
	if c.Crawl.ProductToken == "" || strings.ContainsAny(c.Crawl.ProductToken, " \t/\r\n") {
		bad("crawl.product_token", "must be one word without '/', got %q", c.Crawl.ProductToken)
	}
	if len(c.Scope.Domains) == 0 {
		bad("scope.domains", "at least one domain suffix is needed")
	}
	for _, d := range c.Scope.Domains {
		if d == "" || strings.ContainsAny(d, " /:") {
			bad("scope.domains", "invalid suffix %q", d)
		}
	}
	if c.Scope.MaxURLLength < 16 {
		bad("scope.max_url_length", "must be at least 16, got %d", c.Scope.MaxURLLength)
	}
	if c.Scope.MaxPagesPerSite < 0 {
		bad("scope.max_pages_per_site", "must not be negative")
	}
	if !contains(strategies, c.Manager.Strategy) {
		bad("manager.strategy", "unknown strategy %q (want one of %s)", c.Manager.Strategy, strings.Join(strategies, ", "))
	}
	for key, v := range map[string]float64{"manager.alpha": c.Manager.Alpha, "manager.beta": c.Manager.Beta, "manager.gamma": c.Manager.Gamma} {
		if v < 0 || v > 100 {
			bad(key, "must be between 0 and 100, got %g", v)
		}
	}
	if c.Manager.Damping <= 0 || c.Manager.Damping >= 1 {
		bad("manager.damping", "must be strictly between 0 and 1, got %g", c.Manager.Damping)
	}
	if c.Manager.BatchSize < 1 {
		bad("manager.batch_size", "must be at least 1, got %d", c.Manager.BatchSize)
	}
	if c.Manager.MaxPagesPerSite < 1 {
		bad("manager.max_pages_per_site", "must be at least 1, got %d", c.Manager.MaxPagesPerSite)
	}
	if c.Manager.MaxDepthStatic < 0 || c.Manager.MaxDepthDynamic < 0 {
		bad("manager.max_depth_*", "must not be negative")
	}
	if c.Manager.MinRevisit < 0 {
		bad("manager.min_revisit", "must not be negative")
	}
	if c.Harvester.Connections < 1 || c.Harvester.Connections > 10000 {
		bad("harvester.connections", "must be between 1 and 10000, got %d", c.Harvester.Connections)
	}
	if c.Harvester.Wait < 0 {
		bad("harvester.wait", "must not be negative")
	}
	for key, d := range map[string]Duration{"harvester.connect_timeout": c.Harvester.ConnectTimeout, "harvester.read_timeout": c.Harvester.ReadTimeout, "harvester.total_timeout": c.Harvester.TotalTimeout} {
		if d <= 0 {
			bad(key, "must be positive")
		}
	}
	if c.Harvester.MaxBodyBytes < 1024 {
		bad("harvester.max_body_bytes", "must be at least 1024, got %d", c.Harvester.MaxBodyBytes)
	}
	if c.Harvester.MaxRobotsBytes < 1024 {
		bad("harvester.max_robots_bytes", "must be at least 1024, got %d", c.Harvester.MaxRobotsBytes)
	}
	if s := c.Harvester.DNSServer; s != "" && !strings.Contains(s, ":") {
		bad("harvester.dns_server", "want host:port, got %q", s)
	}
	if c.Gatherer.Workers < 0 {
		bad("gatherer.workers", "must not be negative")
	}
	if !contains([]string{"full", "summary", "none"}, c.Gatherer.TextMode) {
		bad("gatherer.text_mode", "want full, summary or none, got %q", c.Gatherer.TextMode)
	}
	if c.Gatherer.SummaryWords < 1 {
		bad("gatherer.summary_words", "must be at least 1")
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Sample returns the configuration written to the repository's sample
// collection/wire.toml: the defaults, with the crawl's contact details
// pointing at a placeholder the operator must change.
func Sample() Config {
	return Defaults()
}
