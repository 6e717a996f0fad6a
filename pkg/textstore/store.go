// Package textstore is the collection's text store (COLLECTION/text/):
// append-only segments of snappy-compressed page texts, one segment per
// gathered batch, each with an index sorted by URL and lookup tables by
// URL hash, by doc id and by text hash. The newest segment that has a URL
// wins. A text stored once is pointed at by every later page with the
// same text, in any segment; Compact merges the segments into one and
// drops the versions newer ones replaced. The format is
// docs/format/textstore.md.
package textstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"
)

// Store is an opened text store directory. Its methods are safe for
// concurrent use.
type Store struct {
	dir  string
	segs []*segment // by id, oldest first

	mu   sync.Mutex
	data map[dataKey]*dataFile // data files other than the segments' own, opened on first use
}

// dataKey names a data file.
type dataKey struct{ id, gen int }

// dataFile is an opened data file.
type dataFile struct {
	f    *os.File
	size int64
}

// segment is one index and the data file it uses. Its lookup tables are
// read on first use.
type segment struct {
	id   int
	hdr  indexHeader
	idx  *os.File
	dat  *dataFile
	mu   sync.Mutex
	urls []byte   // URL-hash table, nil until loaded
	docs []byte   // doc-id table, nil until loaded
	hash []uint64 // every hashStride-th key of the text-hash table, nil until loaded
}

// hashStride is the spacing of the text-hash table's keys kept in memory:
// a lookup reads one block of hashStride rows.
const hashStride = 64

// Open opens the text store in dir (created if missing) and checks the
// header of every segment: the format version (ErrVersion), the sizes of
// its files against the index header (ErrCorrupt). A data file without
// an index naming it is unfinished or replaced and is ignored.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open text store %s: %w", dir, err)
	}
	// A segment removed by a compaction between the listing and its
	// opening is listed again.
	for attempt := 0; ; attempt++ {
		s, err := openStore(dir)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return s, err
		}
	}
}

func openStore(dir string) (*Store, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open text store %s: %w", dir, err)
	}
	s := &Store{dir: dir, data: map[dataKey]*dataFile{}}
	for _, e := range entries {
		id, ok := parseIndexName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		seg, err := openSegment(dir, id)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("open text store %s: segment %06d: %w", dir, id, err)
		}
		s.segs = append(s.segs, seg)
	}
	sort.Slice(s.segs, func(i, j int) bool { return s.segs[i].id < s.segs[j].id })
	return s, nil
}

// readIndexHeader opens and checks the index of segment id.
func readIndexHeader(dir string, id int) (*os.File, indexHeader, error) {
	f, err := os.Open(IndexPath(dir, id))
	if err != nil {
		return nil, indexHeader{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, indexHeader{}, err
	}
	hb := make([]byte, IndexHeaderSize)
	n, err := io.ReadFull(f, hb)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, indexHeader{}, err
	}
	h, err := unmarshalIndexHeader(hb[:n], st.Size())
	if err == nil && int(h.Segment) != id {
		err = fmt.Errorf("%w: index belongs to segment %d", ErrCorrupt, h.Segment)
	}
	if err != nil {
		f.Close()
		return nil, h, err
	}
	return f, h, nil
}

func openSegment(dir string, id int) (_ *segment, err error) {
	seg := &segment{id: id}
	defer func() {
		if err != nil {
			seg.close()
		}
	}()
	if seg.idx, seg.hdr, err = readIndexHeader(dir, id); err != nil {
		return nil, err
	}
	if seg.dat, err = openData(dir, id, int(seg.hdr.Generation)); err != nil {
		return nil, err
	}
	if uint64(seg.dat.size) != seg.hdr.DataSize {
		return nil, fmt.Errorf("%w: data file is %d bytes, the index says %d (truncated or replaced?)", ErrCorrupt, seg.dat.size, seg.hdr.DataSize)
	}
	return seg, nil
}

