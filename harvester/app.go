package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
)

// newApp builds the harvester's command line: one command per file
// (command_<name>.go), each with its options, parser and run
// (docs/architecture.md, "How a command is built").
func newApp() *cli.App {
	return command.NewApp("harvester", "download a batch politely (WIRE short-term scheduler)", runCommand(), fetchCommand(), indexCommand(), waczCommand())
}
