package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The documents cache (docs/manager.md, "Incremental planning") holds
// the facts of every document (docFacts: what the value function needs
// of it that does not depend on the time of the run) in one flat file
// beside graph.db, COLLECTION/graph.docs (collection.DocsCacheFile),
// which readDocs streams instead of decoding every record of graph.db
// and estimating every fetched page's rate of change. Each run brings it
// in step by computing the facts of the documents written since the last
// run only (graph.db's document change log), as the links cache does
// with the out-links (linkcache.go). The facts depend on three settings
// (factsFingerprint: the dynamic extensions, min_revisit and the time
// scale); a cache made under others is rebuilt.
//
// Layout (docs/format/collection.md): the 8 bytes "WIREDOC1"; then one
// record of factsSize bytes per document in increasing id order
// (appendFacts); then the trailer: the token, the number of records, the
// settings' fingerprint and the xxhash64 of every byte before it
// (uint64 each, little endian).

const docsMagic = "WIREDOC1"

// docCache is a documents cache file that matched graph.db when opened.
type docCache struct {
	path   string
	token  uint64
	count  uint64
	finger uint64
	file   *cacheFile
}

// openDocCache opens the documents cache at path and checks that its
// size agrees with its count; nil, nil if there is no file.
func openDocCache(path string) (*docCache, error) {
	c, err := openCacheFile(path, docsMagic)
	if c == nil || err != nil {
		return nil, err
	}
	dc := &docCache{path: path, token: c.token, count: c.a, finger: c.b, file: c}
	if dc.count > uint64(c.size) || uint64(c.size) != uint64(len(docsMagic))+factsSize*dc.count+cacheTrailer {
		return nil, fmt.Errorf("documents cache %s: %w: %d bytes for %d documents (torn?)", path, errCache, c.size, dc.count)
	}
	return dc, nil
}

// forEach calls fn with the facts of every document in id order (f is
// reused between calls). It checks the order and the checksum; a file
// that fails them is an error wrapping errCache, returned after fn has
// seen the documents before the damage.
func (c *docCache) forEach(ctx context.Context, fn func(f *docFacts) error) error {
	s, err := c.file.stream(docsMagic)
	if err != nil {
		return err
	}
	const per = 4096
	buf := make([]byte, per*factsSize)
	var f docFacts
	prev := uint32(0)
	for done := uint64(0); done < c.count; {
		if err := ctx.Err(); err != nil {
			s.f.Close()
			return err
		}
		n := min(c.count-done, per)
		b := buf[:n*factsSize]
		if err := s.read(b); err != nil {
			s.f.Close()
			return err
		}
		for i := range n {
			decodeFacts(b[i*factsSize:], &f)
			if f.id <= prev {
				s.f.Close()
				return fmt.Errorf("documents cache %s: %w: doc %d after %d", c.path, errCache, f.id, prev)
			}
			prev = f.id
			if err := fn(&f); err != nil {
				s.f.Close()
				return err
			}
		}
		done += n
	}
	return s.finish()
}

// docWriter writes a documents cache.
type docWriter struct {
	*cacheWriter
	count uint64
}

func newDocWriter(path string) (*docWriter, error) {
	w, err := newCacheWriter(path, docsMagic)
	if err != nil {
		return nil, err
	}
	return &docWriter{cacheWriter: w}, nil
}

func (w *docWriter) add(f *docFacts) error {
	w.buf = appendFacts(w.buf[:0], f)
	w.count++
	return w.write(w.buf)
}

// refreshDocs brings the documents cache of col in step with graph.db
// (refreshCache) for the settings of rules (fingerprint finger) and
// returns it.
func refreshDocs(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, rules *limits, finger uint64, log *slog.Logger) (*docCache, cacheRefresh, error) {
	path := col.DocsCachePath()
	facts := func(tx *linkgraph.Tx, id uint32) (docFacts, bool, error) {
		d, err := tx.Doc(uint64(id))
		if errors.Is(err, linkgraph.ErrNotFound) {
			return docFacts{}, false, nil
		}
		if err != nil {
			return docFacts{}, false, err
		}
		if err := checkIDs(d); err != nil {
			return docFacts{}, false, err
		}
		return factsOf(d, rules), true, nil
	}
	next, res, err := refreshCache(ctx, g, cacheKind{
		path:    path,
		changes: (*linkgraph.Tx).DocChanges,
		reset:   (*linkgraph.Tx).ResetDocChanges,
		token: func() (uint64, string) {
			c, err := openDocCache(path)
			switch {
			case err != nil:
				return 0, err.Error()
			case c == nil:
				return 0, "no cache"
			case c.finger != finger:
				return 0, "made under other settings (dynamic_extensions, min_revisit or time_scale)"
			}
			return c.token, ""
		},
		merge: func(ctx context.Context, tx *linkgraph.Tx, changed *roaring.Bitmap, next uint64) error {
			old, err := openDocCache(path)
			if err != nil {
				return err
			}
			w, err := newDocWriter(path)
			if err != nil {
				return err
			}
			defer w.f.Abort()
			it := changed.Iterator()
			// fresh writes the facts of the changed documents before id
			// limit (all when limit is 0) from graph.db.
			fresh := func(limit uint32) error {
				for it.HasNext() && (limit == 0 || it.PeekNext() < limit) {
					f, ok, err := facts(tx, it.Next())
					if err != nil || !ok {
						return err
					}
					if err := w.add(&f); err != nil {
						return err
					}
				}
				return nil
			}
			err = old.forEach(ctx, func(f *docFacts) error {
				if err := fresh(f.id); err != nil {
					return err
				}
				if changed.Contains(f.id) {
					return fresh(f.id + 1)
				}
				return w.add(f)
			})
			if err != nil {
				return err
			}
			if err := fresh(0); err != nil {
				return err
			}
			return w.commit(next, w.count, finger)
		},
		rebuild: func(ctx context.Context, tx *linkgraph.Tx, next uint64) (uint64, error) {
			w, err := newDocWriter(path)
			if err != nil {
				return 0, err
			}
			defer w.f.Abort()
			err = tx.ForEachDoc(func(d *linkgraph.Doc) error {
				if w.count%8192 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if err := checkIDs(d); err != nil {
					return err
				}
				f := factsOf(d, rules)
				return w.add(&f)
			})
			if err != nil {
				return 0, err
			}
			return w.count, w.commit(next, w.count, finger)
		},
	}, log)
	if err != nil {
		return nil, res, fmt.Errorf("documents cache: %w", err)
	}
	c, err := openDocCache(path)
	if err == nil && (c == nil || c.token != next) {
		err = fmt.Errorf("documents cache %s: %w: not the file just written", path, errCache)
	}
	return c, res, err
}
