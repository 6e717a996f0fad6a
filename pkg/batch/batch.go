// Package batch reads and writes the batch file (batch.tsv), the manager's
// order to the harvester: which URLs to fetch, in which order of value.
//
// The format, documented in docs/format/batch.md, is plain tab-separated
// text with a commented header, so that less, grep and awk read it:
//
//	# wire-batch 2
//	# batch: 000001
//	# created: 2026-11-22T01:50:00Z
//	# strategy: pagerank
//	# params: alpha=1 beta=1 gamma=1
//	# counts: urls=2 sites=1 new=1 revisits=1
//	# columns: docid site score depth kind url last_modified etag
//	1	http://www.uchile.cl	0.5	0	revisit	http://www.uchile.cl/	Mon, 02 Jan 2026 15:04:05 GMT	"abc"
//	7	http://www.uchile.cl	0.25	1	new	http://www.uchile.cl/a.html	-	-
//
// A batch whose revisits carry their stored capture (version 4) has three
// more columns, refers_to, refers_to_date and payload_digest. Files of
// versions 1 (without the validators) to 3 are still read.
package batch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Version is the batch file format version this code writes when an
// entry carries a stored capture; versions 1 to 3 are read, and a batch
// without captures is written as the oldest version that holds it
// (VersionSitemaps, VersionNoSitemaps), which older readers read.
const Version = 4

// VersionSitemaps is the version written for a batch with entries of
// kind sitemap and no captures: version 3 differs from 2 only by that
// kind, version 4 from 3 only by the capture columns.
const VersionSitemaps = 3

// VersionNoSitemaps is the version written for a batch without captures
// or entries of kind sitemap.
const VersionNoSitemaps = 2

// Magic is the first line of every batch file, without the version.
const Magic = "# wire-batch"

// Columns are the names of the tab-separated fields of an entry line
// (version 4).
var Columns = []string{"docid", "site", "score", "depth", "kind", "url", "last_modified", "etag", "refers_to", "refers_to_date", "payload_digest"}

// columnsV1 are the fields of a version 1 entry line, columnsV2 those of
// versions 2 and 3.
var (
	columnsV1 = Columns[:6]
	columnsV2 = Columns[:8]
)

// columnsOf returns the fields of an entry line of a version.
func columnsOf(version int) []string {
	switch {
	case version == 1:
		return columnsV1
	case version < Version:
		return columnsV2
	}
	return Columns
}

// Kinds of entry.
const (
	KindNew     = "new"     // never fetched
	KindRevisit = "revisit" // fetched before; the harvester may use a conditional GET
	KindSitemap = "sitemap" // a sitemap (version 3): fetched like a page, read by the gatherer as a sitemap (docs/sitemaps.md)
)

// ErrFormat marks a batch file that cannot be read.
var ErrFormat = errors.New("malformed batch file")

// ErrVersion is returned for a batch file of a format version this
// program does not read (written by a newer one): not damage, a version
// to upgrade to.
var ErrVersion = errors.New("batch file of an unsupported format version")

// Header is the commented header of a batch file.
type Header struct {
	Batch    int               // batch id
	Created  time.Time         // when the manager wrote it
	Strategy string            // intrinsic-quality estimator
	Params   map[string]string // the settings that shaped the batch
	Counts   map[string]int    // urls, sites, new, revisits
}

// Entry is one URL to fetch.
type Entry struct {
	DocID uint64  // the URL's id in the link graph
	Site  string  // scheme://host[:port] of the URL
	Score float64 // profit that put it in the batch; higher first
	Depth int     // links from the site's entry page
	Kind  string  // KindNew, KindRevisit or KindSitemap
	URL   string  // normalised URL
	// LastModified and ETag are the validators of the last visit, for a
	// conditional GET on a revisit; empty when unknown (written "-").
	LastModified string
	ETag         string
	// Capture is the URL's stored capture (version 4): the response
	// record of its last payload, which a revisit record refers to
	// (docs/format/batch.md); zero when unknown (written "-").
	Capture capture.Capture
}

