package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager"
)

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:  "cancel",
		Usage: "roll back the newest batch if it has not been harvested",
		Description: `Returns the newest batch's scheduled pages to pending (fetched or failed
if they were), makes graph.db forget the batch and removes its
directory. Refuses a harvested batch (harvested.done), and a batch whose
harvest has started (harvest.partial/, harvest/, or a shard's
harvest-shard-i-of-N[.partial]/ or harvested-shard-i-of-N.done) unless
--force. Exit code 3 means there is no batch to cancel; exit code 4 that a
harvester, or a harvester shard, is running (even with --force).

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitDamaged),
		Flags: append(command.CommonFlags(), &cli.BoolFlag{Name: "force", Usage: "cancel even if the harvest has started (not if it is done)"}),
		Action: func(c *cli.Context) error {
			col, err := collection.Open(c.String(command.FlagCollection))
			if err != nil {
				return err
			}
			res, err := manager.Cancel(c.Context, col, manager.CancelOptions{Force: c.Bool("force"), Logger: command.Logger(c)})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "cancelled batch %s: %d pages back in the frontier\n", collection.BatchName(res.Batch), res.Restored)
			return nil
		},
	}
}
