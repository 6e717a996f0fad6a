package textstore

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirecrawl/wire/pkg/collection"
)

// CompactStats says what Compact did.
type CompactStats struct {
	Segments    int   // segments merged (0: nothing to do)
	Into        int   // id of the compacted segment: the newest merged
	Generation  int   // of its data file
	FirstBatch  int   // lowest batch it holds
	EntriesIn   int   // entries of the merged segments
	Entries     int   // entries kept: the newest of each URL
	Replaced    int   // entries dropped because a newer segment has the URL
	Records     int   // texts in the new data file
	Shared      int   // kept entries whose text another kept entry also points at
	FilesBefore int   // segment files (indexes and data files) before
	BytesBefore int64 // their size
	BytesAfter  int64 // size of the compacted segment's two files
	Removed     int   // files removed, including leftovers of crashed writers
}

// Compact merges every segment of the text store in dir into one, named
// by the newest: for each URL it keeps the entry of the newest segment
// that has it and drops the versions that entry replaced; each text that
// a kept entry points at is copied once (identical texts of different
// segments become one record), so the result needs no other segment.
// Data files nothing points at any more, and the temporary files of
// crashed writers, are removed.
//
// It is crash-safe: the new data file is written under a new generation
// and the index of the newest segment is replaced by a rename, which is
// the commit point; only then are the other indexes removed, and then
// the data files. Killed before the rename, the store is as it was;
// after, the newest segment already holds everything the others hold, so
// leftovers are shadowed until the next Compact removes them.
//
// The caller holds the gatherer's lock: no segment may be written
// meanwhile. Readers may keep reading; an open Store keeps its files.
// Memory is about 100 bytes per kept entry (the lookup tables and the
// record map); entries are streamed to disk.
func Compact(dir string) (CompactStats, error) {
	var st CompactStats
	fail := func(err error) (CompactStats, error) {
		return st, fmt.Errorf("compact text store %s: %w", dir, err)
	}
	s, err := Open(dir)
	if err != nil {
		return st, err
	}
	defer s.Close()
	files, err := os.ReadDir(dir)
	if err != nil {
		return fail(err)
	}
	var stray []string // data files no index uses, and temporary files
	for _, f := range files {
		name := f.Name()
		if _, ok := parseIndexName(name); ok {
			st.FilesBefore++
			if info, err := f.Info(); err == nil {
				st.BytesBefore += info.Size()
			}
			continue
		}
		if id, gen, ok := parseDataName(name); ok {
			st.FilesBefore++
			if info, err := f.Info(); err == nil {
				st.BytesBefore += info.Size()
			}
			if g := s.segment(id); g == nil || int(g.hdr.Generation) != gen {
				stray = append(stray, name)
			}
			continue
		}
		if isTempName(name) {
			stray = append(stray, name)
		}
	}
	if len(s.segs) == 0 || (len(s.segs) == 1 && s.segs[0].hdr.Version == Version && len(stray) == 0) {
		return CompactStats{}, nil
	}
	top := s.segs[len(s.segs)-1]
	st.Segments, st.Into, st.FirstBatch = len(s.segs), top.id, int(top.hdr.FirstBatch)
	for _, g := range s.segs {
		st.FirstBatch = min(st.FirstBatch, int(g.hdr.FirstBatch))
		st.EntriesIn += int(g.hdr.Count)
	}
	gen := max(int(top.hdr.Generation), maxDataGen(files, top.id)) + 1
	st.Generation = gen

	c, err := newCompactor(s, dir, top, gen)
	if err != nil {
		return fail(err)
	}
	defer c.abort()
	if err := c.merge(&st); err != nil {
		return fail(err)
	}
	size, err := c.commit(top, st.FirstBatch)
	if err != nil {
		return fail(err)
	}
	st.BytesAfter = size

	// Committed. Indexes first, so no index is left pointing at a
	// removed data file.
	for _, g := range s.segs[:len(s.segs)-1] {
		if err := os.Remove(IndexPath(dir, g.id)); err == nil {
			st.Removed++
		}
	}
	if err := collection.SyncDir(dir); err != nil {
		return fail(err)
	}
	for _, f := range files {
		name := f.Name()
		if id, g, ok := parseDataName(name); ok && !(id == top.id && g == gen) {
			if err := os.Remove(filepath.Join(dir, name)); err == nil {
				st.Removed++
			}
		}
	}
	for _, name := range stray {
		if strings.HasPrefix(name, ".") {
			if err := os.Remove(filepath.Join(dir, name)); err == nil {
				st.Removed++
			}
		}
	}
	if err := collection.SyncDir(dir); err != nil {
		return fail(err)
	}
	return st, nil
}

// maxDataGen is the highest generation of a data file of segment id.
func maxDataGen(files []os.DirEntry, id int) int {
	g := 0
	for _, f := range files {
		if i, gen, ok := parseDataName(f.Name()); ok && i == id {
			g = max(g, gen)
		}
	}
	return g
}

// compactor writes the merged segment.
type compactor struct {
	s       *Store
	dir     string
	id, gen int
	dat     *collection.AtomicFile
	bw      *bufio.Writer
	off     int64
	body    *os.File // the index entries, before the tables are known
	ix      *indexBuilder
	bySrc   map[srcKey]loc  // record of a source text -> its copy
	byText  map[textKey]loc // identical texts of different sources -> one copy
	pointed map[int64]int   // copy offset -> kept entries pointing at it
}

type srcKey struct {
	seg, gen int
	off      int64
}

type textKey struct {
	hash uint64
	crc  uint32
	n    int64
}

