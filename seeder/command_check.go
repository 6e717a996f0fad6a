package main

import (
	"fmt"

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
		Action: runCheck,
	}
}

func runCheck(c *cli.Context) error {
	col, err := collection.Open(c.String(command.FlagCollection))
	if err != nil {
		return err
	}
	problems, err := seeder.Check(col, 0, 0)
	for _, p := range problems {
		fmt.Fprintln(c.App.Writer, p)
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %w: %d", col.Dir, seeder.ErrProblems, len(problems))
	}
	fmt.Fprintf(c.App.Writer, "%s: ok\n", col.Dir)
	return nil
}
