package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/harvester"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// indexCommand is `harvester index`: (re)build the CDXJ indexes of
// harvested batches.
func indexCommand() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "write the CDXJ index of every WARC file of harvested batches that has none",
		UsageText: "harvester index [--batches RANGE] [--force] [-c COLLECTION]\n   harvester index --batch-dir DIR [--force]",
		Description: `A harvest publishes, beside each WARC file NAME.warc.gz, its CDXJ index
NAME.cdxj: one line per response and revisit record, "SURT-KEY TIMESTAMP
{JSON}" with url, mime, status, digest, length, offset and filename, sorted
(pywb's form; docs/format/harvest.md, "CDXJ indexes"). This command writes the
indexes a harvest lacks (batches harvested before the indexes existed, an
index removed) for every harvested batch of the collection, or those of
--batches (N, N-M or N-); --force rewrites every index, a damaged one too.
--batch-dir works on one bare batch directory instead. Each batch is indexed under its harvester
lock. A WARC file's torn last record (a killed run's) is left out, with a
warning.

` + command.ExitCodes(command.ExitNothingToDo, command.ExitLocked, command.ExitDamaged),
		Flags: append(command.CommonFlags(),
			&cli.StringFlag{Name: "batches", Usage: "index the batches of `RANGE` only: N, N-M or N- (default: every harvested batch)"},
			&cli.StringFlag{Name: "batch-dir", Usage: "index the bare batch directory `DIR` (no collection needed)"},
			&cli.BoolFlag{Name: "force", Usage: "rewrite the indexes that exist too"},
		),
		Action: command.Action(parseIndex, runIndex),
	}
}

// indexOptions is what `harvester index` needs.
type indexOptions struct {
	Collection string                // collection directory (unless BatchDir)
	Batches    collection.BatchRange // the batches to index
	BatchDir   string                // a bare batch directory instead
	Force      bool
	Std        command.Std
}

func parseIndex(c *cli.Context) (indexOptions, error) {
	o := indexOptions{Collection: c.String(command.FlagCollection), BatchDir: c.String("batch-dir"), Force: c.Bool("force"), Std: command.StdFrom(c)}
	r, err := parseBatchesFlag(c, o.BatchDir)
	o.Batches = r
	return o, err
}

// parseBatchesFlag parses --batches N-M of the commands on harvests (index,
// wacz), which --batch-dir excludes; the zero range when it is not given.
func parseBatchesFlag(c *cli.Context, batchDir string) (collection.BatchRange, error) {
	if !c.IsSet("batches") {
		return collection.BatchRange{}, nil
	}
	if batchDir != "" {
		return collection.BatchRange{}, command.Usage("--batches and --batch-dir cannot be used together")
	}
	r, err := collection.ParseBatchRange(c.String("batches"))
	if err != nil {
		return collection.BatchRange{}, command.Usage("--batches: %v", err)
	}
	return r, nil
}

// runIndex indexes the batches and prints what it wrote on out.
func runIndex(ctx context.Context, o indexOptions, out io.Writer) error {
	batches, err := harvestedBatches(o.Collection, o.BatchDir, o.Batches)
	if err != nil {
		return err
	}
	var total cdxj.Stats
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		st, err := harvester.IndexBatch(b, o.Force, o.Std.Log())
		if err != nil {
			return asDamage(err)
		}
		total.Files += st.Files
		total.Indexed += st.Indexed
		total.Lines += st.Lines
	}
	_, err = fmt.Fprintf(out, "indexed %d batches: %d WARC files, %d indexes written (%d lines), %d already indexed\n",
		len(batches), total.Files, total.Indexed, total.Lines, total.Files-total.Indexed)
	return err
}

// harvestedBatches are the batches a command on harvests works on: the
// bare batch directory dir, or the harvested batches of the collection
// in the range. None is collection.ErrNothingToDo.
func harvestedBatches(colDir, dir string, r collection.BatchRange) ([]*collection.Batch, error) {
	if dir != "" {
		b := &collection.Batch{Dir: filepath.Clean(dir), ID: batchID(dir)}
		if !b.Done(collection.StageHarvested) {
			return nil, fmt.Errorf("batch directory %s is not harvested: %w", dir, collection.ErrNothingToDo)
		}
		return []*collection.Batch{b}, nil
	}
	col, err := collection.Open(colDir)
	if err != nil {
		return nil, err
	}
	bs, err := col.Harvested(r)
	if err != nil {
		return nil, err
	}
	if len(bs) == 0 {
		return nil, fmt.Errorf("no harvested batch in %s (batches %s): %w", col.Dir, r, collection.ErrNothingToDo)
	}
	return bs, nil
}

// batchID is the id a bare batch directory's name gives (0 if none), as
// harvester run takes it.
func batchID(dir string) int {
	id, err := strconv.Atoi(filepath.Base(filepath.Clean(dir)))
	if err != nil {
		return 0
	}
	return id
}

// asDamage marks an error caused by a WARC file or an index that cannot
// be read as damage (exit code 6), which the message names.
func asDamage(err error) error {
	if errors.Is(err, warcio.ErrRecord) || errors.Is(err, cdxj.ErrFormat) {
		return fmt.Errorf("%w: %w (restore the file from a copy; an index is rebuilt by harvester index --force)", collection.ErrDamaged, err)
	}
	return err
}
