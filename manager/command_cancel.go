package main

import (
	"context"
	"fmt"
	"io"

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
		Flags:  append(command.CommonFlags(), &cli.BoolFlag{Name: "force", Usage: "cancel even if the harvest has started (not if it is done)"}),
		Action: command.Action(parseCancel, runCancel),
	}
}

// cancelOptions is what `manager cancel` needs.
type cancelOptions struct {
	Collection *collection.Collection
	Force      bool
	Std        command.Std
}

func parseCancel(c *cli.Context) (cancelOptions, error) {
	col, err := command.OpenCollection(c)
	if err != nil {
		return cancelOptions{}, err
	}
	return cancelOptions{Collection: col, Force: c.Bool("force"), Std: command.StdFrom(c)}, nil
}

// runCancel rolls the newest batch back and says so on out.
func runCancel(ctx context.Context, o cancelOptions, out io.Writer) error {
	res, err := manager.Cancel(ctx, o.Collection, manager.CancelOptions{Force: o.Force, Logger: o.Std.Log()})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cancelled batch %s: %d pages back in the frontier\n", collection.BatchName(res.Batch), res.Restored)
	return nil
}
