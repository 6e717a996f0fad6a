package manager

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The links cache (docs/manager.md, "Incremental planning") is the
// manager's copy of graph.db's out-link sets in one file beside it,
// COLLECTION/graph.links (collection.LinksCacheFile), which the
// strategies that read links stream instead of decoding every out-link
// set of graph.db, twice for PageRank. Each run brings it in step with
// graph.db by reading only the out-link sets written since the previous
// run (graph.db logs their ids: linkgraph's out-link change log) and
// appending them to the file (segcache.go); the file records the token
// of the log's last reset. A cache whose token is not graph.db's (a run
// killed between writing the cache and resetting the log, a graph.db
// restored from a copy, a cache from another collection), or that is
// torn or damaged (its checksums), is rebuilt from graph.db, never used.
//
// A row (segcache.go) is a document's out-link set as graph.db holds it:
// its target ids, ascending, one uint32 unit each.

const linksMagic = "WIRELNK2"

// errCache marks a cache file that cannot be used as it is.
var errCache = errors.New("cache unusable")

// linkCache is a links cache file that matched graph.db when opened.
type linkCache struct{ *segFile }

// openLinkCache opens the links cache at path; nil, nil if there is no
// file. The content is checked as it is read (forEach).
func openLinkCache(path string) (*linkCache, error) {
	c, err := openSegFile(path, linksMagic, 4)
	if c == nil || err != nil {
		return nil, err
	}
	return &linkCache{c}, nil
}

// forEach calls fn with every out-link set of the cache in id order: the
// document id and its targets (reused between calls). A file that fails
// its checks is an error wrapping errCache, returned after fn has seen
// the rows before the damage.
func (c *linkCache) forEach(ctx context.Context, fn func(src uint32, targets []uint32) error) error {
	var targets []uint32
	return c.segFile.forEach(ctx, func(id, n uint32, payload []byte) error {
		targets = slices.Grow(targets[:0], int(n))[:n]
		for i := range targets {
			targets[i] = binary.LittleEndian.Uint32(payload[4*i:])
		}
		return fn(id, targets)
	})
}

// cacheRefresh says what refreshing a cache did.
type cacheRefresh struct {
	how      string // "appended", "compacted", "rebuilt"
	why      string // why it was rebuilt
	read     uint64 // documents read from graph.db
	segments int    // segments of the file after
	bytes    int64  // size of the file after
	elapsed  time.Duration
}

// cacheKind is how refreshCache handles one cache.
type cacheKind struct {
	path  string
	magic string
	unit  int
	// finger is the fingerprint of the settings the rows depend on (0:
	// none), fingerWhy what a cache made under others says.
	finger    uint64
	fingerWhy string
	// changes and reset are graph.db's change log of the cache.
	changes func(tx *linkgraph.Tx) (uint64, *roaring.Bitmap, error)
	reset   func(tx *linkgraph.Tx, token uint64) error
	src     segSource
}

