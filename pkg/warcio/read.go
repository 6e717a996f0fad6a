package warcio

// The reading side for the gatherer's hot path: a record is read from the
// offset and length the fetch log gives, inflated as the one gzip member
// it is (in one call into a buffer sized from the member's ISIZE trailer
// when it fits under the reader's limit, see gunzipWhole; otherwise, or
// when that fails, by a reused streaming decompressor), and its WARC
// header block and HTTP headers are
// parsed in place. The body handed back is a slice of that buffer, not a
// copy. The gzip CRC-32 and ISIZE are checked when the member is read to
// its end; the SHA-1 block digest is checked only when asked for
// (Reader.VerifyDigest), as gowarc checked it on every read without
// failing on a mismatch. docs/format/harvest.md says what the reader
// relies on: one record per gzip member.

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
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
			if cap(r.plain) < int(hint)+1 || cap(r.plain) > maxKeptPlain {
				r.plain = make([]byte, 0, hint+1)
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
		case fieldIs(name, "WARC-Truncated"):
			rec.truncated = string(value)
		case fieldIs(name, "WARC-Block-Digest"):
			rec.digest = string(value)
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
	r := &Response{URL: rec.target, Truncated: rec.truncated, Revisit: revisit}
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

// The fast path of inflate: a gzip member held whole in memory, whose
// ISIZE trailer gives the size of its content, is decoded in one call
// straight into a buffer of that size (RFC 1951), without the sliding
// window of a streaming decompressor (every byte written there and then
// copied out) and reading the input eight bytes at a time instead of
// byte by byte. Anything it does not decode to a content of the announced
// size and CRC-32 — a damaged member, a record larger than the reader's
// limit, or a mistake of its own — is decoded again by the streaming
// decompressor, whose result and errors are then those of the reader,
// so it can only make a read faster, never change what it returns.
// FuzzInflateWhole compares it with compress/flate.

// errInflate is any failure of inflateWhole; the caller then decodes the
// member with the streaming decompressor, which says what is wrong.
var errInflate = errors.New("whole-member inflate failed")

// gunzipWhole decodes the gzip member comp into out[:size] (cap(out) >=
// size), where size is the member's ISIZE; it returns the content, or
// errInflate when the member is not one it decodes to exactly size bytes
// with the right CRC-32.
func gunzipWhole(out, comp []byte, size int) (res []byte, err error) {
	var t inflateTables
	return t.gunzip(out, comp, size)
}

// gunzip is gunzipWhole with the tables of t.
func (t *inflateTables) gunzip(out, comp []byte, size int) (res []byte, err error) {
	defer func() {
		if recover() != nil { // a mistake of the decoder: the caller decodes again
			res, err = nil, errInflate
		}
	}()
	start, ok := gzipHeaderEnd(comp)
	if !ok {
		return nil, errInflate
	}
	out, end, err := t.inflate(out[:size], comp[start:])
	if err != nil || len(out) != size {
		return nil, errInflate
	}
	trailer := comp[start+end:]
	if len(trailer) < 8 || binary.LittleEndian.Uint32(trailer) != crc32.ChecksumIEEE(out) || int(binary.LittleEndian.Uint32(trailer[4:])) != size {
		return nil, errInflate
	}
	return out, nil
}

// gzipHeaderEnd returns the offset of the deflate stream in a gzip member
// (RFC 1952 §2.3: the fixed header, then the optional fields its flags
// announce).
func gzipHeaderEnd(b []byte) (int, bool) {
	const (
		fhcrc    = 1 << 1
		fextra   = 1 << 2
		fname    = 1 << 3
		fcomment = 1 << 4
	)
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || b[3]&0xe0 != 0 {
		return 0, false
	}
	flags, i := b[3], 10
	if flags&fextra != 0 {
		if len(b) < i+2 {
			return 0, false
		}
		i += 2 + int(binary.LittleEndian.Uint16(b[i:]))
	}
	for _, f := range []byte{fname, fcomment} {
		if flags&f != 0 {
			if i > len(b) {
				return 0, false
			}
			z := bytes.IndexByte(b[i:], 0)
			if z < 0 {
				return 0, false
			}
			i += z + 1
		}
	}
	if flags&fhcrc != 0 {
		return 0, false // a header CRC is left to the streaming decompressor to check
	}
	if i > len(b) {
		return 0, false
	}
	return i, true
}

// Huffman decoding tables. An entry of a primary table, indexed by the
// next bits of the input (the table's width), is either a symbol or, with
// entrySub set, a link to a subtable for longer codes: the subtable's
// offset in the top 16 bits, its index width in the low five. A symbol
// entry holds its code length in the low five bits (0: no such code, an
// invalid input), its kind, the number of extra bits that follow it, and
// in the top 16 bits its value: a literal byte, the base of a length or
// of a distance (RFC 1951 §3.2.5), or a code length symbol. A
// subtable's entries count the bits past the primary table's.
const (
	entryLen    = 0x1f
	entrySub    = 1 << 5
	kindMask    = 3 << 6
	kindLiteral = 0 << 6 // also distances and code length symbols
	kindLength  = 1 << 6
	kindEnd     = 2 << 6
	kindBad     = 3 << 6 // a symbol with no meaning (286, 287; distances 30, 31)
	extraShift  = 8

	litPrimary  = 10
	distPrimary = 8
	maxCodeLen  = 15
	numLitLen   = 288
	numDist     = 32
	endOfBlock  = 256
)

type huffTable struct {
	primary []uint32
	sub     []uint32
	bits    uint // primary index width
}

// litEntry, distEntry and plainEntry give the symbol part of a table
// entry of a literal/length code, a distance code and a code length code.
func litEntry(sym int) uint32 {
	switch {
	case sym < endOfBlock:
		return uint32(sym)<<16 | kindLiteral
	case sym == endOfBlock:
		return kindEnd
	case sym-257 < len(lengthBase):
		i := sym - 257
		return uint32(lengthBase[i])<<16 | kindLength | uint32(lengthExtra[i])<<extraShift
	}
	return kindBad
}

func distEntry(sym int) uint32 {
	if sym < len(distBase) {
		return distBase[sym]<<16 | uint32(distExtra[sym])<<extraShift
	}
	return kindBad
}

func plainEntry(sym int) uint32 { return uint32(sym) << 16 }

// build fills t for the canonical Huffman code with the given code
// lengths (RFC 1951 §3.2.2), the entry of each symbol made by entry; it
// reports false for an over-subscribed or incomplete code, except the
// incomplete codes compress/flate takes (no code at all, or a single code
// of one bit), whose unused codes are left invalid.
func (t *huffTable) build(lengths []uint8, bits uint, entry func(int) uint32) bool {
	var count [maxCodeLen + 1]int
	maxLen := 0
	for _, l := range lengths {
		count[l]++
		maxLen = max(maxLen, int(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l <= maxCodeLen; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	// As compress/flate: an incomplete code only when it is empty (a
	// block without distances) or one code of one bit.
	if left != 0 && maxLen != 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	var next [maxCodeLen + 2]int
	for l := 1; l <= maxCodeLen; l++ {
		next[l+1] = (next[l] + count[l]) << 1
	}
	t.bits = bits
	if cap(t.primary) < 1<<bits {
		t.primary = make([]uint32, 1<<bits)
	}
	t.primary = t.primary[:1<<bits]
	clear(t.primary)
	t.sub = t.sub[:0]
	subBits := uint(0)
	if uint(maxLen) > bits {
		subBits = uint(maxLen) - bits
	}
	mask := 1<<bits - 1
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		code := next[l]
		next[l]++
		rev := int(reverseBits(uint16(code), uint(l)))
		if uint(l) <= bits {
			e := entry(sym) | uint32(l)
			for i := rev; i <= mask; i += 1 << l {
				t.primary[i] = e
			}
			continue
		}
		p := &t.primary[rev&mask]
		if *p&entrySub == 0 {
			*p = uint32(len(t.sub))<<16 | entrySub | uint32(subBits)
			t.sub = append(t.sub, make([]uint32, 1<<subBits)...)
		}
		base := int(*p >> 16)
		rest := uint(l) - bits
		e := entry(sym) | uint32(rest)
		for i := rev >> bits; i < 1<<subBits; i += 1 << rest {
			t.sub[base+i] = e
		}
	}
	return true
}

// reverseBits reverses the low n bits of v (1 <= n <= 16).
func reverseBits(v uint16, n uint) uint16 { return bits.Reverse16(v) >> (16 - n) }

// Base values and extra bits of the length symbols 257-285 and of the
// distance symbols 0-29 (RFC 1951 §3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// codeLengthOrder is the order of the code length code lengths.
	codeLengthOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// fixedLit and fixedDist are the tables of the fixed Huffman codes
// (RFC 1951 §3.2.6).
var fixedLit, fixedDist = func() (huffTable, huffTable) {
	var l [numLitLen]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var d [numDist]uint8
	for i := range d {
		d[i] = 5
	}
	var lit, dist huffTable
	lit.build(l[:], litPrimary, litEntry)
	dist.build(d[:], distPrimary, distEntry)
	return lit, dist
}()

// bitReader reads a deflate stream from memory, least significant bit
// first.
type bitReader struct {
	src   []byte
	pos   int    // next byte of src to load
	bits  uint64 // loaded bits, the next one lowest
	nbits uint   // how many of bits are valid
	over  int    // bytes loaded past the end of src (as zeros)
}

// refill loads whole bytes until at least 56 bits are held. Eight bytes
// are loaded at once where src has them: the bits beyond the whole bytes
// counted are the next bytes' own, loaded again by the next refill. Past
// the end of src it loads zeros and counts them: a stream that needs
// them is truncated, which the caller finds with overrun.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.src) {
		r.bits |= binary.LittleEndian.Uint64(r.src[r.pos:]) << r.nbits
		r.pos += int(63-r.nbits) >> 3
		r.nbits |= 56
		return
	}
	for r.nbits <= 56 {
		if r.pos < len(r.src) {
			r.bits |= uint64(r.src[r.pos]) << r.nbits
			r.pos++
		} else {
			r.over++
		}
		r.nbits += 8
	}
}

// overrun reports whether bits past the end of src were consumed.
func (r *bitReader) overrun() bool { return r.over > int(r.nbits>>3) }

// take consumes and returns the next n bits (n <= nbits).
func (r *bitReader) take(n uint) uint32 {
	v := uint32(r.bits & (1<<n - 1))
	r.bits >>= n
	r.nbits -= n
	return v
}

// need makes sure n bits are held (n <= 56).
func (r *bitReader) need(n uint) {
	if r.nbits < n {
		r.refill()
	}
}

// decode reads one entry of table t; ok is false for an invalid code.
// The caller has made sure maxCodeLen bits are held.
func (r *bitReader) decode(t *huffTable) (e uint32, ok bool) {
	e = t.primary[r.bits&(1<<t.bits-1)]
	if e&entrySub != 0 {
		r.bits >>= t.bits
		r.nbits -= t.bits
		e = t.sub[int(e>>16)+int(r.bits&(1<<(e&entryLen)-1))]
	}
	n := uint(e & entryLen)
	if n == 0 {
		return 0, false
	}
	r.bits >>= n
	r.nbits -= n
	return e, true
}

// inflateWhole decodes the raw deflate stream at the start of src into
// out[:0], which must have room for the whole content: it fails rather
// than grow it. It returns the content and the offset in src just past
// the stream (its last byte padded).
func inflateWhole(out, src []byte) ([]byte, int, error) {
	var t inflateTables
	return t.inflate(out, src)
}

// inflateTables are the tables of dynamic blocks, kept from one member
// to the next by a Reader.
type inflateTables struct {
	lit, dist, codes huffTable
}

// inflate is inflateWhole with the tables of t.
func (t *inflateTables) inflate(out, src []byte) ([]byte, int, error) {
	r := bitReader{src: src}
	lit, dist := &t.lit, &t.dist
	op := 0
	out = out[:cap(out)]
	for {
		r.need(3)
		final := r.take(1)
		switch r.take(2) {
		case 0: // stored
			r.take(r.nbits & 7)
			r.need(32)
			n := int(r.take(16))
			if int(r.take(16)) != ^n&0xffff {
				return nil, 0, errInflate
			}
			// The whole bytes still held come first, then the rest is
			// copied from src.
			for n > 0 && r.nbits >= 8 {
				if op >= len(out) {
					return nil, 0, errInflate
				}
				out[op] = byte(r.take(8))
				op++
				n--
			}
			if n > 0 { // nothing is held: bits holds no more than copies of src's next bytes
				if r.over > 0 || r.pos+n > len(src) || op+n > len(out) {
					return nil, 0, errInflate
				}
				op += copy(out[op:], src[r.pos:r.pos+n])
				r.pos += n
				r.bits = 0
			}
		case 1: // fixed codes
			var err error
			if op, err = inflateBlock(&r, out, op, &fixedLit, &fixedDist); err != nil {
				return nil, 0, err
			}
		case 2: // dynamic codes
			if err := readCodes(&r, lit, dist, &t.codes); err != nil {
				return nil, 0, err
			}
			var err error
			if op, err = inflateBlock(&r, out, op, lit, dist); err != nil {
				return nil, 0, err
			}
		default:
			return nil, 0, errInflate
		}
		if r.overrun() {
			return nil, 0, errInflate
		}
		if final == 1 {
			break
		}
	}
	r.take(r.nbits & 7)
	return out[:op], r.pos + r.over - int(r.nbits>>3), nil
}

// readCodes reads the code lengths of a dynamic block (RFC 1951 §3.2.7)
// and builds its tables.
func readCodes(r *bitReader, lit, dist, ct *huffTable) error {
	r.need(14)
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	nclen := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errInflate
	}
	var clen [19]uint8
	for i := range nclen {
		r.need(3)
		clen[codeLengthOrder[i]] = uint8(r.take(3))
	}
	if !ct.build(clen[:], 7, plainEntry) {
		return errInflate
	}
	var lengths [numLitLen + numDist]uint8
	for i := 0; i < nlit+ndist; {
		r.need(maxCodeLen + 7)
		e, ok := r.decode(ct)
		if !ok {
			return errInflate
		}
		var rep int
		var val uint8
		switch sym := e >> 16; {
		case sym < 16:
			lengths[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return errInflate
			}
			val, rep = lengths[i-1], 3+int(r.take(2))
		case sym == 17:
			rep = 3 + int(r.take(3))
		default:
			rep = 11 + int(r.take(7))
		}
		if i+rep > nlit+ndist {
			return errInflate
		}
		for range rep {
			lengths[i] = val
			i++
		}
		if r.overrun() {
			return errInflate
		}
	}
	if lengths[endOfBlock] == 0 {
		return errInflate
	}
	if !lit.build(lengths[:nlit], litPrimary, litEntry) || !dist.build(lengths[nlit:nlit+ndist], distPrimary, distEntry) {
		return errInflate
	}
	return nil
}