// Write writes a batch file.
func Write(w io.Writer, h Header, entries []Entry) error {
	bw := bufio.NewWriter(w)
	version := VersionNoSitemaps
	for _, e := range entries {
		if e.Kind == KindSitemap {
			version = VersionSitemaps
		}
		if !e.Capture.IsZero() {
			version = Version
			break
		}
	}
	columns := columnsOf(version)
	fmt.Fprintf(bw, "%s %d\n", Magic, version)
	fmt.Fprintf(bw, "# batch: %06d\n", h.Batch)
	fmt.Fprintf(bw, "# created: %s\n", h.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(bw, "# strategy: %s\n", h.Strategy)
	fmt.Fprintf(bw, "# params: %s\n", joinSorted(h.Params, func(v string) string { return v }))
	fmt.Fprintf(bw, "# counts: %s\n", joinSorted(h.Counts, strconv.Itoa))
	fmt.Fprintf(bw, "# columns: %s\n", strings.Join(columns, " "))
	for _, e := range entries {
		if strings.ContainsAny(e.URL, "\t\n\r") || strings.ContainsAny(e.Site, "\t\n\r") {
			return fmt.Errorf("write batch: url %q contains a tab or newline", e.URL)
		}
		fmt.Fprintf(bw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s", e.DocID, e.Site, strconv.FormatFloat(e.Score, 'g', 6, 64), e.Depth, e.Kind, e.URL, validator(e.LastModified), validator(e.ETag))
		if len(columns) > len(columnsV2) {
			if err := e.Capture.Check(); err != nil {
				return fmt.Errorf("write batch: url %s: %w", e.URL, err)
			}
			c := e.Capture
			fmt.Fprintf(bw, "\t%s\t%s\t%s", orDash(c.ID), orDash(c.DateString()), orDash(c.Digest))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// orDash writes an empty field as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fromDash reads a field written by orDash.
func fromDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// validator writes a Last-Modified or ETag value as one field: "-" when
// empty, control characters (tabs, newlines) dropped.
func validator(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(v))
	if v == "" {
		return "-"
	}
	return v
}

func joinSorted[V any](m map[string]V, format func(V) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + format(m[k])
	}
	return strings.Join(parts, " ")
}

// ReadFile reads the batch file at path.
func ReadFile(path string) (Header, []Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("open batch %s: %w", path, err)
	}
	defer f.Close()
	h, entries, err := Read(f)
	if err != nil {
		return Header{}, nil, fmt.Errorf("read batch %s: %w", path, err)
	}
	return h, entries, nil
}

// Read parses a batch file. Every problem is reported with its line
// number; a file whose counts do not match its entries (for example one cut
// short) is rejected.
func Read(r io.Reader) (Header, []Entry, error) {
	h := Header{Params: map[string]string{}, Counts: map[string]int{}}
	var entries []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	sawColumns := false
	columns := Columns
	sitemaps := false
	for sc.Scan() {
		line++
		if entries == nil && h.Counts["urls"] > 0 {
			// The header's count, to size the slice once (bounded: a
			// wrong count is an error at the end anyway).
			entries = make([]Entry, 0, min(h.Counts["urls"], 1<<20))
		}
		text := sc.Text()
		if line == 1 {
			v, ok := strings.CutPrefix(text, Magic+" ")
			if !ok {
				return h, nil, fmt.Errorf("%w: line 1: want %q, got %s", ErrFormat, Magic+" 1", excerpt.Quote(text))
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return h, nil, fmt.Errorf("%w: line 1: version %s is not a positive number", ErrFormat, excerpt.Quote(v))
			}
			if n > Version {
				return h, nil, fmt.Errorf("%w: line 1: version %d (this program reads 1 to %d: a newer wire wrote it)", ErrVersion, n, Version)
			}
			columns = columnsOf(n)
			sitemaps = n >= VersionSitemaps
			continue
		}
		if strings.HasPrefix(text, "#") {
			key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(text, "#")), ":")
			if !ok {
				continue
			}
			val = strings.TrimSpace(val)
			if err := h.set(strings.TrimSpace(key), val); err != nil {
				return h, nil, fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
			}
			if strings.TrimSpace(key) == "columns" {
				if val != strings.Join(columns, " ") {
					return h, nil, fmt.Errorf("%w: line %d: columns %q, want %q", ErrFormat, line, val, strings.Join(columns, " "))
				}
				sawColumns = true
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		e, err := parseEntry(text, len(columns), sitemaps)
		if err != nil {
			return h, nil, fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return h, nil, fmt.Errorf("%w: line %d: %w", ErrFormat, line+1, err)
	}
	if line == 0 {
		return h, nil, fmt.Errorf("%w: empty file", ErrFormat)
	}
	if !sawColumns {
		return h, nil, fmt.Errorf("%w: no '# columns:' header line", ErrFormat)
	}
	if h.Batch == 0 {
		return h, nil, fmt.Errorf("%w: no '# batch:' header line", ErrFormat)
	}
	if n, ok := h.Counts["urls"]; ok && n != len(entries) {
		return h, nil, fmt.Errorf("%w: header says %d urls, file has %d (%s)", ErrFormat, n, len(entries), countMismatch(n, len(entries)))
	}
	return h, entries, nil
}

func (h *Header) set(key, val string) error {
	switch key {
	case "batch":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return fmt.Errorf("batch id %q is not a positive number", val)
		}
		h.Batch = n
	case "created":
		t, err := time.Parse(time.RFC3339, val)
		if err != nil {
			return fmt.Errorf("created %q is not an RFC 3339 time", val)
		}
		h.Created = t
	case "strategy":
		h.Strategy = val
	case "params":
		for _, kv := range strings.Fields(val) {
			k, v, _ := strings.Cut(kv, "=")
			h.Params[k] = v
		}
	case "counts":
		for _, kv := range strings.Fields(val) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("count %q is not a number", kv)
			}
			h.Counts[k] = n
		}
	}
	return nil
}

