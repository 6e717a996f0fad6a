package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
)

// newApp builds the gatherer's command line: one command per file
// (command_<name>.go), each with its options, parser and run
// (docs/architecture.md, "How a command is built").
func newApp() *cli.App {
	return command.NewApp("gatherer", "parse harvested batches: text to the text store, links for the seeder",
		runCommand(), catCommand(), showCommand(), compactCommand())
}
