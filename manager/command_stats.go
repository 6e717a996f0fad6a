package main

import (
	"encoding/json"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
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
		Flags: command.WithSections([]string{"manager"}, &cli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: func(c *cli.Context) error {
			col, cfg, err := command.Open(c)
			if err != nil {
				return err
			}
			t, err := manager.CollectionTotals(c.Context, col, cfg, 0)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(t)
			}
			return t.Print(c.App.Writer)
		},
	}
}
