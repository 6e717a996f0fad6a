package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "write the next batch: batches/NNNNNN/batch.tsv",
		Description: `Scores every page of graph.db with V(p) = IQ^alpha * RQ^beta * F^gamma,
orders the candidates by profit (value after a visit minus value now),
applies the batch limits, writes the batch file and marks its pages
scheduled. If a previous run was killed between writing the file and
recording it in graph.db, completes that batch instead. Exit code 3
means the frontier is empty: no page can be scheduled now (or, with
--min-sites N, that the batch would have fewer than N sites).

` + command.ExitCodesHelp,
		Flags: append(command.WithSettings(),
			&cli.IntFlag{Name: "min-sites", Usage: "write no batch with fewer sites than this: exit 3 instead (scripts/crawl.sh, while another batch is harvested)"}),
		Action: func(c *cli.Context) error {
			col, cfg, err := command.Open(c)
			if err != nil {
				return err
			}
			if c.Int("min-sites") < 0 {
				return command.Usage("--min-sites must not be negative, got %d", c.Int("min-sites"))
			}
			res, err := manager.Run(c.Context, col, manager.Options{Config: cfg, Logger: command.Logger(c), MinSites: c.Int("min-sites")})
			if err != nil {
				return err
			}
			return printResult(c.App.Writer, res)
		},
	}
}

func printResult(w io.Writer, r *manager.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if r.Recovered {
		fmt.Fprintf(tw, "completed interrupted batch %s\n", collection.BatchName(r.Batch))
	}
	fmt.Fprintf(tw, "batch\t%s\n", collection.BatchName(r.Batch))
	fmt.Fprintf(tw, "file\t%s\n", r.File)
	fmt.Fprintf(tw, "strategy\t%s\n", r.Strategy)
	fmt.Fprintf(tw, "urls\t%d\n", r.URLs)
	fmt.Fprintf(tw, "sites\t%d\n", r.Sites)
	fmt.Fprintf(tw, "new\t%d\n", r.New)
	fmt.Fprintf(tw, "revisits\t%d\n", r.Revisits)
	fmt.Fprintf(tw, "score\t%s .. %s\n", num(r.ScoreMin), num(r.ScoreMax))
	if !r.Recovered {
		fmt.Fprintf(tw, "robots.txt\t%d sites with a stored copy in robots.jsonl\n", r.Robots)
		fmt.Fprintf(tw, "candidates\t%d (%d over max_pages_per_site, %d over max_site_pages, %d over max_fetches_per_script, %d held back by batch_duration, %d over the batch size)\n",
			r.Stats.Candidates, r.Stats.SiteCapped, r.Stats.SiteFull, r.Stats.ScriptCapped, r.Stats.TimeCapped, r.Stats.Left)
		for _, n := range r.Stats.Notes {
			fmt.Fprintf(tw, "note\t%s\n", n)
		}
	}
	fmt.Fprintf(tw, "elapsed\t%s\n", r.Elapsed.Round(time.Millisecond))
	return tw.Flush()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

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

` + command.ExitCodesHelp,
		Flags: append(command.CommonFlags(),
			&cli.IntFlag{Name: "top", Value: 10, Usage: "list this many sites"},
			&cli.BoolFlag{Name: "rows", Usage: "print the entries (those the filters select)"},
			&cli.StringFlag{Name: "site", Usage: "only entries of this site (scheme://host[:port])"},
			&cli.StringFlag{Name: "kind", Usage: "only entries of this kind: new or revisit"},
			&cli.StringFlag{Name: "contains", Usage: "only entries whose URL contains this text"},
			&cli.IntFlag{Name: "min-depth", Usage: "only entries at least this deep"},
			&cli.IntFlag{Name: "max-depth", Usage: "only entries at most this deep"},
			&cli.Float64Flag{Name: "min-score", Usage: "only entries with at least this score"},
			&cli.Float64Flag{Name: "max-score", Usage: "only entries with at most this score"},
			&cli.IntFlag{Name: "limit", Usage: "print at most this many entries (0: all)"},
		),
		Action: func(c *cli.Context) error {
			if k := c.String("kind"); k != "" && k != batch.KindNew && k != batch.KindRevisit {
				return command.Usage("show: --kind wants new or revisit, got %q", k)
			}
			path, err := batchPath(c.String(command.FlagCollection), c.Args().First())
			if err != nil {
				return err
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
			return manager.Show(c.App.Writer, path, opts)
		},
	}
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

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:  "cancel",
		Usage: "roll back the newest batch if it has not been harvested",
		Description: `Returns the newest batch's scheduled pages to pending (fetched or failed
if they were), makes graph.db forget the batch and removes its
directory. Refuses a harvested batch (harvested.done), and a batch whose
harvest has started (harvest.partial/ or harvest/) unless --force.
Exit code 3 means there is no batch to cancel.

` + command.ExitCodesHelp,
		Flags: append(command.CommonFlags(), &cli.BoolFlag{Name: "force", Usage: "cancel even if the harvest has started (not if it is done)"}),
		Action: func(c *cli.Context) error {
			col, err := collection.Open(c.String(command.FlagCollection))
			if err != nil {
				return err
			}
			res, err := manager.Cancel(c.Context, col, manager.CancelOptions{Force: c.Bool("force"), Logger: command.Logger(c)})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "cancelled batch %s: %d pages back in the frontier\n", collection.BatchName(res.Batch), res.Restored)
			return nil
		},
	}
}