func newCompactor(s *Store, dir string, top *segment, gen int) (*compactor, error) {
	dat, err := collection.CreateAtomic(DataPathGen(dir, top.id, gen))
	if err != nil {
		return nil, err
	}
	body, err := os.CreateTemp(dir, "."+SegmentName(top.id)+".idx.entries.tmp-*")
	if err != nil {
		dat.Abort()
		return nil, err
	}
	c := &compactor{s: s, dir: dir, id: top.id, gen: gen, dat: dat, bw: bufio.NewWriterSize(dat, 256*1024), body: body,
		bySrc: map[srcKey]loc{}, byText: map[textKey]loc{}, pointed: map[int64]int{}}
	c.ix = newIndexBuilder(bufio.NewWriterSize(body, 256*1024))
	if _, err := c.bw.Write(dataHeader(top.id)); err != nil {
		c.abort()
		return nil, err
	}
	c.off = DataHeaderSize
	return c, nil
}

func (c *compactor) abort() {
	if c.dat != nil {
		c.dat.Abort()
		c.dat = nil
	}
	if c.body != nil {
		c.body.Close()
		os.Remove(c.body.Name())
		c.body = nil
	}
}

// cursor is the next entry of one segment in the merge.
type cursor struct {
	it *entryIter
	m  Meta
}

// cursors orders the segments' next entries by URL, the newest segment
// first for equal URLs.
type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	if h[i].m.URL != h[j].m.URL {
		return h[i].m.URL < h[j].m.URL
	}
	return h[i].m.Segment > h[j].m.Segment
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge walks every segment's entries in URL order at once and copies the
// newest entry of each URL.
func (c *compactor) merge(st *CompactStats) error {
	var h cursors
	for _, g := range c.s.segs {
		it := g.iter(32 * 1024) // many segments: small buffers
		m, _, ok, err := it.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, &cursor{it, m})
		}
	}
	heap.Init(&h)
	last := ""
	first := true
	for h.Len() > 0 {
		cur := h[0]
		m := cur.m
		if !first && m.URL == last {
			st.Replaced++
		} else {
			first, last = false, m.URL
			if err := c.keep(m, st); err != nil {
				return err
			}
		}
		next, _, ok, err := cur.it.next()
		if err != nil {
			return err
		}
		if ok {
			cur.m = next
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	for _, n := range c.pointed {
		if n > 1 {
			st.Shared += n
		}
	}
	return nil
}

// keep copies one entry and the text it points at.
func (c *compactor) keep(m Meta, st *CompactStats) error {
	st.Entries++
	if m.HasText() {
		src := srcKey{m.RecordSegment, m.RecordGen, m.Offset}
		l, ok := c.bySrc[src]
		if !ok {
			block, err := c.s.block(m)
			if err != nil {
				return err
			}
			sum := crc(block)
			tk := textKey{m.Hash, sum, int64(len(block))}
			if l, ok = c.byText[tk]; !ok {
				var hdr [RecordHeaderSize]byte
				binary.LittleEndian.PutUint32(hdr[0:], uint32(len(block)))
				binary.LittleEndian.PutUint32(hdr[4:], sum)
				if _, err := c.bw.Write(hdr[:]); err != nil {
					return err
				}
				if _, err := c.bw.Write(block); err != nil {
					return err
				}
				l = loc{off: c.off, n: int64(RecordHeaderSize + len(block)), crc: sum}
				c.off += l.n
				c.byText[tk] = l
				st.Records++
			}
			c.bySrc[src] = l
		}
		m.RecordSegment, m.RecordGen, m.Offset, m.Length, m.RecordCRC = c.id, c.gen, l.off, l.n, l.crc
		c.pointed[l.off]++
	} else {
		m.RecordSegment, m.RecordGen, m.Offset, m.Length, m.RecordCRC = 0, 0, 0, 0, 0
	}
	m.Segment = c.id
	return c.ix.add(&m, true)
}

// commit publishes the data file, then the index; it returns their size.
func (c *compactor) commit(top *segment, firstBatch int) (int64, error) {
	if err := c.bw.Flush(); err != nil {
		return 0, err
	}
	if err := c.ix.body.(*bufio.Writer).Flush(); err != nil {
		return 0, err
	}
	if err := c.dat.Commit(); err != nil {
		return 0, err
	}
	c.dat = nil
	h := c.ix.header(indexHeader{Segment: uint32(c.id), Mode: top.hdr.Mode, SummaryWords: top.hdr.SummaryWords,
		Flags: HeaderCompacted, Generation: uint32(c.gen), DataSize: uint64(c.off), FirstBatch: uint32(firstBatch)})
	if _, err := c.body.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	err := collection.WriteAtomic(IndexPath(c.dir, c.id), func(w io.Writer) error {
		return c.ix.write(w, h, bufio.NewReaderSize(c.body, 256*1024))
	})
	if err != nil {
		return 0, err
	}
	size := c.off + int64(h.HashTable) + int64(h.HashRows)*TableEntrySize
	return size, nil
}

// isTempName tells the temporary files of the store's writers:
// ".seg-…tmp-…", the names collection.CreateAtomic gives a segment's
// data and index files, and the compactor's entry lists, until they are
// renamed into place.
func isTempName(name string) bool {
	return strings.HasPrefix(name, "."+segPrefix) && strings.Contains(name, ".tmp-")
}

// RemoveTemp removes from dir the temporary files (isTempName) that a
// gatherer or a compaction killed before it finished left behind, and
// returns their names. The caller must hold the lock of the store's
// writers (the gatherer's): no writer is then between creating such a
// file and renaming it, so each one is debris. A missing dir has none.
func RemoveTemp(dir string) ([]string, error) {
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("remove temporary files: %w", err)
	}
	var removed []string
	for _, f := range files {
		if name := f.Name(); !f.IsDir() && isTempName(name) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return removed, fmt.Errorf("remove temporary file: %w", err)
			}
			removed = append(removed, name)
		}
	}
	return removed, nil
}
