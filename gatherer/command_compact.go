package main

import (
	"fmt"
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
		Action: runCompact,
	}
}

func runCompact(c *cli.Context) error {
	dir := c.String("text-dir")
	var (
		lock *collection.Lock
		err  error
	)
	if dir != "" {
		if _, err := command.LoadConfig(c); err != nil {
			return err
		}
		lock, err = collection.LockPath(filepath.Join(dir, collection.LockFileName(collection.GathererLock)))
	} else {
		var col *collection.Collection
		if col, _, err = command.Open(c); err != nil {
			return err
		}
		dir = col.TextPath()
		lock, err = col.Lock(collection.GathererLock)
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
	command.Logger(c).Info("compacted", "dir", dir, "segments", st.Segments, "into", st.Into, "entries", st.Entries, "replaced", st.Replaced)
	w := c.App.Writer
	fmt.Fprintf(w, "text store %s compacted in %s\n", dir, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "  segments  %d merged into %s (batches %d to %d, data generation %d)\n", st.Segments, textstore.SegmentName(st.Into), st.FirstBatch, st.Into, st.Generation)
	fmt.Fprintf(w, "  entries   %d kept of %d: %d replaced versions dropped\n", st.Entries, st.EntriesIn, st.Replaced)
	fmt.Fprintf(w, "  texts     %d stored, %d entries sharing one\n", st.Records, st.Shared)
	fmt.Fprintf(w, "  disk      %.1f MB in %d files before, %.1f MB in 2 after (%d files removed)\n", float64(st.BytesBefore)/1e6, st.FilesBefore, float64(st.BytesAfter)/1e6, st.Removed)
	return nil
}
