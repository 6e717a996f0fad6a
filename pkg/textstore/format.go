package textstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The on-disk format, byte by byte, is docs/format/textstore.md; the
// names below are the ones used there. All integers are little-endian.

// Version is the format version of the segment files this code writes
// and reads.
const Version = 1

// Magic numbers at the start of the two files of a segment.
const (
	DataMagic  = "WIRETXTD" // seg-NNNNNN.dat
	IndexMagic = "WIRETXTI" // seg-NNNNNN.idx
)

// Sizes of the fixed parts.
const (
	DataHeaderSize   = 16 // magic, version, segment
	RecordHeaderSize = 8  // block length, block CRC-32C
	IndexHeaderSize  = 64
	TableEntrySize   = 16 // key u64, entry offset u64
	entryFixedSize   = 48 // the fixed fields of an entry after its length
)

// Entry flags.
const (
	FlagNoIndex  = 1 << 0 // the page asked not to be indexed; no text kept
	FlagNoFollow = 1 << 1 // the page asked for its links not to be followed
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Names of a segment's files.
const (
	segPrefix = "seg-"
	dataExt   = ".dat"
	indexExt  = ".idx"
)

// SegmentName is the base name (without extension) of segment id:
// "seg-000042". Segments are named by the batch they were written from.
func SegmentName(id int) string { return fmt.Sprintf("%s%06d", segPrefix, id) }

// DataPath and IndexPath are the files of segment id in dir.
func DataPath(dir string, id int) string  { return filepath.Join(dir, SegmentName(id)+dataExt) }
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

// indexHeader is the first IndexHeaderSize bytes of an index file.
type indexHeader struct {
	Version      uint32
	Segment      uint32
	Count        uint32
	Mode         Mode
	SummaryWords uint32
	DataSize     uint64 // size of the .dat file the index describes
	URLTable     uint64 // offset of the URL-hash table
	DocTable     uint64 // offset of the doc-id table
	BodyCRC      uint32 // CRC-32C of every byte after the header
}

func (h *indexHeader) marshal() []byte {
	b := make([]byte, IndexHeaderSize)
	copy(b, IndexMagic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], h.Version)
	le.PutUint32(b[12:], h.Segment)
	le.PutUint32(b[16:], h.Count)
	le.PutUint16(b[20:], uint16(h.Mode))
	le.PutUint32(b[24:], h.SummaryWords)
	le.PutUint64(b[32:], h.DataSize)
	le.PutUint64(b[40:], h.URLTable)
	le.PutUint64(b[48:], h.DocTable)
	le.PutUint32(b[56:], h.BodyCRC)
	le.PutUint32(b[60:], crc(b[:60]))
	return b
}

// unmarshalIndexHeader checks and decodes an index header; size is the
// index file's size.
func unmarshalIndexHeader(b []byte, size int64) (indexHeader, error) {
	var h indexHeader
	if len(b) < IndexHeaderSize {
		return h, fmt.Errorf("%w: index header: %d bytes, want %d", ErrCorrupt, len(b), IndexHeaderSize)
	}
	if string(b[:8]) != IndexMagic {
		return h, fmt.Errorf("%w: index: magic %q, want %q", ErrCorrupt, b[:8], IndexMagic)
	}
	le := binary.LittleEndian
	h.Version = le.Uint32(b[8:])
	if h.Version != Version {
		return h, fmt.Errorf("%w %d (this program reads version %d)", ErrVersion, h.Version, Version)
	}
	if got, want := crc(b[:60]), le.Uint32(b[60:]); got != want {
		return h, fmt.Errorf("%w: index header checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	h.Segment = le.Uint32(b[12:])
	h.Count = le.Uint32(b[16:])
	h.Mode = Mode(le.Uint16(b[20:]))
	h.SummaryWords = le.Uint32(b[24:])
	h.DataSize = le.Uint64(b[32:])
	h.URLTable = le.Uint64(b[40:])
	h.DocTable = le.Uint64(b[48:])
	h.BodyCRC = le.Uint32(b[56:])
	tables := uint64(h.Count) * TableEntrySize
	switch {
	case h.URLTable < IndexHeaderSize || h.URLTable > uint64(size):
		return h, fmt.Errorf("%w: index: URL table at %d outside the file (%d bytes)", ErrCorrupt, h.URLTable, size)
	case h.DocTable != h.URLTable+tables:
		return h, fmt.Errorf("%w: index: doc table at %d, want %d", ErrCorrupt, h.DocTable, h.URLTable+tables)
	case h.DocTable+tables != uint64(size):
		return h, fmt.Errorf("%w: index is %d bytes, its header says %d (truncated?)", ErrCorrupt, size, h.DocTable+tables)
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
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		return fmt.Errorf("%w %d in data file (this program reads version %d)", ErrVersion, v, Version)
	}
	if s := binary.LittleEndian.Uint32(b[12:]); int(s) != segment {
		return fmt.Errorf("%w: data file belongs to segment %d", ErrCorrupt, s)
	}
	return nil
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
	MIME        string
	Charset     string
	Lang        string
	Title       string
	Description string

	// Segment is the segment the entry was read from (set by the store).
	Segment int
}

// NoIndex reports FlagNoIndex.
func (m *Meta) NoIndex() bool { return m.Flags&FlagNoIndex != 0 }

// maxString caps the variable-length strings of an entry.
const maxString = 1 << 16

func appendString(b []byte, s string) []byte {
	if len(s) > maxString {
		s = s[:maxString]
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// marshalEntry appends an entry: u32 length of the rest, the fixed
// fields, then the strings.
func marshalEntry(b []byte, m *Meta) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	le := binary.LittleEndian
	b = appendString(b, m.URL)
	b = le.AppendUint64(b, m.DocID)
	b = le.AppendUint64(b, m.Hash)
	b = le.AppendUint64(b, uint64(m.Offset))
	b = le.AppendUint32(b, uint32(m.Length))
	b = le.AppendUint32(b, uint32(m.StoredBytes))
	b = le.AppendUint32(b, uint32(m.TextBytes))
	b = le.AppendUint16(b, uint16(m.Status))
	b = le.AppendUint16(b, m.Flags)
	var fetched int64
	if !m.Fetched.IsZero() {
		fetched = m.Fetched.UnixNano()
	}
	b = le.AppendUint64(b, uint64(fetched))
	for _, s := range []string{m.MIME, m.Charset, m.Lang, m.Title, m.Description} {
		b = appendString(b, s)
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

// unmarshalEntry decodes the body of an entry (after its length).
func unmarshalEntry(b []byte) (Meta, error) {
	r := entryReader{b: b}
	var m Meta
	le := binary.LittleEndian
	m.URL = r.str()
	f := r.fixed(entryFixedSize)
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
	return m, r.err
}
