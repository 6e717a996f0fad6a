package textstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sort"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Writer writes one segment. Texts are appended to a new data file as
// they are added; Commit publishes the data file and then the index,
// which is the segment's commit point. Not safe for concurrent use.
type Writer struct {
	dir     string
	id      int
	mode    Mode
	words   int
	prevGen int // generation of the segment's current index, -1 if none
	gen     int // generation of the data file being written
	dat     *collection.AtomicFile
	bw      *bufio.Writer
	off     int64
	entries []Meta
	byURL   map[string]int    // URL -> index in entries
	stored  map[dedupeKey]loc // texts already in the data file
	buf     []byte
	stats   WriterStats
	done    bool
}

type dedupeKey struct {
	hash uint64 // Meta.Hash: the page's whole text
	crc  uint32 // of the kept text, guarding against a hash collision
	n    int    // bytes of kept text
}

// loc is a record of the data file being written.
type loc struct {
	off, n int64
	crc    uint32 // of the snappy block
	url    string // the first page that stored it
}

// ownGen marks, in the entries of a Writer, a record in the data file
// being written: its generation is settled by Commit.
const ownGen = -1

// WriterStats counts what a Writer stored.
type WriterStats struct {
	Entries    int   // index entries
	Records    int   // texts written to the data file
	Duplicates int   // entries that share a text stored earlier in the segment
	Older      int   // entries that point at a text stored in an older segment
	TextBytes  int64 // uncompressed bytes of the texts written
	DataBytes  int64 // size of the data file
}

// Added says where Add put a page's text.
type Added struct {
	Stored bool   // written to this segment's data file
	Of     string // when not stored: the URL of the page whose stored text it shares ("" when nothing was kept)
}

// Create starts segment id (the batch id) in dir with the given text
// mode. An existing segment of the same id is replaced when the new one
// is committed (unless they are identical, when the old files stay), which
// makes gathering a batch again idempotent. A segment written by Compact
// is not replaced: ErrCompacted.
func Create(dir string, id int, mode Mode, summaryWords int) (*Writer, error) {
	if id <= 0 || id > 999999 {
		return nil, fmt.Errorf("create text segment %d: id out of range", id)
	}
	if !mode.valid() {
		return nil, fmt.Errorf("create text segment %d: unknown mode %d", id, mode)
	}
	if mode == ModeSummary && summaryWords <= 0 {
		return nil, fmt.Errorf("create text segment %d: summary mode needs a positive word count", id)
	}
	if mode != ModeSummary {
		summaryWords = 0
	}
	prev, gen, err := generations(dir, id)
	if err != nil {
		return nil, fmt.Errorf("create text segment %d: %w", id, err)
	}
	dat, err := collection.CreateAtomic(DataPathGen(dir, id, gen))
	if err != nil {
		return nil, fmt.Errorf("create text segment %d: %w", id, err)
	}
	w := &Writer{dir: dir, id: id, mode: mode, words: summaryWords, prevGen: prev, gen: gen, dat: dat, bw: bufio.NewWriterSize(NewWritebackFile(dat.File), 256*1024),
		byURL: map[string]int{}, stored: map[dedupeKey]loc{}}
	if _, err := w.bw.Write(dataHeader(id)); err != nil {
		dat.Abort()
		return nil, fmt.Errorf("create text segment %d: %w", id, err)
	}
	w.off = DataHeaderSize
	return w, nil
}

// generations returns the generation of the current index of segment id
// (-1 if there is none) and the generation a new data file gets: one
// more than any data file of the segment on disk, or 0.
func generations(dir string, id int) (prev, next int, err error) {
	prev = -1
	f, h, err := readIndexHeader(dir, id)
	switch {
	case err == nil:
		f.Close()
		if h.Flags&HeaderCompacted != 0 && int(h.FirstBatch) < id {
			return 0, 0, fmt.Errorf("%w: it holds batches %d to %d", ErrCompacted, h.FirstBatch, id)
		}
		prev = int(h.Generation)
	case errors.Is(err, os.ErrNotExist):
	default:
		// A damaged index is replaced.
	}
	next = -1
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	for _, e := range entries {
		if i, g, ok := parseDataName(e.Name()); ok && i == id {
			next = max(next, g)
		}
	}
	return prev, max(next, prev) + 1, nil
}

