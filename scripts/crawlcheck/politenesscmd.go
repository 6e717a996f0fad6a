package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/testweb/politeaudit"
)

// politenessCommand is `crawlcheck politeness`.
func politenessCommand() *cli.Command {
	return &cli.Command{
		Name:  "politeness",
		Usage: "audit a crawl's politeness by server from the test web's request log",
		Description: `Reads the request log of scripts/testweb --log and the web it served
(--web: the Crawl-delays and the hostile hosts) and audits the crawl by
server (package pkg/testweb/politeaudit, docs/harvester.md "Politeness by
server"): requests in flight per politeness unit (the host names of one
registrable domain on one address) and per address, gaps under the wait or
the Crawl-delay within a unit, starts on one address closer than
address_wait, and the requests per hostile host. The rules are the
harvester settings of --collection's wire.toml (default: the built-in
defaults), each overridden by its flag when given. Prints a table; exits 1
when a politeness count is not zero. Logs written before the address was
recorded are audited per host name, without the per-address checks.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log", Required: true, Usage: "request log (TSV) of testweb --log"},
			&cli.StringFlag{Name: "web", Required: true, Usage: "the web's configuration, as written by testweb --config-out"},
			&cli.StringFlag{Name: "collection", Usage: "take the harvester settings from this collection's wire.toml"},
			&cli.DurationFlag{Name: "wait", Usage: "harvester.wait"},
			&cli.DurationFlag{Name: "max-crawl-delay", Usage: "harvester.max_crawl_delay"},
			&cli.IntFlag{Name: "connections-per-ip", Usage: "harvester.connections_per_ip (0: no cap)"},
			&cli.DurationFlag{Name: "address-wait", Usage: "harvester.address_wait (0: no floor)"},
			&cli.DurationFlag{Name: "total-timeout", Usage: "harvester.total_timeout (the end of a streaming hostile answer for the client)"},
			&cli.DurationFlag{Name: "slack", Usage: "server scheduling lag forgiven on every gap and overlap (default politeaudit.ServerSlack, 3ms)"},
			&cli.IntFlag{Name: "max-cut-requests", Usage: "most page requests a hostile host with answers to cut may get (0: not checked)"},
			&cli.StringFlag{Name: "label", Value: "crawl", Usage: "name of the table's row"},
		},
		Action: func(c *cli.Context) error {
			rules, err := politenessRules(c)
			if err != nil {
				return err
			}
			web, _, err := loadWeb(c.String("web"))
			if err != nil {
				return err
			}
			lines, err := readRequestLogFile(c.String("log"))
			if err != nil {
				return err
			}
			rep := politeaudit.Audit(web, rules, politeaudit.Log{Requests: logRequests(lines)})
			fmt.Fprintf(c.App.Writer, "rules: wait %v, max_crawl_delay %v, connections_per_ip %d, address_wait %v, total_timeout %v, slack %v\n",
				rules.Wait, rules.MaxCrawlDelay, rules.ConnectionsPerIP, rules.AddressWait, rules.TotalTimeout, rules.Slack)
			if err := rep.WriteTable(c.App.Writer, c.String("label")); err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("politeness: %d violations", rep.Violations())
			}
			return nil
		},
	}
}

// politenessRules are the audit's rules: the collection's (or default)
// harvester settings, overridden by the flags given.
func politenessRules(c *cli.Context) (politeaudit.Rules, error) {
	cfg := config.Defaults()
	if col := c.String("collection"); col != "" {
		var err error
		if cfg, err = config.Load(config.Sources{File: filepath.Join(col, config.FileName), NoEnv: true}); err != nil {
			return politeaudit.Rules{}, err
		}
	}
	r := politeaudit.FromConfig(cfg.Harvester)
	for name, p := range map[string]*int{"connections-per-ip": &r.ConnectionsPerIP, "max-cut-requests": &r.MaxCutRequests} {
		if c.IsSet(name) {
			if *p = c.Int(name); *p < 0 {
				return r, command.Usage("--%s must not be negative", name)
			}
		}
	}
	for name, p := range map[string]*time.Duration{"wait": &r.Wait, "max-crawl-delay": &r.MaxCrawlDelay,
		"address-wait": &r.AddressWait, "total-timeout": &r.TotalTimeout, "slack": &r.Slack} {
		if c.IsSet(name) {
			if *p = c.Duration(name); *p < 0 {
				return r, command.Usage("--%s must not be negative", name)
			}
		}
	}
	return r, nil
}

// logRequests turns request log lines into the web's requests.
func logRequests(lines []requestLine) []testweb.Request {
	out := make([]testweb.Request, len(lines))
	for i, l := range lines {
		out[i] = testweb.Request{ConnID: l.conn, Host: l.host, Path: l.path, Status: l.status, Start: l.start, End: l.end, Addr: l.addr}
	}
	return out
}
