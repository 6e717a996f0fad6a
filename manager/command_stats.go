package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "print the collection's totals: known, fetched, pending, sites, links, by state, HTTP status and depth",
		Description: `Reads graph.db read-only (so it can run while the harvester and the
gatherer work; it waits for the seeder) and prints the number of known
URLs, fetched, pending, dynamic, candidates of the next run (before the
batch limits), sites, links and batches; the documents by state, by last
HTTP status and by depth; and the estimator state kept in graph.db (OPIC,
partial PageRank, imported historical PageRank). --json prints the same
as one JSON object.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.WithSections([]string{"manager"}, &cli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: command.Action(parseStats, runStats),
	}
}

// statsOptions is what `manager stats` needs.
type statsOptions struct {
	Collection *collection.Collection
	Config     config.Config
	JSON       bool
}

func parseStats(c *cli.Context) (statsOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return statsOptions{}, err
	}
	return statsOptions{Collection: col, Config: cfg, JSON: c.Bool("json")}, nil
}

// runStats prints the collection's totals on out, as text or JSON.
func runStats(ctx context.Context, o statsOptions, out io.Writer) error {
	t, err := manager.CollectionTotals(ctx, o.Collection, o.Config, 0)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return t.Print(out)
}
