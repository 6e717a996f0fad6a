package linkgraph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/wirecrawl/wire/pkg/collection"
)

// DamagedError is a graph.db that cannot be read as it is: missing,
// empty, truncated, or with pages that bbolt cannot make sense of. It
// matches collection.ErrDamaged (exit code 6); its message is one line
// that names the file, what is wrong and what to do.
type DamagedError struct {
	Path string // the file
	What string // what is wrong with it
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("%s is %s: %s: restore the last backup with 'seeder restore' (docs/operations.md, \"A damaged graph.db\")",
		e.Path, collection.ErrDamaged, e.What)
}

// Unwrap makes the error match collection.ErrDamaged.
func (e *DamagedError) Unwrap() error { return collection.ErrDamaged }

// bbolt's on-disk layout (go.etcd.io/bbolt internal/common), read here
// with plain file reads before the file is mapped: a 16-byte page header
// (id, flags, count, overflow), then on pages 0 and 1 the meta record.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaSize         = 64 // up to and with the checksum
	metaSumOffset    = 56 // the checksum covers the bytes before it
	pageFlagBranch   = 0x01
	pageFlagLeaf     = 0x02
	pageFlagMeta     = 0x04
	pageFlagFreelist = 0x10
	noFreelist       = ^uint64(0)
	minPageSize      = 512
	maxPageSize      = 1 << 20
	minBoltPages     = 4 // two meta pages, a freelist and the root leaf
	metaPageFlagPos  = 8
)

// boltMeta is the part of a bbolt meta page that CheckFile uses.
type boltMeta struct {
	pageSize uint32
	root     uint64 // root bucket's page
	freelist uint64 // freelist page, or noFreelist
	pgid     uint64 // high-water mark: pages in use are below it
	txid     uint64
}

