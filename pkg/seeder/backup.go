package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Backups of graph.db (docs/operations.md, "A damaged graph.db"):
//
//	COLLECTION/backup/current/graph.db         the newest copy
//	COLLECTION/backup/current/frontier/park-*  hard links to the park files it records
//	COLLECTION/backup/previous/...             the copy before it
//
// A new copy is written whole under backup/.new, then previous is
// removed, current becomes previous and .new becomes current: at every
// moment at least one whole copy is there.
const (
	// BackupDir is the directory of graph.db's backups in a collection.
	BackupDir = "backup"
	// backupCurrent and backupPrevious are the newest copy and the one
	// before it.
	backupCurrent  = "current"
	backupPrevious = "previous"
	backupNew      = ".new"
	// managerLock is the manager's collection lock (manager.LockName):
	// restore holds it so that no batch is planned meanwhile.
	managerLock = collection.ManagerLock
)

// ErrNoBackup means restore found no whole copy of graph.db.
var ErrNoBackup = errors.New("no backup of graph.db")

// Backup writes a consistent copy of the open graph.db, with hard links
// to the park files it records, as the collection's current backup; the
// current one becomes the previous one. The caller holds the seeder's
// lock.
func Backup(g *linkgraph.Graph, col *collection.Collection) error {
	root := filepath.Join(col.Dir, BackupDir)
	tmp := filepath.Join(root, backupNew)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("back up graph.db: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, FrontierDir), 0o755); err != nil {
		return fmt.Errorf("back up graph.db: %w", err)
	}
	var parked []linkgraph.Parked
	if err := collection.WriteAtomic(filepath.Join(tmp, collection.GraphFile), func(w io.Writer) error {
		var err error
		parked, err = g.Backup(w)
		return err
	}); err != nil {
		return err
	}
	for _, p := range parked {
		if err := linkOrCopy(filepath.Join(col.Dir, FrontierDir, p.File), filepath.Join(tmp, FrontierDir, p.File)); err != nil {
			return fmt.Errorf("back up park file %d: %w", p.Seq, err)
		}
	}
	cur, prev := filepath.Join(root, backupCurrent), filepath.Join(root, backupPrevious)
	if err := os.RemoveAll(prev); err != nil {
		return fmt.Errorf("back up graph.db: %w", err)
	}
	if err := os.Rename(cur, prev); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("back up graph.db: %w", err)
	}
	if err := os.Rename(tmp, cur); err != nil {
		return fmt.Errorf("back up graph.db: %w", err)
	}
	return nil
}

// linkOrCopy hard-links src to dst (park files are never changed once
// written, only removed), or copies it where links are not possible.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return collection.WriteAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// maybeBackup backs up graph.db after batch id if seeder.backup_every
// says so. A failed backup is logged, not an error: the batch is seeded.
func maybeBackup(g *linkgraph.Graph, col *collection.Collection, cfg config.Config, id int, log *slog.Logger) {
	every := cfg.Seeder.BackupEvery
	if every <= 0 || id%every != 0 {
		return
	}
	start := time.Now()
	if err := Backup(g, col); err != nil {
		log.Warn("backup of graph.db failed; the batch is seeded", "batch", id, "err", err)
		return
	}
	log.Info("backed up graph.db", "batch", id, "dir", filepath.Join(col.Dir, BackupDir, backupCurrent), "elapsed", time.Since(start).Round(time.Millisecond))
}

// RestoreOptions are the inputs of Restore.
type RestoreOptions struct {
	Collection *collection.Collection
	Config     config.Config
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
	Logger       *slog.Logger
}

// RestoreSummary is what Restore did.
type RestoreSummary struct {
	From      string // the backup directory restored
	Damaged   string // where the replaced graph.db was moved, if there was one
	Scheduled []int  // batches whose scheduling was taken in again
	Seeded    []int  // batches taken in again from their files
}

// WriteText prints the summary for people.
func (s *RestoreSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "restored graph.db from %s\n", s.From)
	if s.Damaged != "" {
		fmt.Fprintf(w, "  the replaced graph.db is kept as %s (remove it when done)\n", s.Damaged)
	}
	fmt.Fprintf(w, "  batches scheduled again: %v; seeded again: %v\n", s.Scheduled, s.Seeded)
}

