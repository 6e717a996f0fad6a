package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func exchangeCommand() *cli.Command {
	return &cli.Command{
		Name:  "exchange",
		Usage: "publish this partition's exchange files and take in what other partitions wrote for it",
		Description: `In a collection that is partition i of a web split over K collections
(crawl.partition i/K), the seeder writes the links it finds to other
partitions' sites, and the sites it hands over (their server's address
belongs to another partition), to COLLECTION/exchange/out/to-J/, and takes
in the files other partitions wrote for it: their exchange/out/to-I/ on a
shared file system (crawl.partition_peers), or what was copied into
COLLECTION/exchange/in/ (rsync). seeder run does both after each batch;
this command does it now, for a crawl whose batches are all seeded. Each
file is taken in once, however often it is seen (docs/operations.md,
"Partitioned collections").

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.WithSettings(),
		Action: command.Action(parseRelease, runExchange), // --all is not one of its flags: false
	}
}

// runExchange takes the exchange in and prints the summary on out.
func runExchange(ctx context.Context, o releaseOptions, out io.Writer) error {
	opts := o.Release
	opts.Logger = o.Std.Log()
	s, err := seeder.Exchange(ctx, opts)
	if err != nil {
		return err
	}
	if s == nil {
		fmt.Fprintln(out, "exchange: nothing new from other partitions")
		return nil
	}
	fmt.Fprintf(out, "exchange in %s\n", s.Elapsed)
	s.WriteText(out)
	return nil
}