// readMeta reads and validates the meta page at offset off; bbolt writes
// its fields in the machine's byte order.
func readMeta(f io.ReaderAt, off int64) (boltMeta, error) {
	var buf [pageHeaderSize + metaSize]byte
	if _, err := f.ReadAt(buf[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("cannot read the meta page at byte %d: %w", off, err)
	}
	le := binary.NativeEndian
	if flags := le.Uint16(buf[metaPageFlagPos:]); flags != pageFlagMeta {
		return boltMeta{}, fmt.Errorf("page at byte %d is not a meta page (flags %#x)", off, flags)
	}
	m := buf[pageHeaderSize:]
	if le.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, fmt.Errorf("meta page at byte %d has no bbolt magic number", off)
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("meta page at byte %d has bbolt version %d, want %d", off, v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if h.Sum64() != le.Uint64(m[metaSumOffset:]) {
		return boltMeta{}, fmt.Errorf("meta page at byte %d fails its checksum", off)
	}
	meta := boltMeta{
		pageSize: le.Uint32(m[8:]),
		root:     le.Uint64(m[16:]),
		freelist: le.Uint64(m[32:]),
		pgid:     le.Uint64(m[40:]),
		txid:     le.Uint64(m[48:]),
	}
	switch {
	case meta.pageSize < minPageSize || meta.pageSize > maxPageSize || meta.pageSize&(meta.pageSize-1) != 0:
		return boltMeta{}, fmt.Errorf("meta page at byte %d gives page size %d", off, meta.pageSize)
	case meta.pgid < minBoltPages:
		return boltMeta{}, fmt.Errorf("meta page at byte %d gives %d pages", off, meta.pgid)
	case meta.root < 2 || meta.root >= meta.pgid:
		return boltMeta{}, fmt.Errorf("meta page at byte %d puts the root at page %d of %d", off, meta.root, meta.pgid)
	case meta.freelist != noFreelist && (meta.freelist < 2 || meta.freelist >= meta.pgid):
		return boltMeta{}, fmt.Errorf("meta page at byte %d puts the freelist at page %d of %d", off, meta.freelist, meta.pgid)
	}
	return meta, nil
}

// CheckFile checks, with plain reads and before bbolt maps it, that path
// is a whole bbolt file: not empty, a valid meta page (bbolt keeps two
// and uses the newer valid one), and as long as that meta page's
// high-water mark times its page size. A file cut short would otherwise
// be mapped and fault (SIGBUS) when a page past its end is read. The
// error is a *DamagedError, or the open error of a file that cannot be
// read at all (a missing file is damaged too: a collection's graph.db is
// created with the collection).
func CheckFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &DamagedError{Path: path, What: "missing"}
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	size := st.Size()
	if size == 0 {
		return &DamagedError{Path: path, What: "empty (0 bytes)"}
	}
	best, err := newestMeta(f, size)
	if err != nil {
		return &DamagedError{Path: path, What: err.Error()}
	}
	if want := int64(best.pgid) * int64(best.pageSize); size < want {
		return &DamagedError{Path: path, What: fmt.Sprintf("truncated: %d bytes, its meta page says %d pages of %d bytes (%d bytes)",
			size, best.pgid, best.pageSize, want)}
	}
	if err := checkPage(f, best, best.root, pageFlagBranch|pageFlagLeaf); err != nil {
		return &DamagedError{Path: path, What: "root page: " + err.Error()}
	}
	if best.freelist != noFreelist {
		if err := checkPage(f, best, best.freelist, pageFlagFreelist); err != nil {
			return &DamagedError{Path: path, What: "freelist page: " + err.Error()}
		}
	}
	return nil
}

// newestMeta returns the newer of the file's two meta pages that is
// valid, as bbolt does.
func newestMeta(f io.ReaderAt, size int64) (boltMeta, error) {
	m0, err0 := readMeta(f, 0)
	var best boltMeta
	var err1 error
	// Meta page 1 sits one page in; with meta page 0 unreadable, try the
	// page sizes bbolt may have used.
	sizes := []uint32{4096, uint32(os.Getpagesize()), 8192, 16384, 65536}
	if err0 == nil {
		sizes = []uint32{m0.pageSize}
		best = m0
	}
	found := err0 == nil
	for _, ps := range sizes {
		if int64(ps)+pageHeaderSize+metaSize > size {
			continue
		}
		m1, err := readMeta(f, int64(ps))
		if err != nil {
			err1 = err
			continue
		}
		if !found || m1.txid > best.txid {
			best = m1
		}
		found = true
		break
	}
	if !found {
		if err1 == nil {
			err1 = fmt.Errorf("%d bytes, too short for a second meta page", size)
		}
		return boltMeta{}, fmt.Errorf("not a readable bbolt file (%v; %v)", err0, err1)
	}
	return best, nil
}

// checkPage checks the header of page id: its id, a type among flags,
// its overflow pages within the high-water mark, and for a freelist its
// count within its pages (bbolt reads the freelist at open, and a wild
// count or overflow makes it allocate or loop without bound).
func checkPage(f io.ReaderAt, m boltMeta, id uint64, flags uint16) error {
	var h [pageHeaderSize + 8]byte
	if _, err := f.ReadAt(h[:], int64(id)*int64(m.pageSize)); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	le := binary.NativeEndian
	pid, pflags, count, overflow := le.Uint64(h[0:]), le.Uint16(h[8:]), uint64(le.Uint16(h[10:])), uint64(le.Uint32(h[12:]))
	switch {
	case pid != id:
		return fmt.Errorf("page %d says it is page %d", id, pid)
	case pflags&flags == 0 || pflags&^flags != 0:
		return fmt.Errorf("page %d has type %#x", id, pflags)
	case id+overflow >= m.pgid:
		return fmt.Errorf("page %d runs %d pages past the high-water mark %d", id, overflow, m.pgid)
	}
	if flags == pageFlagFreelist {
		if count == 0xFFFF { // the real count is the first element
			count = le.Uint64(h[pageHeaderSize:]) + 1
		}
		if count*8 > (overflow+1)*uint64(m.pageSize) {
			return fmt.Errorf("freelist of %d ids does not fit its %d pages", count, overflow+1)
		}
	}
	return nil
}

// guard runs fn and turns a panic in it into a *DamagedError: bbolt
// panics ("assertion failed", "invalid page type", index out of range)
// on pages whose content makes no sense, and with the goroutine's
// SetPanicOnFault a memory fault on the mapped file (a page id past its
// end, a file cut short while it was mapped) is such a panic too instead
// of a crash of the process. Every goroutine that reads the mapped file
// runs its work under guard.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			what := strings.Join(strings.Fields(fmt.Sprint(r)), " ")
			if len(what) > 200 {
				what = what[:200] + "…"
			}
			err = &DamagedError{Path: path, What: "reading it failed (panic: " + what + ")"}
		}
	}()
	return fn()
}

