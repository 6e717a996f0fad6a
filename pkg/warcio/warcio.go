// Package warcio writes the harvester's WARC 1.1 files and reads their
// records back. Each record is its own gzip member, so a record can be
// read from its offset and length alone, and a file cut short by a crash
// keeps every complete record readable.
//
// Records are written by this package (the format is a few header lines
// and a block; writing them directly costs half the time of building them
// with a generic record builder) and read with github.com/nlnwa/gowarc/v2,
// which also checks in the tests that every file validates: headers,
// lengths and digests, record by record over the whole file.
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
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v2"
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
}

// NotModified reports whether the exchange is a 304 response, stored as a
// revisit record with the server-not-modified profile.
func (x *Exchange) NotModified() bool {
	f := strings.Fields(x.StatusLine)
	return len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/") && f[1] == "304"
}

// Encoded is an exchange made into gzip members, one after the other in
// one buffer, ready to be appended.
type Encoded struct {
	buf              *bytes.Buffer // from bufPool
	respOff, respLen int           // the response (or revisit) member
}

// Size is the number of bytes the members take in the file.
func (e *Encoded) Size() int64 { return int64(e.buf.Len()) }

// Release gives the buffer back for reuse; e must not be used after.
// Calling it is optional.
func (e *Encoded) Release() {
	if e != nil && e.buf != nil && e.buf.Cap() <= 8<<20 {
		e.buf.Reset()
		bufPool.Put(e.buf)
	}
	if e != nil {
		e.buf = nil
	}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Encode makes the records of x — request, response (or revisit for a
// 304), and metadata if x has any — each compressed as its own gzip
// member. It touches no file and is safe for concurrent use; a content
// problem is a *BuildError.
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
	if x.StatusLine == "" || strings.ContainsAny(x.StatusLine, "\r\n") {
		return nil, &BuildError{URL: x.URL, Reason: fmt.Sprintf("bad status line %q", x.StatusLine)}
	}
	var meta bytes.Buffer
	for _, f := range x.Metadata {
		if err := checkFieldName(f.Name); err != nil || strings.ContainsAny(f.Value, "\r\n") {
			return nil, &BuildError{URL: x.URL, Reason: fmt.Sprintf("bad metadata field %q: %q", f.Name, f.Value)}
		}
		meta.WriteString(f.Name)
		meta.WriteString(": ")
		meta.WriteString(f.Value)
		meta.WriteString("\r\n")
	}
	date := x.Date
	if date.IsZero() {
		date = time.Now()
	}
	day := warcDate(date)
	reqID, respID := newID(), newID()
	enc := &Encoded{buf: bufPool.Get().(*bytes.Buffer)}
	enc.buf.Grow(len(x.Body)/3 + 2048)

	// request
	reqHdr := []Field{
		{"WARC-Type", TypeRequest},
		{"WARC-Record-ID", reqID},
		{"WARC-Date", day},
		{"WARC-Target-URI", x.URL},
	}
	if x.IP != "" {
		reqHdr = append(reqHdr, Field{"WARC-IP-Address", x.IP})
	}
	reqHdr = append(reqHdr, Field{"WARC-Concurrent-To", respID}, Field{"WARC-Block-Digest", digest(x.Request)}, Field{"Content-Type", ContentTypeRequest})
	if _, _, err := member(enc.buf, reqHdr, x.Request); err != nil {
		enc.Release()
		return nil, err
	}

	// response (or revisit). Its block is the status line and headers
	// (head), then the body, which is not copied: its digest and its
	// compression go over the two parts.
	var head bytes.Buffer
	head.Grow(1024)
	head.WriteString(x.StatusLine)
	head.WriteString("\r\n")
	if err := writeHeader(&head, x.Header); err != nil {
		enc.Release()
		return nil, &BuildError{URL: x.URL, Reason: err.Error()}
	}
	head.WriteString("\r\n")
	body := x.Body
	typ, ctype := TypeResponse, ContentTypeResponse
	if x.NotModified() {
		typ = TypeRevisit
		body = nil
	}
	respHdr := []Field{
		{"WARC-Type", typ},
		{"WARC-Record-ID", respID},
		{"WARC-Date", day},
		{"WARC-Target-URI", x.URL},
	}
	if x.IP != "" {
		respHdr = append(respHdr, Field{"WARC-IP-Address", x.IP})
	}
	respHdr = append(respHdr, Field{"WARC-Concurrent-To", reqID})
	if typ == TypeRevisit {
		respHdr = append(respHdr, Field{"WARC-Profile", ProfileServerNotModified}, Field{"WARC-Refers-To-Target-URI", x.URL})
	}
	if x.Truncated != "" {
		respHdr = append(respHdr, Field{"WARC-Truncated", x.Truncated})
	}
	respHdr = append(respHdr, Field{"WARC-Block-Digest", digest(head.Bytes(), body)})
	if typ == TypeResponse {
		respHdr = append(respHdr, Field{"WARC-Payload-Digest", digest(body)})
	}
	respHdr = append(respHdr, Field{"Content-Type", ctype})
	var err error
	if enc.respOff, enc.respLen, err = member(enc.buf, respHdr, head.Bytes(), body); err != nil {
		enc.Release()
		return nil, err
	}

	// metadata
	if meta.Len() > 0 {
		metaHdr := []Field{
			{"WARC-Type", TypeMetadata},
			{"WARC-Record-ID", newID()},
			{"WARC-Date", day},
			{"WARC-Target-URI", x.URL},
			{"WARC-Concurrent-To", respID},
			{"WARC-Block-Digest", digest(meta.Bytes())},
			{"Content-Type", ContentTypeFields},
		}
		if _, _, err := member(enc.buf, metaHdr, meta.Bytes()); err != nil {
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
	var b bytes.Buffer
	for _, f := range info {
		if err := checkFieldName(f.Name); err != nil || strings.ContainsAny(f.Value, "\r\n") {
			return nil, &BuildError{URL: filename, Reason: fmt.Sprintf("bad warcinfo field %q: %q", f.Name, f.Value)}
		}
		b.WriteString(f.Name + ": " + f.Value + "\r\n")
	}
	hdr := []Field{
		{"WARC-Type", TypeWarcinfo},
		{"WARC-Record-ID", newID()},
		{"WARC-Date", warcDate(time.Now())},
		{"WARC-Filename", filename},
		{"WARC-Block-Digest", digest(b.Bytes())},
		{"Content-Type", ContentTypeFields},
	}
	var out bytes.Buffer
	if _, _, err := member(&out, hdr, b.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
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

func warcDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// newID returns a new record id, <urn:uuid:…> with a random (version 4)
// UUID. It does not use github.com/google/uuid (see gowarcMu).
func newID() string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		panic("warcio: crypto/rand failed: " + err.Error()) // never on Linux ≥ 3.17
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}

// digest is a WARC digest value of the concatenation of parts: sha1,
// base32 (the customary form).
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// Compression of the gzip members: records shorter than storeBelow
// (requests, metadata, empty responses, small pages) are stored without
// compression — still valid gzip — and the others are compressed at the
// fastest level. Most of the cost of compressing a member is fixed:
// building its Huffman tables takes about 20 µs whatever the size
// (measured with the harvester benchmark's profile), to save about
// 1.3 KB on a 2.5 KB page of the test web. Below 4 KB the CPU is worth
// more than the disk; larger pages, most of a real web's, are compressed
// as before.
const storeBelow = 4 << 10

var (
	gzipPool = sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
		return zw
	}}
	storePool = sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(io.Discard, gzip.NoCompression)
		return zw
	}}
)

