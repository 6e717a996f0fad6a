package textstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/cespare/xxhash/v2"
	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Writer writes one segment. Texts are appended to a temporary data file
// as they are added; Commit publishes the data file and then the index,
// which is the segment's commit point: a segment without its index does
// not exist. Not safe for concurrent use.
type Writer struct {
	dir     string
	id      int
	mode    Mode
	words   int
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

type loc struct{ off, n int64 }

// WriterStats counts what a Writer stored.
type WriterStats struct {
	Entries    int   // index entries
	Records    int   // texts written to the data file
	Duplicates int   // entries that share a text stored earlier in the segment
	TextBytes  int64 // uncompressed bytes of the texts written
	DataBytes  int64 // size of the data file
}

// Create starts segment id (the batch id) in dir with the given text
// mode. An existing segment of the same id is replaced when the new one
// is committed, which makes rewriting a batch's segment idempotent.
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
	dat, err := collection.CreateAtomic(DataPath(dir, id))
	if err != nil {
		return nil, fmt.Errorf("create text segment %d: %w", id, err)
	}
	w := &Writer{dir: dir, id: id, mode: mode, words: summaryWords, dat: dat, bw: bufio.NewWriterSize(dat, 256*1024),
		byURL: map[string]int{}, stored: map[dedupeKey]loc{}}
	if _, err := w.bw.Write(dataHeader(id)); err != nil {
		dat.Abort()
		return nil, fmt.Errorf("create text segment %d: %w", id, err)
	}
	w.off = DataHeaderSize
	return w, nil
}

// Add records a page: m describes it (URL, DocID and Hash at least; the
// storage fields are filled in here) and text is its whole normalised
// text, of which the segment keeps what its mode says. Pages flagged
// FlagNoIndex keep no text. Adding a URL again replaces its entry.
func (w *Writer) Add(m Meta, text string) error {
	if w.done {
		return errors.New("add to text segment: already finished")
	}
	m.TextBytes = len(text)
	kept := ""
	if m.Flags&FlagNoIndex == 0 {
		kept = w.mode.Keep(text, w.words)
	}
	m.StoredBytes = len(kept)
	m.Offset, m.Length = 0, 0
	if kept != "" {
		k := dedupeKey{m.Hash, crc([]byte(kept)), len(kept)}
		if l, ok := w.stored[k]; ok {
			m.Offset, m.Length = l.off, l.n
			w.stats.Duplicates++
		} else {
			n, err := w.writeRecord(kept)
			if err != nil {
				return err
			}
			m.Offset, m.Length = w.off, n
			w.stored[k] = loc{w.off, n}
			w.off += n
			w.stats.Records++
			w.stats.TextBytes += int64(len(kept))
		}
	}
	m.Segment = w.id
	if i, ok := w.byURL[m.URL]; ok {
		w.entries[i] = m
		return nil
	}
	w.byURL[m.URL] = len(w.entries)
	w.entries = append(w.entries, m)
	return nil
}

func (w *Writer) writeRecord(text string) (int64, error) {
	w.buf = snappy.Encode(w.buf[:cap(w.buf)], []byte(text))
	var h [RecordHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(w.buf)))
	binary.LittleEndian.PutUint32(h[4:], crc(w.buf))
	if _, err := w.bw.Write(h[:]); err != nil {
		return 0, fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	if _, err := w.bw.Write(w.buf); err != nil {
		return 0, fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	return int64(RecordHeaderSize + len(w.buf)), nil
}

// Stats returns what has been stored so far.
func (w *Writer) Stats() WriterStats {
	s := w.stats
	s.Entries = len(w.entries)
	s.DataBytes = w.off
	return s
}

// Commit publishes the segment: it removes any index of the same id
// first (so a crash in between leaves no segment rather than a
// mismatched pair), publishes the data file, then writes the index.
func (w *Writer) Commit() error {
	if w.done {
		return errors.New("commit text segment: already finished")
	}
	w.done = true
	if err := w.bw.Flush(); err != nil {
		w.dat.Abort()
		return fmt.Errorf("write text segment %d: %w", w.id, err)
	}
	idxPath := IndexPath(w.dir, w.id)
	if err := os.Remove(idxPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.dat.Abort()
		return fmt.Errorf("replace text segment %d: %w", w.id, err)
	}
	if err := collection.SyncDir(w.dir); err != nil {
		w.dat.Abort()
		return err
	}
	if err := w.dat.Commit(); err != nil {
		return fmt.Errorf("commit text segment %d: %w", w.id, err)
	}
	idx := w.index()
	if err := collection.WriteFileAtomic(idxPath, idx); err != nil {
		return fmt.Errorf("commit text segment %d: %w", w.id, err)
	}
	return nil
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

// index builds the index file: the entries sorted by URL, then the
// URL-hash table and the doc-id table.
func (w *Writer) index() []byte {
	es := w.entries
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].URL != es[j].URL {
			return es[i].URL < es[j].URL
		}
		return es[i].DocID < es[j].DocID
	})
	var body bytes.Buffer
	type row struct{ key, off uint64 }
	urls := make([]row, len(es))
	docs := make([]row, len(es))
	var b []byte
	for i := range es {
		off := uint64(IndexHeaderSize + body.Len())
		b = marshalEntry(b[:0], &es[i])
		body.Write(b)
		urls[i] = row{xxhash.Sum64String(es[i].URL), off}
		docs[i] = row{es[i].DocID, off}
	}
	less := func(t []row) func(i, j int) bool {
		return func(i, j int) bool {
			if t[i].key != t[j].key {
				return t[i].key < t[j].key
			}
			return t[i].off < t[j].off
		}
	}
	sort.Slice(urls, less(urls))
	sort.Slice(docs, less(docs))
	h := indexHeader{Version: Version, Segment: uint32(w.id), Count: uint32(len(es)), Mode: w.mode,
		SummaryWords: uint32(w.words), DataSize: uint64(w.off)}
	h.URLTable = uint64(IndexHeaderSize + body.Len())
	h.DocTable = h.URLTable + uint64(len(es))*TableEntrySize
	for _, t := range [][]row{urls, docs} {
		for _, r := range t {
			body.Write(binary.LittleEndian.AppendUint64(nil, r.key))
			body.Write(binary.LittleEndian.AppendUint64(nil, r.off))
		}
	}
	h.BodyCRC = crc(body.Bytes())
	return append(h.marshal(), body.Bytes()...)
}
