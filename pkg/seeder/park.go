package seeder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
)

// Park files (docs/frontier.md, "Park files"): the links that the Sydney
// strategy or the frontier budget kept out of the frontier, written
// sequentially as text lines in snappy's framed format, one file per
// batch (and per release that could not take in everything), released
// oldest first when the frontier runs low.
const (
	// FrontierDir is the directory of park files in a collection.
	FrontierDir = "frontier"
	// ParkVersion is the version of the park file format, on its first
	// line: "# wire-parked 1".
	ParkVersion = 1
	// parkColumns names the tab-separated fields of a park line.
	parkColumns = "src fetched depth batch url anchor"
)

// ErrParkFormat means a park file is damaged or of an unknown version.
var ErrParkFormat = errors.New("malformed park file")

// parkName is the file name of park file seq.
func parkName(seq uint64) string { return fmt.Sprintf("park-%08d.sz", seq) }

// parsePark returns the number of a park file name, or false.
func parsePark(name string) (uint64, bool) {
	if !strings.HasPrefix(name, "park-") || !strings.HasSuffix(name, ".sz") {
		return 0, false
	}
	n, err := strconv.ParseUint(name[len("park-"):len(name)-len(".sz")], 10, 64)
	return n, err == nil
}

// parkedLink is one line of a park file: a link from a fetched page to a
// URL that has no id yet.
type parkedLink struct {
	Src     uint64    // the page that links
	Fetched time.Time // the fetch of that page whose links these are
	Depth   int       // depth the new URL gets
	Batch   int       // batch that found the link (the URL's "found")
	URL     string    // normalised, in scope when parked
	Anchor  string    // cleaned anchor text (no tabs or newlines), may be empty
}

// parkWriter writes one park file atomically: it appears under its name
// only when Commit succeeds.
type parkWriter struct {
	path string
	f    *collection.AtomicFile
	sw   *snappy.Writer
	bw   *bufio.Writer
	n    int
}

func createPark(dir string, seq uint64) (*parkWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create park file: %w", err)
	}
	path := filepath.Join(dir, parkName(seq))
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("create park file: %w", err)
	}
	w := &parkWriter{path: path, f: f, sw: snappy.NewBufferedWriter(f)}
	w.bw = bufio.NewWriterSize(w.sw, 64<<10)
	fmt.Fprintf(w.bw, "# wire-parked %d\n# columns: %s\n", ParkVersion, parkColumns)
	return w, nil
}

// Write appends one link.
func (w *parkWriter) Write(l parkedLink) error {
	w.n++
	var b [64]byte
	line := strconv.AppendUint(b[:0], l.Src, 10)
	line = append(line, '\t')
	var fetched int64 // the zero time is 0
	if !l.Fetched.IsZero() {
		fetched = l.Fetched.UnixNano()
	}
	line = strconv.AppendInt(line, fetched, 10)
	line = append(line, '\t')
	line = strconv.AppendInt(line, int64(l.Depth), 10)
	line = append(line, '\t')
	line = strconv.AppendInt(line, int64(l.Batch), 10)
	line = append(line, '\t')
	w.bw.Write(line)
	w.bw.WriteString(l.URL)
	w.bw.WriteByte('\t')
	w.bw.WriteString(l.Anchor)
	_, err := w.bw.WriteString("\n")
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Commit flushes, syncs and publishes the file.
func (w *parkWriter) Commit() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := w.sw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return w.f.Commit()
}

// Abort discards the file unless Commit published it.
func (w *parkWriter) Abort() { w.f.Abort() }

// readPark reads a park file, calling fn for each link in order.
func readPark(path string, fn func(parkedLink) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read park file: %w", err)
	}
	defer f.Close()
	return readParkFrom(snappy.NewReader(f), path, fn)
}

func readParkFrom(r io.Reader, path string, fn func(parkedLink) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrParkFormat, path, n, fmt.Sprintf(format, args...))
	}
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			if n <= 2 {
				return bad(n, "no header")
			}
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if !strings.HasSuffix(line, "\n") {
			return bad(n, "torn line")
		}
		line = line[:len(line)-1]
		switch n {
		case 1:
			if line != fmt.Sprintf("# wire-parked %d", ParkVersion) {
				return bad(n, "want version line %q, got %q", fmt.Sprintf("# wire-parked %d", ParkVersion), line)
			}
			continue
		case 2:
			if line != "# columns: "+parkColumns {
				return bad(n, "bad columns line %q", line)
			}
			continue
		}
		f := strings.SplitN(line, "\t", 6)
		if len(f) != 6 {
			return bad(n, "%d fields, want 6", len(f))
		}
		var l parkedLink
		var e1, e2, e3, e4 error
		var fetched, depth, batch int64
		l.Src, e1 = strconv.ParseUint(f[0], 10, 64)
		fetched, e2 = strconv.ParseInt(f[1], 10, 64)
		depth, e3 = strconv.ParseInt(f[2], 10, 32)
		batch, e4 = strconv.ParseInt(f[3], 10, 32)
		if err := errors.Join(e1, e2, e3, e4); err != nil {
			return bad(n, "%v", err)
		}
		if fetched != 0 {
			l.Fetched = time.Unix(0, fetched).UTC()
		}
		l.Depth, l.Batch = int(depth), int(batch)
		l.URL, l.Anchor = f[4], f[5]
		if l.URL == "" {
			return bad(n, "empty url")
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}
