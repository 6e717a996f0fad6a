// Package warcio writes the harvester's WARC 1.1 files and reads their
// records back. Each record is its own gzip member, so a record can be
// read from its offset and length alone, and a file cut short by a crash
// keeps every complete record readable.
//
// Records are written by this package (the format is a few header lines
// and a block; writing them directly costs half the time of building them
// with a generic record builder) and read back by its Reader (read.go),
// which relies on one record per gzip member and skips the SHA-1 digest
// check unless asked (the member's CRC-32 guards the bytes).
// github.com/nlnwa/gowarc/v2 reads whole files in Verify and checks in the
// tests that every file validates: headers, lengths and digests, record
// by record, and that it reads every record to the bytes Reader gives.
//
// Everything here is safe for concurrent use: a Writer serialises its
// appends, Encode shares nothing, and the calls into gowarc that touch its
// package-level state go through one lock (see gowarcMu).
package warcio

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v2"

	"github.com/wirecrawl/wire/pkg/capture"
)

// ErrRecord marks a WARC record that cannot be read.
var ErrRecord = errors.New("bad WARC record")

// BuildError is returned by Encode (and Write) when an exchange cannot be
// made into WARC records because of its content — a target URI or header
// value that WARC cannot carry — as opposed to a disk error. Nothing was
// written; the caller can log the URL as failed and go on.
type BuildError struct {
	URL    string // target URI of the exchange
	Reason string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build warc record for %s: %s", e.URL, e.Reason)
}

// gowarcMu guards a third-party global: every gowarc constructor
// (NewUnmarshaler, NewRecordBuilder, NewWarcFileReader, …) calls
// uuid.EnableRandPool, which writes an unsynchronised package variable of
// github.com/google/uuid that uuid.New reads. All gowarc constructors in
// this package run under this lock, and gowarc is never asked to generate
// a record id, so concurrent readers and writers do not race.
var gowarcMu sync.Mutex

// newUnmarshaler is gowarc.NewUnmarshaler under gowarcMu.
func newUnmarshaler(opts ...gowarc.WarcRecordOption) gowarc.Unmarshaler {
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	return gowarc.NewUnmarshaler(append(opts, gowarc.WithAddMissingRecordId(false))...)
}

// Record types and content types written here (WARC 1.1 §6).
const (
	TypeWarcinfo = "warcinfo"
	TypeRequest  = "request"
	TypeResponse = "response"
	TypeRevisit  = "revisit"
	TypeMetadata = "metadata"

	ContentTypeRequest  = "application/http;msgtype=request"
	ContentTypeResponse = "application/http;msgtype=response"
	ContentTypeFields   = "application/warc-fields"

	// ProfileServerNotModified is the WARC-Profile of a revisit record
	// that stores a 304 Not Modified response (WARC 1.1 §6.7.2).
	ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
	// ProfileIdenticalPayloadDigest is the WARC-Profile of a revisit
	// record that stores a response whose payload digest equals the one
	// of the URL's stored capture (WARC 1.1 §6.7.1): the payload is not
	// stored again.
	ProfileIdenticalPayloadDigest = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
)

// Field is one name: value line of an application/warc-fields block.
type Field struct{ Name, Value string }

// Exchange is one HTTP request and its response as sent and received.
type Exchange struct {
	URL        string    // target URI
	Date       time.Time // when the request was sent
	IP         string    // server address, for WARC-IP-Address
	Request    []byte    // request line and headers as sent
	StatusLine string    // e.g. "HTTP/1.1 200 OK"
	Header     http.Header
	Body       []byte // body as stored (Content-Encoding decoded, possibly truncated)
	Truncated  string // WARC-Truncated reason ("length", "time", "disconnect", "unspecified"), or ""
	// Metadata, if not empty, is written as a metadata record concurrent
	// to the response (e.g. fetchTimeMs).
	Metadata []Field
	// Previous is the URL's stored capture (from the batch), if known: a
	// 304 refers to it, and a 2xx response stored whole whose payload
	// digest equals Previous.Digest is written as an
	// identical-payload-digest revisit that refers to it (WARC 1.1 §6.7).
	Previous capture.Capture
}

