package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
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
		Flags:  command.WithSettings(),
		Action: command.Action(parseExplain, runExplain),
	}
}

// explainOptions is what `manager explain` needs.
type explainOptions struct {
	Collection *collection.Collection
	Config     config.Config
	URL        string
	Std        command.Std
}

func parseExplain(c *cli.Context) (explainOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return explainOptions{}, err
	}
	return explainOptions{Collection: col, Config: cfg, URL: c.Args().First(), Std: command.StdFrom(c)}, nil
}

// runExplain prints every factor of the page's value on out.
func runExplain(ctx context.Context, o explainOptions, out io.Writer) error {
	ex, err := manager.Explain(ctx, o.Collection, o.URL, manager.Options{Config: o.Config, Logger: o.Std.Log()})
	if err != nil {
		return err
	}
	return ex.Print(out)
}
