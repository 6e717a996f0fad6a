package main

import (
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
		Action: runRestore,
	}
}

func runRestore(c *cli.Context) error {
	if c.NArg() > 0 {
		return command.Usage("restore takes no arguments, got %q", c.Args().First())
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return err
	}
	s, err := seeder.Restore(c.Context, seeder.RestoreOptions{Collection: col, Config: cfg, Logger: command.Logger(c)})
	if s != nil && s.From != "" {
		s.WriteText(c.App.Writer)
	}
	return err
}