// openData opens and checks the header of a data file.
func openData(dir string, id, gen int) (*dataFile, error) {
	f, err := os.Open(DataPathGen(dir, id, gen))
	if err != nil {
		return nil, fmt.Errorf("%w: data file: %w", ErrCorrupt, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	db := make([]byte, DataHeaderSize)
	if _, err := f.ReadAt(db, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: data header: %v", ErrCorrupt, err)
	}
	if err := checkDataHeader(db, id); err != nil {
		f.Close()
		return nil, err
	}
	return &dataFile{f: f, size: st.Size()}, nil
}

func (g *segment) close() {
	if g.idx != nil {
		g.idx.Close()
	}
	if g.dat != nil {
		g.dat.f.Close()
	}
}

// Close closes the segment files.
func (s *Store) Close() error {
	for _, g := range s.segs {
		g.close()
	}
	s.segs = nil
	s.mu.Lock()
	for _, d := range s.data {
		d.f.Close()
	}
	s.data = nil
	s.mu.Unlock()
	return nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// SegmentInfo describes a segment.
type SegmentInfo struct {
	ID           int
	Version      int // format version of its index
	Generation   int // of its data file
	Entries      int
	Records      int // texts stored in its data file (0 for version 1: unknown)
	Mode         Mode
	SummaryWords int
	DataBytes    int64
	Compacted    bool // written by Compact
	FirstBatch   int  // lowest batch it has entries of
}

// Segments lists the segments, oldest first.
func (s *Store) Segments() []SegmentInfo {
	out := make([]SegmentInfo, len(s.segs))
	for i, g := range s.segs {
		out[i] = g.info()
	}
	return out
}

func (g *segment) info() SegmentInfo {
	return SegmentInfo{ID: g.id, Version: int(g.hdr.Version), Generation: int(g.hdr.Generation), Entries: int(g.hdr.Count), Records: int(g.hdr.HashRows),
		Mode: g.hdr.Mode, SummaryWords: int(g.hdr.SummaryWords), DataBytes: int64(g.hdr.DataSize),
		Compacted: g.hdr.Flags&HeaderCompacted != 0, FirstBatch: int(g.hdr.FirstBatch)}
}

// Segment describes segment id, if the store has it.
func (s *Store) Segment(id int) (SegmentInfo, bool) {
	if g := s.segment(id); g != nil {
		return g.info(), true
	}
	return SegmentInfo{}, false
}

func (g *segment) err(err error) error {
	return fmt.Errorf("text segment %06d: %w", g.id, err)
}

// table returns the URL-hash table (urls) or the doc-id table, reading it
// on first use.
func (g *segment) table(urls bool) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, off := &g.docs, g.hdr.DocTable
	if urls {
		p, off = &g.urls, g.hdr.URLTable
	}
	if *p == nil {
		t := make([]byte, int(g.hdr.Count)*TableEntrySize)
		if _, err := g.idx.ReadAt(t, int64(off)); err != nil {
			return nil, g.err(fmt.Errorf("%w: lookup table: %v", ErrCorrupt, err))
		}
		*p = t
	}
	return *p, nil
}

// release drops the cached lookup tables.
func (g *segment) release() {
	g.mu.Lock()
	g.urls, g.docs = nil, nil
	g.mu.Unlock()
}

// candidates returns the entry offsets whose table key is key.
func candidates(t []byte, key uint64) []uint64 {
	n := len(t) / TableEntrySize
	le := binary.LittleEndian
	i := sort.Search(n, func(i int) bool { return le.Uint64(t[i*TableEntrySize:]) >= key })
	var out []uint64
	for ; i < n && le.Uint64(t[i*TableEntrySize:]) == key; i++ {
		out = append(out, le.Uint64(t[i*TableEntrySize+8:]))
	}
	return out
}

// hashCandidates returns the entry offsets of the text-hash table rows
// whose key is key. Only every hashStride-th key is kept in memory; the
// rows in between are read from the file.
func (g *segment) hashCandidates(key uint64) ([]uint64, error) {
	rows := int(g.hdr.HashRows)
	if rows == 0 {
		return nil, nil
	}
	g.mu.Lock()
	if g.hash == nil {
		if err := g.loadHashKeys(); err != nil {
			g.mu.Unlock()
			return nil, err
		}
	}
	keys := g.hash
	g.mu.Unlock()
	// The first block whose first key is >= key may be preceded by rows
	// with the key at the end of the block before.
	b := sort.Search(len(keys), func(i int) bool { return keys[i] >= key })
	if b > 0 {
		b--
	}
	le := binary.LittleEndian
	var out []uint64
	buf := make([]byte, hashStride*TableEntrySize)
	for row := b * hashStride; row < rows; row += hashStride {
		n := min(hashStride, rows-row)
		if _, err := g.idx.ReadAt(buf[:n*TableEntrySize], int64(g.hdr.HashTable)+int64(row)*TableEntrySize); err != nil {
			return nil, g.err(fmt.Errorf("%w: text-hash table: %v", ErrCorrupt, err))
		}
		for i := 0; i < n; i++ {
			k := le.Uint64(buf[i*TableEntrySize:])
			if k > key {
				return out, nil
			}
			if k == key {
				out = append(out, le.Uint64(buf[i*TableEntrySize+8:]))
			}
		}
	}
	return out, nil
}

// loadHashKeys reads every hashStride-th key of the text-hash table.
func (g *segment) loadHashKeys() error {
	rows := int(g.hdr.HashRows)
	r := bufio.NewReaderSize(io.NewSectionReader(g.idx, int64(g.hdr.HashTable), int64(rows)*TableEntrySize), 64*1024)
	keys := make([]uint64, 0, rows/hashStride+1)
	var row [TableEntrySize]byte
	prev := uint64(0)
	for i := 0; i < rows; i++ {
		if _, err := io.ReadFull(r, row[:]); err != nil {
			return g.err(fmt.Errorf("%w: text-hash table: %v", ErrCorrupt, err))
		}
		k := binary.LittleEndian.Uint64(row[:])
		if k < prev {
			return g.err(fmt.Errorf("%w: text-hash table out of order at row %d", ErrCorrupt, i))
		}
		prev = k
		if i%hashStride == 0 {
			keys = append(keys, k)
		}
	}
	g.hash = keys
	return nil
}

// entryAt reads the entry at offset off of the index.
func (g *segment) entryAt(off uint64) (Meta, error) {
	if off < g.hdr.size() || off+4 > g.hdr.URLTable {
		return Meta{}, g.err(fmt.Errorf("%w: entry offset %d out of range", ErrCorrupt, off))
	}
	var lb [4]byte
	if _, err := g.idx.ReadAt(lb[:], int64(off)); err != nil {
		return Meta{}, g.err(fmt.Errorf("%w: entry at %d: %v", ErrCorrupt, off, err))
	}
	n := uint64(binary.LittleEndian.Uint32(lb[:]))
	if off+4+n > g.hdr.URLTable {
		return Meta{}, g.err(fmt.Errorf("%w: entry at %d runs past the entries", ErrCorrupt, off))
	}
	b := make([]byte, n)
	if _, err := g.idx.ReadAt(b, int64(off)+4); err != nil {
		return Meta{}, g.err(fmt.Errorf("%w: entry at %d: %v", ErrCorrupt, off, err))
	}
	return g.decode(b, off)
}

func (g *segment) decode(b []byte, off uint64) (Meta, error) {
	m, err := unmarshalEntry(b, g.hdr.Version, g.id, int(g.hdr.Generation))
	if err != nil {
		return Meta{}, g.err(fmt.Errorf("entry at %d: %w", off, err))
	}
	m.Segment = g.id
	return m, nil
}

// lookupURL finds url in this segment.
func (g *segment) lookupURL(url string) (Meta, bool, error) {
	t, err := g.table(true)
	if err != nil {
		return Meta{}, false, err
	}
	for _, off := range candidates(t, xxhash.Sum64String(url)) {
		m, err := g.entryAt(off)
		if err != nil {
			return Meta{}, false, err
		}
		if m.URL == url {
			return m, true, nil
		}
	}
	return Meta{}, false, nil
}

func (g *segment) lookupDoc(id uint64) (Meta, bool, error) {
	t, err := g.table(false)
	if err != nil {
		return Meta{}, false, err
	}
	offs := candidates(t, id)
	if len(offs) == 0 {
		return Meta{}, false, nil
	}
	m, err := g.entryAt(offs[len(offs)-1])
	return m, err == nil, err
}

// Lookup returns the entry of url from the newest segment that has it.
// url must be spelled as the gatherer stored it (normalised; see
// urlnorm).
func (s *Store) Lookup(url string) (Meta, error) {
	return s.LookupBefore(0, url)
}

// LookupBefore is Lookup restricted to segments older than segment
// before (0: all segments).
func (s *Store) LookupBefore(before int, url string) (Meta, error) {
	for i := len(s.segs) - 1; i >= 0; i-- {
		g := s.segs[i]
		if before > 0 && g.id >= before {
			continue
		}
		m, ok, err := g.lookupURL(url)
		if err != nil {
			return Meta{}, err
		}
		if ok {
			return m, nil
		}
	}
	return Meta{}, fmt.Errorf("%s: %w", url, ErrNotFound)
}

// LookupDocID returns the entry of doc id from the newest segment that
// has it.
func (s *Store) LookupDocID(id uint64) (Meta, error) {
	for i := len(s.segs) - 1; i >= 0; i-- {
		m, ok, err := s.segs[i].lookupDoc(id)
		if err != nil {
			return Meta{}, err
		}
		if ok {
			return m, nil
		}
	}
	return Meta{}, fmt.Errorf("doc %d: %w", id, ErrNotFound)
}

// Get returns the stored text of url and its entry, from the newest
// segment that has it. The text is "" when the segment's mode keeps none
// or the page asked not to be indexed.
func (s *Store) Get(url string) (string, Meta, error) {
	m, err := s.Lookup(url)
	if err != nil {
		return "", Meta{}, err
	}
	text, err := s.Text(m)
	return text, m, err
}

// GetByDocID is Get by doc id.
func (s *Store) GetByDocID(id uint64) (string, Meta, error) {
	m, err := s.LookupDocID(id)
	if err != nil {
		return "", Meta{}, err
	}
	text, err := s.Text(m)
	return text, m, err
}

func (s *Store) segment(id int) *segment {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].id >= id })
	if i < len(s.segs) && s.segs[i].id == id {
		return s.segs[i]
	}
	return nil
}

