package manager

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// A cache file (the documents cache and the links cache, docs/manager.md
// "Incremental planning"; format in docs/format/collection.md) is
// append-only: a run writes the rows of the documents that changed since
// the last run as a new segment at the end of the file, so that its
// writing is proportional to the changes, not to the collection. A
// document's row in a later segment replaces its rows in earlier ones;
// reading merges the segments in id order. When the appended segments
// hold more than a third of the rows' bytes (an upper bound of the dead
// share) or there are maxSegments of them, the run rewrites the file as
// one segment instead (compaction): amortised, a rewrite of the whole
// cache every few cycles.
//
// Layout: the 8-byte magic; the segments, back to back; the index, per
// segment its offset, length, rows, units and xxhash64 (uint64 each);
// the trailer: the number of segments, the token, the settings'
// fingerprint, the xxhash64 of the index and of those three (uint64
// each) and the 8 bytes segTrailerMagic. All little endian. A
// segment is rows in increasing id order: the id and the number n of
// units (uint32 each), then n units of the cache's unit size; n = 0 says
// the document has no row (its earlier rows are dead). The index and
// trailer an append replaces stay in the file as dead bytes.

const (
	segTrailerMagic = "WIRESEG1"
	segTrailer      = 4*8 + 8 // the three fields, the checksum, the magic
	segIndexEntry   = 5 * 8
	// maxSegments is the most segments a cache file holds: the reader
	// merges them all, row by row.
	maxSegments = 16
	// compactShare is the share of the rows' bytes in appended segments
	// above which a run rewrites the file as one segment.
	compactShare = 1.0 / 3
)

// segment is one segment of a cache file.
type segment struct {
	off, len    uint64 // in the file
	rows, units uint64
	sum         uint64 // xxhash64 of its bytes
}

// segFile is a cache file whose magic, index and trailer checked out.
type segFile struct {
	path   string
	magic  string
	unit   int // bytes per unit
	size   int64
	segs   []segment
	token  uint64 // graph.db's change log token the file is in step with
	finger uint64 // the settings' fingerprint (documents), else 0
}

// openSegFile reads and checks the magic, index and trailer of the cache
// at path; nil, nil if there is no file. Errors about the file's content
// wrap errCache.
func openSegFile(path, magic string, unit int) (*segFile, error) {
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
	bad := func(format string, a ...any) error {
		return fmt.Errorf("cache %s: %w: %s", path, errCache, fmt.Sprintf(format, a...))
	}
	if size < int64(len(magic)+segTrailer) {
		return nil, bad("%d bytes", size)
	}
	head := make([]byte, len(magic))
	var tail [segTrailer]byte
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if _, err := f.ReadAt(tail[:], size-segTrailer); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if string(head) != magic {
		return nil, bad("does not start with %s (%q)", magic, head)
	}
	if string(tail[32:]) != segTrailerMagic {
		return nil, bad("no trailer at the end (torn?)")
	}
	le := binary.LittleEndian
	n := le.Uint64(tail[0:])
	if n == 0 || n > maxSegments || int64(n*segIndexEntry) > size-int64(len(magic)+segTrailer) {
		return nil, bad("%d segments", n)
	}
	index := make([]byte, n*segIndexEntry)
	if _, err := f.ReadAt(index, size-segTrailer-int64(len(index))); err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	h := xxhash.New()
	h.Write(index)
	h.Write(tail[:24])
	if h.Sum64() != le.Uint64(tail[24:]) {
		return nil, bad("index checksum does not match")
	}
	c := &segFile{path: path, magic: magic, unit: unit, size: size,
		token: le.Uint64(tail[8:]), finger: le.Uint64(tail[16:])}
	end := uint64(len(magic))
	limit := uint64(size) - segTrailer - uint64(len(index))
	for i := range n {
		b := index[i*segIndexEntry:]
		s := segment{off: le.Uint64(b[0:]), len: le.Uint64(b[8:]), rows: le.Uint64(b[16:]), units: le.Uint64(b[24:]), sum: le.Uint64(b[32:])}
		if s.off < end || s.len > limit || s.off > limit-s.len || s.rows*8 > s.len || s.units > s.len {
			return nil, bad("segment %d at %d, %d bytes, out of place", i, s.off, s.len)
		}
		end = s.off + s.len
		c.segs = append(c.segs, s)
	}
	return c, nil
}

// rows is the rows of all segments: an upper bound of the documents the
// file holds (a row replaced by a later segment's is counted twice).
func (c *segFile) rows() int {
	n := uint64(0)
	for _, s := range c.segs {
		n += s.rows
	}
	return int(n)
}

// rowBytes is the bytes of the rows of all segments, and of those after
// the first.
func (c *segFile) rowBytes() (all, appended uint64) {
	for i, s := range c.segs {
		all += s.len
		if i > 0 {
			appended += s.len
		}
	}
	return all, appended
}

// segReader reads the rows of one segment, checking their order and
// counts and its checksum.
type segReader struct {
	c       *segFile
	i       int // the segment's index
	r       *bufio.Reader
	h       *xxhash.Digest
	left    uint64 // rows not read yet
	units   uint64
	id, n   uint32 // the current row
	payload []byte
	done    bool
}

