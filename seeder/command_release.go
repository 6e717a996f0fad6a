package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

func releaseCommand() *cli.Command {
	return &cli.Command{
		Name:  "release",
		Usage: "take parked links back into the frontier (Sydney strategy, frontier budget)",
		Description: `Links that seeder.new_links_per_page or seeder.frontier_budget kept out
of the frontier wait in park files under COLLECTION/frontier/. seeder run
releases them by itself after each batch while the frontier holds fewer
than seeder.frontier_low_water URLs; this command does the same now, or
with --all releases every park file whatever the frontier size (the
budget still applies: what it does not admit is parked again). Released
links get ids (unless out of scope, over the site cap or too deep, or
their page was fetched again since) and are added to their pages'
out-links, in one transaction (docs/frontier.md).

` + command.ExitCodes(command.ExitLocked, command.ExitDamaged),
		Flags: command.WithSettings(
			&cli.BoolFlag{Name: "all", Usage: "release every park file, whatever the frontier size"},
		),
		Action: command.Action(parseRelease, runRelease),
	}
}

// releaseOptions is what `seeder release` needs.
type releaseOptions struct {
	Release seeder.ReleaseOptions // all but the logger, which comes from Std
	Std     command.Std
}

func parseRelease(c *cli.Context) (releaseOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return releaseOptions{}, err
	}
	return releaseOptions{
		Release: seeder.ReleaseOptions{Collection: col, Config: cfg, All: c.Bool("all")},
		Std:     command.StdFrom(c),
	}, nil
}

// runRelease releases parked links and prints the summary on out.
func runRelease(ctx context.Context, o releaseOptions, out io.Writer) error {
	opts := o.Release
	opts.Logger = o.Std.Log()
	s, err := seeder.Release(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "release of parked links in %s\n", s.Elapsed)
	s.WriteText(out)
	return nil
}
