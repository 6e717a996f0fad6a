// Package contentcoding decodes the content codings of HTTP bodies (RFC
// 9110 §8.4.1: gzip, x-gzip, deflate; RFC 7932: br) under a cap on the
// decoded bytes, so that a compression bomb stops at the cap like any
// other body. The harvester decodes with it as a response arrives (to
// store the body decoded, or to count its decoded bytes while it stores
// it as received), the gatherer when it reads a body stored as received.
package contentcoding

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"

	"github.com/wirecrawl/wire/pkg/inflate"
)

// Coding is a content coding this package decodes, by the name it has in
// Content-Encoding (x-gzip is Gzip).
type Coding string

// The codings. Identity is no coding at all.
const (
	Identity Coding = ""
	Gzip     Coding = "gzip"
	Deflate  Coding = "deflate"
	Brotli   Coding = "br"
)

// Parse returns the coding of a Content-Encoding value, case and
// surrounding space ignored: "" and "identity" are Identity, "gzip" and
// "x-gzip" Gzip (RFC 9110 §8.4.1.3), "deflate" Deflate, "br" Brotli. ok
// is false for any other value — a coding this package does not know,
// or a list of several codings — whose body cannot be decoded here.
func Parse(value string) (c Coding, ok bool) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "", "identity":
		return Identity, true
	case "gzip", "x-gzip":
		return Gzip, true
	case "deflate":
		return Deflate, true
	case "br":
		return Brotli, true
	}
	return Identity, false
}

// Error is a body that does not decode: damaged or cut short, or not in
// the coding its header names.
type Error struct {
	Coding Coding
	Err    error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	for _, p := range []string{"gzip: ", "flate: ", "zlib: ", "brotli: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return fmt.Sprintf("%s: %s", e.Coding, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Decoder decodes bodies one after the other, reusing its decompressors.
// It is not safe for concurrent use.
type Decoder struct {
	whole inflate.Tables // Append's fast path for a gzip body
	gz    *gzip.Reader
	fl    io.ReadCloser // raw deflate (flate.Resetter)
	zl    io.ReadCloser // zlib (zlib.Resetter)
	br    brotliReader  // libbrotlidec, or its port to Go (brotli_*.go)
	peek  *bufio.Reader // buffers the body of NewReader
	src   bytes.Reader  // the body of Append
}

// NewReader returns a reader of the content of r decoded from coding c,
// valid until the next call on d. Errors of the decoder itself (not those
// of r, which pass as they are) are *Error. An empty r is an empty content
// in every coding (a server that announces gzip and sends nothing).
// Identity returns r.
func (d *Decoder) NewReader(c Coding, r io.Reader) (io.Reader, error) {
	if c == Identity {
		return r, nil
	}
	// Through a buffer, which tells an empty body apart (and which the
	// decompressors take as their own: they read byte by byte from a
	// bufio.Reader without buffering it again).
	if d.peek == nil {
		d.peek = bufio.NewReaderSize(r, 4096)
	} else {
		d.peek.Reset(r)
	}
	head, err := d.peek.Peek(2)
	if len(head) == 0 {
		if errors.Is(err, io.EOF) {
			return bytes.NewReader(nil), nil
		}
		return nil, err
	}
	return d.reader(c, d.peek, head)
}

// reader is NewReader for a coding other than Identity on a body that is
// not empty, whose first bytes (at most two) are head.
func (d *Decoder) reader(c Coding, r io.Reader, head []byte) (io.Reader, error) {
	switch c {
	case Gzip:
		if d.gz == nil {
			d.gz = new(gzip.Reader)
		}
		if err := d.gz.Reset(r); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the body ends within the gzip header
			}
			if errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, &Error{Coding: Gzip, Err: err}
			}
			return nil, err
		}
		d.gz.Multistream(true)
		return &decodeErrors{r: d.gz, c: Gzip}, nil
	case Deflate:
		return d.deflate(r, head)
	case Brotli:
		if err := d.br.reset(r); err != nil {
			return nil, &Error{Coding: Brotli, Err: err}
		}
		return &decodeErrors{r: &d.br, c: Brotli}, nil
	}
	return nil, fmt.Errorf("content coding %q not supported", string(c))
}

// deflate is reader for Deflate: zlib (RFC 1950), which RFC 9110
// §8.4.1.2 means by "deflate", or raw deflate (RFC 1951), which some
// servers send instead, told apart by the zlib header in head (compression
// method 8, a window of at most 32 KiB, a check value making the first
// two bytes a multiple of 31).
func (d *Decoder) deflate(r io.Reader, head []byte) (io.Reader, error) {
	if len(head) == 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		if d.zl == nil {
			zl, err := zlib.NewReader(r)
			if err != nil {
				return nil, &Error{Coding: Deflate, Err: err}
			}
			d.zl = zl
		} else if err := d.zl.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, &Error{Coding: Deflate, Err: err}
		}
		return &decodeErrors{r: d.zl, c: Deflate}, nil
	}
	if d.fl == nil {
		d.fl = flate.NewReader(r)
	} else if err := d.fl.(flate.Resetter).Reset(r, nil); err != nil {
		return nil, &Error{Coding: Deflate, Err: err}
	}
	return &decodeErrors{r: d.fl, c: Deflate}, nil
}

