package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/textstore"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:  "compact",
		Usage: "merge the text store's segments into one, dropping replaced versions",
		Description: `Merges every segment of the text store into one, named by the newest batch:
for each URL it keeps the entry of the newest segment and drops the older
versions it replaced; each text still pointed at is copied once. Data files
nothing points at any more, and leftovers of crashed runs, are removed.

It holds the gatherer's lock (locks/gatherer.lock, or TEXT-DIR/gatherer.lock
with --text-dir), so it never runs alongside "gatherer run". It is
crash-safe: killed at any moment, the store reads as before or as after,
and running it again finishes the job (docs/format/textstore.md). A batch
whose segment was compacted cannot be gathered again with --force.

Exits 3 when there is nothing to compact (one segment, nothing to reclaim).

` + command.ExitCodes(command.ExitLocked),
		Flags:  command.WithSettings(&cli.StringFlag{Name: "text-dir", Usage: "text store directory (default: COLLECTION/text)"}),
		Action: command.Action(parseCompact, runCompact),
	}
}

// compactOptions is what `gatherer compact` needs.
type compactOptions struct {
	Dir        string                 // the text store
	Collection *collection.Collection // nil with --text-dir
	Std        command.Std
}

func parseCompact(c *cli.Context) (compactOptions, error) {
	o := compactOptions{Dir: c.String("text-dir")}
	var err error
	if o.Dir != "" {
		_, err = command.LoadConfig(c)
	} else if o.Collection, _, err = command.Open(c); err == nil {
		o.Dir = o.Collection.TextPath()
	}
	if err != nil {
		return compactOptions{}, err
	}
	o.Std = command.StdFrom(c)
	return o, nil
}

// runCompact compacts the text store under the gatherer's lock and
// prints what it did on out.
func runCompact(ctx context.Context, o compactOptions, out io.Writer) error {
	dir := o.Dir
	var (
		lock *collection.Lock
		err  error
	)
	if o.Collection == nil {
		lock, err = collection.LockPath(filepath.Join(dir, collection.LockFileName(collection.GathererLock)))
	} else {
		lock, err = o.Collection.Lock(collection.GathererLock)
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	start := time.Now()
	st, err := textstore.Compact(dir)
	if err != nil {
		return err
	}
	if st.Segments == 0 {
		return fmt.Errorf("text store %s: one segment, nothing to reclaim: %w", dir, collection.ErrNothingToDo)
	}
	o.Std.Log().Info("compacted", "dir", dir, "segments", st.Segments, "into", st.Into, "entries", st.Entries, "replaced", st.Replaced)
	fmt.Fprintf(out, "text store %s compacted in %s\n", dir, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(out, "  segments  %d merged into %s (batches %d to %d, data generation %d)\n", st.Segments, textstore.SegmentName(st.Into), st.FirstBatch, st.Into, st.Generation)
	fmt.Fprintf(out, "  entries   %d kept of %d: %d replaced versions dropped\n", st.Entries, st.EntriesIn, st.Replaced)
	fmt.Fprintf(out, "  texts     %d stored, %d entries sharing one\n", st.Records, st.Shared)
	fmt.Fprintf(out, "  disk      %.1f MB in %d files before, %.1f MB in 2 after (%d files removed)\n", float64(st.BytesBefore)/1e6, st.FilesBefore, float64(st.BytesAfter)/1e6, st.Removed)
	return nil
}
