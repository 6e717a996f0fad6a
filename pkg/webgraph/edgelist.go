package webgraph

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// The edge-list format (docs/simulator.md, "Edge-list files"): UTF-8
// text, one record per line, fields separated by spaces or tabs.
//
//	# wire-graph 1            first line: magic and version
//	# any comment             lines starting with '#'; blank lines ignored
//	p NAME SITE               page NAME belongs to site SITE
//	l FROM TO                 a link from page FROM to page TO
//	s NAME                    page NAME is a seed
//
// Records may come in any order; every page named by a link or a seed
// must be declared by a p record somewhere in the file. Repeated links
// and self-links are dropped. A file starting with the gzip magic bytes is
// decompressed.
const (
	// Magic starts the first line of an edge-list file.
	Magic = "# wire-graph"
	// FormatVersion is the version of the edge-list format.
	FormatVersion = 1
	// MaxLine is the longest line accepted, in bytes.
	MaxLine = 16 << 10
	// MaxName is the longest page or site name accepted, in bytes.
	MaxName = 4096
)

// Record kinds of the edge-list format.
const (
	RecordPage = "p"
	RecordLink = "l"
	RecordSeed = "s"
)

// ErrFormat marks an edge-list file that cannot be read; the message
// names the file and line.
var ErrFormat = errors.New("malformed edge-list file")

// ReadFile reads an edge-list file (plain or gzip).
func ReadFile(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read graph: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads an edge-list file from r (plain or gzip); name is used in
// errors.
func Read(r io.Reader, name string) (*Graph, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read graph %s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 1<<16)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	b := NewBuilder()
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", name, line, ErrFormat, fmt.Sprintf(format, args...))
	}
	line := 0
	var fields [4][]byte
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if line == 1 {
			if err := checkMagic(text); err != nil {
				return nil, bad(line, "%v", err)
			}
			continue
		}
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		n := split(text, fields[:])
		if n == 0 {
			continue
		}
		for _, f := range fields[1:n] {
			if err := checkName(f); err != nil {
				return nil, bad(line, "%v", err)
			}
		}
		kind := string(fields[0])
		var err error
		switch {
		case kind == RecordPage && n == 3:
			_, err = b.Page(string(fields[1]), string(fields[2]))
		case kind == RecordLink && n == 3:
			err = b.Link(string(fields[1]), string(fields[2]))
		case kind == RecordSeed && n == 2:
			err = b.Seed(string(fields[1]))
		case kind == RecordPage || kind == RecordLink || kind == RecordSeed:
			return nil, bad(line, "record %q wants %d fields, got %d", kind, map[string]int{RecordPage: 3, RecordLink: 3, RecordSeed: 2}[kind], n)
		default:
			return nil, bad(line, "unknown record %s (want p, l or s)", excerpt.Quote(kind))
		}
		if err != nil {
			return nil, bad(line, "%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, bad(line+1, "line longer than %d bytes", MaxLine)
		}
		return nil, fmt.Errorf("read graph %s: %w", name, err)
	}
	if line == 0 {
		return nil, bad(1, "empty file, want %q", fmt.Sprintf("%s %d", Magic, FormatVersion))
	}
	g, err := b.Graph()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrFormat, err)
	}
	return g, nil
}

// checkMagic checks the first line.
func checkMagic(line []byte) error {
	rest, ok := bytes.CutPrefix(line, []byte(Magic+" "))
	if !ok {
		return fmt.Errorf("first line %s is not %q", excerpt.Bytes(line), fmt.Sprintf("%s %d", Magic, FormatVersion))
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(rest)))
	if err != nil || v != FormatVersion {
		return fmt.Errorf("unsupported version %s (this reader knows %d)", excerpt.Bytes(rest), FormatVersion)
	}
	return nil
}

// checkName rejects names that are too long or hold control characters.
func checkName(f []byte) error {
	if len(f) > MaxName {
		return fmt.Errorf("name longer than %d bytes", MaxName)
	}
	for _, c := range f {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("name %s holds a control character", excerpt.Bytes(f))
		}
	}
	return nil
}

// split cuts a line at runs of spaces and tabs into at most len(out)
// fields; a line with more fields returns len(out) (an error for every
// record kind, which has at most 3).
func split(line []byte, out [][]byte) int {
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if n == len(out) {
			return n
		}
		out[n] = line[i:j]
		n++
		i = j
	}
	return n
}

// Write writes g in the edge-list format: the header, every page in
// order, the seeds, then every link.
func Write(w io.Writer, g *Graph) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%s %d\n# pages %d, sites %d, links %d, seeds %d\n", Magic, FormatVersion, g.N(), g.Sites(), g.Links.Edges(), len(g.Seeds))
	for p, name := range g.Names {
		if err := writeNames(bw, RecordPage, name, g.SiteNames[g.Site[p]]); err != nil {
			return err
		}
	}
	for _, s := range g.Seeds {
		if err := writeNames(bw, RecordSeed, g.Names[s]); err != nil {
			return err
		}
	}
	for p := 0; p < g.N(); p++ {
		for _, t := range g.Links.Out(p) {
			if err := writeNames(bw, RecordLink, g.Names[p], g.Names[t]); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeNames writes one record, refusing names the reader would reject.
func writeNames(w *bufio.Writer, kind string, names ...string) error {
	w.WriteString(kind)
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, " \t") {
			return fmt.Errorf("write graph: name %s is empty or holds white space", excerpt.Quote(n))
		}
		if err := checkName([]byte(n)); err != nil {
			return fmt.Errorf("write graph: %w", err)
		}
		w.WriteByte(' ')
		w.WriteString(n)
	}
	return w.WriteByte('\n')
}
