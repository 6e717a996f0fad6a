// Package linkgraph is the crawl's memory in graph.db (bbolt): every URL
// ever seen with its id and document record, every site, the link graph
// as roaring bitmaps of out-links and in-links per document, the site
// graph, the frontier set and the files of parked links. Only the manager
// and the seeder open it, one at a time (bbolt's file lock).
//
// Buckets (docs/format/linkgraph.md):
//
//	meta      "version" → "3"; "next_doc", "next_site", "next_park" → uint64 (8 bytes BE);
//	          "frontier" → roaring bitmap of the ids of frontier documents
//	urls      normalised URL → doc id (8 bytes BE)
//	docs      doc id (8 bytes BE) → Doc (binary record; version 1 JSON still read)
//	sites     site key ("http://host[:port]") → site id (8 bytes BE)
//	siterec   site id (8 bytes BE) → Site (JSON)
//	out       doc id → roaring bitmap of out-link doc ids (portable format)
//	in        doc id → roaring bitmap of in-link doc ids, mirroring out
//	sitelinks site id → linked site ids (roaring) and link counts
//	sitelinks_remote site id + site key of another partition → uvarint link count
//	parked    park file number → Parked (JSON)
//	batches   batch id (8 bytes BE) → BatchState (JSON)
//	scores    doc id → manager's estimator state (pkg/manager)
package linkgraph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bolt "go.etcd.io/bbolt"
)

// Version is the graph.db format version this package writes. Version 3
// is version 2 with the change logs (changes.go) kept by every writer: a
// program that does not keep them (one that reads only 1 and 2) refuses
// the file, so that no write escapes the logs and the caches built on
// them (docs/format/linkgraph.md, "Versions").
const Version = "3"

// versionV2 is the format before the change logs: read as it is, and
// made version 3 when opened for writing (its logs start empty and
// never reset, so every cache built on them is rebuilt).
const versionV2 = "2"

// versionV1 is the first format: JSON document records, no in-links,
// site graph or frontier set. It is still read, and upgraded when opened
// for writing.
const versionV1 = "1"

var (
	bucketMeta    = []byte("meta")
	bucketURLs    = []byte("urls")
	bucketDocs    = []byte("docs")
	bucketSites   = []byte("sites")
	bucketSiteRec = []byte("siterec")
	bucketOut     = []byte("out")
	bucketBatches = []byte("batches")
	// bucketIn holds in-link sets mirroring bucketOut.
	bucketIn = []byte("in")
	// bucketSiteLinks holds the site graph: site id → linked site ids
	// with link counts.
	bucketSiteLinks = []byte("sitelinks")
	// bucketScores holds the manager's per-document estimator state
	// (OPIC cash and history, imported historical PageRank): doc id →
	// value, layout owned by pkg/manager.
	bucketScores = []byte("scores")
	// bucketParked records the files of parked links under
	// COLLECTION/frontier/.
	bucketParked = []byte("parked")
	allBuckets   = [][]byte{bucketMeta, bucketURLs, bucketDocs, bucketSites, bucketSiteRec, bucketOut, bucketBatches, bucketIn, bucketSiteLinks, bucketScores, bucketParked}
	// laterBuckets came after format version 2 was frozen: a writable
	// open creates them, a file without them (read-only) is not damaged.
	laterBuckets = [][]byte{bucketSiteRemote}

	keyVersion  = []byte("version")
	keyNextDoc  = []byte("next_doc")
	keyNextSite = []byte("next_site")
	keyNextPark = []byte("next_park")
	keyFrontier = []byte("frontier")
)

// Graph is an open graph.db.
type Graph struct {
	db       *bolt.DB
	readOnly bool
	keys     *urlKeyer // the seeds of URLKey, drawn at Open
	// legacy is set for a version 1 file opened read-only: it has no
	// in-links, site graph or frontier set.
	legacy bool
}

// Open opens (creating if needed, unless readOnly) the graph database at
// path. It waits at most timeout for another process's lock. Opened for
// writing, a version 1 or 2 file is upgraded to version 3 in one transaction
// (in-links, site graph and frontier set are built from the out-links and
// documents); read-only, it is read as it is.
//
// A file that exists is checked before bbolt maps it (CheckFile), and
// bbolt's panics and memory faults while it is opened or read are
// recovered (guard): a damaged file gives a *DamagedError, which matches
// collection.ErrDamaged, and never a crash. An empty file is damaged,
// never made a new database; a missing one is created only for writing
// (OpenExisting refuses it).
func Open(path string, readOnly bool, timeout time.Duration) (*Graph, error) {
	if _, err := os.Stat(path); err == nil || readOnly {
		if err := CheckFile(path); err != nil {
			return nil, err
		}
	}
	var g *Graph
	err := guard(path, func() error {
		var err error
		g, err = open(path, readOnly, timeout)
		return err
	})
	return g, err
}

