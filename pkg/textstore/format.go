package textstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// The on-disk format, byte by byte, is docs/format/textstore.md; the
// names below are the ones used there. All integers are little-endian.

// Version is the format version of the segment files this code writes.
// It reads versions 1 and 2.
const Version = 2

// Versions this code reads.
const (
	Version1 = 1
	Version2 = 2
)

// Magic numbers at the start of the two files of a segment.
const (
	DataMagic  = "WIRETXTD" // seg-NNNNNN.dat, seg-NNNNNN.gG.dat
	IndexMagic = "WIRETXTI" // seg-NNNNNN.idx
)

// Sizes of the fixed parts.
const (
	DataHeaderSize    = 16 // magic, version, segment
	RecordHeaderSize  = 8  // block length, block CRC-32C
	IndexHeaderSize   = 96 // version 2
	IndexHeaderSizeV1 = 64
	TableEntrySize    = 16 // key u64, entry offset u64
	entryFixedSize    = 64 // the fixed fields of a version 2 entry after its URL
	entryFixedSizeV1  = 48
)

// Entry flags.
const (
	FlagNoIndex  = 1 << 0 // the page asked not to be indexed; no text kept
	FlagNoFollow = 1 << 1 // the page asked for its links not to be followed
	FlagSummary  = 1 << 2 // the text mode kept only the first words (version 2)
	FlagNoText   = 1 << 3 // the text mode kept no text (version 2)
)

// Index header flags.
const (
	// HeaderCompacted marks a segment written by Compact: it holds the
	// newest entries of batches FirstBatch to its id.
	HeaderCompacted = 1 << 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// crcString is crc of a string, without copying it to a []byte (the text
// of a page, hashed once per page).
func crcString(s string) uint32 {
	return crc32.Checksum(unsafe.Slice(unsafe.StringData(s), len(s)), castagnoli)
}

// Names of a segment's files.
const (
	segPrefix = "seg-"
	dataExt   = ".dat"
	indexExt  = ".idx"
	genMark   = ".g"
)

// SegmentName is the base name (without extension) of segment id:
// "seg-000042". Segments are named by the batch they were written from
// (a compacted segment by the newest batch it holds).
func SegmentName(id int) string { return fmt.Sprintf("%s%06d", segPrefix, id) }

// DataPath is the data file of generation 0 of segment id in dir:
// seg-NNNNNN.dat.
func DataPath(dir string, id int) string { return DataPathGen(dir, id, 0) }

// DataPathGen is the data file of generation gen of segment id in dir:
// seg-NNNNNN.dat for generation 0, seg-NNNNNN.gGEN.dat after. Data files
// are written once; a segment written again gets a new generation, and
// its index names the generation it uses.
func DataPathGen(dir string, id, gen int) string {
	if gen == 0 {
		return filepath.Join(dir, SegmentName(id)+dataExt)
	}
	return filepath.Join(dir, SegmentName(id)+genMark+strconv.Itoa(gen)+dataExt)
}

// IndexPath is the index file of segment id in dir.
func IndexPath(dir string, id int) string { return filepath.Join(dir, SegmentName(id)+indexExt) }

// parseIndexName returns the id of an index file name, or false.
func parseIndexName(name string) (int, bool) {
	if !strings.HasPrefix(name, segPrefix) || !strings.HasSuffix(name, indexExt) {
		return 0, false
	}
	s := strings.TrimSuffix(strings.TrimPrefix(name, segPrefix), indexExt)
	id, err := strconv.Atoi(s)
	if err != nil || id <= 0 || SegmentName(id)+indexExt != name {
		return 0, false
	}
	return id, true
}

// parseDataName returns the segment id and generation of a data file
// name, or false.
func parseDataName(name string) (id, gen int, ok bool) {
	if !strings.HasPrefix(name, segPrefix) || !strings.HasSuffix(name, dataExt) {
		return 0, 0, false
	}
	s := strings.TrimSuffix(strings.TrimPrefix(name, segPrefix), dataExt)
	if i := strings.Index(s, genMark); i >= 0 {
		g, err := strconv.Atoi(s[i+len(genMark):])
		if err != nil || g <= 0 {
			return 0, 0, false
		}
		s, gen = s[:i], g
	}
	id, err := strconv.Atoi(s)
	if err != nil || id <= 0 || filepath.Base(DataPathGen("", id, gen)) != name {
		return 0, 0, false
	}
	return id, gen, true
}

// indexHeader is the header of an index file (either version).
type indexHeader struct {
	Version      uint32
	Segment      uint32
	Count        uint32 // entries
	Mode         Mode
	Flags        uint16 // Header* bits (version 2)
	SummaryWords uint32
	Generation   uint32 // of the data file this index uses (version 2)
	DataSize     uint64 // size of that data file
	URLTable     uint64 // offset of the URL-hash table
	DocTable     uint64 // offset of the doc-id table
	HashTable    uint64 // offset of the text-hash table (version 2)
	HashRows     uint32 // rows of the text-hash table (version 2)
	FirstBatch   uint32 // lowest batch with entries here (version 2; else the segment id)
	BodyCRC      uint32 // CRC-32C of every byte after the header
}

// size is the header's size in its version.
func (h *indexHeader) size() uint64 {
	if h.Version == Version1 {
		return IndexHeaderSizeV1
	}
	return IndexHeaderSize
}

func (h *indexHeader) marshal() []byte {
	b := make([]byte, IndexHeaderSize)
	copy(b, IndexMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], Version)
	le.PutUint32(b[12:], h.Segment)
	le.PutUint32(b[16:], h.Count)
	le.PutUint16(b[20:], uint16(h.Mode))
	le.PutUint16(b[22:], h.Flags)
	le.PutUint32(b[24:], h.SummaryWords)
	le.PutUint32(b[28:], h.Generation)
	le.PutUint64(b[32:], h.DataSize)
	le.PutUint64(b[40:], h.URLTable)
	le.PutUint64(b[48:], h.DocTable)
	le.PutUint64(b[56:], h.HashTable)
	le.PutUint32(b[64:], h.HashRows)
	le.PutUint32(b[68:], h.FirstBatch)
	le.PutUint32(b[88:], h.BodyCRC)
	le.PutUint32(b[92:], crc(b[:92]))
	return b
}

