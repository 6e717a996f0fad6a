package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// CancelOptions configure Cancel.
type CancelOptions struct {
	// Force cancels a batch whose harvest has started but not finished
	// (harvest.partial/ or harvest/ without harvested.done, or a shard's
	// harvest-shard-I-of-N[.partial]/ or harvested-shard-I-of-N.done). A
	// harvested batch is never cancelled, nor one a harvester is running
	// on.
	Force        bool
	Logger       *slog.Logger  // nil discards
	GraphTimeout time.Duration // 0 means DefaultGraphTimeout
}

// CancelResult is what Cancel did.
type CancelResult struct {
	Batch    int // the batch cancelled
	Restored int // documents returned to pending, fetched or failed
}

// Cancel rolls back the newest batch if it has not been harvested: its
// scheduled documents go back to the state a new run would choose from,
// graph.db forgets the batch, and the batch directory is removed. See
// recover.go for the order of the steps and what a crash leaves.
func Cancel(ctx context.Context, col *collection.Collection, opts CancelOptions) (*CancelResult, error) {
	log := orDiscard(opts.Logger)
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	g, err := openGraph(col, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := finishCancels(ctx, col, g, log); err != nil {
		return nil, err
	}

	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("cancel: no batch to cancel: %w", collection.ErrNothingToDo)
	}
	b := col.Batch(ids[len(ids)-1])
	if b.Done(collection.StageHarvested) {
		return nil, fmt.Errorf("cancel batch %s: %w: it has been harvested (only a batch not yet harvested can be cancelled)", b.Name(), collection.ErrAlreadyDone)
	}
	// Refuse while a harvester runs, and keep one from starting on the
	// batch while it goes away.
	held, err := holdHarvesterLocks(col, b)
	for _, l := range held {
		defer l.Release()
	}
	if err != nil {
		return nil, err
	}
	started, err := b.HarvestOutputs()
	if err != nil {
		return nil, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
	}
	if len(started) > 0 && !opts.Force {
		return nil, fmt.Errorf("cancel batch %s: %w (%s in %s); use --force to cancel it anyway", b.Name(), ErrHarvestStarted, strings.Join(started, ", "), b.Dir)
	}

	moved := filepath.Join(batchesDir(col), cancelledPrefix+b.Name())
	if err := os.RemoveAll(moved); err != nil {
		return nil, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
	}
	if err := os.Rename(b.Dir, moved); err != nil {
		return nil, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
	}
	if err := collection.SyncDir(batchesDir(col)); err != nil {
		return nil, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
	}
	n, err := rollback(ctx, g, b.ID)
	if err != nil {
		return nil, fmt.Errorf("cancel batch %s (the next run or cancel finishes it): %w", b.Name(), err)
	}
	if err := os.RemoveAll(moved); err != nil {
		return nil, fmt.Errorf("cancel batch %s: remove %s: %w", b.Name(), moved, err)
	}
	log.Info("cancelled batch", "batch", b.ID, "restored", n)
	return &CancelResult{Batch: b.ID, Restored: n}, nil
}

// holdHarvesterLocks takes every lock a harvester of batch b would hold
// (collection.HarvesterLockFiles: the unsharded harvester's and each
// shard's in locks/, and those in the batch directory), and fails with
// collection.ErrLocked, naming the harvester, if one is held. It returns
// the locks it took, to be released by the caller, also on error.
func holdHarvesterLocks(col *collection.Collection, b *collection.Batch) ([]*collection.Lock, error) {
	files, err := col.HarvesterLockFiles(b)
	if err != nil {
		return nil, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
	}
	var held []*collection.Lock
	for _, f := range files {
		l, err := collection.LockPath(f)
		if errors.Is(err, collection.ErrLocked) {
			who := "a harvester"
			if i, n, ok := collection.ParseShardFile(filepath.Base(f)); ok {
				who = fmt.Sprintf("harvester shard %d/%d", i, n)
			}
			where := "this collection"
			if filepath.Dir(f) == b.Dir {
				where = "batch " + b.Name()
			}
			return held, fmt.Errorf("cancel batch %s: %s is running on %s: %w", b.Name(), who, where, err)
		}
		if err != nil {
			return held, fmt.Errorf("cancel batch %s: %w", b.Name(), err)
		}
		held = append(held, l)
	}
	return held, nil
}

// rollback returns every document scheduled in batch id to the state it
// had before (failed if its last attempts failed, fetched if it has been
// fetched, else pending) and forgets the batch, in one transaction.
func rollback(ctx context.Context, g *linkgraph.Graph, id int) (int, error) {
	n := 0
	err := g.Update(func(tx *linkgraph.Tx) error {
		var docs []*linkgraph.Doc
		err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if d.State == linkgraph.StateScheduled && d.Batch == id {
				docs = append(docs, d)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, d := range docs {
			switch {
			case d.Failures > 0:
				d.State = linkgraph.StateFailed
			case d.Visits > 0:
				d.State = linkgraph.StateFetched
			default:
				d.State = linkgraph.StatePending
			}
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		n = len(docs)
		return tx.DeleteBatch(id)
	})
	return n, err
}
