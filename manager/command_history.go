package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "import the PageRank of a previous crawl (historical strategy), or export this one's",
		Subcommands: []*cli.Command{
			{
				Name:      "import",
				Usage:     "replace the historical PageRank with the one of a previous crawl",
				ArgsUsage: "COLLECTION|GRAPH.DB|FILE",
				Description: `SOURCE is the collection directory (or graph.db file) of a previous crawl
of the same web, whose PageRank is computed over its whole graph
(manager.damping), or a PageRank file: lines "URL<TAB>PageRank", '#'
comments (what "manager history export" writes). The values are stored
in this collection's graph.db by URL and used by the historical strategy
(manager.historical_new_pages says how pages the previous crawl did not
have are valued). Takes the manager lock.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
				Flags:  command.WithSettings(),
				Action: command.Action(parseHistory, runHistoryImport),
			},
			{
				Name:      "export",
				Usage:     "write this collection's PageRank as a PageRank file (- for stdout)",
				ArgsUsage: "FILE",
				Description: `Computes the PageRank of this collection's graph (manager.damping) and
writes "URL<TAB>PageRank" lines in URL order, after a "# wire-pagerank 1"
header: the history of the next crawl ("manager history import FILE").
The file is written atomically.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
				Flags:  command.WithSettings(),
				Action: command.Action(parseHistory, runHistoryExport),
			},
		},
	}
}

// historyOptions is what `manager history import` and `export` need.
type historyOptions struct {
	Collection *collection.Collection
	Config     config.Config
	File       string // import: the source; export: the file to write, "-" for out
	Std        command.Std
}

func parseHistory(c *cli.Context) (historyOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return historyOptions{}, err
	}
	return historyOptions{Collection: col, Config: cfg, File: c.Args().First(), Std: command.StdFrom(c)}, nil
}

// runHistoryImport stores the PageRank of o.File and says so on out.
func runHistoryImport(ctx context.Context, o historyOptions, out io.Writer) error {
	res, err := manager.ImportHistory(ctx, o.Collection, o.File, manager.HistoryOptions{Config: o.Config, Logger: o.Std.Log()})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "imported %d PageRank values from %s (%s), %d of them URLs this collection knows; max %.4g, min %.4g, in %s\n",
		res.Pages, res.Source, res.Kind, res.Matched, res.Max, res.Min, res.Elapsed.Round(time.Millisecond))
	return nil
}

// runHistoryExport writes the PageRank file to o.File (to out for "-")
// and its summary on o.Std.Err.
func runHistoryExport(ctx context.Context, o historyOptions, out io.Writer) error {
	opts := manager.HistoryOptions{Config: o.Config, Logger: o.Std.Log()}
	var res *manager.HistoryResult
	var err error
	write := func(w io.Writer) error {
		res, err = manager.ExportPageRank(ctx, o.Collection, w, opts)
		return err
	}
	if o.File == "-" {
		err = write(out)
	} else {
		err = collection.WriteAtomic(o.File, write)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Std.Err, "exported the PageRank of %d pages (%d iterations) in %s\n", res.Pages, res.Iterations, res.Elapsed.Round(time.Millisecond))
	return nil
}
