// Package parsed reads and writes the gatherer's output for the seeder:
// parsed/docs.jsonl, one JSON document record per URL of the batch that the
// harvester tried, with the page's out-links and anchor texts. The format
// is documented in docs/format/parsed.md.
package parsed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Version is the parsed output format version the Writer writes. Version
// 2 added detectedLang, langConfidence and simhash; records of version 1
// (MinVersion) are still read, without them.
const Version = 2

// MinVersion is the oldest format version readers accept.
const MinVersion = 1

// DocsFile is the name of the document records file in a parsed directory.
const DocsFile = "docs.jsonl"

// Unread starts the error of a record whose response the gatherer could
// not read back from its WARC record (gatherer run --salvage): status 0,
// error "unread: FILE at OFFSET: cause". The page was not taken in; the
// seeder treats it as not attempted and puts it back where it was before
// the batch (pending for a new page), without counting a failure.
const Unread = "unread"

// ErrFormat marks a parsed output that cannot be read.
var ErrFormat = errors.New("malformed parsed output")

// ErrVersion is returned for a record of a format version this program
// does not read: not damage, a version to upgrade to.
var ErrVersion = errors.New("parsed output of an unsupported format version")

// Doc is what the gatherer learned about one URL of the batch.
type Doc struct {
	V            int       `json:"v"`                        // format version
	DocID        uint64    `json:"docid"`                    // id from the batch file
	URL          string    `json:"url"`                      // URL as fetched
	Status       int       `json:"status"`                   // HTTP status, 0 if none
	Err          string    `json:"error,omitempty"`          // fetch or parse error
	Fetched      time.Time `json:"fetched"`                  // when it was fetched
	MIME         string    `json:"mime,omitempty"`           // media type
	Charset      string    `json:"charset,omitempty"`        // charset the text was decoded from
	Bytes        int64     `json:"bytes"`                    // body bytes
	Title        string    `json:"title,omitempty"`          // page title
	Description  string    `json:"description,omitempty"`    // meta description
	Lang         string    `json:"lang,omitempty"`           // language attribute of <html>, if any
	DetectedLang string    `json:"detectedLang,omitempty"`   // language told from the text (ISO 639-1, else 639-3), or "unknown"
	LangConf     int       `json:"langConfidence,omitempty"` // confidence of DetectedLang, 0-100
	LastModified string    `json:"lastModified,omitempty"`   // Last-Modified response header, as sent
	ETag         string    `json:"etag,omitempty"`           // ETag response header, as sent
	Hash         string    `json:"hash,omitempty"`           // hash of the normalised text (hex)
	Simhash      string    `json:"simhash,omitempty"`        // similarity fingerprint of the text (64-bit simhash over word shingles, hex)
	DuplicateOf  string    `json:"duplicateOf,omitempty"`    // URL of the page whose stored text this page's equals (exact duplicate); the text is stored once
	TextBytes    int       `json:"textBytes,omitempty"`      // bytes of extracted text
	Redirect     string    `json:"redirect,omitempty"`       // absolute redirect target (3xx or meta refresh)
	Canonical    string    `json:"canonical,omitempty"`      // rel=canonical, absolute
	NoIndex      bool      `json:"noindex,omitempty"`        // meta robots / X-Robots-Tag noindex
	NoFollow     bool      `json:"nofollow,omitempty"`       // meta robots / X-Robots-Tag nofollow (links are then omitted)
	Unchanged    bool      `json:"unchanged,omitempty"`      // same text hash as the previous visit
	Links        []Link    `json:"links,omitempty"`          // out-links in document order
}

// Link is one out-link of a page.
type Link struct {
	URL      string `json:"url"`                // absolute URL (resolved against <base> and the page URL)
	Anchor   string `json:"anchor,omitempty"`   // anchor text (or alt text of an image inside the anchor)
	NoFollow bool   `json:"nofollow,omitempty"` // rel=nofollow
}

// Writer writes document records as JSON lines.
type Writer struct {
	bw  *bufio.Writer
	buf []byte // the record being written
}

// NewWriter writes records to w; call Flush at the end.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 256*1024)}
}

// Write appends one record: what encoding/json writes for it (without
// HTML escaping), one line.
func (w *Writer) Write(d *Doc) error {
	d.V = Version
	b, err := appendDoc(w.buf[:0], d)
	if err != nil {
		return fmt.Errorf("write doc %d: %w", d.DocID, err)
	}
	if cap(b) <= maxKeptRecord {
		w.buf = b
	}
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("write doc %d: %w", d.DocID, err)
	}
	return nil
}

// maxKeptRecord is the largest record buffer a Writer keeps for the next.
const maxKeptRecord = 1 << 20

// Flush writes buffered records.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Reader reads document records one at a time, so a large batch needs no
// more memory than its largest record. Records are lines (DecodeLine);
// empty lines are skipped.
type Reader struct {
	br   *bufio.Reader
	name string
	n    int
	buf  []byte // a line longer than br's buffer
}

// NewReader reads records from r; name is used in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256*1024), name: name}
}

// Next returns the next record, or io.EOF after the last.
func (r *Reader) Next() (*Doc, error) {
	for {
		line, err := r.line()
		if len(bytes.TrimSpace(line)) > 0 {
			r.n++
			return DecodeLine(string(line), r.name, r.n)
		}
		if err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read %s: %w", r.name, err)
		}
	}
}

// line returns the next line (without copying when it fits the buffer;
// valid until the next call) and the error that ended it, if any.
func (r *Reader) line() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	r.buf = append(r.buf[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
	}
	return r.buf, err
}

// ReadFile reads every record of the docs file at path.
func ReadFile(path string) ([]*Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open parsed docs %s: %w", path, err)
	}
	defer f.Close()
	r := NewReader(f, path)
	var out []*Doc
	for {
		d, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
}
