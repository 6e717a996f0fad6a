package main

import (
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager"
)

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "print every factor of a page's value and why it is or is not in the next batch",
		ArgsUsage: "URL",
		Description: `Computes, without writing anything (graph.db is opened read-only), the
batch the next run would write with the current settings, and prints for
URL: its document (state, depth and the depth limit that applies, static
or dynamic, script, visits), the strategy, IQ with the estimator's own
value (PageRank, in-links, OPIC cash, ...), RQ, F with the change-rate
estimate from its visit history, the value now and after a visit, the
profit, its rank among the candidates, and the verdict: its position in
the next batch, or the rule that keeps it out (state, min_revisit, depth,
failures, max_pages_per_site, max_site_pages, max_fetches_per_script,
the time budget of batch_duration, or a full batch). The URL is looked up as given, then normalised.

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: command.WithSettings(),
		Action: func(c *cli.Context) error {
			col, cfg, err := command.Open(c)
			if err != nil {
				return err
			}
			ex, err := manager.Explain(c.Context, col, c.Args().First(), manager.Options{Config: cfg, Logger: command.Logger(c)})
			if err != nil {
				return err
			}
			return ex.Print(c.App.Writer)
		},
	}
}