// OpenExisting is Open for the graph.db of an existing collection: a
// missing file is damage (a *DamagedError), not a new database. Only the
// creation of a collection (seeder init, seeder import's new collection)
// makes graph.db.
func OpenExisting(path string, readOnly bool, timeout time.Duration) (*Graph, error) {
	if err := CheckFile(path); err != nil {
		return nil, err
	}
	return Open(path, readOnly, timeout)
}

func open(path string, readOnly bool, timeout time.Duration) (*Graph, error) {
	db, err := bolt.Open(path, 0o644, BoltOptions(readOnly, timeout))
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	g := &Graph{db: db, readOnly: readOnly, keys: newURLKeyer()}
	defer func() {
		if r := recover(); r != nil {
			db.Close() // a panic while reading: close, then report it
			panic(r)
		}
	}()
	if readOnly {
		err = db.View(func(tx *bolt.Tx) error {
			v, err := checkVersion(tx)
			g.legacy = v == versionV1
			return err
		})
	} else {
		err = db.Update(func(btx *bolt.Tx) error {
			for _, b := range slices.Concat(allBuckets, laterBuckets) {
				if _, err := btx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			m := btx.Bucket(bucketMeta)
			if m.Get(keyVersion) == nil {
				if err := m.Put(keyFrontier, mustBytes(roaring.New())); err != nil {
					return err
				}
				return m.Put(keyVersion, []byte(Version))
			}
			v, err := checkVersion(btx)
			switch {
			case err != nil || v == Version:
				return err
			case v == versionV2:
				return upgradeV2(m)
			}
			return upgrade(newTx(btx))
		})
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return g, nil
}

// initialMmapSize is mapped at once so that a large transaction does not
// remap the file as it grows (a remap copies every key and value the
// transaction has touched onto the heap).
const initialMmapSize = 1 << 30

// BoltOptions are the bbolt options graph.db is opened with (the
// seeder's benchmark opens its plain bbolt baseline the same way).
//
// The freelist is written at every commit (NoFreelistSync false): without
// it, every writable open rebuilds the freelist by reading every page of
// the file, a cost that grows with the graph, not with the batch — 320 ms
// and the whole file in memory for a 1 GB graph.db at the end of the
// million-page scale run, against 13 ms with the freelist kept
// (docs/scale.md). A file written without one gets it at its next commit.
func BoltOptions(readOnly bool, timeout time.Duration) *bolt.Options {
	return &bolt.Options{Timeout: timeout, ReadOnly: readOnly, FreelistType: bolt.FreelistMapType, InitialMmapSize: initialMmapSize}
}

func checkVersion(tx *bolt.Tx) (string, error) {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return "", fmt.Errorf("%w: no meta bucket", ErrVersion)
	}
	v := string(m.Get(keyVersion))
	if v != Version && v != versionV2 && v != versionV1 {
		return v, fmt.Errorf("%w: %q (this program reads %s, %s and %s)", ErrVersion, v, versionV1, versionV2, Version)
	}
	return v, nil
}

// upgradeV2 makes a version 2 file version 3: the change logs are
// dropped, whatever a program wrote of them before, so that they read as
// never reset (token 0) and every copy built on them is rebuilt.
func upgradeV2(m *bolt.Bucket) error {
	for l := range logCount {
		for _, k := range [][]byte{logKeys[l].changed, logKeys[l].token} {
			if err := m.Delete(k); err != nil {
				return fmt.Errorf("upgrade to version %s: %w", Version, err)
			}
		}
	}
	return m.Put(keyVersion, []byte(Version))
}

// upgrade turns a version 1 file into version 3: it builds the in-links
// and the site graph from the out-links and the frontier set from the
// documents. Version 1 document records stay JSON until rewritten.
func upgrade(t *Tx) error {
	sites := map[uint32]uint32{}
	fr := roaring.New()
	if err := t.ForEachDoc(func(d *Doc) error {
		sites[uint32(d.ID)] = uint32(d.Site)
		if d.InFrontier() {
			fr.Add(uint32(d.ID))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	t.frontier, t.frontierDirty = fr, true
	if err := t.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		src := uint32(id)
		it := bm.Iterator()
		for it.HasNext() {
			dst := it.Next()
			t.inAdd.add(uint64(dst)<<32 | uint64(src))
			t.siteDelta(sites[src], sites[dst], 1)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	return t.tx.Bucket(bucketMeta).Put(keyVersion, []byte(Version))
}

// Close closes the database.
func (g *Graph) Close() error { return g.db.Close() }

// Legacy tells whether the graph is a version 1 file opened read-only
// (no in-links, site graph or frontier set: those calls return
// ErrNeedsUpgrade).
func (g *Graph) Legacy() bool { return g.legacy }

// View runs fn in a read-only transaction.
// A panic or memory fault while it reads graph.db is returned as a
// *DamagedError (guard).
func (g *Graph) View(fn func(*Tx) error) error {
	return guard(g.db.Path(), func() error {
		return g.db.View(func(btx *bolt.Tx) error {
			t := newTx(btx)
			t.legacy = g.legacy
			t.keys = g.keys
			return fn(t)
		})
	})
}

// Update runs fn in a read-write transaction, committed atomically when
// fn returns nil. Changes that the transaction gathers in memory (id
// counters, in-links, the site graph, the frontier set) are written
// before the commit.
// A panic or memory fault while it reads or writes graph.db rolls the
// transaction back and is returned as a *DamagedError (guard).
func (g *Graph) Update(fn func(*Tx) error) error {
	return guard(g.db.Path(), func() error {
		return g.db.Update(func(btx *bolt.Tx) error {
			t := newTx(btx)
			t.keys = g.keys
			defer func() {
				if t.prep != nil {
					<-t.prep.done // its read transaction must end before the commit or rollback
				}
			}()
			err := fn(t)
			if t.prep != nil {
				<-t.prep.done
			}
			if err != nil {
				return err
			}
			return t.flush()
		})
	})
}

// Tx is a transaction on the graph.
type Tx struct {
	tx     *bolt.Tx
	legacy bool

	counters map[string]uint64 // id counters changed in this transaction

	// URLs and documents created in this transaction, written at its end
	// in key order: bbolt inserts sorted keys far faster than random ones
	// (a node does not split before the commit), and a new document's
	// record, rewritten as its anchors arrive, is encoded once.
	// created finds every URL created in the transaction by its key
	// (keys: the Graph's seeds, or a transaction's own when it has none).
	created  createdIndex
	keys     *urlKeyer
	unsorted blocks[newURL] // the URLs created and not written yet
	// Records of new documents not written yet (encoded: few pointers
	// for the GC): newDocs.at(i) is that of id newBase+i (new ids are
	// consecutive).
	newDocs blocks[[]byte]
	// Records of documents from before the transaction that it rewrote,
	// not written yet: they are written in id order (flushDocWrites),
	// where a batch rewrites its pages in the order the harvest finished
	// them (sorted writes touch each page once, in turn).
	docWrites map[uint64][]byte
	newBase   uint64
	newSites  map[string]uint64 // site keys created in the transaction, not written yet
	newOut    map[uint64][]byte // out-link sets stored in the transaction, not written yet
	urls      *bolt.Cursor      // reused for lookups (bbolt's Get allocates a cursor)

	frontier      *roaring.Bitmap // loaded on first use
	frontierDirty bool

	// changed holds, per change log, the ids the transaction wrote,
	// added to the stored logs when it ends (changes.go).
	changed [logCount]*roaring.Bitmap

	// In-link changes (target<<32 | source), applied grouped by target
	// by flushLinks.
	inAdd blocks[uint64] // a batch adds millions
	inDel []uint64
	// Site graph changes: (source site, target site) → link count delta.
	siteDeltas map[[2]uint32]int64
	// inWritten is set once flushInLinks has written in-link sets in this
	// transaction: a snapshot of the bucket from before it is stale.
	inWritten bool

	prep *flushPrep // work started by PrepareFlush, if any

	scratch []byte // reused to encode document records (PutDoc)
	// Reused by newOutLinks.
	sortedTargets []Target
	ids           []uint32
}

// newURL is a URL created in the transaction and its id.
type newURL struct {
	url string
	id  uint64
}

// sortURLs sorts new URLs by URL, the order of the urls bucket.
func sortURLs(u []newURL) {
	slices.SortFunc(u, func(a, b newURL) int { return strings.Compare(a.url, b.url) })
}

// flushPrep is the work PrepareFlush does on another goroutine: what it
// took from the transaction, and its results once done is closed.
type flushPrep struct {
	done         chan struct{}
	urls         []newURL // the new URLs, sorted
	inAdd, inDel []uint64 // the in-link changes, sorted
	withIn       bool     // in holds the in-link sets of those changes
	in           []inValue
	err          error
}

// PrepareFlush starts on another goroutine the work of writing what the
// transaction gathered so far that needs no write access: it sorts the
// URLs created so far, and computes the in-link sets that the out-link
// changes so far make, reading the sets from a read-only transaction (the
// in-links are only written at the end of a transaction, so that
// snapshot is the transaction's own view). The caller goes on with the
// transaction meanwhile, typically with work that creates no URL and
// changes no out-link; whatever it does, the flush at the end waits for
// the result and completes it (or redoes the in-links without it).
// Called at most once per transaction; later calls do nothing.
func (t *Tx) PrepareFlush() {
	if t.prep != nil {
		return
	}
	p := &flushPrep{done: make(chan struct{})}
	unsorted := t.unsorted
	t.unsorted = blocks[newURL]{}
	withIn := !t.inWritten && !t.legacy && (t.inAdd.len() > 0 || len(t.inDel) > 0)
	var inAdd blocks[uint64]
	if withIn {
		p.withIn = true
		inAdd, p.inDel = t.inAdd, t.inDel
		t.inAdd, t.inDel = blocks[uint64]{}, nil
	}
	t.prep = p
	db := t.tx.DB()
	// The URLs and the in-links on two goroutines: neither waits for the
	// other.
	var wg sync.WaitGroup
	wg.Go(func() {
		p.urls = unsorted.slice()
		sortURLs(p.urls)
	})
	if withIn {
		wg.Go(func() {
			p.inAdd = sortU64(inAdd.slice(), nil)
			p.inDel = sortU64(p.inDel, nil)
			p.err = guard(db.Path(), func() error {
				return db.View(func(btx *bolt.Tx) error {
					b := btx.Bucket(bucketIn)
					if b == nil {
						return fmt.Errorf("in-links: %w: no bucket %s", ErrCorrupt, bucketIn)
					}
					var err error
					p.in, err = inLinkValues(p.inAdd, p.inDel, b.Get)
					return err
				})
			})
		})
	}
	go func() {
		wg.Wait()
		close(p.done)
	}()
}

// takePrep waits for PrepareFlush's work, if any, and returns it.
func (t *Tx) takePrep() (*flushPrep, error) {
	p := t.prep
	if p == nil {
		return nil, nil
	}
	<-p.done
	return p, p.err
}

func newTx(btx *bolt.Tx) *Tx { return &Tx{tx: btx} }

// idFill is the fill percent of the buckets keyed by id (docs, out,
// in): bbolt splits a node that outgrows its page into pages filled to
// this fraction when the transaction commits. New ids are always larger
// than the known ones, so a batch appends its new documents and their
// link sets at the end of these buckets, where half-full pages (bbolt's
// default, meant for random inserts) would only double the pages written
// and kept; 0.9 leaves room for records that grow a little when
// rewritten. It is the fraction the score tables use (PutScores).
const idFill = 0.9

// flush writes what the transaction gathered in memory: the document
// records and out-link sets on this goroutine while the other buckets are
// written on another (writeLinks), then the id counters and the frontier
// set.
func (t *Tx) flush() error {
	if err := t.writeConcurrently(t.flushRecords); err != nil {
		return err
	}
	m := t.tx.Bucket(bucketMeta)
	for k, v := range t.counters {
		if err := m.Put([]byte(k), u64(v)); err != nil {
			return fmt.Errorf("write counter %s: %w", k, err)
		}
	}
	t.counters = nil
	if err := t.flushChanges(); err != nil {
		return err
	}
	if t.frontierDirty {
		t.frontier.RunOptimize()
		v, err := t.frontier.ToBytes()
		if err != nil {
			return fmt.Errorf("write frontier set: %w", err)
		}
		if err := m.Put(keyFrontier, v); err != nil {
			return fmt.Errorf("write frontier set: %w", err)
		}
		t.frontierDirty = false
	}
	return nil
}

// writeConcurrently runs records, which must write no bucket but docs
// and out and touch none of the transaction's state that writeLinks uses
// (the new sites and URLs, the in-link and site graph changes,
// PrepareFlush's work), on this goroutine while writeLinks writes those
// on another, and returns when both are done.
//
// bbolt does not promise that one transaction's buckets can be written
// from two goroutines at once, but its writes before the commit keep
// their state per bucket (each bucket's nodes and cursors; the
// transaction's statistics are atomic; pages are only allocated at the
// commit): two goroutines writing distinct buckets share only what they
// read. The buckets are opened first, on this goroutine, since opening
// one caches it in the root bucket's map. TestWriteConcurrently runs
// this under the race detector (go test -race ./pkg/linkgraph), which
// is what to run again when go.mod changes bbolt's version.
func (t *Tx) writeConcurrently(records func() error) error {
	for _, name := range allBuckets {
		if t.tx.Bucket(name) == nil {
			return fmt.Errorf("%w: no bucket %s", ErrCorrupt, name)
		}
	}
	for _, name := range [][]byte{bucketDocs, bucketOut, bucketIn} {
		t.tx.Bucket(name).FillPercent = idFill
	}
	links := make(chan error, 1)
	path := t.tx.DB().Path()
	go func() { links <- guard(path, t.writeLinks) }()
	// records runs under guard too: a panic here must not unwind (and
	// roll the transaction back) while writeLinks still writes.
	return errors.Join(guard(path, records), <-links)
}

// writeLinks writes the new sites and URLs, the in-link sets and the
// site graph (waiting for PrepareFlush's part, if any): flush without
// the document records, the out-link sets, the counters and the frontier
// set.
func (t *Tx) writeLinks() error {
	if err := t.flushURLs(); err != nil {
		return err
	}
	return t.flushLinks()
}

func mustBytes(bm *roaring.Bitmap) []byte {
	b, err := bm.ToBytes()
	if err != nil {
		panic(err) // an empty bitmap always serialises
	}
	return b
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// counter returns the current value of an id counter.
func (t *Tx) counter(key []byte) uint64 {
	if v, ok := t.counters[string(key)]; ok {
		return v
	}
	return getU64(t.tx.Bucket(bucketMeta).Get(key))
}

// next gives the next id of a counter; the counter is written at the end
// of the transaction.
func (t *Tx) next(key []byte) uint64 {
	n := t.counter(key) + 1
	if t.counters == nil {
		t.counters = map[string]uint64{}
	}
	t.counters[string(key)] = n
	return n
}

// LastDocID is the largest document id given so far (ids run from 1 to
// it without gaps).
func (t *Tx) LastDocID() uint64 { return t.counter(keyNextDoc) }

// flushNew writes the sites, URLs and documents created in the
// transaction and the records it rewrote: site and URL keys in sorted
// order, documents in id order.
func (t *Tx) flushNew() error {
	if err := t.flushURLs(); err != nil {
		return err
	}
	return t.flushRecords()
}

// flushRecords writes the out-link sets and the document records
// created or rewritten in the transaction, in id order.
func (t *Tx) flushRecords() error {
	if err := t.flushOut(); err != nil {
		return err
	}
	if err := t.flushDocWrites(); err != nil {
		return err
	}
	if t.newDocs.len() == 0 {
		return nil
	}
	docs := t.tx.Bucket(bucketDocs)
	key := make([]byte, 8) // bbolt copies keys
	for i := range t.newDocs.len() {
		id := t.newBase + uint64(i)
		t.logChange(docLog, id)
		binary.BigEndian.PutUint64(key, id)
		if err := docs.Put(key, *t.newDocs.at(i)); err != nil {
			return fmt.Errorf("put doc %d: %w", id, err)
		}
	}
	t.newDocs = blocks[[]byte]{}
	return nil
}

// flushDocWrites writes the rewritten records of documents from before
// the transaction, in id order.
func (t *Tx) flushDocWrites() error {
	if len(t.docWrites) == 0 {
		return nil
	}
	for id := range t.docWrites {
		t.logChange(docLog, id)
	}
	if err := putInIDOrder(t.tx.Bucket(bucketDocs), t.docWrites, "put doc"); err != nil {
		return err
	}
	t.docWrites = nil
	return nil
}

// putInIDOrder puts the values of m into b under their ids (big-endian
// keys), in id order; what names the write in an error.
func putInIDOrder(b *bolt.Bucket, m map[uint64][]byte, what string) error {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	key := make([]byte, 8) // bbolt copies keys
	for _, id := range ids {
		binary.BigEndian.PutUint64(key, id)
		if err := b.Put(key, m[id]); err != nil {
			return fmt.Errorf("%s %d: %w", what, id, err)
		}
	}
	return nil
}

// flushSites writes the site keys created in the transaction, in sorted
// order.
func (t *Tx) flushSites() error {
	if len(t.newSites) == 0 {
		return nil
	}
	keys := make([]string, 0, len(t.newSites))
	for k := range t.newSites {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sites := t.tx.Bucket(bucketSites)
	for _, k := range keys {
		if err := sites.Put([]byte(k), u64(t.newSites[k])); err != nil {
			return fmt.Errorf("add site %s: %w", k, err)
		}
	}
	t.newSites = nil
	return nil
}

// flushURLs writes the sites and URLs created in the transaction, in
// sorted order.
func (t *Tx) flushURLs() error {
	if err := t.flushSites(); err != nil {
		return err
	}
	if _, err := t.takePrep(); err != nil {
		return err
	}
	keys := t.unsorted.slice()
	sortURLs(keys)
	if p := t.prep; p != nil && p.urls != nil {
		// Sorted by PrepareFlush; URLs created since (if any) join them.
		if len(keys) > 0 {
			keys = append(p.urls, keys...)
			sortURLs(keys)
		} else {
			keys = p.urls
		}
		p.urls = nil
	}
	t.unsorted = blocks[newURL]{}
	if len(keys) == 0 {
		return nil
	}
	urls := t.tx.Bucket(bucketURLs)
	ids := make([]byte, 8*len(keys)) // the values, which bbolt keeps until the commit
	for i, u := range keys {
		v := ids[8*i : 8*i+8 : 8*i+8]
		binary.BigEndian.PutUint64(v, u.id)
		if err := urls.Put(keyBytes(u.url), v); err != nil {
			return fmt.Errorf("add url %s: %w", u.url, err)
		}
	}
	t.urls = nil // a cursor is repositioned after writes
	return nil
}

// CreatedURL returns the id of a URL created in this transaction. With
// a lookup in a read transaction begun before it (as the seeder does on
// other cores), it tells whether a URL is known without LookupURL.
func (t *Tx) CreatedURL(url string) (uint64, bool) {
	if t.created.n == 0 {
		return 0, false
	}
	return t.created.get(t.urlKeys().key(url))
}

// CreatedURLKey is CreatedURL for a URL whose key (URLKey) was computed
// ahead.
func (t *Tx) CreatedURLKey(key URLKey) (uint64, bool) {
	return t.created.get(key)
}

// URLKey returns url's key, for CreatedURLKey on any transaction of the
// same open Graph (the seeder's workers compute it in their read
// transactions for the write transaction). Safe for concurrent use.
func (t *Tx) URLKey(url string) URLKey { return t.urlKeys().key(url) }

// urlKeys returns the keyer of the transaction's URL keys.
func (t *Tx) urlKeys() *urlKeyer {
	if t.keys == nil {
		t.keys = newURLKeyer()
	}
	return t.keys
}

// LookupURL returns the id of a normalised URL.
func (t *Tx) LookupURL(url string) (uint64, bool) {
	if id, ok := t.CreatedURL(url); ok {
		return id, true
	}
	if t.urls == nil {
		t.urls = t.tx.Bucket(bucketURLs).Cursor()
	}
	k, v := t.urls.Seek(keyBytes(url))
	if k == nil || string(k) != url {
		return 0, false
	}
	return getU64(v), true
}

// AddURL gives a new normalised URL an id and a pending document record;
// for a known URL it returns the existing id and created=false.
func (t *Tx) AddURL(url string, site uint64, depth, found int) (id uint64, created bool, err error) {
	d, created, err := t.AddURLDoc(url, &Doc{Site: site, Depth: depth, State: StatePending, Found: found})
	if err != nil || !created {
		return d, created, err
	}
	return d, true, nil
}

// AddURLDoc gives a new normalised URL an id and stores d (with its ID
// and URL set) as its record; for a known URL it returns the existing id
// and created=false and leaves d alone. The record is encoded at once:
// the caller may reuse d.
func (t *Tx) AddURLDoc(url string, d *Doc) (id uint64, created bool, err error) {
	if id, ok := t.LookupURL(url); ok {
		return id, false, nil
	}
	return t.AddNewURLDoc(url, d)
}

// AddNewURLDoc is AddURLDoc for a URL the caller knows graph.db does not
// hold: neither a read transaction begun before this one (on the same
// open Graph, so no other process wrote since) nor CreatedURL found it.
// It skips the lookup; a URL added twice would break the urls ↔ docs
// invariant that Check verifies.
func (t *Tx) AddNewURLDoc(url string, d *Doc) (id uint64, created bool, err error) {
	id = t.counter(keyNextDoc) + 1
	if id > math.MaxUint32 {
		return 0, false, fmt.Errorf("add url %s: %w", url, ErrTooManyDocs)
	}
	if t.newDocs.len() == 0 {
		t.newBase = id
	}
	if id != t.newBase+uint64(t.newDocs.len()) {
		return 0, false, fmt.Errorf("add url %s: id %d does not follow the %d new documents from %d", url, id, t.newDocs.len(), t.newBase)
	}
	t.next(keyNextDoc)
	// url may be a substring of a larger string (a parsed record's line)
	// that the transaction would otherwise keep alive to its end.
	url = strings.Clone(url)
	t.created.put(t.urlKeys().key(url), id)
	t.unsorted.add(newURL{url: url, id: id})
	d.ID, d.URL = id, url
	t.newDocs.add(nil) // PutDoc keeps new documents in memory
	if err := t.PutDoc(d); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// ForEachSiteURL calls fn with every URL of a site ("http://host[:port]")
// and its id, in URL order. The urls bucket is sorted by URL and every
// normal URL of the site starts with key+"/", so this is a range scan
// that decodes no document.
func (t *Tx) ForEachSiteURL(siteKey string, fn func(url string, id uint64) error) error {
	if err := t.flushNew(); err != nil {
		return err
	}
	prefix := []byte(siteKey + "/")
	c := t.tx.Bucket(bucketURLs).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(string(k), getU64(v)); err != nil {
			return err
		}
	}
	return nil
}

// Doc reads a document record.
func (t *Tx) Doc(id uint64) (*Doc, error) {
	d := new(Doc)
	if err := t.ReadDoc(id, d); err != nil {
		return nil, err
	}
	return d, nil
}

// ReadDoc reads a document record into d, reusing d's memory where it
// can.
func (t *Tx) ReadDoc(id uint64, d *Doc) error {
	v, ok := t.newDoc(id)
	if !ok {
		v = t.tx.Bucket(bucketDocs).Get(u64(id))
	}
	if v == nil {
		return fmt.Errorf("doc %d: %w", id, ErrNotFound)
	}
	return decodeDoc(id, v, d)
}

// newDoc returns the record of a document created or rewritten in the
// transaction and not written yet.
func (t *Tx) newDoc(id uint64) ([]byte, bool) {
	if id >= t.newBase && id-t.newBase < uint64(t.newDocs.len()) {
		return *t.newDocs.at(int(id - t.newBase)), true
	}
	v, ok := t.docWrites[id]
	return v, ok
}

// DocSite returns the site id of a document, decoding no more of its
// record than that.
func (t *Tx) DocSite(id uint64) (uint64, error) {
	v, ok := t.newDoc(id)
	if !ok {
		v = t.tx.Bucket(bucketDocs).Get(u64(id))
	}
	if v == nil {
		return 0, fmt.Errorf("doc %d: %w", id, ErrNotFound)
	}
	return docSite(id, v)
}

// PutDoc writes a document record (binary, version 2) and keeps the
// frontier set in step with its state.
func (t *Tx) PutDoc(d *Doc) error {
	var v []byte
	v, t.scratch = encodeDoc(d, t.scratch)
	return t.putRecord(d.ID, v, d.InFrontier())
}

// encodeDoc returns the record of d in a fresh slice of its size
// (bbolt keeps the value until the commit), encoded in scratch first,
// which it returns for the next call: one allocation per record, with no
// spare capacity kept.
func encodeDoc(d *Doc, scratch []byte) (v, next []byte) {
	scratch = appendDoc(scratch[:0], d)
	return slices.Clone(scratch), scratch
}

// putRecord writes the encoded record v of document id, which is in the
// frontier or not, and keeps the frontier set in step.
func (t *Tx) putRecord(id uint64, v []byte, inFrontier bool) error {
	if id >= t.newBase && id-t.newBase < uint64(t.newDocs.len()) {
		*t.newDocs.at(int(id - t.newBase)) = v
	} else {
		t.holdDocWrite(id, v)
	}
	fr, err := t.frontierSet()
	if err != nil {
		return err
	}
	if inFrontier {
		if fr.CheckedAdd(uint32(id)) {
			t.frontierDirty = true
		}
	} else if fr.CheckedRemove(uint32(id)) {
		t.frontierDirty = true
	}
	return nil
}

// UpdateDocs reads the documents ids (distinct), calls update with the
// index in ids and the record of each, and writes the records that
// update says it changed; it returns their number. The records are decoded, updated
// and encoded on every core: update must be safe for concurrent use and
// must not use the transaction (it gets each index once, in no
// particular order), nor keep d or anything d holds after it returns: d
// is reused, and its strings share the stored record's memory. The reads
// and writes are the transaction's, in the order of ids.
func (t *Tx) UpdateDocs(ids []uint64, update func(i int, d *Doc) bool) (int, error) {
	vals := make([][]byte, len(ids))
	// held marks the records rewritten earlier in the transaction and
	// not written yet: they wait for their update instead of being
	// written ahead, then again.
	held := make([]bool, len(ids))
	docs := t.tx.Bucket(bucketDocs)
	for i, id := range ids {
		v, ok := t.newDoc(id)
		if !ok {
			v = docs.Get(u64(id))
		} else if _, ok := t.docWrites[id]; ok {
			delete(t.docWrites, id)
			held[i] = true
		}
		if v == nil {
			return 0, fmt.Errorf("doc %d: %w", id, ErrNotFound)
		}
		vals[i] = v
	}
	type result struct {
		v          []byte // nil: unchanged
		inFrontier bool
	}
	out := make([]result, len(ids))
	errs := make([]error, len(ids))
	path := t.tx.DB().Path()
	const block = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (len(ids)+block-1)/block) {
		wg.Go(func() {
			var d Doc
			var scratch []byte
			at := -1 // the record being decoded, for a panic's error
			if err := guard(path, func() error {
				for {
					start := int(next.Add(block) - block)
					if start >= len(ids) {
						return nil
					}
					for i := start; i < min(start+block, len(ids)); i++ {
						at = i
						// vals[i] stays as it is until the records are
						// written below: d may share its memory.
						if err := decodeDocView(ids[i], vals[i], &d); err != nil {
							errs[i] = err
							continue
						}
						if update(i, &d) {
							var v []byte
							v, scratch = encodeDoc(&d, scratch)
							out[i] = result{v: v, inFrontier: d.InFrontier()}
						}
					}
				}
			}); err != nil && at >= 0 {
				errs[at] = err
			}
		})
	}
	// Meanwhile the transaction writes on another goroutine what it has
	// gathered that the records are not (writeLinks: the new sites and
	// URLs, the in-links and the site graph, waiting for PrepareFlush's
	// part, if any), and on this one, once the records are updated, every
	// record and out-link set it holds.
	n := 0
	err := t.writeConcurrently(func() error {
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i, r := range out {
			if r.v == nil {
				if held[i] {
					t.holdDocWrite(ids[i], vals[i])
				}
				continue
			}
			if err := t.putRecord(ids[i], r.v, r.inFrontier); err != nil {
				return err
			}
			n++
		}
		return t.flushRecords()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// holdDocWrite keeps the record v of document id (from before the
// transaction) to be written with the others in id order; the frontier
// set is already in step with it.
func (t *Tx) holdDocWrite(id uint64, v []byte) {
	if t.docWrites == nil {
		t.docWrites = map[uint64][]byte{}
	}
	t.docWrites[id] = v
}

// ForEachDoc calls fn for every document in id order, each a fresh *Doc
// that fn may keep.
func (t *Tx) ForEachDoc(fn func(*Doc) error) error {
	if err := t.flushNew(); err != nil {
		return err
	}
	return t.tx.Bucket(bucketDocs).ForEach(func(k, v []byte) error {
		d := new(Doc)
		if err := decodeDoc(getU64(k), v, d); err != nil {
			return err
		}
		return fn(d)
	})
}
