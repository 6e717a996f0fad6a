package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
)

// newApp builds the seeder's command line: one command per file
// (command_<name>.go), each with its options, parser and run
// (docs/architecture.md, "How a command is built").
func newApp() *cli.App {
	return command.NewApp("seeder", "create a collection, add seed URLs, take gathered batches into graph.db",
		initCommand(),
		addCommand(),
		runCommand(),
		releaseCommand(),
		exchangeCommand(),
		checkCommand(),
		requeueCommand(),
		capturesCommand(),
		statsCommand(),
		importCommand(),
		restoreCommand(),
	)
}
