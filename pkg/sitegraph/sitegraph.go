// Package sitegraph is the site graph the partitions of a web split over
// K collections exchange so that each orders its pages with site-level
// link information of the whole web (docs/format/exchange.md, "Site
// graph"; docs/manager.md, "Global site rank"): each partition publishes
// the links from its sites (to its own sites and to other partitions'),
// counted as page links, and each manager ranks the sites over the union
// of its own graph and the newest one of every peer.
package sitegraph

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

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
)

const (
	// Version is the version of the site graph file format.
	Version = 1
	// FileName is the name of a published site graph, in the sender's
	// exchange/out/ and, copied, in a receiver's exchange/in/ANY/.
	FileName = "sitegraph.sz"
	magic    = "# wire-sitegraph"
	columns  = "site key | link src dst links"
)

// ErrFormat means a site graph file is damaged or of an unknown version.
var ErrFormat = errors.New("malformed site graph file")

// Graph is one partition's site graph: every site it knows, and the page
// links from its sites' pages to sites (its own and other partitions'),
// loops (links within a site) left out.
type Graph struct {
	From    partition.Partition // the sender
	Written time.Time           // when it was written: a newer one replaces an older one
	Sites   []string            // site keys; an edge names a site by its index
	Edges   []Edge
	Bytes   int64 // the file's size, when read or written
}

// Edge is the number of page links from one site's pages to another
// site.
type Edge struct {
	Src, Dst uint32 // indexes in Sites
	Links    uint32
}