// CheckPages reads every page of graph.db that its buckets reach (every
// key and value, with SetPanicOnFault and panics recovered), then runs
// bbolt's own consistency check (Tx.Check: pages reachable or free, none
// twice, none past the high-water mark). It returns at most limit
// problems. bbolt runs its check on a goroutine of its own, where a
// memory fault could not be recovered, so it runs only once the guarded
// walk has read every reachable page without fault. A *DamagedError is
// returned for a file the walk could not read.
func (g *Graph) CheckPages(limit int) ([]error, error) {
	var problems []error
	if err := g.walk(); err != nil {
		return nil, err
	}
	err := guard(g.db.Path(), func() error {
		return g.db.View(func(btx *bolt.Tx) error {
			for _, name := range allBuckets {
				b := btx.Bucket(name)
				if b == nil {
					return &DamagedError{Path: g.db.Path(), What: fmt.Sprintf("no bucket %s", name)}
				}
				if err := touchBucket(g.db.Path(), string(name), b, bytes.Equal(name, bucketScores)); err != nil {
					return err
				}
			}
			for _, name := range laterBuckets {
				if b := btx.Bucket(name); b != nil {
					if err := touchBucket(g.db.Path(), string(name), b, false); err != nil {
						return err
					}
				}
			}
			for err := range btx.Check() {
				if len(problems) < limit {
					problems = append(problems, fmt.Errorf("bbolt: %w", err))
				}
			}
			return nil
		})
	})
	return problems, err
}

// touchBucket reads every key and value of bucket b (named name). Only
// the scores bucket holds nested buckets (the manager's vectors, tables
// and their metadata, scores.go), one level deep: a nested bucket
// anywhere else is a flag flipped on a value (and bbolt's check,
// unguarded, would follow it).
func touchBucket(path, name string, b *bolt.Bucket, nested bool) error {
	var n int
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			nb := b.Bucket(k)
			if !nested || nb == nil {
				return &DamagedError{Path: path, What: fmt.Sprintf("bucket %s holds a nested bucket %q", name, k)}
			}
			if err := touchBucket(path, name+"/"+string(k), nb, false); err != nil {
				return err
			}
			continue
		}
		n += len(k) + len(v) // touch every key and value
		if len(v) > 0 {
			n += int(v[0]) + int(v[len(v)-1])
		}
	}
	_ = n
	return nil
}

// walkPages checks the structure of every page the buckets reach, with
// plain reads of the file: page ids and types, element counts, and every
// key, value and child page within bounds, no page reached twice. bbolt
// trusts all of these when it follows a tree; once they hold, its own
// check (Tx.Check, on a goroutine where a fault cannot be recovered) and
// its cursors stay within the file.
func walkPages(f io.ReaderAt, m boltMeta) error {
	w := pageWalker{f: f, m: m, seen: map[uint64]bool{}}
	return w.tree(m.root, 0)
}

type pageWalker struct {
	f    io.ReaderAt
	m    boltMeta
	seen map[uint64]bool
}

const (
	elementSize     = 16
	leafBucketFlag  = 0x01
	bucketHeaderLen = 16 // root page id, sequence
	maxTreeDepth    = 64
)

