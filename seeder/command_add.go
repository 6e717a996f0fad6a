package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func addCommand() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "add seed URLs from FILE (- for standard input)",
		ArgsUsage: "FILE|-",
		Description: `Reads one URL per line; blank lines and lines starting with # are
ignored. Each URL is normalised and checked against the scope; new ones are
added at depth 0, pending. Lines kept out are reported on standard error as
FILE:LINE: reason: "url" (the line quoted, cut to 80 bytes), and the others are still added: the exit code is 0
even then. It is nonzero when FILE cannot be read (nothing is added).
Adding the same list twice adds nothing the second time.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags:  command.WithSettings(),
		Action: command.Action(parseAdd, runAdd),
	}
}

// addOptions is what `seeder add` needs.
type addOptions struct {
	Collection *collection.Collection
	Config     config.Config
	File       string // the seed list, "-" for standard input (Std.In)
	Std        command.Std
}

func parseAdd(c *cli.Context) (addOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return addOptions{}, err
	}
	return addOptions{Collection: col, Config: cfg, File: c.Args().First(), Std: command.StdFrom(c)}, nil
}

// runAdd adds the seeds of o.File, reports the lines kept out on
// o.Std.Err and the summary on out.
func runAdd(ctx context.Context, o addOptions, out io.Writer) error {
	name, r := o.File, o.Std.In
	if name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("read seeds: %w", err)
		}
		defer f.Close()
		r = f
	}
	s, err := seeder.AddSeeds(seeder.SeedOptions{Collection: o.Collection, Config: o.Config, Logger: o.Std.Log()}, r, name, o.Std.Err)
	if err != nil {
		return err
	}
	s.WriteText(out)
	return nil
}
