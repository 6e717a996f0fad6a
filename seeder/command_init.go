package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create a blank collection (wire.toml and an empty graph.db)",
		Description: `Creates the collection directory named by --collection with its config,
built from the defaults, the environment, the setting flags and --config FILE
if given. A wire.toml already in the directory is kept as it is. A directory
that already holds a collection is refused.

` + command.ExitCodes(command.ExitLocked),
		Flags:  command.WithSettings(),
		Action: command.Action(parseInit, runInit),
	}
}

// initOptions is what `seeder init` needs.
type initOptions struct {
	Dir          string        // the collection directory to create
	Config       config.Config // its config
	SettingFlags bool          // setting flags were given (a kept wire.toml does not get them)
	Std          command.Std
}

func parseInit(c *cli.Context) (initOptions, error) {
	cfg, err := command.LoadConfig(c)
	if err != nil {
		return initOptions{}, err
	}
	return initOptions{
		Dir:          c.String(command.FlagCollection),
		Config:       cfg,
		SettingFlags: len(command.Overrides(c)) > 0,
		Std:          command.StdFrom(c),
	}, nil
}

// runInit creates the collection; it warns on o.Std.Err when a wire.toml
// already there was kept in spite of setting flags.
func runInit(ctx context.Context, o initOptions, out io.Writer) error {
	kept, err := seeder.Init(o.Dir, o.Config)
	if err != nil {
		return err
	}
	if kept && o.SettingFlags {
		fmt.Fprintf(o.Std.Err, "seeder: kept the existing %s/wire.toml; the setting flags given were not written to it\n", o.Dir)
	}
	fmt.Fprintf(out, "created collection %s\n", o.Dir)
	return nil
}
