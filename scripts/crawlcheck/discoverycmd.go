package main

import (
	"time"

	"github.com/urfave/cli/v2"
)

// discoveryCommand is `crawlcheck discovery`.
func discoveryCommand() *cli.Command {
	return &cli.Command{
		Name:  "discovery",
		Usage: "when each page was found and when fetched, and the crawl's lost order split into discovery, politeness and value order",
		Description: `Reads the request log of scripts/testweb --log and the truth of the web
(--web, --seeds: the reachable allowed pages and their links, as
crawlcheck timeline counts them) of a crawl from the seeds (issue 34).
For each reachable page p:

  - fetched(p): the start of its first successful request (2xx, or 3xx
    for a redirect);
  - found(p): the end of the first successful request of a page linking
    to p (a link of the web's truth; a redirect's Location is its one
    link); the seeds are found at the first request's start;
  - allowed(p): the earliest time t >= found(p) at which one more
    request to p's server would have kept the rules, given the requests
    the server actually received before t: no request of p's politeness
    unit (the names on p's host's address, the one the web serves it
    from, that share its registrable domain) in flight, t at least max(wait, the
    unit's largest Crawl-delay) after the end of each of them, t at
    least address_wait after the last start on the address, and fewer
    than connections_per_ip requests in flight there.

Over the pages found and then fetched: the median and p90 of fetched -
found (per link depth from the seeds too), and the split of
sum(fetched - start) into discovery sum(found - start), politeness
sum(max(0, min(allowed, fetched) - found)) and value order (the rest: the
crawler fetched other pages first). A page fetched before any page
linking to it (a sitemap, a link the truth does not hold) is counted
apart and left out. wait, address_wait and connections_per_ip are the
harvester settings of --collection's wire.toml (default: the built-in
defaults), each overridden by its flag. The target of issue 34: at wait 0,
a median found to fetched of at most 3 s.`,
		Flags: append(append(webFlags(),
			&cli.StringFlag{Name: "log", Required: true, Usage: "request log (TSV) of testweb --log"},
			&cli.TimestampFlag{Name: "start", Required: true, Layout: time.RFC3339Nano, Usage: "time zero (RFC 3339, e.g. 2024-01-02T15:04:05.123456789Z)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"},
			&cli.StringFlag{Name: "json-out", Usage: "also write the JSON to this file"},
		), serverRuleFlags()...),
		Action: func(c *cli.Context) error {
			m, err := loadMeasure(c)
			if err != nil {
				return err
			}
			d := computeDiscovery(m.truth, m.log, seedPages(m.truth, m.seeds), *c.Timestamp("start"), m.rules)
			return writeReport(c, "discovery", d, d.Print)
		},
	}
}
