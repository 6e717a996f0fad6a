package config

import (
	"strings"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/partition"
)

// Crawl identifies the crawler to the servers it visits.
type Crawl struct {
	UserAgent    string `toml:"user_agent" doc:"User-Agent header sent with every request; give a contact URL."`
	ProductToken string `toml:"product_token" doc:"Product token matched against robots.txt User-agent lines."`
	// Partition and PartitionPeers split a national web over K
	// collections (docs/operations.md, "Partitioned collections").
	Partition       string   `toml:"partition" doc:"This collection's part of a web split over K collections, i/K (empty: the whole web). A site belongs to the partition of its server's address once known, else of its registrable domain; links and sites of other partitions go to exchange/out/. Set once, at seeder init, on every partition alike."`
	PartitionPeers  []string `toml:"partition_peers" doc:"Collection directories of the other partitions, on a shared file system: the seeder takes in the links they wrote for this partition (exchange/out/to-I/). Empty: only what was copied into this collection's exchange/in/ (rsync)."`
	PartitionLookup bool     `toml:"partition_lookup" doc:"In a partitioned collection, the seeder looks up (DNS, as the harvester: harvester.dns_server, dns_timeout) the address of a name graph.db does not know before it routes the name's URLs, so that a new site goes at once to the partition of its server's address; false, or a lookup that fails, routes by the registrable domain, and the harvester hands the site over once it resolves the name (a cycle of both partitions later)."`
}

// PartitionOf is the collection's partition (the whole web when unset or
// invalid: Load refuses an invalid one).
func (c *Crawl) PartitionOf() partition.Partition {
	p, _ := partition.Parse(c.Partition)
	return p
}

func defaultCrawl() Crawl {
	return Crawl{
		UserAgent:       "wirebot/0.1 (+https://example.org/wirebot.html)",
		ProductToken:    "wirebot",
		PartitionPeers:  []string{},
		PartitionLookup: true,
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
	if _, err := partition.Parse(c.Partition); err != nil {
		bad("crawl.partition", "%v", err)
	}
	for _, d := range c.PartitionPeers {
		if strings.TrimSpace(d) == "" {
			bad("crawl.partition_peers", "must not hold an empty directory name")
		}
	}
	if c.ProductToken == "" || strings.ContainsAny(c.ProductToken, " \t/\r\n") {
		bad("crawl.product_token", "must be one word without '/', got %s", excerpt.Quote(c.ProductToken))
	}
}