// tree walks the B+tree rooted at page id.
func (w *pageWalker) tree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: tree deeper than %d", id, maxTreeDepth)
	}
	if id < 2 || id >= w.m.pgid {
		return fmt.Errorf("page id %d out of range [2, %d)", id, w.m.pgid)
	}
	if w.seen[id] {
		return fmt.Errorf("page %d reached twice", id)
	}
	w.seen[id] = true
	var h [pageHeaderSize]byte
	if _, err := w.f.ReadAt(h[:], int64(id)*int64(w.m.pageSize)); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	overflow := uint64(binary.NativeEndian.Uint32(h[12:]))
	if id+overflow >= w.m.pgid {
		return fmt.Errorf("page %d runs %d pages past the high-water mark %d", id, overflow, w.m.pgid)
	}
	buf := make([]byte, (overflow+1)*uint64(w.m.pageSize))
	if _, err := w.f.ReadAt(buf, int64(id)*int64(w.m.pageSize)); err != nil {
		return fmt.Errorf("page %d: %w", id, err)
	}
	if pid := binary.NativeEndian.Uint64(buf); pid != id {
		return fmt.Errorf("page %d says it is page %d", id, pid)
	}
	return w.page(id, buf, depth)
}

// page checks one branch or leaf page held in buf (a whole page and its
// overflow, or an inline bucket's page inside its value) and walks on.
func (w *pageWalker) page(id uint64, buf []byte, depth int) error {
	le := binary.NativeEndian
	if len(buf) < pageHeaderSize {
		return fmt.Errorf("page %d: %d bytes", id, len(buf))
	}
	flags, count := le.Uint16(buf[8:]), int(le.Uint16(buf[10:]))
	if pageHeaderSize+count*elementSize > len(buf) {
		return fmt.Errorf("page %d: %d elements do not fit", id, count)
	}
	for i := range count {
		at := pageHeaderSize + i*elementSize
		e := buf[at : at+elementSize]
		switch flags {
		case pageFlagBranch:
			pos, ksize, child := uint64(le.Uint32(e[0:])), uint64(le.Uint32(e[4:])), le.Uint64(e[8:])
			if uint64(at)+pos+ksize > uint64(len(buf)) {
				return fmt.Errorf("page %d: key %d past the page", id, i)
			}
			if err := w.tree(child, depth+1); err != nil {
				return err
			}
		case pageFlagLeaf:
			eflags, pos, ksize, vsize := le.Uint32(e[0:]), uint64(le.Uint32(e[4:])), uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
			end := uint64(at) + pos + ksize + vsize
			if end > uint64(len(buf)) {
				return fmt.Errorf("page %d: element %d past the page", id, i)
			}
			if eflags&leafBucketFlag == 0 {
				continue
			}
			v := buf[end-vsize : end]
			if len(v) < bucketHeaderLen {
				return fmt.Errorf("page %d: bucket %d has a %d-byte header", id, i, len(v))
			}
			if root := le.Uint64(v); root != 0 {
				if err := w.tree(root, depth+1); err != nil {
					return err
				}
			} else if err := w.page(id, v[bucketHeaderLen:], depth+1); err != nil { // inline bucket
				return err
			}
		default:
			return fmt.Errorf("page %d has type %#x, want branch or leaf", id, flags)
		}
	}
	return nil
}

// walk runs walkPages on the open file.
func (g *Graph) walk() error {
	path := g.db.Path()
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	m, err := newestMeta(f, st.Size())
	if err == nil {
		err = walkPages(f, m)
	}
	if err != nil {
		return &DamagedError{Path: path, What: err.Error()}
	}
	return nil
}

// Backup writes a consistent copy of graph.db to w (bbolt's online
// backup, Tx.WriteTo, in a read transaction: writers wait for nothing)
// and returns the park file records it holds, whose files belong with
// the copy.
func (g *Graph) Backup(w io.Writer) ([]Parked, error) {
	var parked []Parked
	err := g.View(func(tx *Tx) error {
		if err := tx.ForEachParked(func(p Parked) error {
			parked = append(parked, p)
			return nil
		}); err != nil {
			return err
		}
		_, err := tx.tx.WriteTo(w)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("back up %s: %w", g.db.Path(), err)
	}
	return parked, nil
}
