package manager

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// The links cache (docs/manager.md, "Incremental planning") is the
// manager's copy of graph.db's out-link sets in one flat file beside it,
// COLLECTION/graph.links (collection.LinksCacheFile), which the
// strategies that read links stream instead of decoding every out-link
// set of graph.db, twice for PageRank. Each run brings it in step with
// graph.db by reading only the out-link sets written since the previous
// run: graph.db logs their ids (linkgraph's out-link change log), and
// the cache records the token of the log's last reset. A cache whose
// token is not graph.db's (a run killed between writing the cache and
// resetting the log, a graph.db restored from a copy, a cache from
// another collection), or that is torn or damaged (its checksum), is
// rebuilt from graph.db, never used.
//
// Layout (docs/format/collection.md): the 8 bytes "WIRELNK1"; then per
// document with an out-link set, in increasing id order, its id and the
// number n of its targets (uint32 each) and the n target ids (uint32,
// ascending), exactly as graph.db stores them (a document whose set is
// empty has no row); then the trailer: the
// token, the number of rows and of targets (uint64 each) and the
// xxhash64 of every byte before it (uint64). All little endian.

const linksMagic = "WIRELNK1"

// errCache marks a cache file that cannot be used as it is.
var errCache = errors.New("cache unusable")

// linkCache is a links cache file that matched graph.db when opened.
type linkCache struct {
	path        string
	token       uint64
	rows, links uint64
	file        *cacheFile
}

// cacheTrailer is the size of a cache file's trailer: the token, two
// counts and the checksum (uint64 each).
const cacheTrailer = 32

// cacheFile is the trailer of a cache file (links or documents).
type cacheFile struct {
	path  string
	size  int64
	token uint64
	a, b  uint64 // its two counts
}

// openCacheFile reads the magic and the trailer of the cache at path;
// nil, nil if there is no file.
func openCacheFile(path, magic string) (*cacheFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	size := fi.Size()
	head := make([]byte, len(magic))
	var tail [cacheTrailer]byte
	if size < int64(len(head)+len(tail)) {
		return nil, fmt.Errorf("cache %s: %w: %d bytes", path, errCache, size)
	}
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if _, err := f.ReadAt(tail[:], size-cacheTrailer); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if string(head) != magic {
		return nil, fmt.Errorf("cache %s: %w: does not start with %s (%q)", path, errCache, magic, head)
	}
	return &cacheFile{path: path, size: size,
		token: binary.LittleEndian.Uint64(tail[0:]),
		a:     binary.LittleEndian.Uint64(tail[8:]),
		b:     binary.LittleEndian.Uint64(tail[16:]),
	}, nil
}

// cacheStream reads a cache file's body, checksumming it.
type cacheStream struct {
	c *cacheFile
	f *os.File
	r *bufio.Reader
	h *xxhash.Digest
}

func (c *cacheFile) stream(magic string) (*cacheStream, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", c.path, err)
	}
	s := &cacheStream{c: c, f: f, r: bufio.NewReaderSize(f, 1<<20), h: xxhash.New()}
	if err := s.read(make([]byte, len(magic))); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *cacheStream) read(b []byte) error {
	if _, err := io.ReadFull(s.r, b); err != nil {
		return fmt.Errorf("cache %s: %w: %w", s.c.path, errCache, err)
	}
	s.h.Write(b)
	return nil
}

// finish checks the trailer's checksum after the body and closes the file.
func (s *cacheStream) finish() error {
	defer s.f.Close()
	var tail [cacheTrailer]byte
	if _, err := io.ReadFull(s.r, tail[:]); err != nil {
		return fmt.Errorf("cache %s: %w: %w", s.c.path, errCache, err)
	}
	s.h.Write(tail[:24])
	if binary.LittleEndian.Uint64(tail[24:]) != s.h.Sum64() {
		return fmt.Errorf("cache %s: %w: checksum does not match", s.c.path, errCache)
	}
	if _, err := s.r.ReadByte(); err != io.EOF {
		return fmt.Errorf("cache %s: %w: bytes after the trailer", s.c.path, errCache)
	}
	return nil
}

// openLinkCache opens the links cache at path and checks that its size
// agrees with its counts; nil, nil if there is no file. The content is
// checked as it is read (forEach).
func openLinkCache(path string) (*linkCache, error) {
	c, err := openCacheFile(path, linksMagic)
	if c == nil || err != nil {
		return nil, err
	}
	lc := &linkCache{path: path, token: c.token, rows: c.a, links: c.b, file: c}
	if want := uint64(len(linksMagic)) + 8*lc.rows + 4*lc.links + cacheTrailer; lc.rows > uint64(c.size) || lc.links > uint64(c.size) || uint64(c.size) != want {
		return nil, fmt.Errorf("links cache %s: %w: %d bytes for %d rows and %d links (torn?)", path, errCache, c.size, lc.rows, lc.links)
	}
	return lc, nil
}

