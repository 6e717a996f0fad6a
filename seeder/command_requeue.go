package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func requeueCommand() *cli.Command {
	return &cli.Command{
		Name:  "requeue",
		Usage: "put fetched pages whose text is not stored back in the frontier (the repair of seeder check)",
		Description: `Finds the pages graph.db counts as fetched whose last visit is not stored:
a gatherer before issue 18 could not read their WARC record (their error
starts with "gatherer: ", their status was kept), or their text hash is set
and the text store has no entry for the URL (a text segment lost) or holds
another text. seeder check reports the same pages. Each one becomes pending
again, in one transaction: its visit history is kept and its validators are
dropped, so the manager schedules it as a revisit with a full GET. Running
it again finds nothing. --dry-run only lists them (docs/seeder.md,
"Completeness").

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: append(command.CommonFlags(),
			&cli.BoolFlag{Name: "dry-run", Usage: "list the pages without changing graph.db"},
		),
		Action: command.Action(parseRequeue, runRequeue),
	}
}

// requeueOptions is what `seeder requeue` needs: the library's options.
type requeueOptions = seeder.RequeueOptions

func parseRequeue(c *cli.Context) (requeueOptions, error) {
	if c.NArg() > 0 {
		return requeueOptions{}, command.Usage("requeue takes no arguments, got %q", c.Args().First())
	}
	col, err := command.OpenCollection(c)
	if err != nil {
		return requeueOptions{}, err
	}
	return requeueOptions{Collection: col, DryRun: c.Bool("dry-run")}, nil
}

// runRequeue puts the pages whose text is lost back in the frontier and
// prints the summary on out.
func runRequeue(ctx context.Context, o requeueOptions, out io.Writer) error {
	s, err := seeder.Requeue(ctx, o)
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
