package warcio

// The reading side for the gatherer's hot path: a record is read from the
// offset and length the fetch log gives, inflated as the one gzip member
// it is (in one call into a buffer sized from the member's ISIZE trailer
// when it fits under the reader's limit, see gunzipWhole in inflate.go;
// otherwise, or when that fails, by a reused streaming decompressor),
// and its WARC header block and HTTP headers are parsed in place. The
// body handed back is a slice of that buffer, not a copy. The gzip CRC-32
// and ISIZE are checked when the member is read to its end; the SHA-1
// block digest is checked only when asked for (Reader.VerifyDigest), as
// gowarc checked it on every read without failing on a mismatch.
// docs/format/harvest.md says what the reader
// relies on: one record per gzip member.

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Buffers a Reader keeps from one record to the next; larger ones are
// left to the garbage collector once the caller is done with them.
const (
	maxKeptCompressed = 4 << 20
	maxKeptPlain      = 8 << 20
	// maxWholeMember is the largest member read into memory in one read;
	// a larger one is streamed through a bufio.Reader.
	maxWholeMember = 8 << 20
	// maxOpenFiles bounds the WARC files a Reader keeps open.
	maxOpenFiles = 32
	// maxDeflateRatio is the largest expansion of deflate (a 258-byte
	// match in about two bits), which bounds the buffer a damaged ISIZE
	// can ask for.
	maxDeflateRatio = 1032
)

// Reader reads response records from WARC files written by this package,
// reusing its decompressor, buffers and open files from one record to
// the next. It is not safe for concurrent use: give each goroutine its
// own. The Body of a Response it returns is valid until the next call to
// ReadResponse or Close; everything else in the Response is the caller's.
type Reader struct {
	// VerifyDigest makes ReadResponse check each record's
	// WARC-Block-Digest (sha1 or sha256, base32 or hex) over the whole
	// block, and fail on a mismatch. The gzip CRC-32 already guards a
	// record read to its end, so it is off by default.
	VerifyDigest bool

	files  map[string]*os.File
	zr     *gzip.Reader
	br     bytes.Reader
	bufr   *bufio.Reader
	comp   []byte // the compressed member
	plain  []byte // the record, inflated
	tables *inflateTables
}

// NewReader returns a Reader.
func NewReader() *Reader { return &Reader{files: map[string]*os.File{}} }

// Close closes the files the Reader holds open. The Reader can be used
// again afterwards.
func (r *Reader) Close() error {
	var first error
	for p, f := range r.files {
		if err := f.Close(); err != nil && first == nil {
			first = fmt.Errorf("close warc %s: %w", p, err)
		}
		delete(r.files, p)
	}
	return first
}

// file returns the open file at path.
func (r *Reader) file(path string) (*os.File, error) {
	if f, ok := r.files[path]; ok {
		return f, nil
	}
	if r.files == nil {
		r.files = map[string]*os.File{}
	}
	if len(r.files) >= maxOpenFiles {
		if err := r.Close(); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	r.files[path] = f
	return f, nil
}

// ReadResponse reads the response (or revisit) record stored as one gzip
// member at offset with the given length, as the package function
// ReadResponse does; its Body is valid until the next call.
func (r *Reader) ReadResponse(path string, offset, length, maxBody int64) (*Response, error) {
	f, err := r.file(path)
	if err != nil {
		return nil, err
	}
	return r.read(f, path, offset, length, maxBody)
}

// read is ReadResponse on an open file (path names it in errors).
func (r *Reader) read(f io.ReaderAt, path string, offset, length, maxBody int64) (*Response, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s at %d: %s", ErrRecord, path, offset, fmt.Sprintf(format, args...))
	}
	if offset < 0 || length <= 0 {
		return nil, fail("bad offset %d or length %d", offset, length)
	}
	maxBody = min(max(maxBody, 0), 1<<50) // no overflow below
	limit := maxBody + maxRecordHeader
	plain, complete, err := r.inflate(f, offset, length, limit)
	if err != nil {
		return nil, fail("%v", err)
	}
	rec, err := parseRecord(plain, complete)
	if err != nil {
		return nil, fail("%v", err)
	}
	if r.VerifyDigest {
		if err := r.verify(rec, complete); err != nil {
			return nil, fail("%v", err)
		}
	}
	resp, err := rec.response(maxBody)
	if err != nil {
		return nil, fail("%v", err)
	}
	return resp, nil
}