// NotModified reports whether the exchange is a 304 response, stored as a
// revisit record with the server-not-modified profile.
func (x *Exchange) NotModified() bool {
	n := 0
	for f := range strings.FieldsSeq(x.StatusLine) {
		switch n {
		case 0:
			if !strings.HasPrefix(f, "HTTP/") {
				return false
			}
		case 1:
			return f == "304"
		}
		n++
	}
	return false
}

// sameAsPrevious tells whether a response whose payload digest is
// payload is stored as an identical-payload-digest revisit of
// x.Previous: a 2xx response received whole (not truncated) whose
// payload digest equals the stored capture's (WARC 1.1 §6.7.1).
func (x *Exchange) sameAsPrevious(payload string) bool {
	if x.Previous.Digest == "" || x.Truncated != "" || payload != x.Previous.Digest {
		return false
	}
	status := statusCode(x.StatusLine)
	return status >= 200 && status < 300
}

// statusCode is the status code of an HTTP status line, 0 if it has none.
func statusCode(line string) int {
	_, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(line, "HTTP/") {
		return 0
	}
	code, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(code)
	if err != nil || len(code) != 3 {
		return 0
	}
	return n
}

// Encoded is an exchange made into gzip members, one after the other in
// one buffer, ready to be appended.
type Encoded struct {
	b                *encBuf       // from bufPool
	buf              *bytes.Buffer // &b.out: the members
	respOff, respLen int           // the response (or revisit) member
	profile          string        // the revisit's WARC-Profile, "" for a response record
}

// Revisit is the WARC-Profile of the revisit record the response was
// stored as (ProfileServerNotModified, ProfileIdenticalPayloadDigest),
// or "" when it was stored as a response record.
func (e *Encoded) Revisit() string { return e.profile }

// encBuf holds the members of an Encoded and Encode's scratch space; it is
// reused through bufPool.
type encBuf struct {
	out  bytes.Buffer // the gzip members
	head []byte       // the WARC header of the record being made
	http bytes.Buffer // the response's status line and headers
	meta bytes.Buffer // the metadata record's block
}

// Size is the number of bytes the members take in the file.
func (e *Encoded) Size() int64 { return int64(e.buf.Len()) }

// Release gives the buffer back for reuse; e must not be used after.
// Calling it is optional.
func (e *Encoded) Release() {
	if e == nil || e.b == nil {
		return
	}
	if e.b.out.Cap() <= 8<<20 {
		e.b.out.Reset()
		e.b.http.Reset()
		e.b.meta.Reset()
		e.b.head = e.b.head[:0]
		bufPool.Put(e.b)
	}
	e.b, e.buf = nil, nil
}

var bufPool = sync.Pool{New: func() any { return new(encBuf) }}

