package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
)

// newApp builds the manager's command line. Each command is built by a
// function in its own file (command_<name>.go: runCommand in
// command_run.go, and so on) with its options, parser and run
// (docs/architecture.md, "How a command is built"); add one line here
// per command.
func newApp() *cli.App {
	return command.NewApp("manager", "score the link graph and write the next batch (long-term scheduling)",
		runCommand(),
		showCommand(),
		cancelCommand(),
		statsCommand(),
		explainCommand(),
		historyCommand(),
		statusCommand(),
		reportCommand(),
		simulateCommand(),
	)
}
