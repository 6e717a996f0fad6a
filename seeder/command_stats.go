package main

import (
	"context"
	"encoding/json"
	"io"

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
		Action: command.Action(parseStats, runStats),
	}
}

// statsOptions is what `seeder stats` needs.
type statsOptions struct {
	Collection *collection.Collection
	JSON       bool
}

func parseStats(c *cli.Context) (statsOptions, error) {
	col, err := command.OpenCollection(c)
	return statsOptions{Collection: col, JSON: c.Bool("json")}, err
}

// runStats prints the collection's counts on out, as text or JSON.
func runStats(ctx context.Context, o statsOptions, out io.Writer) error {
	r, err := seeder.Stats(o.Collection, 0)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.WriteText(out)
	return nil
}