// Encode makes the records of x — request, response (or revisit), and
// metadata if x has any — each compressed as its own gzip member. The
// response is a revisit record for a 304 (profile server-not-modified)
// and for a 2xx response whose payload is x.Previous's (profile
// identical-payload-digest, the body left out); a revisit refers to
// x.Previous when it is known (WARC-Refers-To, WARC-Refers-To-Date,
// WARC-Payload-Digest; WARC 1.1 §6.7). It touches no file and is safe
// for concurrent use; a content problem is a *BuildError.
func Encode(x *Exchange) (*Encoded, error) {
	if err := checkValue(x.URL, "target URI"); err != nil {
		return nil, &BuildError{URL: x.URL, Reason: err.Error()}
	}
	if err := checkValue(x.IP, "IP address"); err != nil {
		return nil, &BuildError{URL: x.URL, Reason: err.Error()}
	}
	if x.Truncated != "" {
		if err := checkValue(x.Truncated, "truncation reason"); err != nil {
			return nil, &BuildError{URL: x.URL, Reason: err.Error()}
		}
	}
	if err := x.Previous.Check(); err != nil {
		return nil, &BuildError{URL: x.URL, Reason: "previous capture: " + err.Error()}
	}
	if x.StatusLine == "" || strings.ContainsAny(x.StatusLine, "\r\n") {
		return nil, &BuildError{URL: x.URL, Reason: fmt.Sprintf("bad status line %q", x.StatusLine)}
	}
	for _, f := range x.Metadata {
		if err := checkFieldName(f.Name); err != nil || strings.ContainsAny(f.Value, "\r\n") {
			return nil, &BuildError{URL: x.URL, Reason: fmt.Sprintf("bad metadata field %q: %q", f.Name, f.Value)}
		}
	}
	b := bufPool.Get().(*encBuf)
	enc := &Encoded{b: b, buf: &b.out}
	for _, f := range x.Metadata {
		b.meta.WriteString(f.Name)
		b.meta.WriteString(": ")
		b.meta.WriteString(f.Value)
		b.meta.WriteString("\r\n")
	}
	date := x.Date
	if date.IsZero() {
		date = time.Now()
	}
	day := warcDate(date)
	var ids [3]string
	newIDs(ids[:])
	reqID, respID, metaID := ids[0], ids[1], ids[2]
	// Stored members take their size plus a few bytes; compressed ones
	// (bodies from storeBelow up) less than that.
	b.out.Grow(len(x.Request) + min(len(x.Body), 64<<10) + 2048)
	d := sha1.New()

	// request
	var fields [14]Field
	reqHdr := append(fields[:0],
		Field{"WARC-Type", TypeRequest},
		Field{"WARC-Record-ID", reqID},
		Field{"WARC-Date", day},
		Field{"WARC-Target-URI", x.URL},
	)
	if x.IP != "" {
		reqHdr = append(reqHdr, Field{"WARC-IP-Address", x.IP})
	}
	reqHdr = append(reqHdr, Field{"WARC-Concurrent-To", respID}, Field{"WARC-Block-Digest", digestWith(d, x.Request, nil)}, Field{"Content-Type", ContentTypeRequest})
	if _, _, err := member(b, reqHdr, x.Request, nil); err != nil {
		enc.Release()
		return nil, err
	}

	// response (or revisit). Its block is the status line and headers
	// (head), then the body, which is not copied: its digest and its
	// compression go over the two parts.
	head := &b.http
	head.WriteString(x.StatusLine)
	head.WriteString("\r\n")
	if err := writeHeader(head, x.Header); err != nil {
		enc.Release()
		return nil, &BuildError{URL: x.URL, Reason: err.Error()}
	}
	head.WriteString("\r\n")
	body, typ, profile, payload := x.Body, TypeResponse, "", ""
	switch {
	case x.NotModified():
		typ, profile, body, payload = TypeRevisit, ProfileServerNotModified, nil, x.Previous.Digest
	default:
		payload = digestWith(d, body, nil)
		if x.sameAsPrevious(payload) {
			typ, profile, body = TypeRevisit, ProfileIdenticalPayloadDigest, nil
		}
	}
	enc.profile = profile
	respHdr := append(fields[:0],
		Field{"WARC-Type", typ},
		Field{"WARC-Record-ID", respID},
		Field{"WARC-Date", day},
		Field{"WARC-Target-URI", x.URL},
	)
	if x.IP != "" {
		respHdr = append(respHdr, Field{"WARC-IP-Address", x.IP})
	}
	respHdr = append(respHdr, Field{"WARC-Concurrent-To", reqID})
	if typ == TypeRevisit {
		// WARC 1.1 §6.7: the profile, and what the revisit refers to.
		respHdr = append(respHdr, Field{"WARC-Profile", profile})
		if x.Previous.ID != "" {
			respHdr = append(respHdr, Field{"WARC-Refers-To", x.Previous.ID})
		}
		respHdr = append(respHdr, Field{"WARC-Refers-To-Target-URI", x.URL})
		if !x.Previous.Date.IsZero() {
			respHdr = append(respHdr, Field{"WARC-Refers-To-Date", x.Previous.DateString()})
		}
	}
	if x.Truncated != "" {
		respHdr = append(respHdr, Field{"WARC-Truncated", x.Truncated})
	}
	respHdr = append(respHdr, Field{"WARC-Block-Digest", digestWith(d, head.Bytes(), body)})
	if payload != "" {
		respHdr = append(respHdr, Field{"WARC-Payload-Digest", payload})
	}
	respHdr = append(respHdr, Field{"Content-Type", ContentTypeResponse})
	var err error
	if enc.respOff, enc.respLen, err = member(b, respHdr, head.Bytes(), body); err != nil {
		enc.Release()
		return nil, err
	}

	// metadata
	if b.meta.Len() > 0 {
		metaHdr := append(fields[:0],
			Field{"WARC-Type", TypeMetadata},
			Field{"WARC-Record-ID", metaID},
			Field{"WARC-Date", day},
			Field{"WARC-Target-URI", x.URL},
			Field{"WARC-Concurrent-To", respID},
			Field{"WARC-Block-Digest", digestWith(d, b.meta.Bytes(), nil)},
			Field{"Content-Type", ContentTypeFields},
		)
		if _, _, err := member(b, metaHdr, b.meta.Bytes(), nil); err != nil {
			enc.Release()
			return nil, err
		}
	}
	return enc, nil
}