func parseEntry(text string, ncol int, sitemaps bool) (Entry, error) {
	if strings.ContainsRune(text, '\r') { // Write never writes one; a CRLF line end is already gone
		return Entry{}, fmt.Errorf("carriage return inside the line %s", excerpt.Quote(text))
	}
	var fields [11]string // len(Columns), the most there are
	f, ok := splitFields(text, fields[:0:ncol])
	if !ok {
		return Entry{}, fmt.Errorf("want %d tab-separated fields, got %d in %s", ncol, strings.Count(text, "\t")+1, excerpt.Quote(text))
	}
	var e Entry
	var err error
	if e.DocID, err = strconv.ParseUint(f[0], 10, 64); err != nil || e.DocID == 0 {
		return e, fmt.Errorf("docid %s is not a positive number", excerpt.Quote(f[0]))
	}
	e.Site = f[1]
	if e.Score, err = strconv.ParseFloat(f[2], 64); err != nil || math.IsNaN(e.Score) || math.IsInf(e.Score, 0) {
		return e, fmt.Errorf("score %s is not a finite number", excerpt.Quote(f[2]))
	}
	if e.Depth, err = strconv.Atoi(f[3]); err != nil || e.Depth < 0 {
		return e, fmt.Errorf("depth %s is not a non-negative number", excerpt.Quote(f[3]))
	}
	e.Kind = f[4]
	if e.Kind != KindNew && e.Kind != KindRevisit && (!sitemaps || e.Kind != KindSitemap) {
		if sitemaps {
			return e, fmt.Errorf("kind %s is not %s, %s or %s", excerpt.Quote(e.Kind), KindNew, KindRevisit, KindSitemap)
		}
		return e, fmt.Errorf("kind %s is neither %s nor %s", excerpt.Quote(e.Kind), KindNew, KindRevisit)
	}
	e.URL = f[5]
	if !strings.HasPrefix(e.URL, "http://") && !strings.HasPrefix(e.URL, "https://") {
		return e, fmt.Errorf("url %s is not an http(s) URL", excerpt.Quote(e.URL))
	}
	if !strings.HasPrefix(e.URL, e.Site+"/") {
		return e, fmt.Errorf("url %s is not on site %s", excerpt.Quote(e.URL), excerpt.Quote(e.Site))
	}
	if ncol > 6 {
		if f[6] != "-" {
			e.LastModified = f[6]
		}
		if f[7] != "-" {
			e.ETag = f[7]
		}
		if validator(e.LastModified) != f[6] || validator(e.ETag) != f[7] {
			return e, fmt.Errorf("validators %s %s have control characters or spaces around them", excerpt.Quote(f[6]), excerpt.Quote(f[7]))
		}
	}
	if ncol > 8 {
		if e.Capture, err = parseCapture(f[8], f[9], f[10]); err != nil {
			return e, err
		}
	}
	return e, nil
}

// parseCapture reads the capture columns of a version 4 entry: all three
// "-" (none known), or a record id, a WARC-Date and a payload digest.
func parseCapture(id, date, digest string) (capture.Capture, error) {
	c, err := capture.Parse(fromDash(id), fromDash(date), fromDash(digest))
	if err != nil {
		return c, err
	}
	if c.IsZero() && (id != "-" || date != "-" || digest != "-") {
		return c, fmt.Errorf("capture columns %s %s %s: write \"-\" for none", excerpt.Quote(id), excerpt.Quote(date), excerpt.Quote(digest))
	}
	return c, nil
}

// splitFields splits text at tabs into f, whose capacity is the number of
// fields wanted (no more, no fewer: ok is false otherwise), without
// allocating.
func splitFields(text string, f []string) ([]string, bool) {
	for len(f) < cap(f)-1 {
		field, rest, found := strings.Cut(text, "\t")
		if !found {
			return f, false
		}
		f = append(f, field)
		text = rest
	}
	if strings.IndexByte(text, '\t') >= 0 {
		return f, false
	}
	return append(f, text), true
}

// countMismatch says what a file whose entries disagree with its
// header's count probably suffered.
func countMismatch(header, entries int) string {
	if entries < header {
		return fmt.Sprintf("%d lines missing: truncated?", header-entries)
	}
	return fmt.Sprintf("%d lines more than the header counts: lines added or the header edited", entries-header)
}
