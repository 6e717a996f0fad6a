package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "take the next gathered batch (or --batch N) into graph.db",
		Description: `Reads the batch's batch.tsv, harvest/robots.jsonl, harvest/servers.jsonl and
parsed/docs.jsonl and applies them to graph.db in one transaction:
robots.txt rules, server estimates, document records, links, in-links, the
site graph, new URLs and sites, within the frontier limits of the [seeder]
settings (links over them are parked under COLLECTION/frontier/). Then, if
the frontier holds fewer than seeder.frontier_low_water URLs, releases
parked links (a second transaction; see seeder release), and writes the
batch's seeded.done marker with the summary, also printed on standard
output (docs/seeder.md, docs/frontier.md).

Without --batch it takes the oldest batch that is gathered and not seeded,
and exits 3 when there is none. A batch already seeded is refused unless
--force is given with --batch; taking a batch in again changes nothing
(visits are counted once). If graph.db records the batch as seeded but the
marker is missing (a run killed after its commit), only the marker is
written. Exit 4 also when graph.db stays in use by the manager for 5 s.

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitDamaged),
		Flags: command.WithSettings(
			command.BatchFlag("batch number to take in (default: the oldest gathered, not seeded)"),
			&cli.BoolFlag{Name: "force", Usage: "take the batch in again even if already seeded (needs --batch)"},
		),
		Action: command.Action(parseRun, runRun),
	}
}

// runOptions is what `seeder run` needs.
type runOptions struct {
	Run seeder.RunOptions // all but the logger and progress, which come from Std
	Std command.Std
}

func parseRun(c *cli.Context) (runOptions, error) {
	if c.Int("batch") < 0 {
		return runOptions{}, command.Usage("--batch must be positive, got %d", c.Int("batch"))
	}
	if c.Bool("force") && c.Int("batch") == 0 {
		return runOptions{}, command.Usage("--force needs --batch N")
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return runOptions{}, err
	}
	return runOptions{
		Run: seeder.RunOptions{Collection: col, Config: cfg, Batch: c.Int("batch"), Force: c.Bool("force")},
		Std: command.StdFrom(c),
	}, nil
}

// runRun takes the batch into graph.db, with progress on a terminal, and
// prints the summary on out.
func runRun(ctx context.Context, o runOptions, out io.Writer) error {
	progress := command.NewProgress(o.Std, -1, "seeding")
	opts := o.Run
	opts.Logger, opts.Progress = o.Std.Log(), progress.Add
	s, err := seeder.Run(ctx, opts)
	progress.Done()
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