// dataFile returns the data file of generation gen of segment id: the
// segment's own, or one kept for the entries of newer segments that point
// into it.
func (s *Store) dataFile(id, gen int) (*dataFile, error) {
	if g := s.segment(id); g != nil && int(g.hdr.Generation) == gen {
		return g.dat, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return nil, errors.New("text store closed")
	}
	k := dataKey{id, gen}
	if d, ok := s.data[k]; ok {
		return d, nil
	}
	d, err := openData(s.dir, id, gen)
	if err != nil {
		return nil, fmt.Errorf("text segment %06d generation %d: %w", id, gen, err)
	}
	s.data[k] = d
	return d, nil
}

// Text reads the text an entry points at, checking its checksums.
func (s *Store) Text(m Meta) (string, error) {
	b, err := s.block(m)
	if err != nil || b == nil {
		return "", err
	}
	text, err := snappy.Decode(nil, b)
	if err != nil {
		return "", fmt.Errorf("text segment %06d: %w: record at %d: %v", m.RecordSegment, ErrCorrupt, m.Offset, err)
	}
	return string(text), nil
}

// maxRecord bounds a record so a damaged length cannot ask for gigabytes.
const maxRecord = 1 << 30

// block reads and checks the snappy block an entry points at; nil when
// the entry has no text.
func (s *Store) block(m Meta) ([]byte, error) {
	if m.Length == 0 {
		return nil, nil
	}
	d, err := s.dataFile(m.RecordSegment, m.RecordGen)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("text segment %06d: %w: record at %d: %s", m.RecordSegment, ErrCorrupt, m.Offset, fmt.Sprintf(format, args...))
	}
	off, n := m.Offset, m.Length
	if off < DataHeaderSize || n < RecordHeaderSize || n > maxRecord || off+n > d.size {
		return nil, fail("%d bytes outside the data file (%d bytes)", n, d.size)
	}
	b := make([]byte, n)
	if _, err := d.f.ReadAt(b, off); err != nil {
		return nil, fail("%v", err)
	}
	le := binary.LittleEndian
	blen, sum := int64(le.Uint32(b[0:])), le.Uint32(b[4:])
	block := b[RecordHeaderSize:]
	if blen != int64(len(block)) {
		return nil, fail("block of %d bytes, the index says %d", blen, len(block))
	}
	if got := crc(block); got != sum {
		return nil, fail("checksum %08x, want %08x", got, sum)
	}
	if m.RecordCRC != 0 && sum != m.RecordCRC {
		return nil, fail("checksum %08x, the entry of %s in segment %06d says %08x (was the segment written again?)", sum, m.URL, m.Segment, m.RecordCRC)
	}
	dl, err := snappy.DecodedLen(block)
	// A snappy copy element of at most 5 bytes yields at most 64 bytes, so
	// a larger claim is damage and must not be allocated.
	if err == nil && dl > 64*(len(block)+1) {
		err = errors.New("implausible decoded length")
	}
	if err != nil || dl != m.StoredBytes {
		return nil, fail("decoded length %d, want %d (%v)", dl, m.StoredBytes, err)
	}
	return block, nil
}