// member formats one record, whose block is the concatenation of parts,
// compresses it as one gzip member and appends that to out; it returns
// the member's offset and length in out.
func member(out *bytes.Buffer, hdr []Field, parts ...[]byte) (int, int, error) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	var head [1024]byte
	h := append(head[:0], "WARC/1.1\r\n"...)
	for _, f := range hdr {
		h = append(h, f.Name...)
		h = append(h, ": "...)
		h = append(h, f.Value...)
		h = append(h, "\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	h = strconv.AppendInt(h, int64(size), 10)
	h = append(h, "\r\n\r\n"...)
	start := out.Len()
	pool := &gzipPool
	if len(h)+size < storeBelow {
		pool = &storePool
	}
	zw := pool.Get().(*gzip.Writer)
	defer pool.Put(zw)
	zw.Reset(out)
	_, err := zw.Write(h)
	for _, p := range parts {
		if err == nil && len(p) > 0 {
			_, err = zw.Write(p)
		}
	}
	if err == nil {
		_, err = zw.Write([]byte("\r\n\r\n"))
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
// use: appends are serialised, and Sync may run beside them.
type Writer struct {
	name string
	mu   sync.Mutex
	f    *os.File
	off  int64
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

// Append appends encoded records in one write and returns the offset and
// length of the response record's gzip member. The caller may Release e
// afterwards.
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
	start := w.off
	m, err := w.f.Write(data)
	w.off += int64(m)
	if err != nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, err)
	}
	return start + int64(off), int64(n), nil
}

// Size is the current size of the file.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off
}

