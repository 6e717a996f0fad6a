package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
	"github.com/wirecrawl/wire/pkg/report"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write a self-contained HTML report of the crawl, with plots",
		Description: `Reads graph.db (read-only) and every harvested batch's fetch log, computes
PageRank over the known link graph (damping: manager.damping), and writes
one HTML page that needs no network and no other file: pages per site
(log-log), in- and out-degree distributions, depth, HTTP status and MIME
types, pages, bytes and harvest speed per batch, cumulative PageRank of
the fetched pages in crawl order, the top sites and pages by
PageRank, and the collection's freshness by the change-rate estimates
(by depth and for the largest sites: median change interval, estimated
freshness, revisits that found a change). The plots are inline SVG. The page goes to COLLECTION/report.html
unless --output names another file (- for standard output); it is written
atomically. --json writes the numbers behind the plots instead. Run it
when no manager or seeder is writing graph.db. See docs/report.md.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: command.WithSettings(
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` (- for standard output; default COLLECTION/report.html)"},
			&cli.BoolFlag{Name: "json", Usage: "write the report's data as JSON instead of HTML"},
			&cli.IntFlag{Name: "top", Value: report.DefaultTop, Usage: "rows of the top sites and top pages tables"},
		),
		Action: command.Action(parseReport, runReport),
	}
}

// reportOptions is what `manager report` needs.
type reportOptions struct {
	Collection *collection.Collection
	Report     report.Options // all but the logger and the change estimates, which come from Std and Manager
	Manager    config.Manager // the settings of the change-rate estimates
	Output     string         // the file to write, "-" for out, "" for COLLECTION/report.html (.json)
	JSON       bool
	Std        command.Std
}

func parseReport(c *cli.Context) (reportOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return reportOptions{}, err
	}
	return reportOptions{
		Collection: col,
		Manager:    cfg.Manager,
		Report:     report.Options{Damping: cfg.Manager.Damping, Top: c.Int("top"), TimeScale: cfg.Manager.Scale()},
		Output:     c.String("output"),
		JSON:       c.Bool("json"),
		Std:        command.StdFrom(c),
	}, nil
}

// runReport writes the report to o.Output (on out for "-"; else it says
// on out what it wrote).
func runReport(ctx context.Context, o reportOptions, out io.Writer) error {
	ropts := o.Report
	ropts.Logger = o.Std.Log()
	ropts.Changes = func(ctx context.Context, fn func(report.PageChange) error) error {
		now := time.Now()
		return manager.ChangeEstimates(ctx, o.Collection, &o.Manager, func(e manager.ChangeEstimate) error {
			return fn(report.PageChange{Site: e.Site, Depth: e.Depth, Lambda: e.Lambda, Age: max(now.Sub(e.Fetched), 0), Revisits: e.Revisits, Changed: e.FoundChanged})
		})
	}
	data, err := report.Collect(ctx, o.Collection, ropts)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return data.Render(w) }
	name := "report.html"
	if o.JSON {
		name = "report.json"
		write = func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(data)
		}
	}
	file := o.Output
	if file == "-" {
		return write(out)
	}
	if file == "" {
		file = filepath.Join(o.Collection.Dir, name)
	}
	if err := collection.WriteAtomic(file, write); err != nil {
		return fmt.Errorf("write report %s: %w", file, err)
	}
	fmt.Fprintf(out, "wrote %s: %d pages known, %d fetched, %d batches\n", file, data.Totals.Known, data.Totals.Fetched, data.Totals.Batches)
	return nil
}