// FindText looks, in the segments older than segment before, for a
// stored text equal to text whose page had the text hash hash, and
// returns the entry that points at it: a page can then point at that
// text instead of storing it again. Candidates are found through each
// segment's text-hash table and compared byte for byte.
func (s *Store) FindText(before int, hash uint64, text string) (Meta, bool, error) {
	if text == "" {
		return Meta{}, false, nil
	}
	for i := len(s.segs) - 1; i >= 0; i-- {
		g := s.segs[i]
		if g.id >= before || g.hdr.HashRows == 0 {
			continue
		}
		offs, err := g.hashCandidates(hash)
		if err != nil {
			return Meta{}, false, err
		}
		for _, off := range offs {
			m, err := g.entryAt(off)
			if err != nil {
				return Meta{}, false, err
			}
			if m.Hash != hash || m.StoredBytes != len(text) || !m.HasText() {
				continue
			}
			got, err := s.Text(m)
			if err != nil {
				return Meta{}, false, err
			}
			if got == text {
				return m, true, nil
			}
		}
	}
	return Meta{}, false, nil
}

// PreviousHashes returns, for each of urls that an older segment than
// before holds, the text hash stored by the newest such segment. It reads
// one segment's table at a time, so its memory does not grow with the
// number of segments.
func (s *Store) PreviousHashes(before int, urls []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	left := make(map[string]bool, len(urls))
	for _, u := range urls {
		left[u] = true
	}
	for i := len(s.segs) - 1; i >= 0 && len(left) > 0; i-- {
		g := s.segs[i]
		if before > 0 && g.id >= before {
			continue
		}
		for u := range left {
			m, ok, err := g.lookupURL(u)
			if err != nil {
				g.release()
				return nil, err
			}
			if ok {
				out[u] = m.Hash
				delete(left, u)
			}
		}
		g.release()
	}
	return out, nil
}