// Add records a page: m describes it (URL, DocID, Hash and the page's
// metadata; the storage fields are filled in here) and text is its whole
// normalised text, of which the segment keeps what its mode says. Pages
// flagged FlagNoIndex keep no text. older, if not nil, is an entry of an
// older segment whose stored text equals what this page keeps
// (Store.FindText): the page points at it instead of storing it again.
// A text already stored in this segment is not stored again either.
// Adding a URL again replaces its entry.
func (w *Writer) Add(m Meta, text string, older *Meta) (Added, error) {
	if w.done {
		return Added{}, errors.New("add to text segment: already finished")
	}
	m.TextBytes = len(text)
	m.Flags &^= FlagSummary | FlagNoText
	kept := ""
	if m.Flags&FlagNoIndex == 0 {
		kept = w.mode.Keep(text, w.words)
		switch {
		case w.mode == ModeNone && text != "":
			m.Flags |= FlagNoText
		case len(kept) < len(text):
			m.Flags |= FlagSummary
		}
	}
	m.StoredBytes = len(kept)
	m.Offset, m.Length, m.RecordSegment, m.RecordGen, m.RecordCRC = 0, 0, 0, 0, 0
	var res Added
	if kept != "" {
		switch k := (dedupeKey{m.Hash, crcString(kept), len(kept)}); {
		case older != nil && older.HasText() && older.StoredBytes == len(kept) && older.RecordSegment < w.id && older.RecordSegment > 0:
			m.RecordSegment, m.RecordGen, m.Offset, m.Length, m.RecordCRC = older.RecordSegment, older.RecordGen, older.Offset, older.Length, older.RecordCRC
			res.Of = older.URL
			w.stats.Older++
		default:
			l, ok := w.stored[k]
			if ok {
				w.stats.Duplicates++
				res.Of = l.url
			} else {
				var err error
				if l, err = w.writeRecord(kept); err != nil {
					return Added{}, err
				}
				l.url = m.URL
				w.stored[k] = l
				res.Stored = true
			}
			m.RecordSegment, m.RecordGen, m.Offset, m.Length, m.RecordCRC = w.id, ownGen, l.off, l.n, l.crc
		}
	}
	if m.Batch == 0 {
		m.Batch = w.id
	}
	m.Segment = w.id
	if i, ok := w.byURL[m.URL]; ok {
		w.entries[i] = m
		return res, nil
	}
	w.byURL[m.URL] = len(w.entries)
	w.entries = append(w.entries, m)
	return res, nil
}

func (w *Writer) writeRecord(text string) (loc, error) {
	w.buf = snappy.Encode(w.buf[:cap(w.buf)], []byte(text))
	sum := crc(w.buf)
	var h [RecordHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(w.buf)))
	binary.LittleEndian.PutUint32(h[4:], sum)
	if _, err := w.bw.Write(h[:]); err != nil {
		return loc{}, fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		return loc{}, fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	l := loc{off: w.off, n: int64(RecordHeaderSize + len(w.buf)), crc: sum}
	w.off += l.n
	w.stats.Records++
	w.stats.TextBytes += int64(len(text))
	return l, nil
}

// Stats returns what has been stored so far.
func (w *Writer) Stats() WriterStats {
	s := w.stats
	s.Entries = len(w.entries)
	s.DataBytes = w.off
	return s
}

