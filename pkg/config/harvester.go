package config

import (
	"strings"
	"time"
)

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

func defaultHarvester() Harvester {
	return Harvester{
		Connections:    500,
		Wait:           Duration(15 * time.Second),
		ConnectTimeout: Duration(10 * time.Second),
		ReadTimeout:    Duration(20 * time.Second),
		TotalTimeout:   Duration(60 * time.Second),
		MaxBodyBytes:   2 << 20,
		MaxRobotsBytes: 500 << 10,
		AllowPrivate:   false,
		DNSServer:      "",
	}
}

// validate reports the settings of the section that are out of range.
func (c *Harvester) validate(bad func(key, format string, args ...any)) {
	if c.Connections < 1 || c.Connections > 10000 {
		bad("harvester.connections", "must be between 1 and 10000, got %d", c.Connections)
	}
	if c.Wait < 0 {
		bad("harvester.wait", "must not be negative")
	}
	for key, d := range map[string]Duration{"harvester.connect_timeout": c.ConnectTimeout, "harvester.read_timeout": c.ReadTimeout, "harvester.total_timeout": c.TotalTimeout} {
		if d <= 0 {
			bad(key, "must be positive")
		}
	}
	if c.MaxBodyBytes < 1024 {
		bad("harvester.max_body_bytes", "must be at least 1024, got %d", c.MaxBodyBytes)
	}
	if c.MaxRobotsBytes < 1024 {
		bad("harvester.max_robots_bytes", "must be at least 1024, got %d", c.MaxRobotsBytes)
	}
	if s := c.DNSServer; s != "" && !strings.Contains(s, ":") {
		bad("harvester.dns_server", "want host:port, got %q", s)
	}
}
