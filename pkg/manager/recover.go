package manager

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// A batch is created in two steps, the file then the graph transaction,
// and cancelled in three: rename the directory to .cancelled-NNNNNN,
// roll back the graph, remove the directory. A crash between steps
// leaves a state that the next run or cancel recognises and finishes:
//
//	batch.tsv without a batch state in graph.db → complete the transaction
//	batches/.cancelled-NNNNNN                   → finish the roll-back, remove
//	newest batch directory without batch.tsv    → remove (file never committed)
//	  (holding only robots.jsonl, servers.jsonl or temporary files)

// cancelledPrefix starts the name a cancelled batch directory takes until
// it is removed; the name is not a batch id, so no stage sees it.
const cancelledPrefix = ".cancelled-"

func batchesDir(col *collection.Collection) string {
	return filepath.Join(col.Dir, collection.BatchesDir)
}

// completeInterrupted finishes the newest batch if its file was written
// but graph.db has no record of it. It returns nil, nil when there is
// nothing to complete.
func completeInterrupted(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, log *slog.Logger) (*Result, error) {
	ids, err := col.BatchIDs()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	id := ids[len(ids)-1]
	var known bool
	if err := g.View(func(tx *linkgraph.Tx) error {
		_, known, err = tx.Batch(id)
		return err
	}); err != nil || known {
		return nil, err
	}
	b := col.Batch(id)
	h, entries, err := batch.ReadFile(b.File())
	if err != nil {
		return nil, fmt.Errorf("complete interrupted batch %s: %w (graph.db has no record of it; fix or remove %s)", b.Name(), err, b.Dir)
	}
	if h.Batch != id {
		return nil, fmt.Errorf("complete interrupted batch %s: %w: the file says batch %d", b.Name(), ErrBatchMismatch, h.Batch)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	marked, err := markScheduled(g, id, entries, h.Created, nil)
	if err != nil {
		return nil, fmt.Errorf("complete interrupted batch %s: %w", b.Name(), err)
	}
	log.Warn("completed interrupted batch", "batch", id, "urls", len(entries), "marked", marked)
	c := count(entries)
	return &Result{
		Batch: id, File: b.File(), Strategy: h.Strategy,
		URLs: len(entries), Sites: c.sites, New: c.new, Revisits: c.revisits,
		ScoreMin: c.scoreMin, ScoreMax: c.scoreMax, Recovered: true,
	}, nil
}

// finishCancels completes cancellations a crash interrupted: for every
// batches/.cancelled-NNNNNN it rolls back batch N in graph.db (a no-op if
// that was done) and removes the directory.
func finishCancels(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, log *slog.Logger) error {
	dirents, err := os.ReadDir(batchesDir(col))
	if err != nil {
		return fmt.Errorf("list batches: %w", err)
	}
	for _, e := range dirents {
		name, ok := strings.CutPrefix(e.Name(), cancelledPrefix)
		id, err := strconv.Atoi(name)
		if !ok || err != nil || id <= 0 {
			continue
		}
		dir := filepath.Join(batchesDir(col), e.Name())
		if col.Batch(id).Done(collection.StageManaged) {
			// A batch of that id exists again: the roll-back was done
			// before it was made. Only the leftover remains.
			log.Warn("removing leftover of a cancelled batch", "dir", dir)
		} else {
			n, err := rollback(ctx, g, id)
			if err != nil {
				return fmt.Errorf("finish cancelling batch %s: %w", collection.BatchName(id), err)
			}
			log.Warn("finished cancelling batch", "batch", id, "restored", n)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("finish cancelling batch %s: %w", collection.BatchName(id), err)
		}
	}
	return nil
}

// removeUnwritten removes batch directories newer than the newest batch
// file that hold nothing but what the manager writes before batch.tsv
// (robots.jsonl, servers.jsonl, temporary files): a manager was killed
// before the batch was complete, and the id should not be skipped.
func removeUnwritten(col *collection.Collection, log *slog.Logger) error {
	ids, err := col.BatchIDs()
	if err != nil {
		return err
	}
	newest := 0
	if len(ids) > 0 {
		newest = ids[len(ids)-1]
	}
	dirents, err := os.ReadDir(batchesDir(col))
	if err != nil {
		return fmt.Errorf("list batches: %w", err)
	}
	for _, e := range dirents {
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= newest || collection.BatchName(id) != e.Name() {
			continue
		}
		dir := filepath.Join(batchesDir(col), e.Name())
		inside, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("list %s: %w", dir, err)
		}
		if !onlyTemporary(inside) {
			log.Warn("batch directory without a batch file left alone (its id is skipped)", "dir", dir)
			continue
		}
		log.Warn("removing unfinished batch directory", "dir", dir)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	return nil
}

func onlyTemporary(files []os.DirEntry) bool {
	for _, f := range files {
		if !unwrittenFile(f.Name()) {
			return false
		}
	}
	return true
}
