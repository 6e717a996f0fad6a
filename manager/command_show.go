package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "summarise a batch file, and print its entries with --rows",
		ArgsUsage: "FILE|N",
		Description: `Prints a batch's id, creation time, strategy, parameters, counts, the
robots.txt copies and server estimates beside it, the score range and
quantiles, the sites with most pages, a histogram of pages per site and
the depths. N (digits only) is batch N of the collection; anything else
is a path. A malformed or truncated file is reported with its line.

With --rows (or any filter flag) it then prints the entries that pass
every filter given, tab-separated, in batch order. Flags go before FILE|N.

` + command.ExitCodes(command.ExitOK),
		Flags: append(command.CommonFlags(),
			&cli.IntFlag{Name: "top", Value: 10, Usage: "list this many sites"},
			&cli.BoolFlag{Name: "rows", Usage: "print the entries (those the filters select)"},
			&cli.StringFlag{Name: "site", Usage: "only entries of this site (scheme://host[:port])"},
			&cli.StringFlag{Name: "kind", Usage: "only entries of this kind: new, revisit or sitemap"},
			&cli.StringFlag{Name: "contains", Usage: "only entries whose URL contains this text"},
			&cli.IntFlag{Name: "min-depth", Usage: "only entries at least this deep"},
			&cli.IntFlag{Name: "max-depth", Usage: "only entries at most this deep"},
			&cli.Float64Flag{Name: "min-score", Usage: "only entries with at least this score"},
			&cli.Float64Flag{Name: "max-score", Usage: "only entries with at most this score"},
			&cli.IntFlag{Name: "limit", Usage: "print at most this many entries (0: all)"},
		),
		Action: command.Action(parseShow, runShow),
	}
}

// showOptions is what `manager show` needs.
type showOptions struct {
	Path string // the batch file
	Show manager.ShowOptions
}

func parseShow(c *cli.Context) (showOptions, error) {
	if k := c.String("kind"); k != "" && k != batch.KindNew && k != batch.KindRevisit && k != batch.KindSitemap {
		return showOptions{}, command.Usage("show: --kind wants new, revisit or sitemap, got %q", k)
	}
	path, err := batchPath(c.String(command.FlagCollection), c.Args().First())
	if err != nil {
		return showOptions{}, err
	}
	opts := manager.ShowOptions{
		Top: c.Int("top"),
		Filter: manager.RowFilter{
			Site: c.String("site"), Kind: c.String("kind"), Contains: c.String("contains"),
			MinDepth: c.Int("min-depth"),
			MinScore: c.Float64("min-score"), MaxScore: c.Float64("max-score"),
			Limit: c.Int("limit"),
		},
	}
	if c.IsSet("max-depth") {
		d := c.Int("max-depth")
		opts.Filter.MaxDepth = &d
	}
	opts.Rows = c.Bool("rows")
	for _, f := range []string{"site", "kind", "contains", "min-depth", "max-depth", "min-score", "max-score", "limit"} {
		opts.Rows = opts.Rows || c.IsSet(f)
	}
	return showOptions{Path: path, Show: opts}, nil
}

// runShow prints the batch's summary (and rows) on out.
func runShow(ctx context.Context, o showOptions, out io.Writer) error {
	return manager.Show(out, o.Path, o.Show)
}

// batchPath resolves the argument of show: a batch number of the
// collection in dir, or a file path.
func batchPath(dir, arg string) (string, error) {
	if arg == "" || strings.Trim(arg, "0123456789") != "" {
		return arg, nil
	}
	id, err := strconv.Atoi(arg)
	if err != nil || id < 1 {
		return "", command.Usage("show: batch number %q out of range", arg)
	}
	col, err := collection.Open(dir)
	if err != nil {
		return "", err
	}
	b := col.Batch(id)
	if !b.Done(collection.StageManaged) {
		return "", fmt.Errorf("show batch %s: %w (%s)", b.Name(), collection.ErrNoBatch, b.File())
	}
	return b.File(), nil
}