func (c *segFile) reader(f *os.File, i int) *segReader {
	s := c.segs[i]
	size := 1 << 20
	if i > 0 {
		size = 256 << 10
	}
	return &segReader{c: c, i: i, r: bufio.NewReaderSize(io.NewSectionReader(f, int64(s.off), int64(s.len)), size), h: xxhash.New(), left: s.rows}
}

func (r *segReader) fail(format string, a ...any) error {
	return fmt.Errorf("cache %s: %w: segment %d: %s", r.c.path, errCache, r.i, fmt.Sprintf(format, a...))
}

func (r *segReader) read(b []byte) error {
	if _, err := io.ReadFull(r.r, b); err != nil {
		return r.fail("%v", err)
	}
	r.h.Write(b)
	return nil
}

// next reads the next row into id, n and payload; at the end of the
// segment it checks the counts and the checksum and sets done.
func (r *segReader) next() error {
	s := r.c.segs[r.i]
	if r.left == 0 {
		r.done = true
		if r.units != s.units {
			return r.fail("%d units, the index says %d", r.units, s.units)
		}
		if r.h.Sum64() != s.sum {
			return r.fail("checksum does not match")
		}
		return nil
	}
	var head [8]byte
	if err := r.read(head[:]); err != nil {
		return err
	}
	id, n := binary.LittleEndian.Uint32(head[0:]), binary.LittleEndian.Uint32(head[4:])
	if id == 0 || (r.left < s.rows && id <= r.id) || r.units+uint64(n) > s.units {
		return r.fail("row of doc %d (%d units) after doc %d: out of order or past the count", id, n, r.id)
	}
	r.left--
	r.units += uint64(n)
	r.id, r.n = id, n
	size := int(n) * r.c.unit
	if cap(r.payload) < size {
		r.payload = make([]byte, size)
	}
	r.payload = r.payload[:size]
	return r.read(r.payload)
}

// forEach calls fn with every live row in id order (payload is reused
// between calls): the latest row of each document over the segments,
// those with n = 0 left out. A file that fails the checks is an error
// wrapping errCache, returned after fn has seen the rows before the
// damage.
func (c *segFile) forEach(ctx context.Context, fn func(id, n uint32, payload []byte) error) error {
	f, err := os.Open(c.path)
	if err != nil {
		return fmt.Errorf("cache %s: %w", c.path, err)
	}
	defer f.Close()
	rs := make([]*segReader, len(c.segs))
	for i := range c.segs {
		rs[i] = c.reader(f, i)
		if err := rs[i].next(); err != nil {
			return err
		}
	}
	for rows := 0; ; rows++ {
		if rows%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// The least id, from the latest segment that has it.
		win := -1
		for i, r := range rs {
			if !r.done && (win < 0 || r.id <= rs[win].id) {
				win = i
			}
		}
		if win < 0 {
			return nil
		}
		id := rs[win].id
		if w := rs[win]; w.n > 0 {
			if err := fn(id, w.n, w.payload); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if !r.done && r.id == id {
				if err := r.next(); err != nil {
					return err
				}
			}
		}
	}
}

// segWriter writes one segment of rows in increasing id order.
type segWriter struct {
	w      *bufio.Writer
	h      *xxhash.Digest
	unit   int
	seg    segment
	lastID uint32
	head   []byte
}

func newSegWriter(w *bufio.Writer, off uint64, unit int) *segWriter {
	return &segWriter{w: w, h: xxhash.New(), unit: unit, seg: segment{off: off}}
}

// row writes the row of doc id: n units in payload (n = 0: no row).
func (s *segWriter) row(id, n uint32, payload []byte) error {
	if id <= s.lastID || len(payload) != int(n)*s.unit {
		return fmt.Errorf("cache row of doc %d (%d units, %d bytes) after doc %d", id, n, len(payload), s.lastID)
	}
	s.lastID = id
	s.head = binary.LittleEndian.AppendUint32(s.head[:0], id)
	s.head = binary.LittleEndian.AppendUint32(s.head, n)
	for _, b := range [][]byte{s.head, payload} {
		s.h.Write(b)
		if _, err := s.w.Write(b); err != nil {
			return err
		}
	}
	s.seg.rows++
	s.seg.units += uint64(n)
	s.seg.len += uint64(len(s.head) + len(payload))
	return nil
}

func (s *segWriter) finish() segment {
	s.seg.sum = s.h.Sum64()
	return s.seg
}

// appendIndex appends the index of segs and the trailer to w.
func appendIndex(w io.Writer, segs []segment, token, finger uint64) error {
	le := binary.LittleEndian
	var b []byte
	for _, s := range segs {
		for _, x := range []uint64{s.off, s.len, s.rows, s.units, s.sum} {
			b = le.AppendUint64(b, x)
		}
	}
	for _, x := range []uint64{uint64(len(segs)), token, finger} {
		b = le.AppendUint64(b, x)
	}
	b = le.AppendUint64(b, xxhash.Sum64(b))
	b = append(b, segTrailerMagic...)
	_, err := w.Write(b)
	return err
}

