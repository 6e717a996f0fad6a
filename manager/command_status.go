package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/status"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "where the collection stands, in one screen",
		Description: `Prints the newest batch and the stage it has reached (with its harvest
summary: URLs, pages fetched, fetch errors by kind, pages/s), the batches
not yet seeded and any work-in-progress directory they hold, the stages
running now (from the kernel's lock table: status never takes a lock),
the pages of graph.db by state (known, fetched, pending, scheduled,
failed, excluded), the last run of scripts/cron.sh and the last error
lines of the collection's logs/. graph.db is opened read-only; while a
manager or seeder writes it the page counts are reported as unknown.
--no-graph skips graph.db (reading it takes about a second per million
pages). In a partition of a web split over K collections (crawl.partition)
it shows the partition, its peers and, per other partition, what the
exchange sent and received (files and lines in total and in the last
transaction), the files waiting to be taken, those removed once taken, and
the age of the newest site graph seen from it. --json prints the same as
JSON. See docs/operations.md.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: append(command.CommonFlags(),
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "no-graph", Usage: "do not read graph.db"},
			&cli.IntFlag{Name: "errors", Value: status.DefaultErrors, Usage: "show the last `N` error lines of the logs"},
		),
		Action: command.Action(parseStatus, runStatus),
	}
}

// statusOptions is what `manager status` needs.
type statusOptions struct {
	Collection *collection.Collection
	Status     status.Options
	JSON       bool
}

func parseStatus(c *cli.Context) (statusOptions, error) {
	col, err := command.OpenCollection(c)
	if err != nil {
		return statusOptions{}, err
	}
	o := statusOptions{Collection: col, Status: status.Options{NoGraph: c.Bool("no-graph"), Errors: c.Int("errors")}, JSON: c.Bool("json")}
	// The partition comes from the config; a config that does not load
	// leaves it out (status shows what it can).
	if cfg, err := command.LoadConfig(c); err == nil {
		o.Status.Crawl = &cfg.Crawl
	}
	return o, nil
}

// runStatus prints where the collection stands on out, as text or JSON.
func runStatus(ctx context.Context, o statusOptions, out io.Writer) error {
	st, err := status.Collect(o.Collection, o.Status)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(st)
	} else {
		err = st.WriteText(out)
	}
	if err != nil {
		return err
	}
	return st.Damaged()
}