// entryIter reads the entries of a segment in URL order, one at a time.
type entryIter struct {
	g   *segment
	r   *bufio.Reader
	n   uint32
	off uint64
	buf []byte
}

// iter reads the entries through a buffer of bufSize bytes.
func (g *segment) iter(bufSize int) *entryIter {
	start := g.hdr.size()
	return &entryIter{g: g, off: start,
		r: bufio.NewReaderSize(io.NewSectionReader(g.idx, int64(start), int64(g.hdr.URLTable-start)), bufSize)}
}

// next returns the next entry and its offset; ok is false after the last.
func (it *entryIter) next() (m Meta, off uint64, ok bool, err error) {
	g := it.g
	if it.n >= g.hdr.Count {
		return Meta{}, 0, false, nil
	}
	var lb [4]byte
	if _, err := io.ReadFull(it.r, lb[:]); err != nil {
		return Meta{}, 0, false, g.err(fmt.Errorf("%w: entry %d: %v", ErrCorrupt, it.n, err))
	}
	l := uint64(binary.LittleEndian.Uint32(lb[:]))
	if it.off+4+l > g.hdr.URLTable {
		return Meta{}, 0, false, g.err(fmt.Errorf("%w: entry %d: length %d", ErrCorrupt, it.n, l))
	}
	if uint64(cap(it.buf)) < l {
		it.buf = make([]byte, l)
	}
	b := it.buf[:l]
	if _, err := io.ReadFull(it.r, b); err != nil {
		return Meta{}, 0, false, g.err(fmt.Errorf("%w: entry %d: %v", ErrCorrupt, it.n, err))
	}
	off = it.off
	m, err = g.decode(b, off)
	if err != nil {
		return Meta{}, 0, false, err
	}
	it.n++
	it.off += 4 + l
	return m, off, true, nil
}

