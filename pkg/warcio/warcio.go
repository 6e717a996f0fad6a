// Package warcio writes the harvester's WARC 1.1 files and reads single
// response records back by offset. Each record is its own gzip member, so
// a record can be read from its offset and length alone, and a file cut
// short by a crash keeps every complete record readable. Records are built
// and parsed with github.com/nlnwa/gowarc/v2.
package warcio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v2"
)

// ErrRecord marks a WARC record that cannot be read.
var ErrRecord = errors.New("bad WARC record")

// Writer appends records to one .warc.gz file. It is not safe for
// concurrent use.
type Writer struct {
	f    *os.File
	name string
	off  int64
	buf  bytes.Buffer
	gz   *gzip.Writer
	m    gowarc.Marshaler
}

// Create opens path for appending (creating it if needed). Appending lets
// a restarted harvester continue a file; a torn last member is left behind
// harmlessly because the fetch log only points at complete records.
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
	gz, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return &Writer{f: f, name: path, off: st.Size(), gz: gz, m: gowarc.NewMarshaler()}, nil
}

// Exchange is one HTTP request and its response as sent and received.
type Exchange struct {
	URL        string    // target URI
	Date       time.Time // when the request was sent
	IP         string    // server address, for WARC-IP-Address
	Request    []byte    // request line and headers as sent
	StatusLine string    // e.g. "HTTP/1.1 200 OK"
	Header     http.Header
	Body       []byte // body as stored (Content-Encoding decoded, possibly truncated)
	Truncated  string // WARC-Truncated reason ("length", "time"), or ""
}

// Write appends the request and response records of x and returns the
// offset and length of the response record's gzip member.
func (w *Writer) Write(x *Exchange) (offset, length int64, err error) {
	reqRec, err := w.build(gowarc.Request, x, "application/http;msgtype=request", x.Request, "")
	if err != nil {
		return 0, 0, err
	}
	defer reqRec.Close()
	var resp bytes.Buffer
	resp.WriteString(x.StatusLine + "\r\n")
	if err := x.Header.Write(&resp); err != nil {
		return 0, 0, fmt.Errorf("write warc %s: header of %s: %w", w.name, x.URL, err)
	}
	resp.WriteString("\r\n")
	resp.Write(x.Body)
	respRec, err := w.build(gowarc.Response, x, "application/http;msgtype=response", resp.Bytes(), reqRec.RecordId())
	if err != nil {
		return 0, 0, err
	}
	defer respRec.Close()
	if _, _, err := w.member(reqRec); err != nil {
		return 0, 0, err
	}
	return w.member(respRec)
}

func (w *Writer) build(t gowarc.RecordType, x *Exchange, contentType string, block []byte, concurrent string) (gowarc.WarcRecord, error) {
	b := gowarc.NewRecordBuilder(t, gowarc.WithStrictValidation(), gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingRecordId(true), gowarc.WithAddMissingContentLength(true))
	b.AddWarcHeader(gowarc.WarcTargetURI, x.URL)
	b.AddWarcHeaderTime(gowarc.WarcDate, x.Date)
	b.AddWarcHeader(gowarc.ContentType, contentType)
	if x.IP != "" {
		b.AddWarcHeader(gowarc.WarcIPAddress, x.IP)
	}
	if concurrent != "" {
		if !strings.HasPrefix(concurrent, "<") {
			concurrent = "<" + concurrent + ">"
		}
		b.AddWarcHeader(gowarc.WarcConcurrentTo, concurrent)
		if x.Truncated != "" {
			b.AddWarcHeader(gowarc.WarcTruncated, x.Truncated)
		}
	}
	if _, err := b.Write(block); err != nil {
		return nil, fmt.Errorf("build warc record for %s: %w", x.URL, err)
	}
	rec, _, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build warc record for %s: %w", x.URL, err)
	}
	return rec, nil
}

// member writes one record as its own gzip member.
func (w *Writer) member(rec gowarc.WarcRecord) (int64, int64, error) {
	w.buf.Reset()
	w.gz.Reset(&w.buf)
	if _, _, err := w.m.Marshal(w.gz, rec, 0); err != nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, err)
	}
	if err := w.gz.Close(); err != nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, err)
	}
	n, err := w.f.Write(w.buf.Bytes())
	off := w.off
	w.off += int64(n)
	if err != nil {
		return 0, 0, fmt.Errorf("write warc %s: %w", w.name, err)
	}
	return off, int64(n), nil
}

// Sync flushes the file to disk; call it before recording offsets in the
// fetch log.
func (w *Writer) Sync() error {
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync warc %s: %w", w.name, err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close warc %s: %w", w.name, err)
	}
	return nil
}

// Response is a response record read back from a WARC file.
type Response struct {
	URL        string
	Date       time.Time
	Status     int
	StatusLine string
	Header     http.Header
	Body       []byte
	Truncated  string
}

// ReadResponse reads the response record stored as one gzip member at
// offset with the given length. Bodies longer than maxBody are cut there.
// A damaged record is an error wrapping ErrRecord, never a panic.
func ReadResponse(path string, offset, length, maxBody int64) (resp *Response, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
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
	u := gowarc.NewUnmarshaler(gowarc.WithSkipParseBlock())
	rec, _, _, err := u.Unmarshal(bufio.NewReader(zr))
	if err != nil {
		return nil, fmt.Errorf("%w: %s at %d: %w", ErrRecord, path, offset, err)
	}
	defer rec.Close()
	if rec.Type() != gowarc.Response {
		return nil, fmt.Errorf("%w: %s at %d: record type %s, want response", ErrRecord, path, offset, rec.Type())
	}
	r := &Response{URL: rec.WarcHeader().Get(gowarc.WarcTargetURI), Truncated: rec.WarcHeader().Get(gowarc.WarcTruncated)}
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