// Sync flushes the file to disk; the records appended before the call are
// durable when it returns.
func (w *Writer) Sync() error {
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

// Close syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
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
	// Revisit is true for a revisit record (a 304 Not Modified): it has
	// headers and no body.
	Revisit bool
}

// maxRecordHeader bounds the WARC and HTTP headers ReadResponse reads
// beyond the body it returns.
const maxRecordHeader = 1 << 20

// ReadResponse reads the response (or revisit) record stored as one gzip
// member at offset with the given length. Bodies longer than maxBody are
// cut there. A damaged record is an error wrapping ErrRecord, never a
// panic (gowarc panics on some truncated input).
func ReadResponse(path string, offset, length, maxBody int64) (*Response, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
	return readResponse(f, path, offset, length, maxBody)
}

// readResponse is ReadResponse on an open file (path names it in errors).
func readResponse(f io.ReaderAt, path string, offset, length, maxBody int64) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("%w: %s at %d: %v", ErrRecord, path, offset, p)
		}
	}()
	zr, err := gzip.NewReader(io.NewSectionReader(f, offset, length))
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	zr.Multistream(false)
	// Decode the member before gowarc sees it: gowarc loops forever on a
	// reader that fails inside the WARC header, so a damaged member must
	// be refused here. The record is read up to what the caller can use.
	var plain bytes.Buffer
	plain.Grow(int(min(4*length, maxBody+maxRecordHeader)))
	if _, err := io.Copy(&plain, io.LimitReader(zr, maxBody+maxRecordHeader)); err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	if !bytes.HasPrefix(plain.Bytes(), []byte("WARC/")) || !bytes.Contains(plain.Bytes(), []byte("\r\n\r\n")) {
		return nil, fmt.Errorf("%w: %s at %d: not a WARC record", ErrRecord, path, offset)
	}
	u := newUnmarshaler(gowarc.WithSkipParseBlock())
	rec, _, _, err := u.Unmarshal(bufio.NewReader(&plain))
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	defer rec.Close()
	if rec.Type() != gowarc.Response && rec.Type() != gowarc.Revisit {
		return nil, fmt.Errorf("%w: %s at %d: record type %s, want response", ErrRecord, path, offset, rec.Type())
	}
	r := &Response{URL: rec.WarcHeader().Get(gowarc.WarcTargetURI), Truncated: rec.WarcHeader().Get(gowarc.WarcTruncated), Revisit: rec.Type() == gowarc.Revisit}
	r.Date, _ = rec.Date()
	raw, err := rec.Block().RawBytes()
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	br := bufio.NewReader(raw)
	status, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: status line: %w", ErrRecord, path, offset, err)
	}
	r.StatusLine = strings.TrimRight(status, "\r\n")
	parts := strings.SplitN(r.StatusLine, " ", 3)
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: %s at %d: bad status line %q", ErrRecord, path, offset, r.StatusLine)
	}
	if r.Status, err = strconv.Atoi(parts[1]); err != nil {
		return nil, fmt.Errorf("%w: %s at %d: bad status line %q", ErrRecord, path, offset, r.StatusLine)
	}
	hdr, err := readHeader(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	r.Header = hdr
	if r.Body, err = io.ReadAll(io.LimitReader(br, maxBody)); err != nil {
		return nil, fmt.Errorf("%w: %s at %d: body: %w", ErrRecord, path, offset, err)
	}
	return r, nil
}

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
