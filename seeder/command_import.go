package main

import (
	"context"
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "start a recrawl from a previous collection: its sites, robots.txt copies and seeds",
		Description: `Carries over into this collection (made with 'seeder init') what a previous
crawl of the same country learnt, read from OLD's graph.db (read-only):

  1. the site list: every site of OLD that is in this collection's scope,
     with its robots.txt copy (status, body, fetch time) and the server
     estimates the harvester measured; a site this collection already
     knows keeps its own robots.txt copy if it is newer;
  2. the seeds: with --seeds starts (the default) every page of OLD at
     depth 0 that robots.txt did not exclude: OLD's seeds and the entry
     page of every site it found; with --seeds fetched every page OLD
     fetched with a 2xx status (more seeds, but each becomes a depth-0
     starting point, so the depth limits count from it). They are added
     as 'seeder add' adds a list: normalised, checked against this
     collection's scope, and excluded at once where the carried
     robots.txt forbids them.

Running it twice adds nothing the second time. The historical PageRank
(manager.strategy = historical) is carried by the manager's own import;
docs/operations.md, "Recrawls", gives every step.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: command.WithSettings(
			&cli.StringFlag{Name: "from", Usage: "the previous collection `OLD` (required)"},
			&cli.StringFlag{Name: "seeds", Value: seeder.ImportStarts, Usage: "which pages of OLD become seeds: starts or fetched"},
			&cli.StringFlag{Name: "seeds-out", Usage: "also write the seed list to `FILE`"},
		),
		Action: command.Action(parseImport, runImport),
	}
}

// importOptions is what `seeder import` needs: the library's options
// but for the problems' writer and the logger, which come from Std.
type importOptions struct {
	Import seeder.ImportOptions
	Std    command.Std
}

func parseImport(c *cli.Context) (importOptions, error) {
	if c.String("from") == "" {
		return importOptions{}, command.Usage("import needs --from OLD, the previous collection")
	}
	mode := c.String("seeds")
	if mode != seeder.ImportStarts && mode != seeder.ImportFetched {
		return importOptions{}, command.Usage("--seeds wants %s or %s, got %q", seeder.ImportStarts, seeder.ImportFetched, mode)
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return importOptions{}, err
	}
	return importOptions{
		Import: seeder.ImportOptions{
			Collection: col,
			Config:     cfg,
			From:       c.String("from"),
			Seeds:      mode,
			SeedsOut:   c.String("seeds-out"),
		},
		Std: command.StdFrom(c),
	}, nil
}

// runImport carries OLD's sites and seeds over, reporting the seeds kept
// out on o.Std.Err and the summary on out. Importing the collection into
// itself is a usage error.
func runImport(ctx context.Context, o importOptions, out io.Writer) error {
	opts := o.Import
	opts.Problems, opts.Logger = o.Std.Err, o.Std.Log()
	s, err := seeder.Import(ctx, opts)
	if errors.Is(err, seeder.ErrImportSelf) {
		return command.Usage("%w", err)
	}
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