// unmarshalIndexHeader checks and decodes an index header of either
// version; b holds at least the first IndexHeaderSize bytes of the file
// (or all of it if shorter) and size is the file's size.
func unmarshalIndexHeader(b []byte, size int64) (indexHeader, error) {
	var h indexHeader
	if len(b) < 12 || string(b[:8]) != IndexMagic {
		return h, fmt.Errorf("%w: index: bad magic", ErrCorrupt)
	}
	le := binary.LittleEndian
	h.Version = le.Uint32(b[8:])
	if h.Version != Version1 && h.Version != Version2 {
		return h, fmt.Errorf("%w %d (this program reads versions %d and %d)", ErrVersion, h.Version, Version1, Version2)
	}
	if uint64(len(b)) < h.size() {
		return h, fmt.Errorf("%w: index header: %d bytes, want %d", ErrCorrupt, len(b), h.size())
	}
	h.Segment = le.Uint32(b[12:])
	h.Count = le.Uint32(b[16:])
	h.Mode = Mode(le.Uint16(b[20:]))
	h.SummaryWords = le.Uint32(b[24:])
	h.DataSize = le.Uint64(b[32:])
	h.URLTable = le.Uint64(b[40:])
	h.DocTable = le.Uint64(b[48:])
	if h.Version == Version1 {
		if got, want := crc(b[:60]), le.Uint32(b[60:]); got != want {
			return h, fmt.Errorf("%w: index header checksum %08x, want %08x", ErrCorrupt, got, want)
		}
		h.BodyCRC = le.Uint32(b[56:])
		h.HashTable = h.DocTable + uint64(h.Count)*TableEntrySize
		h.FirstBatch = h.Segment
	} else {
		if got, want := crc(b[:92]), le.Uint32(b[92:]); got != want {
			return h, fmt.Errorf("%w: index header checksum %08x, want %08x", ErrCorrupt, got, want)
		}
		h.Flags = le.Uint16(b[22:])
		h.Generation = le.Uint32(b[28:])
		h.HashTable = le.Uint64(b[56:])
		h.HashRows = le.Uint32(b[64:])
		h.FirstBatch = le.Uint32(b[68:])
		h.BodyCRC = le.Uint32(b[88:])
	}
	tables := uint64(h.Count) * TableEntrySize
	switch {
	case h.URLTable < h.size() || h.URLTable > uint64(size):
		return h, fmt.Errorf("%w: index: URL table at %d outside the file (%d bytes)", ErrCorrupt, h.URLTable, size)
	case h.DocTable != h.URLTable+tables:
		return h, fmt.Errorf("%w: index: doc table at %d, want %d", ErrCorrupt, h.DocTable, h.URLTable+tables)
	case h.HashTable != h.DocTable+tables:
		return h, fmt.Errorf("%w: index: text-hash table at %d, want %d", ErrCorrupt, h.HashTable, h.DocTable+tables)
	case h.HashTable+uint64(h.HashRows)*TableEntrySize != uint64(size):
		return h, fmt.Errorf("%w: index is %d bytes, its header says %d (truncated?)", ErrCorrupt, size, h.HashTable+uint64(h.HashRows)*TableEntrySize)
	case h.FirstBatch == 0 || h.FirstBatch > h.Segment:
		return h, fmt.Errorf("%w: index: first batch %d of segment %d", ErrCorrupt, h.FirstBatch, h.Segment)
	}
	if !h.Mode.valid() {
		return h, fmt.Errorf("%w: index: unknown text mode %d", ErrCorrupt, h.Mode)
	}
	return h, nil
}