// inflate reads the gzip member at offset and decodes it, up to limit
// bytes; complete reports that the member was read to its end (and its
// CRC-32 and size checked).
func (r *Reader) inflate(f io.ReaderAt, offset, length, limit int64) (plain []byte, complete bool, err error) {
	var src io.Reader
	hint := int64(-1)
	if length <= maxWholeMember {
		if cap(r.comp) < int(length) || cap(r.comp) > maxKeptCompressed {
			r.comp = make([]byte, length)
		}
		comp := r.comp[:length]
		if n, err := f.ReadAt(comp, offset); n < len(comp) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, fmt.Errorf("read member: %w", err)
		}
		// The member's last four bytes are its uncompressed size (mod
		// 2^32): the output buffer is allocated once, to the right size.
		if length >= 18 {
			hint = int64(uint32(comp[length-4]) | uint32(comp[length-3])<<8 | uint32(comp[length-2])<<16 | uint32(comp[length-1])<<24)
		}
		// A member whose content fits under the limit is decoded in one
		// call (gunzipWhole); one it fails on goes through the streaming
		// decompressor below, which reports what is wrong with it.
		if hint >= 0 && hint < limit && hint <= length*maxDeflateRatio+64 {
			// fastOut bytes of room past the content let the decoder's
			// fast loop run to the member's end (inflateBlock).
			if cap(r.plain) < int(hint)+1+fastOut || cap(r.plain) > maxKeptPlain {
				r.plain = make([]byte, 0, hint+1+fastOut)
			}
			if r.tables == nil {
				r.tables = new(inflateTables)
			}
			if out, err := r.tables.gunzip(r.plain[:0], comp, int(hint)); err == nil {
				if cap(out) > maxKeptPlain {
					r.plain = nil
				}
				return out, true, nil
			}
		}
		r.br.Reset(comp)
		src = &r.br
	} else {
		if r.bufr == nil {
			r.bufr = bufio.NewReaderSize(nil, 64<<10)
		}
		r.bufr.Reset(io.NewSectionReader(f, offset, length))
		src = r.bufr
	}
	if r.zr == nil {
		r.zr = new(gzip.Reader)
	}
	if err := r.zr.Reset(src); err != nil {
		return nil, false, fmt.Errorf("gzip header: %w", err)
	}
	r.zr.Multistream(false)

	if hint < 0 || hint > length*maxDeflateRatio+64 {
		hint = min(4*length, 1<<20)
	}
	size := min(hint, limit) + 1 // one more byte: the read that finds the end
	if cap(r.plain) < int(size) || cap(r.plain) > maxKeptPlain {
		r.plain = make([]byte, 0, size)
	}
	out := r.plain[:0]
	for {
		if len(out) == cap(out) {
			if int64(len(out)) >= limit {
				break // the caller cannot use more
			}
			grown := make([]byte, len(out), min(max(2*int64(cap(out)), 4096), limit+1))
			copy(grown, out)
			out = grown
		}
		end := min(int64(cap(out)), limit)
		n, err := r.zr.Read(out[len(out):end])
		out = out[:len(out)+n]
		if errors.Is(err, io.EOF) {
			complete = true
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("inflate: %w", err)
		}
		if int64(len(out)) >= limit {
			break
		}
	}
	if cap(out) <= maxKeptPlain {
		r.plain = out[:0]
	} else {
		r.plain = nil
	}
	return out, complete, nil
}

// record is a WARC record parsed in place: its named fields and its block
// (cut short when the member was not read to its end).
type record struct {
	typ, target, date, truncated, digest string
	id, payloadDigest, profile           string
	refersTo, refersToDate               string // revisit records
	contentLength                        int64
	block                                []byte
	whole                                bool // block holds all Content-Length bytes
}

// parseRecord parses the WARC header block at the start of plain (WARC
// 1.1 §4: a version line, named fields, an empty line) and locates the
// block. complete says plain is the whole record, so that a block shorter
// than its Content-Length is an error rather than a record cut by the
// reader's limit.
func parseRecord(plain []byte, complete bool) (*record, error) {
	line, rest, ok := cutLine(plain)
	if !ok || !bytes.HasPrefix(line, []byte("WARC/")) {
		return nil, errors.New("not a WARC record")
	}
	rec := &record{contentLength: -1}
	var last *string // the field a continuation line extends
	for {
		line, rest, ok = cutLine(rest)
		if !ok {
			return nil, errors.New("WARC header not terminated")
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' { // folded value (WARC 1.1 §4)
			if last != nil {
				*last += " " + string(bytes.TrimSpace(line))
			}
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return nil, fmt.Errorf("bad WARC header line %q", line)
		}
		value = bytes.TrimSpace(value)
		last = nil
		switch {
		case fieldIs(name, "WARC-Type"):
			rec.typ = string(value)
			last = &rec.typ
		case fieldIs(name, "WARC-Target-URI"):
			rec.target = string(value)
			last = &rec.target
		case fieldIs(name, "WARC-Date"):
			rec.date = string(value)
		case fieldIs(name, "WARC-Record-ID"):
			rec.id = string(value)
		case fieldIs(name, "WARC-Truncated"):
			rec.truncated = string(value)
		case fieldIs(name, "WARC-Block-Digest"):
			rec.digest = string(value)
		case fieldIs(name, "WARC-Payload-Digest"):
			rec.payloadDigest = string(value)
		case fieldIs(name, "WARC-Profile"):
			rec.profile = string(value)
		case fieldIs(name, "WARC-Refers-To"):
			rec.refersTo = string(value)
		case fieldIs(name, "WARC-Refers-To-Date"):
			rec.refersToDate = string(value)
		case fieldIs(name, "Content-Length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			rec.contentLength = n
		}
	}
	if rec.contentLength < 0 {
		return nil, errors.New("no Content-Length")
	}
	if rec.typ == "" {
		return nil, errors.New("no WARC-Type")
	}
	rec.block = rest
	if int64(len(rest)) >= rec.contentLength {
		rec.block, rec.whole = rest[:rec.contentLength], true
	} else if complete {
		return nil, fmt.Errorf("block of %d bytes, Content-Length %d", len(rest), rec.contentLength)
	}
	return rec, nil
}

// fieldIs reports whether a field name is want, ignoring case (WARC
// field names are case-insensitive).
func fieldIs(name []byte, want string) bool {
	return len(name) == len(want) && strings.EqualFold(string(name), want)
}

// cutLine returns the line at the start of b without its line ending
// (CRLF, or a bare LF) and what follows; ok is false when b has no line
// ending.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, b[i+1:], true
}

