package main

import (
	"encoding/json"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "count documents by state, sites, links and batches (read-only)",
		Description: `With --json, prints one JSON object:
{"docs", "sites", "links", "siteLinks", "frontier", "parked": {"files",
"links"}, "byState": {state: n}, "batches": {"total", "managed",
"harvested", "gathered", "seeded", "recorded"}}. frontier counts the URLs
waiting for their first fetch; parked the links waiting on disk
(docs/frontier.md).

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  append(command.CommonFlags(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: runStats,
	}
}

func runStats(c *cli.Context) error {
	col, err := collection.Open(c.String(command.FlagCollection))
	if err != nil {
		return err
	}
	r, err := seeder.Stats(col, 0)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.WriteText(c.App.Writer)
	return nil
}