// forEach calls fn with every row of the cache in id order: the
// document id and its targets (reused between calls). It checks the
// order, the counts and the checksum; a file that fails them is an error
// wrapping errCache, returned after fn has seen the rows before the
// damage.
func (c *linkCache) forEach(ctx context.Context, fn func(src uint32, targets []uint32) error) error {
	s, err := c.file.stream(linksMagic)
	if err != nil {
		return err
	}
	var head [8]byte
	var buf []byte
	var targets []uint32
	var links uint64
	prev := uint32(0)
	for row := range c.rows {
		if row%8192 == 0 {
			if err := ctx.Err(); err != nil {
				s.f.Close()
				return err
			}
		}
		if err := s.read(head[:]); err != nil {
			s.f.Close()
			return err
		}
		src, n := binary.LittleEndian.Uint32(head[0:]), binary.LittleEndian.Uint32(head[4:])
		if src <= prev || links+uint64(n) > c.links {
			s.f.Close()
			return fmt.Errorf("links cache %s: %w: row %d (doc %d, %d links) out of order or past the count", c.path, errCache, row, src, n)
		}
		prev = src
		links += uint64(n)
		if cap(buf) < 4*int(n) {
			buf = make([]byte, 4*int(n))
			targets = make([]uint32, n)
		}
		buf, targets = buf[:4*n], targets[:n]
		if err := s.read(buf); err != nil {
			s.f.Close()
			return err
		}
		for i := range targets {
			targets[i] = binary.LittleEndian.Uint32(buf[4*i:])
		}
		if err := fn(src, targets); err != nil {
			s.f.Close()
			return err
		}
	}
	if links != c.links {
		s.f.Close()
		return fmt.Errorf("links cache %s: %w: %d links, the trailer says %d", c.path, errCache, links, c.links)
	}
	return s.finish()
}

// cacheWriter writes a cache file (links or documents) under a
// temporary name: its magic, then its body, then the trailer (commit).
type cacheWriter struct {
	f   *collection.AtomicFile
	w   *bufio.Writer
	h   *xxhash.Digest
	buf []byte
}

func newCacheWriter(path, magic string) (*cacheWriter, error) {
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	w := &cacheWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), h: xxhash.New()}
	if err := w.write([]byte(magic)); err != nil {
		f.Abort()
		return nil, err
	}
	return w, nil
}

func (w *cacheWriter) write(b []byte) error {
	w.h.Write(b)
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	return nil
}

// commit writes the trailer — token, a, b and the checksum — and
// publishes the file.
func (w *cacheWriter) commit(token, a, b uint64) error {
	var tail [cacheTrailer]byte
	binary.LittleEndian.PutUint64(tail[0:], token)
	binary.LittleEndian.PutUint64(tail[8:], a)
	binary.LittleEndian.PutUint64(tail[16:], b)
	w.h.Write(tail[:24])
	binary.LittleEndian.PutUint64(tail[24:], w.h.Sum64())
	if _, err := w.w.Write(tail[:]); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	return w.f.Commit()
}

// linkWriter writes a links cache.
type linkWriter struct {
	*cacheWriter
	rows, links uint64
}

func newLinkWriter(path string) (*linkWriter, error) {
	w, err := newCacheWriter(path, linksMagic)
	if err != nil {
		return nil, err
	}
	return &linkWriter{cacheWriter: w}, nil
}

// row appends the out-link set of doc src (ids after the previous row's).
func (w *linkWriter) row(src uint32, targets []uint32) error {
	b := binary.LittleEndian.AppendUint32(w.buf[:0], src)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(targets)))
	for _, t := range targets {
		b = binary.LittleEndian.AppendUint32(b, t)
	}
	w.buf = b
	w.rows++
	w.links += uint64(len(targets))
	return w.write(b)
}

// cacheRefresh says what refreshing a cache did.
type cacheRefresh struct {
	how     string // "updated", "rebuilt"
	why     string // why it was rebuilt
	read    uint64 // documents read from graph.db
	elapsed time.Duration
}

// cacheKind is how refreshCache handles one cache.
type cacheKind struct {
	path string
	// changes and reset are graph.db's change log of the cache.
	changes func(tx *linkgraph.Tx) (uint64, *roaring.Bitmap, error)
	reset   func(tx *linkgraph.Tx, token uint64) error
	// token opens the cache file: its token, or why it cannot be used.
	token func() (uint64, string)
	// merge writes the cache of graph.db now, with token next, from the
	// cache file and the documents in changed; rebuild from graph.db
	// alone, returning the documents it read. An error wrapping errCache
	// from merge says the old file is damaged: it is rebuilt.
	merge   func(ctx context.Context, tx *linkgraph.Tx, changed *roaring.Bitmap, next uint64) error
	rebuild func(ctx context.Context, tx *linkgraph.Tx, next uint64) (uint64, error)
}