func dataHeader(segment int) []byte {
	b := make([]byte, DataHeaderSize)
	copy(b, DataMagic)
	binary.LittleEndian.PutUint32(b[8:], Version)
	binary.LittleEndian.PutUint32(b[12:], uint32(segment))
	return b
}

func checkDataHeader(b []byte, segment int) error {
	if len(b) < DataHeaderSize || string(b[:8]) != DataMagic {
		return fmt.Errorf("%w: data file: bad magic", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version1 && v != Version2 {
		return fmt.Errorf("%w %d in data file (this program reads versions %d and %d)", ErrVersion, v, Version1, Version2)
	}
	if s := binary.LittleEndian.Uint32(b[12:]); int(s) != segment {
		return fmt.Errorf("%w: data file belongs to segment %d", ErrCorrupt, s)
	}
	return nil
}

// Heading is a heading of a page, as the text store keeps it.
type Heading struct {
	Level int    // 1 to 6
	Text  string // on one line
}

// Meta is an index entry: what the store knows about one URL without
// reading its text.
type Meta struct {
	URL         string    // the URL as the gatherer wrote it (normalised)
	DocID       uint64    // id from the batch file
	Hash        uint64    // xxhash64 of the page's whole normalised text
	Offset      int64     // record offset in the data file; 0 when no text is kept
	Length      int64     // record length including its header; 0 when no text is kept
	StoredBytes int       // bytes of text kept (after the text mode)
	TextBytes   int       // bytes of the page's whole text
	Status      int       // HTTP status
	Flags       uint16    // Flag* bits
	Fetched     time.Time // when the page was fetched
	Batch       int       // batch the page was gathered from (version 1: the segment id)
	MIME        string
	Charset     string
	Lang        string
	Title       string
	Description string
	Headings    []Heading // version 2

	// Where the text is: the data file of generation RecordGen of segment
	// RecordSegment, and the CRC-32C of its snappy block. A text stored
	// once for several pages (exact duplicates) is in the segment that
	// stored it first, which may be older than Segment.
	RecordSegment int
	RecordGen     int
	RecordCRC     uint32 // 0 in version 1

	// Segment is the segment the entry was read from (set by the store).
	Segment int
}

// NoIndex reports FlagNoIndex.
func (m *Meta) NoIndex() bool { return m.Flags&FlagNoIndex != 0 }

// HasText reports whether the entry points at a stored text.
func (m *Meta) HasText() bool { return m.Length > 0 }

// maxString caps the variable-length strings of an entry, and
// maxHeadings the headings of one.
const (
	maxString   = 1 << 16
	maxHeadings = 1 << 12
)

func appendString(b []byte, s string) []byte {
	if len(s) > maxString {
		s = s[:maxString]
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// marshalEntry appends a version 2 entry: u32 length of the rest, the
// URL, the fixed fields, then the other strings and the headings.
func marshalEntry(b []byte, m *Meta) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	le := binary.LittleEndian
	b = appendString(b, m.URL)
	b = le.AppendUint64(b, m.DocID)
	b = le.AppendUint64(b, m.Hash)
	b = le.AppendUint32(b, uint32(m.RecordSegment))
	b = le.AppendUint32(b, uint32(m.RecordGen))
	b = le.AppendUint64(b, uint64(m.Offset))
	b = le.AppendUint32(b, uint32(m.Length))
	b = le.AppendUint32(b, m.RecordCRC)
	b = le.AppendUint32(b, uint32(m.StoredBytes))
	b = le.AppendUint32(b, uint32(m.TextBytes))
	b = le.AppendUint16(b, uint16(m.Status))
	b = le.AppendUint16(b, m.Flags)
	var fetched int64
	if !m.Fetched.IsZero() {
		fetched = m.Fetched.UnixNano()
	}
	b = le.AppendUint64(b, uint64(fetched))
	b = le.AppendUint32(b, uint32(m.Batch))
	for _, s := range []string{m.MIME, m.Charset, m.Lang, m.Title, m.Description} {
		b = appendString(b, s)
	}
	hs := m.Headings
	if len(hs) > maxHeadings {
		hs = hs[:maxHeadings]
	}
	b = binary.AppendUvarint(b, uint64(len(hs)))
	for _, h := range hs {
		b = append(b, byte(h.Level))
		b = appendString(b, h.Text)
	}
	le.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// entryReader decodes the fields of one entry, failing softly.
type entryReader struct {
	b   []byte
	err error
}

func (r *entryReader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = fmt.Errorf("%w: entry: bad string length", ErrCorrupt)
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *entryReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = fmt.Errorf("%w: entry: bad count", ErrCorrupt)
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *entryReader) fixed(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%w: entry: cut short", ErrCorrupt)
		return make([]byte, n)
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// unmarshalEntry decodes the body of an entry (after its length) of
// segment seg, written in version v with generation gen.
func unmarshalEntry(b []byte, v uint32, seg, gen int) (Meta, error) {
	if v == Version1 {
		return unmarshalEntryV1(b, seg)
	}
	r := entryReader{b: b}
	var m Meta
	le := binary.LittleEndian
	m.URL = r.str()
	f := r.fixed(entryFixedSize)
	m.DocID = le.Uint64(f[0:])
	m.Hash = le.Uint64(f[8:])
	m.RecordSegment = int(le.Uint32(f[16:]))
	m.RecordGen = int(le.Uint32(f[20:]))
	m.Offset = int64(le.Uint64(f[24:]))
	m.Length = int64(le.Uint32(f[32:]))
	m.RecordCRC = le.Uint32(f[36:])
	m.StoredBytes = int(le.Uint32(f[40:]))
	m.TextBytes = int(le.Uint32(f[44:]))
	m.Status = int(le.Uint16(f[48:]))
	m.Flags = le.Uint16(f[50:])
	if ns := int64(le.Uint64(f[52:])); ns != 0 {
		m.Fetched = time.Unix(0, ns).UTC()
	}
	m.Batch = int(le.Uint32(f[60:]))
	m.MIME = r.str()
	m.Charset = r.str()
	m.Lang = r.str()
	m.Title = r.str()
	m.Description = r.str()
	n := r.uvarint()
	if n > maxHeadings {
		r.err = fmt.Errorf("%w: entry: %d headings", ErrCorrupt, n)
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		l := r.fixed(1)[0]
		m.Headings = append(m.Headings, Heading{Level: int(l), Text: r.str()})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: entry: %d bytes left over", ErrCorrupt, len(r.b))
	}
	if r.err == nil && (m.Offset < 0 || (m.Length > 0 && (m.RecordSegment <= 0 || m.RecordSegment > seg || (m.RecordSegment == seg && m.RecordGen != gen)))) {
		r.err = fmt.Errorf("%w: entry: record in segment %d generation %d", ErrCorrupt, m.RecordSegment, m.RecordGen)
	}
	return m, r.err
}

// unmarshalEntryV1 decodes a version 1 entry: its text is always in its
// own segment (generation 0), and it has no batch, CRC or headings.
func unmarshalEntryV1(b []byte, seg int) (Meta, error) {
	r := entryReader{b: b}
	var m Meta
	le := binary.LittleEndian
	m.URL = r.str()
	f := r.fixed(entryFixedSizeV1)
	m.DocID = le.Uint64(f[0:])
	m.Hash = le.Uint64(f[8:])
	m.Offset = int64(le.Uint64(f[16:]))
	m.Length = int64(le.Uint32(f[24:]))
	m.StoredBytes = int(le.Uint32(f[28:]))
	m.TextBytes = int(le.Uint32(f[32:]))
	m.Status = int(le.Uint16(f[36:]))
	m.Flags = le.Uint16(f[38:])
	if ns := int64(le.Uint64(f[40:])); ns != 0 {
		m.Fetched = time.Unix(0, ns).UTC()
	}
	m.MIME = r.str()
	m.Charset = r.str()
	m.Lang = r.str()
	m.Title = r.str()
	m.Description = r.str()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: entry: %d bytes left over", ErrCorrupt, len(r.b))
	}
	if r.err == nil && m.Offset < 0 {
		r.err = fmt.Errorf("%w: entry: negative offset", ErrCorrupt)
	}
	m.Batch, m.RecordSegment = seg, seg
	return m, r.err
}