// FromTx builds partition p's site graph from graph.db: its sites, the
// site graph of its own pages' links (sitelinks) and the links to other
// partitions' sites (sitelinks_remote).
func FromTx(tx *linkgraph.Tx, p partition.Partition, now time.Time) (*Graph, error) {
	g := &Graph{From: p, Written: now.UTC()}
	index := map[string]uint32{}
	byID := map[uint64]uint32{}
	if err := tx.ForEachSiteKey(func(key []byte, id uint64) error {
		k := string(key)
		byID[id] = uint32(len(g.Sites))
		index[k] = uint32(len(g.Sites))
		g.Sites = append(g.Sites, k)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("site graph: %w", err)
	}
	if err := tx.ForEachSiteLinks(func(site uint64, linked *roaring.Bitmap, counts []uint32) error {
		src, ok := byID[site]
		if !ok {
			return fmt.Errorf("site graph: links of site %d, which has no key", site)
		}
		it := linked.Iterator()
		for i := 0; it.HasNext(); i++ {
			dst, ok := byID[uint64(it.Next())]
			if !ok {
				return fmt.Errorf("site graph: a link of site %d to a site without a key", site)
			}
			g.Edges = append(g.Edges, Edge{Src: src, Dst: dst, Links: counts[i]})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := tx.ForEachRemoteSiteLink(func(site uint64, key string, links uint32) error {
		src, ok := byID[site]
		if !ok {
			return fmt.Errorf("site graph: links of site %d to other partitions, which has no key", site)
		}
		dst, ok := index[key]
		if !ok {
			dst = uint32(len(g.Sites))
			index[key] = dst
			g.Sites = append(g.Sites, key)
		}
		if dst != src {
			g.Edges = append(g.Edges, Edge{Src: src, Dst: dst, Links: links})
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("site graph: %w", err)
	}
	return g, nil
}

// header is the first line of p's site graph written at t.
func header(p partition.Partition, t time.Time) string {
	return fmt.Sprintf("%s %d from %s written %s\n# columns: %s\n", magic, Version, p, t.UTC().Format(time.RFC3339Nano), columns)
}

// Write writes the graph to path atomically (a reader sees the old file
// or the new one, whole) and sets Bytes.
func (g *Graph) Write(path string) error {
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return fmt.Errorf("write site graph: %w", err)
	}
	sw := snappy.NewBufferedWriter(f)
	bw := bufio.NewWriterSize(sw, 64<<10)
	err = g.write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = sw.Close()
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("write site graph %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write site graph %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil {
		g.Bytes = fi.Size()
	}
	return nil
}

func (g *Graph) write(w *bufio.Writer) error {
	w.WriteString(header(g.From, g.Written))
	for _, s := range g.Sites {
		if strings.ContainsAny(s, "\t\r\n") || s == "" {
			return fmt.Errorf("site key %q is empty or holds a tab or newline", s)
		}
		w.WriteString("site\t")
		w.WriteString(s)
		w.WriteByte('\n')
	}
	var b []byte
	for _, e := range g.Edges {
		b = append(b[:0], "link\t"...)
		b = strconv.AppendUint(b, uint64(e.Src), 10)
		b = append(b, '\t')
		b = strconv.AppendUint(b, uint64(e.Dst), 10)
		b = append(b, '\t')
		b = strconv.AppendUint(b, uint64(e.Links), 10)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Read reads a site graph file.
func Read(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read site graph: %w", err)
	}
	defer f.Close()
	g, err := read(snappy.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if fi, err := f.Stat(); err == nil {
		g.Bytes = fi.Size()
	}
	return g, nil
}

func read(r io.Reader) (*Graph, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	g := &Graph{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			var v int
			var from, written string
			if _, err := fmt.Sscanf(line, magic+" %d from %s written %s", &v, &from, &written); err != nil || v != Version {
				return nil, fmt.Errorf("line 1 %q: want %q", line, strings.TrimSpace(magic+" 1 from I/K written TIME"))
			}
			p, err := partition.Parse(from)
			if err != nil || p.Whole() {
				return nil, fmt.Errorf("line 1: sender %q: want i/K", from)
			}
			t, err := time.Parse(time.RFC3339Nano, written)
			if err != nil {
				return nil, fmt.Errorf("line 1: written %q: %w", written, err)
			}
			g.From, g.Written = p, t
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(line, "\t")
		switch kind {
		case "site":
			if rest == "" || strings.Contains(rest, "\t") {
				return nil, fmt.Errorf("line %d: want site KEY", n)
			}
			g.Sites = append(g.Sites, rest)
		case "link":
			f := strings.Split(rest, "\t")
			if len(f) != 3 {
				return nil, fmt.Errorf("line %d: want link SRC DST LINKS", n)
			}
			var v [3]uint64
			for i := range f {
				x, err := strconv.ParseUint(f[i], 10, 32)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
				v[i] = x
			}
			if v[0] >= uint64(len(g.Sites)) || v[1] >= uint64(len(g.Sites)) {
				return nil, fmt.Errorf("line %d: a site index beyond the %d sites listed before it", n, len(g.Sites))
			}
			g.Edges = append(g.Edges, Edge{Src: uint32(v[0]), Dst: uint32(v[1]), Links: uint32(v[2])})
		default:
			return nil, fmt.Errorf("line %d: unknown kind %q (want site or link)", n, kind)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if g.From.Whole() {
		return nil, errors.New("empty")
	}
	return g, nil
}

// Path is where collection col publishes its site graph; each other
// partition J finds the same file as exchange/out/to-J/sitegraph.sz
// (PathFor), next to the link files for it, so that the copy (rsync)
// that carries the links carries the site graph too.
func Path(col string) string {
	return filepath.Join(col, "exchange", "out", FileName)
}

// PathFor is the site graph of collection col as partition to reads it.
func PathFor(col string, to int) string {
	return filepath.Join(col, "exchange", "out", "to-"+strconv.Itoa(to), FileName)
}

// Publish writes g, col's site graph, to Path(col) and, as hard links
// (a copy where the file system has none), to PathFor(col, J) for every
// other partition J, each replaced atomically.
func Publish(col string, g *Graph) error {
	path := Path(col)
	if err := g.Write(path); err != nil {
		return err
	}
	var data []byte
	for j := 1; j <= g.From.K; j++ {
		if j == g.From.I {
			continue
		}
		dst := PathFor(col, j)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("publish site graph: %w", err)
		}
		tmp := filepath.Join(filepath.Dir(dst), "."+FileName+".link")
		os.Remove(tmp)
		if err := os.Link(path, tmp); err == nil {
			if err := os.Rename(tmp, dst); err != nil {
				return fmt.Errorf("publish site graph: %w", err)
			}
			if err := collection.SyncDir(filepath.Dir(dst)); err != nil {
				return fmt.Errorf("publish site graph: %w", err)
			}
			continue
		}
		if data == nil {
			var err error
			if data, err = os.ReadFile(path); err != nil {
				return fmt.Errorf("publish site graph: %w", err)
			}
		}
		if err := collection.WriteFileAtomic(dst, data); err != nil {
			return fmt.Errorf("publish site graph: %w", err)
		}
	}
	return nil
}

// Peers reads the newest site graph of every other partition than p's
// that partition p can see: the ones its peers publish for it (peers,
// over a shared file system) and those copied into its exchange/in/ANY/.
// Files that cannot be read or are not of p's K are returned as
// warnings.
func Peers(col string, p partition.Partition, peers []string) (map[int]*Graph, []error) {
	var paths []string
	for _, peer := range peers {
		paths = append(paths, PathFor(peer, p.I))
	}
	in := filepath.Join(col, "exchange", "in")
	if subs, err := os.ReadDir(in); err == nil {
		for _, s := range subs {
			if s.IsDir() {
				paths = append(paths, filepath.Join(in, s.Name(), FileName))
			}
		}
	}
	out := map[int]*Graph{}
	var warn []error
	for _, path := range paths {
		g, err := Read(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // not written or not copied yet
		}
		if err != nil {
			warn = append(warn, err)
			continue
		}
		if g.From.K != p.K || g.From.I == p.I {
			warn = append(warn, fmt.Errorf("%w: %s: from partition %s, this collection is %s", ErrFormat, path, g.From, p))
			continue
		}
		if old := out[g.From.I]; old == nil || g.Written.After(old.Written) {
			out[g.From.I] = g
		}
	}
	return out, warn
}
