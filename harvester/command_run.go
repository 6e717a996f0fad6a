package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
)

// runCommand is `harvester run`: harvest one batch (or one shard of it).
func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "harvest the next batch ready for the harvester (or batch N, or a bare batch directory)",
		UsageText: "harvester run [--batch N] [--force] [--shard i/N] [-c COLLECTION]\n   harvester run [--batch N] --follow [-c COLLECTION]\n   harvester run --batch-dir DIR [--config FILE] [--force] [--shard i/N]",
		Description: `Downloads every URL of the batch into BATCH/harvest/ (WARC files named
PREFIX-TIME-BATCH-sIofN-SERIAL.warc.gz, each with its CDXJ index, fetch.log,
robots.jsonl, servers.jsonl; docs/format/harvest.md) and marks the batch
harvested. Work goes to BATCH/harvest.partial/ first: a run that is interrupted
(SIGINT, SIGTERM: requests in flight get harvester.stop_timeout to finish) or
killed is resumed by the next run, which skips every URL already logged.

With --batch-dir the harvester works on a batch directory outside any
collection (batch.tsv alone is needed; robots.jsonl and servers.jsonl beside it
are used if present); the config is --config, else DIR/wire.toml if present,
else the defaults, environment and flags.

With --shard i/N (1 <= i <= N) it fetches only the URLs of the servers the batch
gives shard i (split by address, from the batch's files alone: every shard
computes the same split; a name that resolves to another shard's address is
deferred to the next batch), into BATCH/harvest-shard-i-of-N/, so that N
machines can share a batch; the batch is marked harvested when all N shards are done and merged into
BATCH/harvest/ (automatically by the last shard to finish when they share the
directory, else by "harvester run" without --shard once the shard directories
are copied back).

With --follow it harvests its batch as above and, while any of its harvests
runs, takes every newer batch that becomes ready for the harvester (checked
every 50 ms), oldest first, and harvests it in the same process beside the
running ones, with one politeness state (units, waits, Crawl-delays, the
address floor and connections_per_ip hold across the batches), one HTTP client
(connections, DNS cache), harvester.connections shared and the robots.txt
answers already fetched reused. Where batches compete (a unit, an address, a
connection, a host) the older batch goes first, and a newer batch's end rules
(deadline, tail) start once the older ones are done. Each batch keeps its own
lock, harvest directory, marker and summary, and is published as soon as its
own URLs are done. It prints each batch's summary as it is published, and a
total line when it took more than one; it exits once every harvest it took is
published and no batch is ready (0), or at the first failure, which stops the
others as SIGTERM does (a rerun resumes them). Whole batches only: not with
--shard or --batch-dir.

On a terminal, a status line shows URLs, pages, bytes, pages/s over the last
10 s, the time left at that rate, hosts active, waiting and done, errors, and
the hosts with the most URLs left; otherwise only the summary is printed. The
same goes to harvest.partial/progress.json every 5 s for 'manager status'.
With metrics.dir set the run writes METRICS_DIR/harvester.prom at its end, and
with metrics.listen it serves its metrics live at http://ADDR/metrics.

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitNetworkDown, command.ExitDiskFull),
		Flags: command.WithSettings(
			command.BatchFlag("harvest batch `N` instead of the next ready one"),
			&cli.StringFlag{Name: "batch-dir", Usage: "harvest the bare batch directory `DIR` (no collection needed)"},
			&cli.BoolFlag{Name: "force", Usage: "harvest again a batch (or shard) that is already harvested (needs --batch or --batch-dir)"},
			&cli.StringFlag{Name: "shard", Usage: "fetch only shard `i/N` of the batch (split by server address)"},
			&cli.BoolFlag{Name: "follow", Usage: "while harvesting, take each newer batch as soon as it is ready, in this process (whole batches, collection mode)"},
		),
		Action: command.Action(parseRun, runRun),
	}
}

// tuneGC makes the garbage collector run less often than Go's default
// (GOGC=400 rather than 100) unless GOGC is set: the harvester's live heap
// is small (bounded by connections × max_body_bytes) but it allocates a
// response and its WARC records per page, so the default collects for
// nothing and costs about a tenth of its CPU (docs/harvester.md).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// runOptions is what `harvester run` needs, from its flags. Its logger
// and progress are the harvester's own (a status line on a terminal),
// not command.Std's.
type runOptions struct {
	Collection string // collection directory (collection mode)
	Batch      int    // batch id; 0 = next ready
	BatchDir   string // bare batch directory (batch-dir mode)
	Force      bool
	Follow     bool // take the newer batches as they become ready
	Shard      harvester.Shard
	Config     config.Config
	Logger     *slog.Logger
	Progress   harvester.Progress
}

func parseRun(c *cli.Context) (runOptions, error) {
	o := runOptions{
		Collection: c.String(command.FlagCollection),
		Batch:      c.Int("batch"),
		BatchDir:   c.String("batch-dir"),
		Force:      c.Bool("force"),
		Follow:     c.Bool("follow"),
	}
	if o.BatchDir != "" && c.IsSet("batch") {
		return o, command.Usage("--batch and --batch-dir cannot be used together")
	}
	if o.Force && o.BatchDir == "" && o.Batch == 0 {
		return o, command.Usage("--force needs --batch N or --batch-dir DIR")
	}
	if o.Follow && (o.BatchDir != "" || c.IsSet("shard")) {
		return o, command.Usage("--follow harvests the whole batches of a collection: not with --shard or --batch-dir")
	}
	if o.Follow && o.Force {
		return o, command.Usage("--follow and --force cannot be used together")
	}
	if c.IsSet("batch") && o.Batch < 1 {
		return o, command.Usage("--batch must be a batch number (1 or more), got %d", o.Batch)
	}
	if c.IsSet("shard") {
		s, err := harvester.ParseShard(c.String("shard"))
		if err != nil {
			return o, command.Usage("--shard: %v", err)
		}
		o.Shard = s
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
	if err != nil {
		return o, err
	}
	// On a terminal the status line owns stderr: log lines go above it.
	if command.Interactive(c) {
		what := "harvesting"
		if !o.Shard.Whole() {
			what += " shard " + o.Shard.String()
		}
		sl := newStatusLine(c.App.ErrWriter, what)
		sl.byBatch = o.Follow
		o.Progress = sl
		saved := c.App.ErrWriter
		c.App.ErrWriter = sl
		o.Logger = command.Logger(c)
		c.App.ErrWriter = saved
	} else if c.Bool(command.FlagVerbose) || c.Bool(command.FlagQuiet) {
		o.Logger = command.Logger(c)
	} else {
		// Not a terminal (cron, a pipe): warnings and the summary only.
		o.Logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return o, nil
}

// runRun harvests one batch (or shard) and prints the summary paragraph
// on out.
func runRun(ctx context.Context, o runOptions, out io.Writer) (err error) {
	tuneGC()
	m, stop, err := startMetrics(ctx, &o) // metrics.go
	if err != nil {
		return err
	}
	defer stop()
	defer func() { m.Finish(err, o.Logger) }()
	hopts := harvester.Options{Config: o.Config, Logger: o.Logger, Progress: o.Progress, Force: o.Force, Shard: o.Shard}
	if o.Follow {
		return runFollow(ctx, o, hopts, m, out)
	}
	var sum *harvester.Summary
	harvestDir := filepath.Join(o.BatchDir, collection.HarvestDir)
	if o.BatchDir != "" {
		sum, err = harvester.RunDir(ctx, o.BatchDir, hopts)
	} else {
		col, oerr := collection.Open(o.Collection)
		if oerr != nil {
			return oerr
		}
		sum, err = harvester.RunCollection(ctx, col, o.Batch, hopts)
		if sum != nil {
			harvestDir = col.Batch(sum.Batch).HarvestPath()
		}
	}
	if err != nil {
		return err
	}
	recordMetrics(m, sum, harvestDir)
	_, err = fmt.Fprintln(out, sum)
	return err
}

// runFollow is `harvester run --follow`: it prints each batch's summary
// as the batch is published (and records its metrics), then a total line
// when it took more than one.
func runFollow(ctx context.Context, o runOptions, hopts harvester.Options, m *command.StageMetrics, out io.Writer) error {
	col, err := collection.Open(o.Collection)
	if err != nil {
		return err
	}
	var printErr error
	sums, err := harvester.FollowCollection(ctx, col, o.Batch, hopts, func(sum *harvester.Summary) {
		recordMetrics(m, sum, col.Batch(sum.Batch).HarvestPath())
		if _, perr := fmt.Fprintln(out, sum); perr != nil && printErr == nil {
			printErr = perr
		}
	})
	if len(sums) > 1 {
		if _, perr := fmt.Fprintln(out, harvester.FollowTotal(sums)); perr != nil && printErr == nil {
			printErr = perr
		}
	}
	if err != nil {
		return err
	}
	return printErr
}
