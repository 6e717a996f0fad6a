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
// Version 1 files (without the last two columns) are still read.
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

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Version is the batch file format version this code writes when a batch
// has sitemap entries; versions 1 and 2 are read, and a batch without
// sitemap entries is written as version 2 (VersionNoSitemaps), which
// older readers read.
const Version = 3

// VersionNoSitemaps is the version written for a batch without entries of
// kind sitemap: version 3 differs from 2 only by that kind.
const VersionNoSitemaps = 2

// Magic is the first line of every batch file, without the version.
const Magic = "# wire-batch"

// Columns are the names of the tab-separated fields of an entry line.
var Columns = []string{"docid", "site", "score", "depth", "kind", "url", "last_modified", "etag"}

// columnsV1 are the fields of a version 1 entry line.
var columnsV1 = Columns[:6]

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
}

// Write writes a batch file.
func Write(w io.Writer, h Header, entries []Entry) error {
	bw := bufio.NewWriter(w)
	version := VersionNoSitemaps
	for _, e := range entries {
		if e.Kind == KindSitemap {
			version = Version
			break
		}
	}
	fmt.Fprintf(bw, "%s %d\n", Magic, version)
	fmt.Fprintf(bw, "# batch: %06d\n", h.Batch)
	fmt.Fprintf(bw, "# created: %s\n", h.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(bw, "# strategy: %s\n", h.Strategy)
	fmt.Fprintf(bw, "# params: %s\n", joinSorted(h.Params, func(v string) string { return v }))
	fmt.Fprintf(bw, "# counts: %s\n", joinSorted(h.Counts, strconv.Itoa))
	fmt.Fprintf(bw, "# columns: %s\n", strings.Join(Columns, " "))
	for _, e := range entries {
		if strings.ContainsAny(e.URL, "\t\n\r") || strings.ContainsAny(e.Site, "\t\n\r") {
			return fmt.Errorf("write batch: url %q contains a tab or newline", e.URL)
		}
		fmt.Fprintf(bw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", e.DocID, e.Site, strconv.FormatFloat(e.Score, 'g', 6, 64), e.Depth, e.Kind, e.URL, validator(e.LastModified), validator(e.ETag))
	}
	return bw.Flush()
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
			if n == 1 {
				columns = columnsV1
			}
			sitemaps = n >= 3
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
	var fields [8]string // len(Columns), the most there are
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
	return e, nil
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
