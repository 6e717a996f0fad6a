// Package textstore is the collection's text store (COLLECTION/text/):
// append-only segments of snappy-compressed page texts, one segment per
// gathered batch, each with an index sorted by URL and lookup tables by
// URL hash and by doc id. The newest segment that has a URL wins. The
// format is docs/format/textstore.md.
package textstore

import (
	"encoding/binary"
	"fmt"
	"io"
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
}

// segment is one pair of files. Its lookup tables are read on first use.
type segment struct {
	id   int
	hdr  indexHeader
	idx  *os.File
	dat  *os.File
	mu   sync.Mutex
	urls []byte // URL-hash table, nil until loaded
	docs []byte // doc-id table, nil until loaded
}

// Open opens the text store in dir (created if missing) and checks the
// header of every segment: the format version (ErrVersion), the sizes of
// both files against the index header (ErrCorrupt). A data file without
// its index is an unfinished segment and is ignored.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open text store %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open text store %s: %w", dir, err)
	}
	s := &Store{dir: dir}
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

func openSegment(dir string, id int) (_ *segment, err error) {
	seg := &segment{id: id}
	defer func() {
		if err != nil {
			seg.close()
		}
	}()
	if seg.idx, err = os.Open(IndexPath(dir, id)); err != nil {
		return nil, err
	}
	st, err := seg.idx.Stat()
	if err != nil {
		return nil, err
	}
	hb := make([]byte, IndexHeaderSize)
	if _, err := io.ReadFull(seg.idx, hb); err != nil {
		return nil, fmt.Errorf("%w: index header: %v", ErrCorrupt, err)
	}
	if seg.hdr, err = unmarshalIndexHeader(hb, st.Size()); err != nil {
		return nil, err
	}
	if int(seg.hdr.Segment) != id {
		return nil, fmt.Errorf("%w: index belongs to segment %d", ErrCorrupt, seg.hdr.Segment)
	}
	if seg.dat, err = os.Open(DataPath(dir, id)); err != nil {
		return nil, fmt.Errorf("%w: data file: %w", ErrCorrupt, err)
	}
	if st, err = seg.dat.Stat(); err != nil {
		return nil, err
	}
	if uint64(st.Size()) != seg.hdr.DataSize {
		return nil, fmt.Errorf("%w: data file is %d bytes, the index says %d (truncated or replaced?)", ErrCorrupt, st.Size(), seg.hdr.DataSize)
	}
	db := make([]byte, DataHeaderSize)
	if _, err := seg.dat.ReadAt(db, 0); err != nil {
		return nil, fmt.Errorf("%w: data header: %v", ErrCorrupt, err)
	}
	if err := checkDataHeader(db, id); err != nil {
		return nil, err
	}
	return seg, nil
}

func (g *segment) close() {
	if g.idx != nil {
		g.idx.Close()
	}
	if g.dat != nil {
		g.dat.Close()
	}
}