// Info is the content of the warcinfo record that starts each file (WARC
// 1.1 §6.2; field names after the WARC guidelines' recommendations).
type Info []Field

// encodeInfo makes the warcinfo member of a file.
func encodeInfo(filename string, info Info) ([]byte, error) {
	var blk bytes.Buffer
	for _, f := range info {
		if err := checkFieldName(f.Name); err != nil || strings.ContainsAny(f.Value, "\r\n") {
			return nil, &BuildError{URL: filename, Reason: fmt.Sprintf("bad warcinfo field %q: %q", f.Name, f.Value)}
		}
		blk.WriteString(f.Name + ": " + f.Value + "\r\n")
	}
	var id [1]string
	newIDs(id[:])
	hdr := []Field{
		{"WARC-Type", TypeWarcinfo},
		{"WARC-Record-ID", id[0]},
		{"WARC-Date", warcDate(time.Now())},
		{"WARC-Filename", filename},
		{"WARC-Block-Digest", digestWith(sha1.New(), blk.Bytes(), nil)},
		{"Content-Type", ContentTypeFields},
	}
	var b encBuf
	if _, _, err := member(&b, hdr, blk.Bytes(), nil); err != nil {
		return nil, err
	}
	return b.out.Bytes(), nil
}

// checkValue refuses what a WARC header line cannot carry.
func checkValue(v, what string) error {
	for _, r := range v {
		if r < 0x21 || r == 0x7f {
			return fmt.Errorf("%s %q contains a space or control character", what, v)
		}
	}
	return nil
}

func checkFieldName(n string) error {
	if n == "" {
		return errors.New("empty field name")
	}
	for _, r := range n {
		if r <= 0x20 || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return fmt.Errorf("bad field name %q", n)
		}
	}
	return nil
}

// writeHeader writes HTTP headers in a stable order; values with line
// breaks (which net/http never produces) are refused.
func writeHeader(w *bytes.Buffer, h http.Header) error {
	if err := h.Write(w); err != nil {
		return err
	}
	return nil
}

