package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func capturesCommand() *cli.Command {
	return &cli.Command{
		Name:  "captures",
		Usage: "record each page's stored capture from the seeded batches' WARC files (collections crawled before graph.db kept them)",
		Description: `Reads the fetch log and WARC files of every seeded batch, in order, and
records in graph.db, for each page whose last 2xx response stored whole
is there, that record's id, date and payload digest (its stored capture),
unless graph.db holds one as new. The manager writes captures into the
next batches, and the harvester's revisit records refer to them
(WARC-Refers-To): without one, a page that answers 304 ever since its
last whole response is written as a revisit that replays nothing. Run it
once on a collection crawled before issue 37, after its batches are
seeded; the seeder keeps captures up to date from then on. One
transaction per batch; running it again changes nothing. --dry-run only
counts (docs/seeder.md, "Stored captures").

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: append(command.CommonFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "read the WARC files and count, without changing graph.db"},
		),
		Action: command.Action(parseCaptures, runCaptures),
	}
}

// capturesOptions is what `seeder captures` needs: the library's options.
type capturesOptions = seeder.CapturesOptions

func parseCaptures(c *cli.Context) (capturesOptions, error) {
	if c.NArg() > 0 {
		return capturesOptions{}, command.Usage("captures takes no arguments, got %q", c.Args().First())
	}
	col, err := command.OpenCollection(c)
	if err != nil {
		return capturesOptions{}, err
	}
	return capturesOptions{Collection: col, DryRun: c.Bool("dry-run")}, nil
}

// runCaptures records the stored captures and prints the summary on out.
func runCaptures(ctx context.Context, o capturesOptions, out io.Writer) error {
	s, err := seeder.Captures(ctx, o)
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