// gunzipWhole is Append's fast path for a gzip body of one member whose
// content (its ISIZE trailer) fits under max: decoded in one call
// straight into dst's room (pkg/inflate, the WARC reader's decoder). It
// reports false for anything else — several members, a larger content,
// damage — which the streaming decompressor then decodes, or reports.
func (d *Decoder) gunzipWhole(dst, body []byte, max int64) ([]byte, bool) {
	if len(body) < 18 {
		return nil, false
	}
	isize := int64(uint32(body[len(body)-4]) | uint32(body[len(body)-3])<<8 | uint32(body[len(body)-2])<<16 | uint32(body[len(body)-1])<<24)
	if isize > max || isize > int64(len(body))*1032+64 { // 1032: deflate's largest expansion
		return nil, false
	}
	need := len(dst) + int(isize) + inflate.FastOut
	if cap(dst) < need {
		grown := make([]byte, len(dst), need)
		copy(grown, dst)
		dst = grown
	}
	out, err := d.whole.Gunzip(dst[len(dst):len(dst)], body, int(isize))
	if err != nil {
		return nil, false
	}
	return dst[:len(dst)+len(out)], true
}

// decodeErrors marks the errors of a decompressor as *Error, leaving the
// errors of the reader under it as they are.
type decodeErrors struct {
	r io.Reader
	c Coding
}

func (e *decodeErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && IsDecodeError(err) {
		err = &Error{Coding: e.c, Err: err}
	}
	return n, err
}

// IsDecodeError tells an error of a decompressor (damaged compressed
// data) from an error of the reader it reads, which the decompressors
// pass on as they are. io.ErrUnexpectedEOF is not one: a decompressor
// reports so a body that ends before its compressed data does, as the
// connection under it reports a body cut short.
func IsDecodeError(err error) bool {
	var ce *Error
	if errors.As(err, &ce) {
		return true
	}
	var fc flate.CorruptInputError
	if errors.As(err, &fc) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrHeader) || errors.Is(err, zlib.ErrDictionary) {
		return true
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "flate: ") || strings.HasPrefix(msg, "gzip: ") || strings.HasPrefix(msg, "brotli: ")
}

// Append appends to dst the content of body decoded from coding c, at
// most max bytes (a negative max is 0), and returns the extended slice;
// cut tells that the content went on past max. A body that does not
// decode to its end gives what was decoded of it and an *Error. Identity
// appends body itself (cut at max).
func (d *Decoder) Append(dst []byte, c Coding, body []byte, max int64) (out []byte, cut bool, err error) {
	if max < 0 {
		max = 0
	}
	max = min(max, 1<<50) // no overflow below
	if c == Identity || len(body) == 0 {
		n := min(int64(len(body)), max)
		return append(dst, body[:n]...), int64(len(body)) > max, nil
	}
	if c == Gzip {
		if out, ok := d.gunzipWhole(dst, body, max); ok {
			return out, false, nil
		}
	}
	d.src.Reset(body)
	r, err := d.reader(c, &d.src, body[:min(len(body), 2)])
	if err != nil {
		return dst, false, err
	}
	// The room to decode into: the gzip trailer's size of the content
	// (modulo 2^32) when it is believable, else a guess.
	want := int64(4 * len(body))
	if c == Gzip && len(body) >= 18 {
		isize := int64(uint32(body[len(body)-4]) | uint32(body[len(body)-3])<<8 | uint32(body[len(body)-2])<<16 | uint32(body[len(body)-1])<<24)
		if isize <= int64(len(body))*1032+64 {
			want = isize
		}
	}
	start := len(dst)
	if free := int64(cap(dst) - len(dst)); free < min(want, max)+1 {
		grown := make([]byte, len(dst), int64(len(dst))+min(want, max)+1)
		copy(grown, dst)
		dst = grown
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)] // grow
		}
		room := dst[len(dst):cap(dst)]
		if left := max + 1 - int64(len(dst)-start); int64(len(room)) > left {
			room = room[:left]
		}
		n, rerr := r.Read(room)
		dst = dst[:len(dst)+n]
		if int64(len(dst)-start) > max {
			return dst[:start+int(max)], true, nil
		}
		if rerr == io.EOF {
			return dst, false, nil
		}
		if rerr != nil {
			if !IsDecodeError(rerr) {
				rerr = &Error{Coding: c, Err: rerr}
			}
			return dst, false, rerr
		}
	}
}