// warcDate formats t as a WARC-Date (UTC, to the second): what
// t.UTC().Format("2006-01-02T15:04:05Z") gives for years 0–9999, without
// the layout interpreter.
func warcDate(t time.Time) string {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	h, mi, s := t.Clock()
	b := [20]byte{
		byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + mo/10), byte('0' + mo%10), '-', byte('0' + d/10), byte('0' + d%10), 'T',
		byte('0' + h/10), byte('0' + h%10), ':', byte('0' + mi/10), byte('0' + mi%10), ':',
		byte('0' + s/10), byte('0' + s%10), 'Z',
	}
	return string(b[:])
}

// newIDs fills ids with new record ids, <urn:uuid:…> with random
// (version 4) UUIDs, from one read of crypto/rand. It does not use
// github.com/google/uuid (see gowarcMu).
func newIDs(ids []string) {
	var raw [3 * 16]byte
	for len(ids) > 0 {
		n := min(len(ids), 3)
		if _, err := rand.Read(raw[:16*n]); err != nil {
			panic("warcio: crypto/rand failed: " + err.Error()) // never on Linux ≥ 3.17
		}
		for i := range n {
			ids[i] = formatID(raw[16*i : 16*i+16])
		}
		ids = ids[n:]
	}
}

const hexDigits = "0123456789abcdef"

// formatID formats 16 random bytes as <urn:uuid:…> (version 4, variant
// RFC 4122).
func formatID(u []byte) string {
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const pre = "<urn:uuid:"
	var b [len(pre) + 36 + 1]byte
	n := copy(b[:], pre)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[n] = '-'
			n++
		}
		b[n], b[n+1] = hexDigits[c>>4], hexDigits[c&15]
		n += 2
	}
	b[n] = '>'
	return string(b[:])
}

// digestWith is the WARC digest value of the concatenation of a and b
// (either may be empty), computed with d (reset first): sha1, base32 (the
// customary form).
func digestWith(d hash.Hash, a, b []byte) string {
	d.Reset()
	d.Write(a)
	d.Write(b)
	var sum [sha1.Size]byte
	const pre = "sha1:"
	var out [len(pre) + 32]byte
	copy(out[:], pre)
	base32.StdEncoding.Encode(out[len(pre):], d.Sum(sum[:0]))
	return string(out[:])
}

// Compression of the gzip members: records shorter than storeBelow
// (requests, metadata, empty responses, small pages) are stored without
// compression — still valid gzip — and the others are compressed at the
// fastest level. Most of the cost of compressing a member is fixed:
// building its Huffman tables takes about 20 µs whatever the size
// (measured with the harvester benchmark's profile), to save about
// 1.3 KB on a 2.5 KB page of the test web. Below 4 KB the CPU is worth
// more than the disk; larger pages, most of a real web's, are compressed
// as before. Stored members are written directly (appendStored), not
// through a gzip.Writer. Higher levels were measured for the gatherer's
// sake (docs/perf/gatherer-2026-11-27-8.md): level 5 inflates about 5 %
// faster and level 9 15 % (1-2 % of the gatherer's stage), for 1.5 and
// 8 times the compression CPU per record; the fastest level stays.
const storeBelow = 4 << 10

var gzipPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// recordEnd ends every record's block (WARC 1.1 §4).
var recordEnd = []byte("\r\n\r\n")