// response reads the HTTP status line, headers and body from the block
// of a response or revisit record.
func (rec *record) response(maxBody int64) (*Response, error) {
	revisit := strings.EqualFold(rec.typ, TypeRevisit)
	if !revisit && !strings.EqualFold(rec.typ, TypeResponse) {
		return nil, fmt.Errorf("record type %s, want response", rec.typ)
	}
	r := &Response{URL: rec.target, Truncated: rec.truncated, Revisit: revisit, RecordID: rec.id,
		PayloadDigest: rec.payloadDigest, Profile: rec.profile, RefersTo: rec.refersTo}
	r.Date, _ = time.Parse(time.RFC3339Nano, rec.date)
	i := bytes.IndexByte(rec.block, '\n')
	if i < 0 {
		return nil, fmt.Errorf("status line: %w", io.EOF)
	}
	r.StatusLine = strings.TrimRight(string(rec.block[:i]), "\r\n")
	parts := strings.SplitN(r.StatusLine, " ", 3)
	if len(parts) < 2 {
		return nil, fmt.Errorf("bad status line %q", r.StatusLine)
	}
	var err error
	if r.Status, err = strconv.Atoi(parts[1]); err != nil {
		return nil, fmt.Errorf("bad status line %q", r.StatusLine)
	}
	var body []byte
	r.Header, body = parseHTTPHeader(rec.block[i+1:])
	if int64(len(body)) > maxBody {
		body = body[:maxBody]
	}
	r.Body = body
	return r, nil
}

// parseHTTPHeader reads header lines up to an empty line (or the end of
// b) and returns them with what follows. Lines without a colon are
// skipped; names are canonicalised and values trimmed, as net/http does.
func parseHTTPHeader(b []byte) (http.Header, []byte) {
	h := make(http.Header, 16)
	for len(b) > 0 {
		line, rest, ok := cutLine(b)
		if !ok { // a last line without its line ending
			line, rest = b, nil
		}
		b = rest
		if len(line) == 0 {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		h.Add(string(bytes.TrimSpace(k)), string(bytes.TrimSpace(v)))
	}
	return h, b
}

// verify checks the record's WARC-Block-Digest over the whole block,
// inflating the rest of the member when the reader's limit cut it.
func (r *Reader) verify(rec *record, complete bool) error {
	if rec.digest == "" {
		return errors.New("no WARC-Block-Digest to verify")
	}
	algo, want, ok := strings.Cut(rec.digest, ":")
	if !ok {
		return fmt.Errorf("bad WARC-Block-Digest %q", rec.digest)
	}
	var h hash.Hash
	switch strings.ToLower(algo) {
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	default:
		return fmt.Errorf("cannot verify a %s digest", algo)
	}
	h.Write(rec.block)
	if !rec.whole {
		if complete {
			return errors.New("block shorter than its Content-Length")
		}
		rest := rec.contentLength - int64(len(rec.block))
		if n, err := io.CopyN(h, r.zr, rest); err != nil {
			return fmt.Errorf("block of %d bytes, Content-Length %d: %w", int64(len(rec.block))+n, rec.contentLength, err)
		}
	}
	sum := h.Sum(nil)
	if !strings.EqualFold(want, base32.StdEncoding.EncodeToString(sum)) && !strings.EqualFold(want, hex.EncodeToString(sum)) {
		return fmt.Errorf("block digest %s does not match the block", rec.digest)
	}
	return nil
}
