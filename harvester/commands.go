package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
)

func newApp() *cli.App {
	return command.NewApp("harvester", "download a batch politely (WIRE short-term scheduler)", runCommand(), fetchCommand())
}

func flags(extra ...cli.Flag) []cli.Flag {
	return append(append(extra, command.CommonFlags()...), command.SettingFlags()...)
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "harvest the next batch ready for the harvester (or batch N, or a bare batch directory)",
		UsageText: "harvester run [--batch N] [--force] [-c COLLECTION]\n   harvester run --batch-dir DIR [--config FILE]",
		Description: `Downloads every URL of the batch into BATCH/harvest/ (WARC files, fetch.log,
robots.jsonl; docs/format/harvest.md) and marks the batch harvested. Work goes
to BATCH/harvest.partial/ first: a run that is interrupted or killed is resumed
by the next run, which skips every URL already logged.

With --batch-dir the harvester works on a batch directory outside any
collection (batch.tsv alone is needed); the config is --config, else
DIR/wire.toml if present, else the defaults, environment and flags.

` + command.ExitCodesHelp,
		Flags: flags(
			&cli.IntFlag{Name: "batch", Usage: "harvest batch `N` instead of the next ready one"},
			&cli.StringFlag{Name: "batch-dir", Usage: "harvest the bare batch directory `DIR` (no collection needed)"},
			&cli.BoolFlag{Name: "force", Usage: "harvest again a batch that is already harvested (needs --batch or --batch-dir)"},
		),
		Action: func(c *cli.Context) error {
			opts, err := runOptionsFrom(c)
			if err != nil {
				return err
			}
			return run(c.Context, opts, c.App.Writer)
		},
	}
}

// runOptions is what `harvester run` needs, from its flags.
type runOptions struct {
	Collection string // collection directory (collection mode)
	Batch      int    // batch id; 0 = next ready
	BatchDir   string // bare batch directory (batch-dir mode)
	Force      bool
	Config     config.Config
	Logger     *slog.Logger
	Progress   harvester.Progress
}

func runOptionsFrom(c *cli.Context) (runOptions, error) {
	o := runOptions{
		Collection: c.String(command.FlagCollection),
		Batch:      c.Int("batch"),
		BatchDir:   c.String("batch-dir"),
		Force:      c.Bool("force"),
		Logger:     command.Logger(c),
		Progress:   &progress{c: c},
	}
	if c.Args().Len() > 0 {
		return o, command.Usage("run takes no arguments, got %q", c.Args().First())
	}
	if o.BatchDir != "" && c.IsSet("batch") {
		return o, command.Usage("--batch and --batch-dir cannot be used together")
	}
	if o.Force && o.BatchDir == "" && o.Batch == 0 {
		return o, command.Usage("--force needs --batch N or --batch-dir DIR")
	}
	if c.IsSet("batch") && o.Batch < 1 {
		return o, command.Usage("--batch must be a batch number (1 or more), got %d", o.Batch)
	}
	var err error
	if o.BatchDir != "" {
		file, optional := c.String(command.FlagConfig), false
		if file == "" {
			file, optional = filepath.Join(o.BatchDir, config.FileName), true
		}
		o.Config, err = config.Load(config.Sources{File: file, FileOptional: optional, Overrides: command.Overrides(c)})
	} else {
		o.Config, err = command.LoadConfig(c)
	}
	return o, err
}

// run harvests one batch and prints the summary paragraph on out.
func run(ctx context.Context, o runOptions, out io.Writer) error {
	hopts := harvester.Options{Config: o.Config, Logger: o.Logger, Progress: o.Progress, Force: o.Force}
	var sum *harvester.Summary
	var err error
	if o.BatchDir != "" {
		sum, err = harvester.RunDir(ctx, o.BatchDir, hopts)
	} else {
		col, oerr := collection.Open(o.Collection)
		if oerr != nil {
			return oerr
		}
		sum, err = harvester.RunCollection(ctx, col, o.Batch, hopts)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, sum)
	return err
}

// progress adapts command.Progress (which wants its total up front) to
// harvester.Progress.
type progress struct {
	c *cli.Context
	p *command.Progress
}

func (p *progress) Start(total int) { p.p = command.NewProgress(p.c, int64(total), "harvesting") }
func (p *progress) Add(n int)       { p.p.Add(n) }
func (p *progress) Done()           { p.p.Done() }

func fetchCommand() *cli.Command {
	return &cli.Command{
		Name:      "fetch",
		Usage:     "fetch one URL with the harvester's client and print status, headers and size",
		UsageText: "harvester fetch [--body] URL",
		Description: `A debugging aid: one GET with the harvester's User-Agent, DNS, address
policy, time limits, body cap and gzip handling, without robots.txt or waits.
The headers printed are the ones the harvester would store.

` + command.ExitCodesHelp,
		Flags: flags(&cli.BoolFlag{Name: "body", Usage: "print the body too"}),
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return command.Usage("fetch takes one URL")
			}
			cfg, err := command.LoadConfig(c)
			if err != nil {
				return err
			}
			return fetchOne(c.Context, cfg, c.Args().First(), c.Bool("body"), command.Logger(c), c.App.Writer)
		},
	}
}

func fetchOne(ctx context.Context, cfg config.Config, rawURL string, body bool, log *slog.Logger, out io.Writer) error {
	resp, err := harvester.FetchOne(ctx, cfg, rawURL, log)
	if resp == nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", resp.StatusLine)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(out, "%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(out, "\n%d bytes stored from %s in %d ms", len(resp.Body), resp.IP, resp.Duration.Milliseconds())
	if resp.Truncated != "" {
		fmt.Fprintf(out, " (truncated: %s)", resp.Truncated)
	}
	fmt.Fprintln(out)
	if loc := resp.Location(); loc != "" {
		fmt.Fprintf(out, "redirect to %s (not followed)\n", loc)
	}
	if body {
		out.Write(resp.Body)
		if len(resp.Body) > 0 && resp.Body[len(resp.Body)-1] != '\n' {
			fmt.Fprintln(out)
		}
	}
	return err
}