// Scan calls fn for every entry of segment id in URL order.
func (s *Store) Scan(id int, fn func(Meta) error) error {
	g := s.segment(id)
	if g == nil {
		return fmt.Errorf("text segment %06d: %w", id, ErrNotFound)
	}
	it := g.iter(256 * 1024)
	for {
		m, _, ok, err := it.next()
		if err != nil || !ok {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
}

// Verify checks segment id completely: the index checksum, the order of
// the entries, every text they point at (in this segment or an older
// one), and the text-hash table.
func (s *Store) Verify(id int) error {
	g := s.segment(id)
	if g == nil {
		return fmt.Errorf("text segment %06d: %w", id, ErrNotFound)
	}
	st, err := g.idx.Stat()
	if err != nil {
		return g.err(err)
	}
	body := make([]byte, st.Size()-int64(g.hdr.size()))
	if _, err := g.idx.ReadAt(body, int64(g.hdr.size())); err != nil {
		return g.err(fmt.Errorf("%w: index: %v", ErrCorrupt, err))
	}
	if got := crc(body); got != g.hdr.BodyCRC {
		return g.err(fmt.Errorf("%w: index checksum %08x, want %08x", ErrCorrupt, got, g.hdr.BodyCRC))
	}
	prev := ""
	hashes := map[uint64]uint64{} // entry offset -> text hash, of entries storing their text here
	it := g.iter(256 * 1024)
	for {
		m, off, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if m.URL < prev {
			return g.err(fmt.Errorf("%w: entries out of order at %q", ErrCorrupt, m.URL))
		}
		prev = m.URL
		if _, err := s.block(m); err != nil {
			return err
		}
		if m.HasText() && m.RecordSegment == g.id {
			hashes[off] = m.Hash
		}
	}
	le := binary.LittleEndian
	rows := body[g.hdr.HashTable-g.hdr.size():]
	for i := 0; i+TableEntrySize <= len(rows); i += TableEntrySize {
		key, off := le.Uint64(rows[i:]), le.Uint64(rows[i+8:])
		if h, ok := hashes[off]; !ok || h != key {
			return g.err(fmt.Errorf("%w: text-hash table row %d points at no text of hash %016x", ErrCorrupt, i/TableEntrySize, key))
		}
	}
	return nil
}
