package warcio

// Scanning a whole WARC file, record by record, for its index
// (pkg/cdxj): where each gzip member starts and how long it is, and the
// few fields an index line needs. The file is read once, front to back;
// each member is inflated to its end (its CRC-32 checked), only its
// first bytes kept.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// ScannedRecord is one record of a WARC file as Scan found it.
type ScannedRecord struct {
	Offset int64 // where the record's gzip member starts in the file
	Length int64 // the member's length in bytes

	Type          string    // WARC-Type
	ID            string    // WARC-Record-ID
	TargetURI     string    // WARC-Target-URI
	Date          time.Time // WARC-Date (zero if missing or not RFC 3339)
	PayloadDigest string    // WARC-Payload-Digest ("" if none)
	Profile       string    // WARC-Profile (revisit records)
	Truncated     string    // WARC-Truncated
	RefersTo      string    // WARC-Refers-To (revisit records)
	RefersToDate  string    // WARC-Refers-To-Date (revisit records), as written

	// For response and revisit records whose block is an HTTP response:
	Status      int    // the status code (0 if the block has no status line)
	ContentType string // the Content-Type header ("" if none)
}

// scanKeep is how much of each record Scan reads into memory: the WARC
// header and the HTTP status line and headers of any record the
// harvester writes fit in it.
const scanKeep = maxRecordHeader

// Scan reads the WARC file at path, one record per gzip member (the
// harvester's files; docs/format/harvest.md), and calls fn with each
// record in file order; an error from fn stops the scan and is returned.
//
// A last member cut short by the end of the file (a torn tail, which a
// killed harvest may leave and no fetch log line points at) ends the
// scan without error: torn is its offset, -1 when the file ends cleanly.
// Anything else that cannot be read — a member that is not gzip or fails
// its CRC-32, a record without a WARC header — is an error wrapping
// ErrRecord that names the file and the member's offset.
func Scan(path string, fn func(*ScannedRecord) error) (torn int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return -1, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
	return scan(f, path, fn)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// scan is Scan on an open reader (path names it in errors). The members
// are read through a bufio.Reader, which the decompressor reads byte by
// byte and never past a member's end: a member starts where the bytes
// counted from the file, less those still buffered, end.
func scan(r io.Reader, path string, fn func(*ScannedRecord) error) (int64, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 256<<10)
	zr := new(gzip.Reader)
	buf := make([]byte, 0, 64<<10)
	for {
		off := cr.n - int64(br.Buffered())
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return -1, nil
		} else if err != nil {
			return -1, fmt.Errorf("read warc %s: %w", path, err)
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s at %d: %s", ErrRecord, path, off, fmt.Sprintf(format, args...))
		}
		if err := zr.Reset(br); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return off, nil // a torn gzip header
			}
			return -1, fail("gzip header: %v", err)
		}
		zr.Multistream(false)
		plain, complete, err := readKeep(zr, buf[:0], scanKeep)
		if err == nil && !complete {
			_, err = io.Copy(io.Discard, zr)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return off, nil // the file ends inside the member
		}
		if err != nil {
			return -1, fail("inflate: %v", err)
		}
		if cap(plain) <= 4*cap(buf) {
			buf = plain
		}
		end := cr.n - int64(br.Buffered())
		rec, err := parseRecord(plain, complete)
		if err != nil {
			return -1, fail("%v", err)
		}
		sr := &ScannedRecord{Offset: off, Length: end - off, Type: rec.typ, ID: rec.id, TargetURI: rec.target,
			PayloadDigest: rec.payloadDigest, Profile: rec.profile, Truncated: rec.truncated,
			RefersTo: rec.refersTo, RefersToDate: rec.refersToDate}
		sr.Date, _ = time.Parse(time.RFC3339Nano, rec.date)
		if strings.EqualFold(rec.typ, TypeResponse) || strings.EqualFold(rec.typ, TypeRevisit) {
			sr.Status, sr.ContentType = httpHead(rec.block)
		}
		if err := fn(sr); err != nil {
			return -1, err
		}
	}
}

// readKeep reads r into buf up to limit bytes; complete reports that r
// ended within them.
func readKeep(r io.Reader, buf []byte, limit int) ([]byte, bool, error) {
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(max(2*cap(buf), 4096), limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}

// httpHead reads the status code and the Content-Type of an HTTP
// response block (0 and "" for a block that is not one).
func httpHead(block []byte) (status int, contentType string) {
	line, rest, ok := cutLine(block)
	if !ok {
		line, rest = block, nil
	}
	parts := strings.SplitN(string(line), " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/") {
		return 0, ""
	}
	status, err := strconv.Atoi(parts[1])
	if err != nil || status < 100 || status > 999 {
		return 0, ""
	}
	h, _ := parseHTTPHeader(rest)
	return status, h.Get("Content-Type")
}