// refreshCache brings a cache in step with graph.db and returns it: the
// rows of the documents written since it was made appended to it (or,
// past the compaction threshold, the file rewritten as one segment); if
// the cache is missing, from another state of graph.db, under other
// settings, torn or damaged, it is rebuilt from graph.db alone. The cache
// is written with a new token, and then graph.db's change log is reset to
// that token; a crash in between leaves a cache whose token graph.db does
// not have, which the next run rebuilds.
func refreshCache(ctx context.Context, g *linkgraph.Graph, k cacheKind, log *slog.Logger) (*segFile, cacheRefresh, error) {
	t0 := time.Now()
	removeCacheTemps(k.path, log)
	next, err := newToken()
	if err != nil {
		return nil, cacheRefresh{}, err
	}
	var token uint64
	var res cacheRefresh
	err = g.View(func(tx *linkgraph.Tx) error {
		tk, ids, err := k.changes(tx)
		if err != nil {
			return err
		}
		token = tk
		old, err := openSegFile(k.path, k.magic, k.unit)
		switch {
		case err != nil:
			res.why = err.Error()
		case old == nil:
			res.why = "no cache"
		case old.finger != k.finger:
			res.why = k.fingerWhy
		case tk == 0:
			res.why = "graph.db's change log was never reset"
		case old.token != tk:
			res.why = fmt.Sprintf("cache of another state of graph.db (token %x, graph.db's %x)", old.token, tk)
		case old.needsCompaction():
			res.how = "compacted"
			res.read, err = writeSegFile(ctx, tx, k.path, k.magic, k.unit, k.src, old, ids, next, k.finger)
			if err == nil || !errors.Is(err, errCache) {
				return err
			}
			res.why = err.Error()
		default:
			res.how = "appended"
			res.read, err = appendSegment(ctx, tx, old, k.src, ids, next)
			return err
		}
		res.how = "rebuilt"
		res.read, err = writeSegFile(ctx, tx, k.path, k.magic, k.unit, k.src, nil, nil, next, k.finger)
		return err
	})
	if err != nil {
		return nil, res, err
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		tk, _, err := k.changes(tx)
		if err != nil {
			return err
		}
		if tk != token {
			return fmt.Errorf("graph.db's change log was reset meanwhile (token %x, was %x)", tk, token)
		}
		return k.reset(tx, next)
	})
	if err != nil {
		return nil, res, err
	}
	c, err := openSegFile(k.path, k.magic, k.unit)
	if err == nil && (c == nil || c.token != next) {
		err = fmt.Errorf("cache %s: %w: not the file just written", k.path, errCache)
	}
	if err != nil {
		return nil, res, err
	}
	res.segments, res.bytes, res.elapsed = len(c.segs), c.size, time.Since(t0)
	return c, res, nil
}

// linkSource is where the links cache's rows come from: graph.db's
// out-link sets.
func linkSource() segSource {
	return segSource{
		row: func(tx *linkgraph.Tx, id uint32, buf []byte) ([]byte, uint32, error) {
			bm, err := tx.OutLinks(uint64(id))
			if err != nil {
				return buf, 0, err
			}
			n := uint32(bm.GetCardinality())
			it := bm.Iterator()
			for it.HasNext() {
				buf = binary.LittleEndian.AppendUint32(buf, it.Next())
			}
			return buf, n, nil
		},
		all: func(ctx context.Context, tx *linkgraph.Tx, fn func(id, n uint32, payload []byte) error) error {
			var buf []byte
			var scratch []uint32
			rows := 0
			return tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
				if rows++; rows%8192 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				if id == 0 || id > 1<<32-1 {
					return fmt.Errorf("out-links of doc %d: id out of range", id)
				}
				if scratch = appendBitmap(scratch[:0], bm); len(scratch) == 0 {
					return nil // an empty set adds no link: no row
				}
				buf = buf[:0]
				for _, t := range scratch {
					buf = binary.LittleEndian.AppendUint32(buf, t)
				}
				return fn(uint32(id), uint32(len(scratch)), buf)
			})
		},
	}
}

// refreshLinks brings the links cache of col in step with graph.db
// (refreshCache) and returns it.
func refreshLinks(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, log *slog.Logger) (*linkCache, cacheRefresh, error) {
	c, res, err := refreshCache(ctx, g, cacheKind{
		path:    col.LinksCachePath(),
		magic:   linksMagic,
		unit:    4,
		changes: (*linkgraph.Tx).OutChanges,
		reset:   (*linkgraph.Tx).ResetOutChanges,
		src:     linkSource(),
	}, log)
	if err != nil {
		return nil, res, fmt.Errorf("links cache: %w", err)
	}
	return &linkCache{c}, res, nil
}

// appendBitmap appends the ids of bm to dst, ascending.
func appendBitmap(dst []uint32, bm *roaring.Bitmap) []uint32 {
	var buf [256]uint32
	it := bm.ManyIterator()
	for {
		n := it.NextMany(buf[:])
		if n == 0 {
			return dst
		}
		dst = append(dst, buf[:n]...)
	}
}

// removeCacheTemps removes the temporary files of a cache that a killed
// run left (the manager lock is held: no run is writing one).
func removeCacheTemps(path string, log *slog.Logger) {
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, t := range tmps {
		if err := os.Remove(t); err == nil {
			log.Info("removed a cache's temporary file left by a killed run", "file", t)
		}
	}
}

// newToken returns a random token, not 0.
func newToken() (uint64, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("links cache token: %w", err)
		}
		if t := binary.LittleEndian.Uint64(b[:]); t != 0 {
			return t, nil
		}
	}
}
