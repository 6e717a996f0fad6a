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

const (
	linksMagic   = "WIRELNK1"
	linksTrailer = 32
)

// errLinksCache marks a cache file that cannot be used as it is.
var errLinksCache = errors.New("links cache unusable")

// linkCache is a links cache file that matched graph.db when opened.
type linkCache struct {
	path        string
	token       uint64
	rows, links uint64
}

// openLinkCache reads the header and trailer of the cache at path and
// checks that its size agrees with them; nil, nil if there is no file.
// The content is checked as it is read (forEach).
func openLinkCache(path string) (*linkCache, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("links cache %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("links cache %s: %w", path, err)
	}
	size := fi.Size()
	var head [8]byte
	var tail [linksTrailer]byte
	if size < int64(len(head)+len(tail)) {
		return nil, fmt.Errorf("links cache %s: %w: %d bytes", path, errLinksCache, size)
	}
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("links cache %s: %w", path, err)
	}
	if _, err := f.ReadAt(tail[:], size-linksTrailer); err != nil {
		return nil, fmt.Errorf("links cache %s: %w", path, err)
	}
	if string(head[:]) != linksMagic {
		return nil, fmt.Errorf("links cache %s: %w: not a links cache (%q)", path, errLinksCache, head[:])
	}
	c := &linkCache{
		path:  path,
		token: binary.LittleEndian.Uint64(tail[0:]),
		rows:  binary.LittleEndian.Uint64(tail[8:]),
		links: binary.LittleEndian.Uint64(tail[16:]),
	}
	if want := 8 + 8*c.rows + 4*c.links + linksTrailer; c.rows > uint64(size) || c.links > uint64(size) || uint64(size) != want {
		return nil, fmt.Errorf("links cache %s: %w: %d bytes for %d rows and %d links (torn?)", path, errLinksCache, size, c.rows, c.links)
	}
	return c, nil
}

// forEach calls fn with every row of the cache in id order: the
// document id and its targets (reused between calls). It checks the
// order, the counts and the checksum; a file that fails them is an error
// wrapping errLinksCache, returned after fn has seen the rows before the
// damage.
func (c *linkCache) forEach(ctx context.Context, fn func(src uint32, targets []uint32) error) error {
	f, err := os.Open(c.path)
	if err != nil {
		return fmt.Errorf("links cache %s: %w", c.path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	h := xxhash.New()
	read := func(b []byte) error {
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("links cache %s: %w: %w", c.path, errLinksCache, err)
		}
		h.Write(b)
		return nil
	}
	var head [8]byte
	if err := read(head[:]); err != nil {
		return err
	}
	var buf []byte
	var targets []uint32
	var links uint64
	prev := uint32(0)
	for row := range c.rows {
		if row%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := read(head[:]); err != nil {
			return err
		}
		src, n := binary.LittleEndian.Uint32(head[0:]), binary.LittleEndian.Uint32(head[4:])
		if src <= prev || links+uint64(n) > c.links {
			return fmt.Errorf("links cache %s: %w: row %d (doc %d, %d links) out of order or past the count", c.path, errLinksCache, row, src, n)
		}
		prev = src
		links += uint64(n)
		if cap(buf) < 4*int(n) {
			buf = make([]byte, 4*int(n))
			targets = make([]uint32, n)
		}
		buf, targets = buf[:4*n], targets[:n]
		if err := read(buf); err != nil {
			return err
		}
		for i := range targets {
			targets[i] = binary.LittleEndian.Uint32(buf[4*i:])
		}
		if err := fn(src, targets); err != nil {
			return err
		}
	}
	var tail [linksTrailer]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return fmt.Errorf("links cache %s: %w: %w", c.path, errLinksCache, err)
	}
	h.Write(tail[:24])
	if links != c.links || binary.LittleEndian.Uint64(tail[24:]) != h.Sum64() {
		return fmt.Errorf("links cache %s: %w: checksum or link count does not match", c.path, errLinksCache)
	}
	return nil
}

// linkWriter writes a links cache under a temporary name.
type linkWriter struct {
	f           *collection.AtomicFile
	w           *bufio.Writer
	h           *xxhash.Digest
	rows, links uint64
	buf         []byte
}

