package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

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

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitDamaged, command.ExitDiskFull),
		Flags: append(command.WithSettings(),
			&cli.IntFlag{Name: "min-sites", Usage: "write no batch with fewer sites than this: exit 3 instead (scripts/crawl.sh, while another batch is harvested)"}),
		Action: command.Action(parseRun, runRun),
	}
}

// runOptions is what `manager run` needs.
type runOptions struct {
	Collection *collection.Collection
	Run        manager.Options // all but the logger, which comes from Std
	Std        command.Std
}

func parseRun(c *cli.Context) (runOptions, error) {
	col, cfg, err := command.Open(c)
	if err != nil {
		return runOptions{}, err
	}
	if c.Int("min-sites") < 0 {
		return runOptions{}, command.Usage("--min-sites must not be negative, got %d", c.Int("min-sites"))
	}
	return runOptions{Collection: col, Run: manager.Options{Config: cfg, MinSites: c.Int("min-sites")}, Std: command.StdFrom(c)}, nil
}

// runRun writes the next batch and prints its summary on out.
func runRun(ctx context.Context, o runOptions, out io.Writer) (err error) {
	m := command.NewStageMetrics("manager", o.Collection.Dir, o.Run.Config, false) // metrics.go
	defer func() { m.Finish(err, o.Std.Log()) }()
	opts := o.Run
	if opts.Fits, err = batchSpace(o.Collection, o.Run.Config); err != nil {
		return err
	}
	opts.Logger = o.Std.Log()
	res, err := manager.Run(ctx, o.Collection, opts)
	if err != nil {
		return err
	}
	recordMetrics(m, res)
	return printResult(out, res)
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
		fmt.Fprintf(tw, "length\t%s (%s)\n", r.BatchDuration, r.BatchDurationWhy)
		fmt.Fprintf(tw, "robots.txt\t%d sites with a stored copy in robots.jsonl\n", r.Robots)
		fmt.Fprintf(tw, "candidates\t%d (%d over max_pages_per_site, %d over max_site_pages, %d over max_fetches_per_script, %d held back by batch_duration, %d over the batch size)\n",
			r.Stats.Candidates, r.Stats.SiteCapped, r.Stats.SiteFull, r.Stats.ScriptCapped, r.Stats.TimeCapped, r.Stats.Left)
		if r.Stats.Filled > 0 {
			fmt.Fprintf(tw, "filled\t%d URLs held back by batch_duration taken to fill the batch up to its busiest server's time (docs/manager.md, \"Filling a batch to its length\")\n", r.Stats.Filled)
		}
		for _, n := range r.Stats.Notes {
			fmt.Fprintf(tw, "note\t%s\n", n)
		}
	}
	fmt.Fprintf(tw, "elapsed\t%s\n", r.Elapsed.Round(time.Millisecond))
	return tw.Flush()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
