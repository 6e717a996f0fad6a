package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The documents cache (docs/manager.md, "Incremental planning") holds
// the facts of every document (docFacts: what the value function needs
// of it that does not depend on the time of the run) in one file beside
// graph.db, COLLECTION/graph.docs (collection.DocsCacheFile), which
// readDocs streams instead of decoding every record of graph.db and
// estimating every fetched page's rate of change. Each run brings it in
// step by computing the facts of the documents written since the last
// run only (graph.db's document change log) and appending them
// (segcache.go), as the links cache does with the out-links
// (linkcache.go). The facts depend on three settings (factsFingerprint:
// the dynamic extensions, min_revisit and the time scale); a cache made
// under others is rebuilt.
//
// A row (segcache.go) is one unit of factsSize bytes, the document's
// facts (appendFacts); a document without a record has none.

const docsMagic = "WIREDOC2"

// docCache is a documents cache file that matched graph.db when opened.
type docCache struct{ *segFile }

// openDocCache opens the documents cache at path; nil, nil if there is
// no file.
func openDocCache(path string) (*docCache, error) {
	c, err := openSegFile(path, docsMagic, factsSize)
	if c == nil || err != nil {
		return nil, err
	}
	return &docCache{c}, nil
}

// forEach calls fn with the facts of every document in id order (f is
// reused between calls). A file that fails its checks is an error
// wrapping errCache, returned after fn has seen the documents before the
// damage.
func (c *docCache) forEach(ctx context.Context, fn func(f *docFacts) error) error {
	var f docFacts
	return c.segFile.forEach(ctx, func(id, n uint32, payload []byte) error {
		if n != 1 {
			return fmt.Errorf("documents cache %s: %w: doc %d has %d records", c.path, errCache, id, n)
		}
		decodeFacts(payload, &f)
		if f.id != id {
			return fmt.Errorf("documents cache %s: %w: the facts of doc %d in the row of doc %d", c.path, errCache, f.id, id)
		}
		return fn(&f)
	})
}

// docSource is where the documents cache's rows come from: the facts of
// graph.db's records under the settings of rules.
func docSource(rules *limits) segSource {
	return segSource{
		row: func(tx *linkgraph.Tx, id uint32, buf []byte) ([]byte, uint32, error) {
			d, err := tx.Doc(uint64(id))
			if errors.Is(err, linkgraph.ErrNotFound) {
				return buf, 0, nil
			}
			if err != nil {
				return buf, 0, err
			}
			if err := checkIDs(d); err != nil {
				return buf, 0, err
			}
			f := factsOf(d, rules)
			return appendFacts(buf, &f), 1, nil
		},
		all: func(ctx context.Context, tx *linkgraph.Tx, fn func(id, n uint32, payload []byte) error) error {
			var buf []byte
			n := 0
			return tx.ForEachDoc(func(d *linkgraph.Doc) error {
				if n++; n%8192 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if err := checkIDs(d); err != nil {
					return err
				}
				f := factsOf(d, rules)
				buf = appendFacts(buf[:0], &f)
				return fn(f.id, 1, buf)
			})
		},
	}
}

// refreshDocs brings the documents cache of col in step with graph.db
// (refreshCache) for the settings of rules (fingerprint finger) and
// returns it.
func refreshDocs(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, rules *limits, finger uint64, log *slog.Logger) (*docCache, cacheRefresh, error) {
	c, res, err := refreshCache(ctx, g, cacheKind{
		path:      col.DocsCachePath(),
		magic:     docsMagic,
		unit:      factsSize,
		finger:    finger,
		fingerWhy: "made under other settings (dynamic_extensions, min_revisit or time_scale)",
		changes:   (*linkgraph.Tx).DocChanges,
		reset:     (*linkgraph.Tx).ResetDocChanges,
		src:       docSource(rules),
	}, log)
	if err != nil {
		return nil, res, fmt.Errorf("documents cache: %w", err)
	}
	return &docCache{c}, res, nil
}