// member formats one record, whose block is p1 followed by p2, makes it
// one gzip member and appends that to b.out; it returns the member's
// offset and length in b.out.
func member(b *encBuf, hdr []Field, p1, p2 []byte) (int, int, error) {
	size := len(p1) + len(p2)
	h := append(b.head[:0], "WARC/1.1\r\n"...)
	for _, f := range hdr {
		h = append(h, f.Name...)
		h = append(h, ": "...)
		h = append(h, f.Value...)
		h = append(h, "\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	h = strconv.AppendInt(h, int64(size), 10)
	h = append(h, "\r\n\r\n"...)
	b.head = h
	out := &b.out
	start := out.Len()
	if total := len(h) + size + len(recordEnd); total < storeBelow {
		out.Grow(len(storedHeader) + 5 + total + 8)
		out.Write(appendStored(out.AvailableBuffer(), h, p1, p2, recordEnd))
		return start, out.Len() - start, nil
	}
	zw := gzipPool.Get().(*gzip.Writer)
	defer gzipPool.Put(zw)
	zw.Reset(out)
	_, err := zw.Write(h)
	for _, p := range [2][]byte{p1, p2} {
		if err == nil && len(p) > 0 {
			_, err = zw.Write(p)
		}
	}
	if err == nil {
		_, err = zw.Write(recordEnd)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("compress warc record: %w", err)
	}
	return start, out.Len() - start, nil
}

// Writer appends records to one .warc.gz file. It is safe for concurrent
// use: appends are serialised, and Sync may run beside them. With
// SetBuffer, appends are gathered in memory and reach the file in larger
// writes, on Flush, Sync and Close; a Flush writes outside the lock the
// appends take, so appends go on while it writes.
type Writer struct {
	name string
	mu   sync.Mutex // guards everything but the write of a taken buffer
	f    *os.File
	off  int64  // size of the file, buffered bytes included
	buf  []byte // appended, not yet written
	// spare is a written buffer kept for reuse.
	spare []byte
	max   int // buffer size; 0 = write every append at once
	// err is the first failed write of the buffer: the records in it are
	// lost, so every later append or flush fails too (a record appended
	// after them would take their offsets).
	err error
	// wmu is held while a buffer is written; it is taken with mu held
	// (so buffers are written in the order they were taken) and mu is
	// let go during the write.
	wmu sync.Mutex
}

// Create opens path for appending (creating it if needed). Appending lets
// a torn last member stay behind harmlessly: the fetch log only points at
// complete records.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat warc %s: %w", path, err)
	}
	return &Writer{f: f, name: path, off: st.Size()}, nil
}

// CreateWithInfo creates a new file at path that starts with a warcinfo
// record holding info. It fails if the file exists.
func CreateWithInfo(path string, info Info) (*Writer, error) {
	m, err := encodeInfo(baseName(path), info)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create warc %s: %w", path, err)
	}
	w := &Writer{f: f, name: path}
	if _, _, err := w.appendBytes(m, 0, len(m)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, os.PathSeparator); i >= 0 {
		return p[i+1:]
	}
	return p
}

// SetBuffer makes the writer gather appends in memory and write them to
// the file together, on Flush, Sync and Close. FlushDue tells when the
// buffer holds size bytes or more: the caller should then Flush (outside
// its own locks, since appends may go on meanwhile). An append that finds
// the buffer at four times size writes it first, under the lock. Records
// in the buffer are not in the file yet: whoever records where they are
// (the harvester's fetch log) must Flush before making that known. size
// 0 writes every append at once (the default).
func (w *Writer) SetBuffer(size int) error {
	if err := w.Flush(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.max = max(size, 0)
	if w.max > 0 && cap(w.buf) < w.max {
		w.buf = make([]byte, 0, w.max+w.max/4)
	}
	return nil
}

// FlushDue tells whether the buffer has reached the size given to
// SetBuffer.
func (w *Writer) FlushDue() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max > 0 && len(w.buf) >= w.max
}

// Write encodes x and appends its records; it returns the offset and
// length of the response record's gzip member.
func (w *Writer) Write(x *Exchange) (offset, length int64, err error) {
	enc, err := Encode(x)
	if err != nil {
		return 0, 0, err
	}
	defer enc.Release()
	return w.Append(enc)
}

// Append appends encoded records in one write (or to the buffer, see
// SetBuffer) and returns the offset and length of the response record's
// gzip member. The caller may Release e afterwards.
func (w *Writer) Append(e *Encoded) (offset, length int64, err error) {
	return w.appendBytes(e.buf.Bytes(), e.respOff, e.respLen)
}

