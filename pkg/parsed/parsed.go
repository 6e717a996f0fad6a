// Package parsed reads and writes the gatherer's output for the seeder:
// parsed/docs.jsonl, one JSON document record per URL of the batch that the
// harvester tried, with the page's out-links and anchor texts. The format
// is documented in docs/format/parsed.md.
package parsed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
)

// Version is the parsed output format version the Writer writes. Version
// 2 added detectedLang, langConfidence and simhash; version 3 changed the
// simhash to the fingerprint of pkg/simhash's version 2 (SimhashVersion);
// version 4 added revisit (a 200 that brought nothing new, which a
// reader of version 3 would take for an empty page) and the stored
// capture fields. Records of versions 1 (MinVersion) to 3 are still read.
const Version = 4

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
	// Revisit (version 4) marks a response stored as a WARC revisit
	// record: a 304 Not Modified, or a 2xx whose payload is the URL's
	// stored capture (identical-payload-digest). Nothing was parsed: the
	// seeder keeps what it holds of the page (NotModified).
	Revisit bool `json:"revisit,omitempty"`
	// RecordID, RecordDate and PayloadDigest (version 4) are the stored
	// capture a 2xx response record read whole is: its WARC-Record-ID,
	// WARC-Date and WARC-Payload-Digest, which the seeder keeps for the
	// revisit records of later visits (Capture).
	RecordID      string `json:"recordId,omitempty"`
	RecordDate    string `json:"recordDate,omitempty"`
	PayloadDigest string `json:"payloadDigest,omitempty"`
	Links         []Link `json:"links,omitempty"` // out-links in document order
	// Sitemap is set on the record of a batch entry of kind sitemap: what
	// reading it gave. Its Links are then the sitemap's entries.
	Sitemap *Sitemap `json:"sitemap,omitempty"`
}

// NotModified tells whether the record's response brought nothing new:
// a 304 Not Modified, or a response stored as a revisit record
// (Revisit). The page's stored content, title and links stay as they
// were.
func (d *Doc) NotModified() bool { return d.Status == 304 || d.Revisit }

// Capture is the stored capture the record names (RecordID, RecordDate,
// PayloadDigest), the zero Capture if none; an error wrapping
// capture.ErrFormat if its fields are not well formed.
func (d *Doc) Capture() (capture.Capture, error) {
	return capture.Parse(d.RecordID, d.RecordDate, d.PayloadDigest)
}

// SimhashVersion is the version of the fingerprint scheme (pkg/simhash's
// Version) of d.Simhash: 1 in records of format version 2, 2 in records
// of version 3; 0 when the record has no simhash. Fingerprints of two
// versions are never compared (docs/gatherer.md, "Near-duplicates").
func (d *Doc) SimhashVersion() int {
	switch {
	case d.Simhash == "":
		return 0
	case d.V <= 2:
		return 1
	}
	return 2
}

// Link is one out-link of a page, or one entry of a sitemap.
type Link struct {
	URL      string `json:"url"`                // absolute URL (resolved against <base> and the page URL)
	Anchor   string `json:"anchor,omitempty"`   // anchor text (or alt text of an image inside the anchor)
	NoFollow bool   `json:"nofollow,omitempty"` // rel=nofollow

	// Sitemap entries only (docs/sitemaps.md).
	Sitemap    bool     `json:"sitemap,omitempty"`    // an index's entry: another sitemap
	Cross      bool     `json:"cross,omitempty"`      // outside the sitemap's host and directory: taken only if the listed site's robots.txt names the sitemap
	LastMod    string   `json:"lastmod,omitempty"`    // <lastmod> in UTC, RFC 3339 (left out when the sitemap's dates are not trusted)
	ChangeFreq string   `json:"changefreq,omitempty"` // <changefreq>, lower case
	Priority   *float64 `json:"priority,omitempty"`   // <priority>, 0 to 1
}

// Sitemap is what the gatherer found in a sitemap.
type Sitemap struct {
	Kind       string `json:"kind"`                 // urlset, index, text, rss, atom or unknown (pkg/sitemap.Kind)
	Entries    int    `json:"entries"`              // entries kept (the links)
	Invalid    int    `json:"invalid,omitempty"`    // entries skipped: no or bad URL
	OutOfScope int    `json:"outOfScope,omitempty"` // entries outside the scope rule (the gatherer keeps them all, marked cross, for the seeder)
	Dropped    int    `json:"dropped,omitempty"`    // entries past the limits, or that did not normalise
	Gzip       bool   `json:"gzip,omitempty"`       // the file was gzip-compressed
	Reason     string `json:"reason,omitempty"`     // why it was not read to its end: bad XML, a limit
	Untrusted  string `json:"untrusted,omitempty"`  // why its lastmod dates were left out
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
	var b []byte
	var err error
	if d.Sitemap != nil {
		// Sitemap records are few (one per sitemap): encoding/json
		// writes them, fields the fast encoder does not know included.
		b, err = marshalLine(w.buf[:0], d)
	} else {
		b, err = appendDoc(w.buf[:0], d)
	}
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

// marshalLine appends what encoding/json's Encoder (without HTML
// escaping) writes for d.
func marshalLine(b []byte, d *Doc) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(d)
	return buf.Bytes(), err
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