// inflateBlock decodes the symbols of one block with the given tables
// into out from op, up to its end-of-block code, and returns the new op.
// The bit reader's state is held in locals for the loop.
func inflateBlock(r *bitReader, out []byte, op int, lit, dist *huffTable) (int, error) {
	if lit.bits != litPrimary || dist.bits != distPrimary {
		return 0, errInflate
	}
	lp := (*[1 << litPrimary]uint32)(lit.primary)
	dp := (*[1 << distPrimary]uint32)(dist.primary)
	ls, dsub := lit.sub, dist.sub
	src := r.src
	bits, nbits, pos := r.bits, r.nbits, r.pos
	for {
		// 56 bits cover a length (15 + 5 bits) and a distance (15 + 13).
		if nbits < 48 {
			if pos+8 <= len(src) {
				bits |= binary.LittleEndian.Uint64(src[pos:]) << nbits
				pos += int(63-nbits) >> 3
				nbits |= 56
			} else {
				r.bits, r.nbits, r.pos = bits, nbits, pos
				r.refill()
				if r.over > 8 {
					return 0, errInflate
				}
				bits, nbits, pos = r.bits, r.nbits, r.pos
			}
		}
		e := lp[bits&(1<<litPrimary-1)]
		if e&entrySub != 0 {
			bits >>= litPrimary
			nbits -= litPrimary
			e = ls[int(e>>16)+int(bits&(1<<(e&entryLen)-1))]
		}
		n := uint(e & entryLen)
		bits >>= n
		nbits -= n
		switch e & kindMask {
		case kindLiteral:
			if n == 0 || uint(op) >= uint(len(out)) {
				return 0, errInflate
			}
			out[op] = byte(e >> 16)
			op++
			// Literals come in runs: the ones whose codes are in the
			// primary table are taken while the bits held cover them,
			// without going back to the refill and the switch.
			for {
				e = lp[bits&(1<<litPrimary-1)]
				n = uint(e & entryLen)
				if e&(entrySub|kindMask) != kindLiteral || n == 0 || n > nbits || uint(op) >= uint(len(out)) {
					break
				}
				bits >>= n
				nbits -= n
				out[op] = byte(e >> 16)
				op++
			}
			continue
		case kindEnd:
			r.bits, r.nbits, r.pos = bits, nbits, pos
			return op, nil
		case kindBad:
			return 0, errInflate
		}
		xb := uint(e>>extraShift) & 0xf
		length := int(e>>16) + int(bits&(1<<xb-1))
		bits >>= xb
		nbits -= xb
		e = dp[bits&(1<<distPrimary-1)]
		if e&entrySub != 0 {
			bits >>= distPrimary
			nbits -= distPrimary
			e = dsub[int(e>>16)+int(bits&(1<<(e&entryLen)-1))]
		}
		n = uint(e & entryLen)
		if n == 0 || e&kindMask != kindLiteral {
			return 0, errInflate
		}
		bits >>= n
		nbits -= n
		xb = uint(e>>extraShift) & 0xf
		d := int(e>>16) + int(bits&(1<<xb-1))
		bits >>= xb
		nbits -= xb
		if d > op || op+length > len(out) {
			return 0, errInflate
		}
		switch {
		case d >= 8 && op+length+8 <= len(out):
			// Eight bytes at a time, the last word past the match's end
			// (rewritten by what follows); a distance of 8 or more never
			// reads a byte this copy has yet to write. Most matches are
			// short: their first two words are copied without a loop.
			binary.LittleEndian.PutUint64(out[op:], binary.LittleEndian.Uint64(out[op-d:]))
			if length > 8 {
				binary.LittleEndian.PutUint64(out[op+8:], binary.LittleEndian.Uint64(out[op-d+8:]))
				for i := 16; i < length; i += 8 {
					binary.LittleEndian.PutUint64(out[op+i:], binary.LittleEndian.Uint64(out[op-d+i:]))
				}
			}
		case d >= length:
			copy(out[op:op+length], out[op-d:op])
		default: // an overlapping copy repeats the last d bytes
			for i := range length {
				out[op+i] = out[op-d+i]
			}
		}
		op += length
	}
}