// Commit publishes the segment: the data file under a name of its own
// generation, then the index, replacing any older one by a rename, so a
// crash leaves either the old segment or the new one. When the old
// segment has the same content, it is kept as it is and nothing is
// written. A data file the new index no longer uses is removed when no
// newer segment exists (a newer one may point into it; Compact removes it
// then).
func (w *Writer) Commit() error {
	if w.done {
		return errors.New("commit text segment: already finished")
	}
	w.done = true
	if err := w.bw.Flush(); err != nil {
		w.dat.Abort()
		return fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	if w.prevGen >= 0 {
		same, err := w.sameAsPrevious()
		if err != nil {
			w.dat.Abort()
			return fmt.Errorf("commit text segment %d: %w", w.id, err)
		}
		if same {
			w.dat.Abort()
			return nil
		}
	}
	if err := w.publish(); err != nil {
		return fmt.Errorf("commit text segment %d: %w", w.id, err)
	}
	if w.prevGen >= 0 && w.prevGen != w.gen {
		if newest, err := newestSegment(w.dir); err == nil && newest <= w.id {
			os.Remove(DataPathGen(w.dir, w.id, w.prevGen))
		}
	}
	return nil
}

// publish makes the data file and then the index durable under their
// names. The index is built, written to its temporary file and synced
// while the data file is synced, as neither waits for the other's bytes;
// the renames stay in order: the index is renamed into place only once the
// data file's rename is durable, so a crash never leaves an index that
// names a data file the disk does not have.
func (w *Writer) publish() error {
	idx, err := collection.CreateAtomic(IndexPath(w.dir, w.id))
	if err != nil {
		w.dat.Abort()
		return err
	}
	defer idx.Abort()
	written := make(chan error, 1)
	go func() {
		_, err := idx.Write(w.index(w.gen))
		if err == nil {
			err = idx.Sync()
		}
		if err != nil {
			err = fmt.Errorf("write %s: %w", IndexPath(w.dir, w.id), err)
		}
		written <- err
	}()
	errDat := w.dat.Commit()
	errIdx := <-written
	if errDat != nil {
		return errDat
	}
	if errIdx != nil {
		return errIdx
	}
	return idx.Commit() // syncs again (nothing is left to write), renames, syncs the directory
}

// sameAsPrevious reports whether the segment written equals the one on
// disk: the same data bytes, and the same index once given the old
// generation.
func (w *Writer) sameAsPrevious() (bool, error) {
	old, err := os.ReadFile(IndexPath(w.dir, w.id))
	if err != nil || !bytes.Equal(old, w.index(w.prevGen)) {
		return false, nil
	}
	f, err := os.Open(DataPathGen(w.dir, w.id, w.prevGen))
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != w.off {
		return false, nil
	}
	mine, err := os.Open(w.dat.Name())
	if err != nil {
		return false, err
	}
	defer mine.Close()
	return sameContent(f, mine)
}

// sameContent compares two readers to the end.
func sameContent(a, b io.Reader) (bool, error) {
	ba, bb := make([]byte, 64*1024), make([]byte, 64*1024)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF || eb == io.EOF || eb == io.ErrUnexpectedEOF {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF), nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}

// newestSegment returns the highest id of an index in dir (0 if none).
func newestSegment(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	newest := 0
	for _, e := range entries {
		if id, ok := parseIndexName(e.Name()); ok {
			newest = max(newest, id)
		}
	}
	return newest, nil
}

// Abort discards the segment being written; an older segment of the same
// id is left as it was.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.dat.Abort()
}

// index builds the index file with data file generation gen: the entries
// sorted by URL, then the URL-hash, doc-id and text-hash tables.
func (w *Writer) index(gen int) []byte {
	es := w.entries
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].URL != es[j].URL {
			return es[i].URL < es[j].URL
		}
		return es[i].DocID < es[j].DocID
	})
	var body bytes.Buffer
	ix := newIndexBuilder(&body)
	for i := range es {
		m := es[i]
		if m.RecordGen == ownGen {
			m.RecordGen = gen
		}
		ix.add(&m, m.RecordSegment == w.id) // a bytes.Buffer does not fail
	}
	h := ix.header(indexHeader{Segment: uint32(w.id), Mode: w.mode, SummaryWords: uint32(w.words), Generation: uint32(gen),
		DataSize: uint64(w.off), FirstBatch: uint32(w.id)})
	var out bytes.Buffer
	ix.write(&out, h, &body)
	return out.Bytes()
}

// indexBuilder assembles an index from entries added in URL order. The
// entries go to body as they come; the tables stay in memory (16 bytes
// per row) until write.
type indexBuilder struct {
	body             io.Writer
	bodyLen          uint64
	bodyCRC          uint32 // of the entries so far
	urls, docs, hash []row
	records          map[int64]bool // offsets of records already in the text-hash table
	b                []byte
}

