package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
)

// newApp builds the gatherer's command line: one command per file
// (command_<name>.go).
func newApp() *cli.App {
	return command.NewApp("gatherer", "parse harvested batches: text to the text store, links for the seeder",
		runCommand(), catCommand(), showCommand(), compactCommand())
}

// withSettings is the common flags, the command's own, and one flag per
// config setting.
func withSettings(own ...cli.Flag) []cli.Flag {
	flags := append(command.CommonFlags(), own...)
	return append(flags, command.SettingFlags()...)
}