// appendBytes appends data and returns where its part [off, off+n) went.
func (w *Writer) appendBytes(data []byte, off, n int) (int64, int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, os.ErrClosed)
	}
	if w.err != nil {
		return 0, 0, w.err
	}
	start := w.off
	if w.max > 0 {
		if len(w.buf) >= 4*w.max {
			// Nobody flushes: write here rather than grow without end.
			if err := w.flushLocked(); err != nil {
				return 0, 0, err
			}
		}
		w.buf = append(w.buf, data...)
		w.off += int64(len(data))
		return start + int64(off), int64(n), nil
	}
	m, err := w.f.Write(data)
	w.off += int64(m)
	if err != nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, err)
	}
	return start + int64(off), int64(n), nil
}

// flushLocked writes the buffer to the file with mu held, after any write
// in progress. A failed write is final (see Writer.err).
func (w *Writer) flushLocked() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 || w.f == nil {
		return nil
	}
	err := w.writeBuf(w.f, w.buf, w.off-int64(len(w.buf)))
	w.buf = w.buf[:0]
	if err != nil {
		w.err = err
	}
	return err
}

// writeBuf writes a taken buffer, which starts at offset at of the file,
// with wmu held; the caller records a failure in w.err, under mu. The
// written bytes are handed to the kernel's writeback at once, so that
// Sync, when it comes, has less left to wait for.
func (w *Writer) writeBuf(f *os.File, buf []byte, at int64) error {
	m, err := f.Write(buf)
	if err == nil {
		startWriteback(f, at, len(buf))
		return nil
	}
	return fmt.Errorf("write warc %s: %w (%d bytes of buffered records lost)", w.name, err, len(buf)-m)
}

// Flush writes the buffered records to the file (not to the disk: see
// Sync), after any write in progress; it returns when every record
// appended before the call is in the file. Appends go on meanwhile.
func (w *Writer) Flush() error {
	w.mu.Lock()
	if w.err != nil {
		defer w.mu.Unlock()
		return w.err
	}
	buf, f := w.buf, w.f
	at := w.off - int64(len(buf))
	w.buf, w.spare = w.spare[:0], nil
	w.wmu.Lock() // after the write of the buffer taken before this one
	w.mu.Unlock()
	var err error
	if len(buf) > 0 && f != nil {
		err = w.writeBuf(f, buf, at)
	}
	w.wmu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.err == nil {
		w.err = err
	}
	if w.spare == nil && cap(buf) <= 2*w.max {
		w.spare = buf[:0]
	}
	if err != nil {
		return err
	}
	return w.err
}

// Size is the current size of the file, buffered records included.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off
}

// Sync writes the buffered records to the file and flushes the file to
// disk; the records appended before the call are durable when it returns.
func (w *Writer) Sync() error {
	if err := w.Flush(); err != nil {
		return err
	}
	w.mu.Lock()
	f := w.f
	w.mu.Unlock()
	if f == nil {
		return nil
	}
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("sync warc %s: %w", w.name, err)
	}
	return nil
}

// Close writes the buffered records, syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.flushLocked()
	if serr := w.f.Sync(); err == nil {
		err = serr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		return fmt.Errorf("close warc %s: %w", w.name, err)
	}
	return nil
}

// Response is a response (or revisit) record read back from a WARC file.
type Response struct {
	URL        string
	Date       time.Time
	Status     int
	StatusLine string
	Header     http.Header
	Body       []byte
	Truncated  string
	// Revisit is true for a revisit record (a 304 Not Modified, or a
	// response whose payload was the stored capture's): it has headers
	// and no body.
	Revisit bool
	// RecordID, PayloadDigest and Profile are the record's
	// WARC-Record-ID, WARC-Payload-Digest and WARC-Profile ("" if
	// absent); RefersTo is a revisit's WARC-Refers-To.
	RecordID, PayloadDigest, Profile, RefersTo string
}

