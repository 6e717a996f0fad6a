package cdxj

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Suffix ends the name of an index file.
const Suffix = ".cdxj"

// IndexName is the name of the index of the WARC file warc, beside it:
// wire-…-00001.warc.gz has wire-…-00001.cdxj.
func IndexName(warc string) string {
	return strings.TrimSuffix(warc, warcio.Suffix) + Suffix
}

// FromWARC indexes the WARC file at path, which an index names filename:
// a line per response and revisit record, sorted (Sort); a revisit's line
// has no status. torn is the
// offset of a torn last member the scan stopped at (warcio.Scan), -1 if
// none. A record that cannot be read, or a capture without a WARC-Date,
// is an error naming the file and the record's offset.
func FromWARC(path, filename string) (lines []Line, torn int64, err error) {
	torn, err = warcio.Scan(path, func(r *warcio.ScannedRecord) error {
		revisit := strings.EqualFold(r.Type, warcio.TypeRevisit)
		if !revisit && !strings.EqualFold(r.Type, warcio.TypeResponse) {
			return nil
		}
		if r.Date.IsZero() {
			return fmt.Errorf("%w: %s at %d: %s record of %s without a WARC-Date", warcio.ErrRecord, path, r.Offset, r.Type, r.TargetURI)
		}
		l := Line{Key: urlnorm.SURT(r.TargetURI), Timestamp: r.Date.UTC().Format(TimestampLayout), URL: r.TargetURI,
			MIME: mediaType(r.ContentType), Status: r.Status, Digest: digest(r.PayloadDigest), Length: r.Length, Offset: r.Offset, Filename: filename}
		if revisit {
			// pywb's indexer: a status only for response records, by
			// convention. ReplayWeb.page takes a revisit line's 3xx status
			// for a revisit of a redirect and replays a 304 as an empty
			// answer instead of the capture it refers to.
			l.MIME, l.Status = MIMERevisit, 0
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		return nil, -1, err
	}
	Sort(lines)
	return lines, torn, nil
}

// digest is a line's digest: the WARC-Payload-Digest, without its
// "sha1:" label (the CDX convention, which pywb and warcio.js follow: a
// bare digest is SHA-1 in base 32); another algorithm keeps its label.
func digest(d string) string {
	if algo, v, ok := strings.Cut(d, ":"); ok && strings.EqualFold(algo, "sha1") {
		return v
	}
	return d
}

// mediaType is the media type of a Content-Type, lower case, without
// parameters; MIMEUnknown for none. A value mime cannot parse keeps what
// comes before its first ';'.
func mediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" || strings.ContainsAny(mt, " \t") {
		return MIMEUnknown
	}
	return mt
}

// Sort sorts lines as an index file holds them: by their text, byte by
// byte (what LC_ALL=C sort gives), so by key, then timestamp.
func Sort(lines []Line) {
	type item struct {
		text string
		line Line
	}
	items := make([]item, len(lines))
	for i := range lines {
		items[i] = item{lines[i].String(), lines[i]}
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.text, b.text) })
	for i := range items {
		lines[i] = items[i].line
	}
}

// Write writes lines (sorted already) to w.
func Write(w io.Writer, lines []Line) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 512)
	for i := range lines {
		buf = lines[i].Append(buf[:0])
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteIndex indexes the WARC file warc of directory dir into
// dir/IndexName(warc), atomically. It returns the number of lines and
// the offset of a torn tail (-1 if none).
func WriteIndex(dir, warc string) (n int, torn int64, err error) {
	lines, torn, err := FromWARC(filepath.Join(dir, warc), warc)
	if err != nil {
		return 0, -1, fmt.Errorf("index %s: %w", warc, err)
	}
	if err := collection.WriteAtomic(filepath.Join(dir, IndexName(warc)), func(w io.Writer) error { return Write(w, lines) }); err != nil {
		return 0, -1, fmt.Errorf("index %s: %w", warc, err)
	}
	return len(lines), torn, nil
}

// Stats is what IndexDir did.
type Stats struct {
	Files   int // WARC files in the directory
	Indexed int // indexes written
	Lines   int // lines in the indexes written
}

// IndexDir writes the index of every WARC file (*.warc.gz) of the
// directory dir that has none, or of every one with force. A torn last
// record is left out of its file's index and logged.
func IndexDir(dir string, force bool, log *slog.Logger) (Stats, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st Stats
	entries, err := os.ReadDir(dir)
	if err != nil {
		return st, fmt.Errorf("index %s: %w", dir, err)
	}
	for _, e := range entries {
		warc := e.Name()
		if e.IsDir() || !strings.HasSuffix(warc, warcio.Suffix) {
			continue
		}
		st.Files++
		if !force {
			if _, err := os.Stat(filepath.Join(dir, IndexName(warc))); err == nil {
				continue
			}
		}
		n, torn, err := WriteIndex(dir, warc)
		if err != nil {
			return st, fmt.Errorf("index %s: %w", dir, err)
		}
		if torn >= 0 {
			log.Warn("torn last record left out of the index", "warc", filepath.Join(dir, warc), "offset", torn)
		}
		st.Indexed++
		st.Lines += n
	}
	return st, nil
}

// notSorted says what to do with an index out of order.
const notSorted = "not sorted by key and timestamp (rebuild it with harvester index --force)"

// sortKey is what an index is sorted by: the key, then the timestamp
// (the space between them sorts below every byte a key holds).
func (l *Line) sortKey() string { return l.Key + " " + l.Timestamp }

// Reader reads an index file line by line.
type Reader struct {
	sc   *bufio.Scanner
	name string
	n    int
}

// maxLine bounds an index line (a URL of up to a few KiB and the rest).
const maxLine = 1 << 20

// Name is the name the reader gives in errors.
func (r *Reader) Name() string { return r.name }

// NewReader reads the index in r, named name in errors.
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{sc: sc, name: name}
}

// Next returns the next line, io.EOF after the last. A line that does
// not parse, or a last line without its line end, is an error naming the
// file and the line number.
func (r *Reader) Next() (Line, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return Line{}, fmt.Errorf("read index %s after line %d: %w", r.name, r.n, err)
		}
		return Line{}, io.EOF
	}
	r.n++
	l, err := Parse(r.sc.Bytes())
	if err != nil {
		return Line{}, fmt.Errorf("index %s, line %d: %w", r.name, r.n, err)
	}
	return l, nil
}

// ReadFile reads the whole index file at path, checking that its lines
// are sorted.
func ReadFile(path string) ([]Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("index %s: %w: the last line has no line end (cut short?)", path, ErrFormat)
	}
	r := NewReader(bytes.NewReader(data), path)
	var lines []Line
	prev := ""
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
		if k := l.sortKey(); k < prev {
			return nil, fmt.Errorf("index %s, line %d: %w: %s", path, r.n, ErrFormat, notSorted)
		} else {
			prev = k
		}
		lines = append(lines, l)
	}
}
