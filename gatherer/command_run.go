package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "gather the next harvested batch (or --batch N, or --batch-dir DIR)",
		Description: `Reads the batch's harvest/fetch.log and WARC files, parses every page on
gatherer.workers goroutines, and writes parsed/docs.jsonl (one record per
fetch log line, in its order) and a text segment text/seg-NNNNNN.{dat,idx}
named by the batch. Then writes the batch's gathered.done marker with the
summary, also printed on standard output (docs/gatherer.md).

Without --batch it takes the oldest batch that is harvested and not
gathered, and exits 3 when there is none. A batch not harvested yet is
refused; one already gathered is refused unless --force is given with
--batch. Gathering a batch again gives the same docs.jsonl and segment.

With --batch-dir DIR --text-dir DIR it works without a collection (on a
machine of its own): DIR is a copied batch directory, the text segment goes
to the given text directory, and the lock is TEXT-DIR/gatherer.lock. Copy
the batch directory and the segment files back into the collection for the
seeder.

A WARC record that cannot be read back (a WARC file missing, emptied,
truncated or corrupt; with --verify-digests also a record whose digest does
not match) stops the run with exit 6, naming the file and the offset; nothing
is published and the batch stays harvested, not gathered. Restore the file
and run again, or run with --salvage: the records that can be read are taken
in, and each page whose record cannot be read is written as "unread" (status
0), which the seeder puts back in the frontier as not fetched, without a
failure counted. The summary lists the unread records.

With --follow it gathers a batch while the harvester is still writing it:
each page is parsed as soon as its fetch log line is written, and the run
ends once the batch is harvested and every line is gathered; what it
publishes is what a run after the harvest would publish (scripts/crawl.sh
runs it so; docs/gatherer.md, "Gathering while the harvest is written").
Without --batch it takes the oldest batch not gathered, harvested or not.
It waits as long as the harvest takes: stop it with SIGTERM or SIGINT if
the harvester stops for good.

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitDamaged, command.ExitDiskFull),
		Flags: command.WithSettings(
			command.BatchFlag("batch number to gather (default: the oldest harvested, not gathered)"),
			&cli.BoolFlag{Name: "force", Usage: "gather the batch again even if already gathered (needs --batch or --batch-dir)"},
			&cli.StringFlag{Name: "batch-dir", Usage: "batch directory to gather without a collection (needs --text-dir)"},
			&cli.StringFlag{Name: "text-dir", Usage: "text store directory for --batch-dir"},
			&cli.BoolFlag{Name: "verify-digests", Usage: "read every record the fetch log points at (redirects and error pages too) and check its WARC-Block-Digest; a mismatch is a damaged record (the gzip CRC of each record read is always checked)"},
			&cli.BoolFlag{Name: "salvage", Usage: "take in a batch with damaged WARC records: the pages whose records cannot be read go back to the frontier, not fetched"},
			&cli.BoolFlag{Name: "follow", Usage: "gather the batch while it is harvested: parse each page as its fetch log line is written, end once the batch is harvested"},
		),
		Action: command.Action(parseRun, runRun),
	}
}

// runOptions is what `gatherer run` needs.
type runOptions struct {
	Gather     gatherer.Options       // from the settings and flags; run sets the batch, the text directory, the logger and progress
	Collection *collection.Collection // nil with --batch-dir
	Batch      int                    // --batch; 0: the oldest harvested, not gathered
	BatchDir   string                 // --batch-dir
	TextDir    string                 // --text-dir (with --batch-dir)
	Force      bool
	Follow     bool          // --follow
	Config     config.Config // collection.min_free and metrics.dir
	Std        command.Std
}

func parseRun(c *cli.Context) (runOptions, error) {
	o := runOptions{Batch: c.Int("batch"), Force: c.Bool("force"), Follow: c.Bool("follow"), BatchDir: c.String("batch-dir"), TextDir: c.String("text-dir")}
	switch {
	case o.Batch < 0:
		return o, command.Usage("--batch must be positive, got %d", o.Batch)
	case (o.BatchDir == "") != (o.TextDir == ""):
		return o, command.Usage("--batch-dir and --text-dir go together")
	case o.BatchDir != "" && o.Batch != 0:
		return o, command.Usage("--batch and --batch-dir exclude each other")
	case o.Force && o.Batch == 0 && o.BatchDir == "":
		return o, command.Usage("--force needs --batch N or --batch-dir DIR")
	}
	var (
		cfg config.Config
		err error
	)
	if o.BatchDir != "" {
		cfg, err = command.LoadConfig(c)
	} else {
		o.Collection, cfg, err = command.Open(c)
	}
	if err != nil {
		return o, err
	}
	o.Config = cfg
	if o.Gather, err = gatherer.OptionsFromConfig(cfg); err != nil {
		return o, err
	}
	o.Gather.VerifyDigests, o.Gather.Salvage = c.Bool("verify-digests"), c.Bool("salvage")
	o.Std = command.StdFrom(c)
	return o, nil
}

// runRun gathers the batch under the gatherer's lock, with progress on
// a terminal, and prints the summary on out.
func runRun(ctx context.Context, o runOptions, out io.Writer) (err error) {
	var (
		b       *collection.Batch
		lock    *collection.Lock
		textDir = o.TextDir
		root    = o.BatchDir // the collection, or the bare batch directory
	)
	if o.Collection == nil {
		id, err := gatherer.BatchID(o.BatchDir)
		if err != nil {
			return err
		}
		b = &collection.Batch{ID: id, Dir: o.BatchDir}
		if lock, err = collection.LockPath(filepath.Join(textDir, collection.LockFileName(collection.GathererLock))); err != nil {
			return err
		}
	} else {
		col := o.Collection
		textDir, root = col.TextPath(), col.Dir
		if lock, err = col.Lock(collection.GathererLock); err != nil {
			return err
		}
		switch {
		case o.Batch != 0:
			b = col.Batch(o.Batch)
		case o.Follow:
			b, err = nextToFollow(col)
		default:
			b, err = col.NextReady(collection.StageGathered)
		}
		if err != nil {
			lock.Release()
			return err
		}
	}
	defer lock.Release()
	m := command.NewStageMetrics("gatherer", root, o.Config, false) // metrics.go
	defer func() { m.Finish(err, o.Std.Log()) }()
	if err := command.CheckDisk(textDir, o.Config, gatherNeed(b), ""); err != nil {
		return err
	}
	if err := b.CheckReady(collection.StageGathered); err != nil && !(o.Force && errors.Is(err, collection.ErrAlreadyDone)) && !(o.Follow && errors.Is(err, collection.ErrNotReady)) {
		return err
	}

	opts := o.Gather
	opts.BatchDir, opts.BatchID, opts.TextDir, opts.Follow = b.Dir, b.ID, textDir, o.Follow
	opts.Logger = o.Std.Log()
	var progress *command.Progress
	opts.Progress = func(done, total int) {
		if progress == nil {
			progress = command.NewProgress(o.Std, int64(total), fmt.Sprintf("gathering %s", b.Name()))
		}
		progress.Add(1)
	}
	defer gatherer.TuneGC()() // GOGC=400 unless GOGC is set (gatherer.GCPercent)
	s, err := gatherer.Run(ctx, opts)
	progress.Done()
	if err != nil {
		return err
	}
	recordMetrics(m, s)
	s.WriteText(out)
	return nil
}

// nextToFollow is the oldest batch of col that is written and not
// gathered, harvested or not.
func nextToFollow(col *collection.Collection) (*collection.Batch, error) {
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		b := col.Batch(id)
		if b.Done(collection.StageManaged) && !b.Done(collection.StageGathered) {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no batch is written and not gathered: %w", collection.ErrNothingToDo)
}
