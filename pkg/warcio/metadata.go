package warcio

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// Fields of the metadata record of a page the harvester fetched over TLS
// (docs/format/harvest.md).
const (
	MetaTLSProtocol    = "tlsProtocol"    // "TLS 1.3"
	MetaTLSCipher      = "tlsCipher"      // the cipher suite's name
	MetaTLSResumed     = "tlsResumed"     // "true" when the session was resumed
	MetaTLSCertValid   = "tlsCertValid"   // "true" or "false": the certificate verifies for the host name
	MetaTLSCertProblem = "tlsCertProblem" // why not: "expired: ...", "wrong-name: ...", "self-signed", ...
)

// maxMetadataRecord bounds what ReadMetadata decodes of a metadata
// record: the harvester's are a few hundred bytes.
const maxMetadataRecord = 64 << 10

// ReadMetadata reads the metadata record (application/warc-fields) that
// starts at offset in the WARC file path, one gzip member: the harvester
// writes a page's right after its response record, at the response's
// offset plus its length (the fetch log's). It returns the fields in
// order.
func ReadMetadata(path string, offset int64) ([]Field, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	defer f.Close()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s at %d: %s", ErrRecord, path, offset, fmt.Sprintf(format, args...))
	}
	zr, err := gzip.NewReader(io.NewSectionReader(f, offset, 1<<62))
	if err != nil {
		return nil, fail("gzip header: %v", err)
	}
	zr.Multistream(false)
	plain, err := io.ReadAll(io.LimitReader(zr, maxMetadataRecord))
	if err != nil {
		return nil, fail("inflate: %v", err)
	}
	rec, err := parseRecord(plain, len(plain) < maxMetadataRecord)
	if err != nil {
		return nil, fail("%v", err)
	}
	if rec.typ != TypeMetadata {
		return nil, fail("a %s record, not metadata", rec.typ)
	}
	var out []Field
	for line := range bytes.Lines(rec.block) {
		line = bytes.TrimRight(line, "\r\n")
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 {
			continue
		}
		out = append(out, Field{Name: string(name), Value: string(bytes.TrimSpace(value))})
	}
	return out, nil
}
