package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "restore",
		Usage: "bring back graph.db from its backup and take in again the batches since",
		Description: `Replaces graph.db with the newest whole backup under COLLECTION/backup/
(written by seeder run every seeder.backup_every batches; the previous
backup if the newest is damaged) and its park files, then takes in again,
in the order they happened, the scheduling of every batch the manager wrote
since and every batch seeded since, from their files on disk. The replaced
graph.db is kept as graph.db.damaged. Holds the seeder's and the manager's
locks. What is not taken in again: the manager's estimator state of those
batches, and seeds added since the backup (docs/operations.md, "A damaged
graph.db").

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.WithSettings(),
		Action: command.Action(parseRestore, runRestore),
	}
}

// restoreOptions is what `seeder restore` needs.
type restoreOptions struct {
	Restore seeder.RestoreOptions // all but the logger, which comes from Std
	Std     command.Std
}

func parseRestore(c *cli.Context) (restoreOptions, error) {
	if c.NArg() > 0 {
		return restoreOptions{}, command.Usage("restore takes no arguments, got %q", c.Args().First())
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return restoreOptions{}, err
	}
	return restoreOptions{Restore: seeder.RestoreOptions{Collection: col, Config: cfg}, Std: command.StdFrom(c)}, nil
}

// runRestore brings graph.db back from its backup and prints what it
// did on out (also when it failed after choosing the backup).
func runRestore(ctx context.Context, o restoreOptions, out io.Writer) error {
	opts := o.Restore
	opts.Logger = o.Std.Log()
	s, err := seeder.Restore(ctx, opts)
	if s != nil && s.From != "" {
		s.WriteText(out)
	}
	return err
}