type row struct{ key, off uint64 }

func newIndexBuilder(body io.Writer) *indexBuilder {
	return &indexBuilder{body: body, records: map[int64]bool{}}
}

// add appends an entry; own says its text is in this segment's data file,
// and the first entry of each such record gets a text-hash table row.
func (ix *indexBuilder) add(m *Meta, own bool) error {
	off := IndexHeaderSize + ix.bodyLen
	ix.b = marshalEntry(ix.b[:0], m)
	if _, err := ix.body.Write(ix.b); err != nil {
		return err
	}
	ix.bodyLen += uint64(len(ix.b))
	ix.bodyCRC = crc32.Update(ix.bodyCRC, castagnoli, ix.b)
	ix.urls = append(ix.urls, row{xxhash.Sum64String(m.URL), off})
	ix.docs = append(ix.docs, row{m.DocID, off})
	if own && m.HasText() && !ix.records[m.Offset] {
		ix.records[m.Offset] = true
		ix.hash = append(ix.hash, row{m.Hash, off})
	}
	return nil
}

// tables sorts the tables and returns them as bytes.
func (ix *indexBuilder) tables() []byte {
	out := make([]byte, 0, (len(ix.urls)+len(ix.docs)+len(ix.hash))*TableEntrySize)
	for _, t := range [][]row{ix.urls, ix.docs, ix.hash} {
		sort.Slice(t, func(i, j int) bool {
			if t[i].key != t[j].key {
				return t[i].key < t[j].key
			}
			return t[i].off < t[j].off
		})
		for _, r := range t {
			out = binary.LittleEndian.AppendUint64(out, r.key)
			out = binary.LittleEndian.AppendUint64(out, r.off)
		}
	}
	return out
}

// header completes h (segment, mode, generation, data size, first batch
// and flags given) with the counts, table offsets and body checksum.
func (ix *indexBuilder) header(h indexHeader) indexHeader {
	h.Count = uint32(len(ix.urls))
	h.HashRows = uint32(len(ix.hash))
	h.URLTable = IndexHeaderSize + ix.bodyLen
	h.DocTable = h.URLTable + uint64(len(ix.urls))*TableEntrySize
	h.HashTable = h.DocTable + uint64(len(ix.docs))*TableEntrySize
	return h
}

// write writes the whole index: header, the entries read back from
// entries, and the tables.
func (ix *indexBuilder) write(w io.Writer, h indexHeader, entries io.Reader) error {
	t := ix.tables()
	h.BodyCRC = crc32.Update(ix.bodyCRC, castagnoli, t)
	if _, err := w.Write(h.marshal()); err != nil {
		return err
	}
	if n, err := io.Copy(w, entries); err != nil {
		return err
	} else if uint64(n) != ix.bodyLen {
		return fmt.Errorf("index entries: read back %d bytes of %d", n, ix.bodyLen)
	}
	_, err := w.Write(t)
	return err
}

// WritebackFile writes to a file and hands what it wrote to the kernel's
// writeback in steps of WritebackStep bytes (sync_file_range on Linux, a
// no-op elsewhere), so that the fsync that makes the file durable waits
// for the last step only instead of starting the writing of the whole
// file. It is a hint only: durability still comes from Sync. A segment's
// data file is written through one; the gatherer writes docs.jsonl
// through one too.
type WritebackFile struct {
	f       *os.File
	off     int64 // bytes written
	started int64 // bytes handed to the writeback
}

// WritebackStep is how many written bytes a WritebackFile hands to the
// kernel's writeback at a time.
const WritebackStep = 1 << 20

// NewWritebackFile returns a WritebackFile writing to f from its current
// offset, which it takes to be 0.
func NewWritebackFile(f *os.File) *WritebackFile { return &WritebackFile{f: f} }

// Write writes p to the file and starts the writeback of what was
// written since the last step once that is WritebackStep bytes or more.
func (w *WritebackFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.started >= WritebackStep {
		startWriteback(w.f, w.started, w.off-w.started)
		w.started = w.off
	}
	return n, err
}