// refreshCache brings a cache in step with graph.db and returns its new
// token: from the cache and the documents written since it was made, or,
// if the cache is missing, from another state of graph.db, torn or
// damaged, from graph.db alone. The new cache is written with a new
// token, published, and then graph.db's change log is reset to that
// token; a crash in between leaves a cache whose token graph.db does not
// have, which the next run rebuilds.
func refreshCache(ctx context.Context, g *linkgraph.Graph, k cacheKind, log *slog.Logger) (uint64, cacheRefresh, error) {
	t0 := time.Now()
	removeCacheTemps(k.path, log)
	next, err := newToken()
	if err != nil {
		return 0, cacheRefresh{}, err
	}
	var token uint64
	var res cacheRefresh
	err = g.View(func(tx *linkgraph.Tx) error {
		tk, ids, err := k.changes(tx)
		if err != nil {
			return err
		}
		token = tk
		old, why := k.token()
		switch {
		case why != "":
			res.why = why
		case tk == 0:
			res.why = "graph.db's change log was never reset"
		case old != tk:
			res.why = fmt.Sprintf("cache of another state of graph.db (token %x, graph.db's %x)", old, tk)
		default:
			res.how, res.read = "updated", ids.GetCardinality()
			err := k.merge(ctx, tx, ids, next)
			if err == nil || !errors.Is(err, errCache) {
				return err
			}
			res.why = err.Error()
		}
		res.how = "rebuilt"
		res.read, err = k.rebuild(ctx, tx, next)
		return err
	})
	if err != nil {
		return 0, res, err
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
	res.elapsed = time.Since(t0)
	return next, res, err
}

// refreshLinks brings the links cache of col in step with graph.db
// (refreshCache) and returns it.
func refreshLinks(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, log *slog.Logger) (*linkCache, cacheRefresh, error) {
	path := col.LinksCachePath()
	next, res, err := refreshCache(ctx, g, cacheKind{
		path:    path,
		changes: (*linkgraph.Tx).OutChanges,
		reset:   (*linkgraph.Tx).ResetOutChanges,
		token: func() (uint64, string) {
			c, err := openLinkCache(path)
			switch {
			case err != nil:
				return 0, err.Error()
			case c == nil:
				return 0, "no cache"
			}
			return c.token, ""
		},
		merge: func(ctx context.Context, tx *linkgraph.Tx, changed *roaring.Bitmap, next uint64) error {
			old, err := openLinkCache(path)
			if err != nil {
				return err
			}
			return mergeLinks(ctx, tx, old, changed, path, next)
		},
		rebuild: func(ctx context.Context, tx *linkgraph.Tx, next uint64) (uint64, error) {
			var n uint64
			err := rebuildLinks(ctx, tx, path, next, &n)
			return n, err
		},
	}, log)
	if err != nil {
		return nil, res, fmt.Errorf("links cache: %w", err)
	}
	c, err := openLinkCache(path)
	if err == nil && (c == nil || c.token != next) {
		err = fmt.Errorf("links cache %s: %w: not the file just written", path, errCache)
	}
	return c, res, err
}

// mergeLinks writes the cache of graph.db now from old and the out-link
// sets of the documents in changed, read from tx.
func mergeLinks(ctx context.Context, tx *linkgraph.Tx, old *linkCache, changed *roaring.Bitmap, path string, token uint64) error {
	w, err := newLinkWriter(path)
	if err != nil {
		return err
	}
	defer w.f.Abort()
	it := changed.Iterator()
	var scratch []uint32
	// fresh writes the rows of the changed documents before id limit
	// (all when limit is 0) from graph.db.
	fresh := func(limit uint32) error {
		for it.HasNext() && (limit == 0 || it.PeekNext() < limit) {
			id := it.Next()
			bm, err := tx.OutLinks(uint64(id))
			if err != nil {
				return err
			}
			if scratch = appendBitmap(scratch[:0], bm); len(scratch) == 0 {
				continue // no out-links now: no row, as rebuildLinks
			}
			if err := w.row(id, scratch); err != nil {
				return err
			}
		}
		return nil
	}
	err = old.forEach(ctx, func(src uint32, targets []uint32) error {
		if err := fresh(src); err != nil {
			return err
		}
		if changed.Contains(src) {
			if it.HasNext() && it.PeekNext() == src {
				return fresh(src + 1)
			}
			return nil
		}
		return w.row(src, targets)
	})
	if err != nil {
		return err
	}
	if err := fresh(0); err != nil {
		return err
	}
	return w.commit(token, w.rows, w.links)
}

// rebuildLinks writes the cache from every out-link set of graph.db,
// counting them into n.
func rebuildLinks(ctx context.Context, tx *linkgraph.Tx, path string, token uint64, n *uint64) error {
	w, err := newLinkWriter(path)
	if err != nil {
		return err
	}
	defer w.f.Abort()
	var scratch []uint32
	rows := 0
	err = tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
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
		*n++
		return w.row(uint32(id), scratch)
	})
	if err != nil {
		return err
	}
	return w.commit(token, w.rows, w.links)
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