// segSource gives the rows a cache is made of, from graph.db.
type segSource struct {
	// row appends to buf the payload of doc id's row as graph.db has it
	// now, and its number of units (0: no row).
	row func(tx *linkgraph.Tx, id uint32, buf []byte) ([]byte, uint32, error)
	// all calls fn with the row of every document with one, in id order.
	all func(ctx context.Context, tx *linkgraph.Tx, fn func(id, n uint32, payload []byte) error) error
}

// writeSegFile writes the cache at path as one segment (a rebuild from
// graph.db, or a compaction of old with the rows of the documents in
// changed from graph.db) under a temporary name and publishes it; it
// returns the documents read from graph.db.
func writeSegFile(ctx context.Context, tx *linkgraph.Tx, path, magic string, unit int, src segSource, old *segFile, changed *roaring.Bitmap, token, finger uint64) (uint64, error) {
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.WriteString(magic); err != nil {
		return 0, fmt.Errorf("write %s: %w", f.Name(), err)
	}
	sw := newSegWriter(bw, uint64(len(magic)), unit)
	var read uint64
	if old == nil {
		err = src.all(ctx, tx, func(id, n uint32, payload []byte) error {
			read++
			return sw.row(id, n, payload)
		})
	} else {
		read, err = mergeRows(ctx, tx, old, changed, src, sw, false)
	}
	if err != nil {
		return 0, err
	}
	if err := appendIndex(bw, []segment{sw.finish()}, token, finger); err != nil {
		return 0, fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return read, f.Commit()
}

// mergeRows writes to sw the rows of old merged with the rows of the
// documents in changed as graph.db has them (which win), or, with delta,
// only the latter, empty rows included (they kill the earlier ones). It
// returns the documents read from graph.db.
func mergeRows(ctx context.Context, tx *linkgraph.Tx, old *segFile, changed *roaring.Bitmap, src segSource, sw *segWriter, delta bool) (uint64, error) {
	it := changed.Iterator()
	var buf []byte
	var read uint64
	// fresh writes the rows of the changed documents before id limit
	// (all when limit is 0) from graph.db.
	fresh := func(limit uint32) error {
		for it.HasNext() && (limit == 0 || it.PeekNext() < limit) {
			id := it.Next()
			if read++; read%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			var n uint32
			var err error
			if buf, n, err = src.row(tx, id, buf[:0]); err != nil {
				return err
			}
			if n == 0 && !delta {
				continue
			}
			if err := sw.row(id, n, buf); err != nil {
				return err
			}
		}
		return nil
	}
	if !delta {
		err := old.forEach(ctx, func(id, n uint32, payload []byte) error {
			if err := fresh(id); err != nil {
				return err
			}
			if changed.Contains(id) {
				return fresh(id + 1)
			}
			return sw.row(id, n, payload)
		})
		if err != nil {
			return read, err
		}
	}
	return read, fresh(0)
}

// appendSegment appends to the cache file old a segment with the rows of
// the documents in changed as graph.db has them (none if changed is
// empty), then the new index and trailer with token, syncing the segment
// before the trailer that names it. A run killed while it
// appends leaves a file whose end is not a trailer: the next run rebuilds
// it.
func appendSegment(ctx context.Context, tx *linkgraph.Tx, old *segFile, src segSource, changed *roaring.Bitmap, token uint64) (uint64, error) {
	f, err := os.OpenFile(old.path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("cache %s: %w", old.path, err)
	}
	defer f.Close()
	if _, err := f.Seek(old.size, io.SeekStart); err != nil {
		return 0, fmt.Errorf("cache %s: %w", old.path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	sw := newSegWriter(bw, uint64(old.size), old.unit)
	read, err := mergeRows(ctx, tx, old, changed, src, sw, true)
	if err != nil {
		return read, err
	}
	if err := bw.Flush(); err != nil {
		return read, fmt.Errorf("write %s: %w", old.path, err)
	}
	if err := f.Sync(); err != nil {
		return read, fmt.Errorf("sync %s: %w", old.path, err)
	}
	segs := old.segs[:len(old.segs):len(old.segs)]
	if sw.seg.rows > 0 {
		segs = append(segs, sw.finish())
	}
	if err := appendIndex(bw, segs, token, old.finger); err != nil {
		return read, fmt.Errorf("write %s: %w", old.path, err)
	}
	if err := bw.Flush(); err != nil {
		return read, fmt.Errorf("write %s: %w", old.path, err)
	}
	if err := f.Sync(); err != nil {
		return read, fmt.Errorf("sync %s: %w", old.path, err)
	}
	return read, f.Close()
}

// needsCompaction tells whether a run should rewrite the cache as one
// segment rather than append one more.
func (c *segFile) needsCompaction() bool {
	all, appended := c.rowBytes()
	return len(c.segs) >= maxSegments || float64(appended) > compactShare*float64(all)
}