// Capture is the stored capture a response record is: its record id,
// date and payload digest, which a later revisit of the URL refers to.
// It is the zero Capture for a revisit record (its payload is another
// record's) and for a record without an id or a payload digest.
func (r *Response) Capture() capture.Capture {
	if r.Revisit || r.RecordID == "" || r.PayloadDigest == "" || r.Date.IsZero() {
		return capture.Capture{}
	}
	return capture.Capture{ID: r.RecordID, Date: r.Date.UTC(), Digest: r.PayloadDigest}
}

// maxRecordHeader bounds the WARC and HTTP headers ReadResponse reads
// beyond the body it returns.
const maxRecordHeader = 1 << 20

// ReadResponse reads the response (or revisit) record stored as one gzip
// member at offset with the given length. Bodies longer than maxBody are
// cut there. A damaged record is an error wrapping ErrRecord, never a
// panic. It reads with a Reader of its own (read.go), so the Body is the
// caller's; a loop over many records should use a Reader, which reuses
// its buffers and open files.
func ReadResponse(path string, offset, length, maxBody int64) (*Response, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
	return readResponse(f, path, offset, length, maxBody)
}

// readResponse is ReadResponse on an open file (path names it in errors).
func readResponse(f io.ReaderAt, path string, offset, length, maxBody int64) (*Response, error) {
	var r Reader
	return r.read(f, path, offset, length, maxBody)
}

// readHeader reads HTTP header lines from br up to an empty line; the
// tests read records through gowarc with it.
func readHeader(br *bufio.Reader) (http.Header, error) {
	h := http.Header{}
	for {
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			if errors.Is(err, io.EOF) {
				return h, nil // a block that ends after the headers (revisit)
			}
			return nil, fmt.Errorf("headers: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return h, nil
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
}

// RecordInfo describes one record of a WARC file, as Verify found it.
type RecordInfo struct {
	Type      string // WARC-Type
	ID        string // WARC-Record-ID
	TargetURI string // WARC-Target-URI ("" for warcinfo)
	Offset    int64  // offset of the record's gzip member
	Length    int64  // content length of the block
	Truncated string // WARC-Truncated
}

// Verify reads the whole WARC file at path with gowarc's WarcFileReader in
// strict mode (WARC 1.1 header syntax and field rules, Content-Length,
// block and payload digests) and returns its records in order. Any record
// that does not validate is an error wrapping ErrRecord.
func Verify(path string) (infos []RecordInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: %v", ErrRecord, path, p)
		}
	}()
	// gowarc loops forever on a stream that fails inside a WARC header:
	// check that the file decodes to its end first.
	if err := checkGzip(path); err != nil {
		return nil, err
	}
	gowarcMu.Lock()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation(), gowarc.WithAddMissingRecordId(false))
	gowarcMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer r.Close()
	for {
		rec, off, val, err := r.Next()
		if errors.Is(err, io.EOF) {
			return infos, nil
		}
		if err != nil {
			return infos, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, off, err)
		}
		if val != nil && !val.Valid() {
			rec.Close()
			return infos, fmt.Errorf("%w: %s at %d: %s", ErrRecord, path, off, val)
		}
		v := &gowarc.Validation{}
		if err := rec.ValidateDigest(v); err != nil || !v.Valid() {
			rec.Close()
			return infos, fmt.Errorf("%w: %s at %d: digest: %v %s", ErrRecord, path, off, err, v)
		}
		n, _ := rec.ContentLength()
		infos = append(infos, RecordInfo{
			Type: rec.Type().String(), ID: rec.RecordId(), TargetURI: rec.WarcHeader().Get(gowarc.WarcTargetURI),
			Offset: off, Length: n, Truncated: rec.WarcHeader().Get(gowarc.WarcTruncated),
		})
		rec.Close()
	}
}

// checkGzip decodes every gzip member of the file at path.
func checkGzip(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRecord, path, err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRecord, path, err)
	}
	return nil
}
