package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
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
		Action: runInit,
	}
}

func runInit(c *cli.Context) error {
	cfg, err := command.LoadConfig(c)
	if err != nil {
		return err
	}
	dir := c.String(command.FlagCollection)
	kept, err := seeder.Init(dir, cfg)
	if err != nil {
		return err
	}
	if kept && len(command.Overrides(c)) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "seeder: kept the existing %s/wire.toml; the setting flags given were not written to it\n", dir)
	}
	fmt.Fprintf(c.App.Writer, "created collection %s\n", dir)
	return nil
}