// Close closes the segment files.
func (s *Store) Close() error {
	for _, g := range s.segs {
		g.close()
	}
	s.segs = nil
	return nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// SegmentInfo describes a segment.
type SegmentInfo struct {
	ID           int
	Entries      int
	Mode         Mode
	SummaryWords int
	DataBytes    int64
}

// Segments lists the segments, oldest first.
func (s *Store) Segments() []SegmentInfo {
	out := make([]SegmentInfo, len(s.segs))
	for i, g := range s.segs {
		out[i] = SegmentInfo{ID: g.id, Entries: int(g.hdr.Count), Mode: g.hdr.Mode, SummaryWords: int(g.hdr.SummaryWords), DataBytes: int64(g.hdr.DataSize)}
	}
	return out
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

// entryAt reads the entry at offset off of the index.
func (g *segment) entryAt(off uint64) (Meta, error) {
	if off < IndexHeaderSize || off+4 > g.hdr.URLTable {
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
	m, err := unmarshalEntry(b)
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

// Text reads the text an entry points at, checking its checksum.
func (s *Store) Text(m Meta) (string, error) {
	if m.Length == 0 {
		return "", nil
	}
	g := s.segment(m.Segment)
	if g == nil {
		return "", fmt.Errorf("text segment %06d: %w", m.Segment, ErrNotFound)
	}
	return g.record(m.Offset, m.Length, m.StoredBytes)
}

// maxRecord bounds a record so a damaged length cannot ask for gigabytes.
const maxRecord = 1 << 30

func (g *segment) record(off, n int64, want int) (string, error) {
	if off < DataHeaderSize || n < RecordHeaderSize || n > maxRecord || uint64(off+n) > g.hdr.DataSize {
		return "", g.err(fmt.Errorf("%w: record at %d (%d bytes) outside the data file", ErrCorrupt, off, n))
	}
	b := make([]byte, n)
	if _, err := g.dat.ReadAt(b, off); err != nil {
		return "", g.err(fmt.Errorf("%w: record at %d: %v", ErrCorrupt, off, err))
	}
	le := binary.LittleEndian
	blen, sum := int64(le.Uint32(b[0:])), le.Uint32(b[4:])
	block := b[RecordHeaderSize:]
	if blen != int64(len(block)) {
		return "", g.err(fmt.Errorf("%w: record at %d: block of %d bytes, the index says %d", ErrCorrupt, off, blen, len(block)))
	}
	if got := crc(block); got != sum {
		return "", g.err(fmt.Errorf("%w: record at %d: checksum %08x, want %08x", ErrCorrupt, off, got, sum))
	}
	dl, err := snappy.DecodedLen(block)
	// A snappy copy element of at most 5 bytes yields at most 64 bytes, so
	// a larger claim is damage and must not be allocated.
	if err == nil && dl > 64*(len(block)+1) {
		err = fmt.Errorf("implausible decoded length")
	}
	if err != nil || dl != want {
		return "", g.err(fmt.Errorf("%w: record at %d: decoded length %d, want %d (%v)", ErrCorrupt, off, dl, want, err))
	}
	text, err := snappy.Decode(nil, block)
	if err != nil {
		return "", g.err(fmt.Errorf("%w: record at %d: %v", ErrCorrupt, off, err))
	}
	return string(text), nil
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

// Scan calls fn for every entry of segment id in URL order: the seam for
// compaction, which merges segments keeping the newest entry of each URL.
func (s *Store) Scan(id int, fn func(Meta) error) error {
	g := s.segment(id)
	if g == nil {
		return fmt.Errorf("text segment %06d: %w", id, ErrNotFound)
	}
	r := io.NewSectionReader(g.idx, IndexHeaderSize, int64(g.hdr.URLTable)-IndexHeaderSize)
	var lb [4]byte
	for n := uint32(0); n < g.hdr.Count; n++ {
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return g.err(fmt.Errorf("%w: entry %d: %v", ErrCorrupt, n, err))
		}
		l := binary.LittleEndian.Uint32(lb[:])
		if int64(l) > r.Size() {
			return g.err(fmt.Errorf("%w: entry %d: length %d", ErrCorrupt, n, l))
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(r, b); err != nil {
			return g.err(fmt.Errorf("%w: entry %d: %v", ErrCorrupt, n, err))
		}
		m, err := unmarshalEntry(b)
		if err != nil {
			return g.err(fmt.Errorf("entry %d: %w", n, err))
		}
		m.Segment = g.id
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Verify checks segment id completely: the index checksum, every entry,
// and every record it points at.
func (s *Store) Verify(id int) error {
	g := s.segment(id)
	if g == nil {
		return fmt.Errorf("text segment %06d: %w", id, ErrNotFound)
	}
	body := make([]byte, int64(g.hdr.DocTable)+int64(g.hdr.Count)*TableEntrySize-IndexHeaderSize)
	if _, err := g.idx.ReadAt(body, IndexHeaderSize); err != nil {
		return g.err(fmt.Errorf("%w: index: %v", ErrCorrupt, err))
	}
	if got := crc(body); got != g.hdr.BodyCRC {
		return g.err(fmt.Errorf("%w: index checksum %08x, want %08x", ErrCorrupt, got, g.hdr.BodyCRC))
	}
	prev := ""
	return s.Scan(id, func(m Meta) error {
		if m.URL < prev {
			return g.err(fmt.Errorf("%w: entries out of order at %q", ErrCorrupt, m.URL))
		}
		prev = m.URL
		if m.Length > 0 {
			if _, err := g.record(m.Offset, m.Length, m.StoredBytes); err != nil {
				return err
			}
		}
		return nil
	})
}