func newLinkWriter(path string) (*linkWriter, error) {
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	w := &linkWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), h: xxhash.New()}
	if err := w.write([]byte(linksMagic)); err != nil {
		f.Abort()
		return nil, err
	}
	return w, nil
}

func (w *linkWriter) write(b []byte) error {
	w.h.Write(b)
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("write links cache: %w", err)
	}
	return nil
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

// commit writes the trailer with token and publishes the file.
func (w *linkWriter) commit(token uint64) error {
	var tail [linksTrailer]byte
	binary.LittleEndian.PutUint64(tail[0:], token)
	binary.LittleEndian.PutUint64(tail[8:], w.rows)
	binary.LittleEndian.PutUint64(tail[16:], w.links)
	w.h.Write(tail[:24])
	binary.LittleEndian.PutUint64(tail[24:], w.h.Sum64())
	if _, err := w.w.Write(tail[:]); err != nil {
		return fmt.Errorf("write links cache: %w", err)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("write links cache: %w", err)
	}
	return w.f.Commit()
}

// linkRefresh says what refreshLinks did.
type linkRefresh struct {
	how     string // "updated", "rebuilt"
	why     string // why it was rebuilt
	changed uint64 // out-link sets read from graph.db
	elapsed time.Duration
}

// refreshLinks brings the links cache of col in step with graph.db and
// returns it: from the cache and the out-link sets written since it was
// made, or, if the cache is missing, from another state of graph.db,
// torn or damaged, from every out-link set of graph.db. The new cache is
// written with a new token, published, and then the out-link change log
// is reset to that token in graph.db; a crash in between leaves a cache
// whose token graph.db does not have, which the next run rebuilds.
func refreshLinks(ctx context.Context, col *collection.Collection, g *linkgraph.Graph, log *slog.Logger) (*linkCache, linkRefresh, error) {
	t0 := time.Now()
	path := col.LinksCachePath()
	removeLinkTemps(path, log)
	next, err := newToken()
	if err != nil {
		return nil, linkRefresh{}, err
	}
	var token uint64
	var res linkRefresh
	err = g.View(func(tx *linkgraph.Tx) error {
		tk, ids, err := tx.OutChanges()
		if err != nil {
			return err
		}
		token = tk
		old, err := openLinkCache(path)
		switch {
		case err != nil:
			res.why = err.Error()
		case old == nil:
			res.why = "no cache"
		case tk == 0:
			res.why = "graph.db's out-link change log was never reset"
		case old.token != tk:
			res.why = fmt.Sprintf("cache of another state of graph.db (token %x, graph.db's %x)", old.token, tk)
		default:
			res.how, res.changed = "updated", ids.GetCardinality()
			err := mergeLinks(ctx, tx, old, ids, path, next)
			if err == nil || !errors.Is(err, errLinksCache) {
				return err
			}
			res.why = err.Error()
		}
		res.how, res.changed = "rebuilt", 0
		return rebuildLinks(ctx, tx, path, next, &res.changed)
	})
	if err != nil {
		return nil, res, fmt.Errorf("links cache: %w", err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		tk, _, err := tx.OutChanges()
		if err != nil {
			return err
		}
		if tk != token {
			return fmt.Errorf("graph.db's out-link change log was reset meanwhile (token %x, was %x)", tk, token)
		}
		return tx.ResetOutChanges(next)
	})
	if err != nil {
		return nil, res, fmt.Errorf("links cache: %w", err)
	}
	c, err := openLinkCache(path)
	if err == nil && (c == nil || c.token != next) {
		err = fmt.Errorf("links cache %s: %w: not the file just written", path, errLinksCache)
	}
	res.elapsed = time.Since(t0)
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
	return w.commit(token)
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
	return w.commit(token)
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

// removeLinkTemps removes the temporary files of a links cache that a
// killed run left (the manager lock is held: no run is writing one).
func removeLinkTemps(path string, log *slog.Logger) {
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, t := range tmps {
		if err := os.Remove(t); err == nil {
			log.Info("removed a links cache temporary file left by a killed run", "file", t)
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
