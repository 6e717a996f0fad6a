package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "verify graph.db and the batch markers (read-only)",
		Description: `Opens graph.db read-only and verifies its invariants
(docs/format/linkgraph.md): each id has one URL and back, in-links mirror
out-links, the site graph, the frontier set, the counters and the site page
counts agree; that every park file graph.db records exists with its number
of links; and that every batch marked seeded.done is recorded as seeded in
graph.db; and that every page graph.db counts as fetched has its text (or
the reason it has none) stored: pages whose text is lost are counted, the
first ones named, and "seeder requeue" repairs them (docs/seeder.md,
"Completeness"). Prints each problem; exits 1 if there is any.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.CommonFlags(),
		Action: command.Action(parseCheck, runCheck),
	}
}

// checkOptions is what `seeder check` needs.
type checkOptions struct {
	Collection *collection.Collection
}

func parseCheck(c *cli.Context) (checkOptions, error) {
	col, err := command.OpenCollection(c)
	return checkOptions{Collection: col}, err
}

// runCheck prints every problem of the collection on out; it fails if
// there is any.
func runCheck(ctx context.Context, o checkOptions, out io.Writer) error {
	col := o.Collection
	problems, err := seeder.Check(col, 0, 0)
	for _, p := range problems {
		fmt.Fprintln(out, p)
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: %d", col.Dir, seeder.ErrProblems, len(problems))
	}
	fmt.Fprintf(out, "%s: ok\n", col.Dir)
	return nil
}