// Restore brings back the newest whole backup of graph.db (the previous
// one if the newest is damaged) and its park files, then takes in again,
// in the order they happened, what the batches did since: the scheduling
// of each batch the manager wrote (its documents scheduled, its record)
// and the seeding of each batch with a seeded.done marker, from its files
// on disk, as seeder run does. The replaced graph.db is kept beside it as
// graph.db.damaged. It holds the seeder's and the manager's locks.
//
// What is not taken in again: the manager's estimator state (OPIC cash,
// imported PageRank) of the batches since the backup, which only weighs
// the choice of later batches, and seeds added by seeder add since then
// (add them again).
func Restore(ctx context.Context, opts RestoreOptions) (*RestoreSummary, error) {
	log := logger(opts.Logger)
	col := opts.Collection
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	mlock, err := col.Lock(managerLock)
	if err != nil {
		return nil, fmt.Errorf("restore: the manager is running: %w", err)
	}
	defer mlock.Release()

	s := &RestoreSummary{}
	root := filepath.Join(col.Dir, BackupDir)
	for _, name := range []string{backupCurrent, backupPrevious} {
		path := filepath.Join(root, name, collection.GraphFile)
		if err := linkgraph.CheckFile(path); err != nil {
			log.Warn("backup unusable", "path", path, "err", err)
			continue
		}
		s.From = filepath.Join(root, name)
		break
	}
	if s.From == "" {
		return nil, fmt.Errorf("restore %s: %w in %s (seeder.backup_every)", col.GraphPath(), ErrNoBackup, root)
	}
	graph := col.GraphPath()
	if _, err := os.Stat(graph); err == nil {
		s.Damaged = graph + ".damaged"
		if err := os.Rename(graph, s.Damaged); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
	}
	src, err := os.Open(filepath.Join(s.From, collection.GraphFile))
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	err = collection.WriteAtomic(graph, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
	src.Close()
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	parks, err := os.ReadDir(filepath.Join(s.From, FrontierDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(col.Dir, FrontierDir), 0o755); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	for _, e := range parks {
		dst := filepath.Join(col.Dir, FrontierDir, e.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := linkOrCopy(filepath.Join(s.From, FrontierDir, e.Name()), dst); err != nil {
			return nil, fmt.Errorf("restore park file %s: %w", e.Name(), err)
		}
	}

	g, err := openGraph(col, false, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := removeOrphanParks(g, col, log); err != nil {
		return nil, err
	}
	events, err := replayEvents(g, col)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		b := col.Batch(e.batch)
		if e.seeded {
			log.Info("taking the batch in again", "batch", b.Name())
			if _, err := seedBatch(ctx, g, col, b, RunOptions{Collection: col, Config: opts.Config}, false); err != nil {
				return s, fmt.Errorf("restore: seed batch %s again: %w", b.Name(), err)
			}
			if _, err := release(ctx, g, col, opts.Config, false, log); err != nil {
				return s, fmt.Errorf("restore: after batch %s: %w", b.Name(), err)
			}
			s.Seeded = append(s.Seeded, e.batch)
			continue
		}
		log.Info("scheduling the batch again", "batch", b.Name())
		if err := reschedule(g, b); err != nil {
			return s, fmt.Errorf("restore: schedule batch %s again: %w", b.Name(), err)
		}
		s.Scheduled = append(s.Scheduled, e.batch)
	}
	if err := Backup(g, col); err != nil {
		return s, fmt.Errorf("restore: graph.db is restored, but its new backup failed: %w", err)
	}
	return s, nil
}

// replayEvent is something a batch did to graph.db after the backup:
// scheduled by the manager, or seeded.
type replayEvent struct {
	at     time.Time
	batch  int
	seeded bool
}

// replayEvents lists what the batches did that graph.db does not record,
// oldest first. A batch was scheduled when its batch.tsv was written
// (its modification time: the manager records the batch right after),
// and seeded when its seeding started (its summary): the manager and
// the seeder use graph.db one at a time, so these times order them.
func replayEvents(g *linkgraph.Graph, col *collection.Collection) ([]replayEvent, error) {
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	var events []replayEvent
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, id := range ids {
			b := col.Batch(id)
			st, recorded, err := tx.Batch(id)
			if err != nil {
				return err
			}
			fi, err := os.Stat(b.File())
			if err != nil {
				continue // not managed (or not whole): nothing to take in
			}
			if !recorded {
				events = append(events, replayEvent{at: fi.ModTime(), batch: id})
			}
			if b.Done(collection.StageSeeded) && st.Seeded.IsZero() {
				var sum Summary
				if err := b.Summary(collection.StageSeeded, &sum); err != nil {
					return err
				}
				at := sum.Started
				if at.Before(fi.ModTime()) {
					at = fi.ModTime().Add(time.Nanosecond)
				}
				events = append(events, replayEvent{at: at, batch: id, seeded: true})
			}
		}
		return nil
	})
	slices.SortStableFunc(events, func(a, b replayEvent) int { return a.at.Compare(b.at) })
	// A file's modification time comes from the kernel's coarse clock
	// (a tick, up to about 10 ms, behind the precise time a summary
	// records): a batch scheduled just after another was seeded can look
	// scheduled just before it. Within mtimeSlack, a batch's seeding goes
	// before the scheduling of a later batch, as the manager numbers
	// batches in the order it schedules them and the seeder of one and
	// the manager of the next take graph.db in turn.
	for swapped := true; swapped; {
		swapped = false
		for i := 0; i+1 < len(events); i++ {
			a, b := events[i], events[i+1]
			if !a.seeded && b.seeded && b.batch < a.batch && b.at.Sub(a.at) < mtimeSlack {
				events[i], events[i+1] = b, a
				swapped = true
			}
		}
	}
	return events, err
}

// mtimeSlack bounds how far a file's modification time may lag the
// precise clock (see replayEvents).
const mtimeSlack = 50 * time.Millisecond

// reschedule records again that the manager scheduled batch b, as its
// run did: every entry's document that is pending, fetched or failed
// becomes scheduled in the batch, and the batch gets its record.
func reschedule(g *linkgraph.Graph, b *collection.Batch) error {
	h, entries, err := batch.ReadFile(b.File())
	if err != nil {
		return err
	}
	ids := make([]uint64, len(entries))
	for i, e := range entries {
		ids[i] = e.DocID
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return g.Update(func(tx *linkgraph.Tx) error {
		if _, err := tx.UpdateDocs(ids, func(_ int, d *linkgraph.Doc) bool {
			switch d.State {
			case linkgraph.StatePending, linkgraph.StateFetched, linkgraph.StateFailed:
				d.State, d.Batch = linkgraph.StateScheduled, b.ID
				return true
			}
			return false
		}); err != nil {
			return fmt.Errorf("%w: %w", ErrMismatch, err)
		}
		return tx.PutBatch(linkgraph.BatchState{ID: b.ID, URLs: len(entries), Managed: h.Created})
	})
}
