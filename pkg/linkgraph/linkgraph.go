// Package linkgraph is the crawl's memory in graph.db (bbolt): every URL
// ever seen with its id and document record, every site, the link graph
// as roaring bitmaps of out-links and in-links per document, the site
// graph, the frontier set and the files of parked links. Only the manager
// and the seeder open it, one at a time (bbolt's file lock).
//
// Buckets (docs/format/linkgraph.md):
//
//	meta      "version" → "2"; "next_doc", "next_site", "next_park" → uint64 (8 bytes BE);
//	          "frontier" → roaring bitmap of the ids of frontier documents
//	urls      normalised URL → doc id (8 bytes BE)
//	docs      doc id (8 bytes BE) → Doc (binary record; version 1 JSON still read)
//	sites     site key ("http://host[:port]") → site id (8 bytes BE)
//	siterec   site id (8 bytes BE) → Site (JSON)
//	out       doc id → roaring bitmap of out-link doc ids (portable format)
//	in        doc id → roaring bitmap of in-link doc ids, mirroring out
//	sitelinks site id → linked site ids (roaring) and link counts
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
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bolt "go.etcd.io/bbolt"
)

// Version is the graph.db format version this package writes.
const Version = "2"

// versionV1 is the previous format: JSON document records, no in-links,
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
	// legacy is set for a version 1 file opened read-only: it has no
	// in-links, site graph or frontier set.
	legacy bool
}

// Open opens (creating if needed, unless readOnly) the graph database at
// path. It waits at most timeout for another process's lock. Opened for
// writing, a version 1 file is upgraded to version 2 in one transaction
// (in-links, site graph and frontier set are built from the out-links and
// documents); read-only, it is read as it is.
func Open(path string, readOnly bool, timeout time.Duration) (*Graph, error) {
	db, err := bolt.Open(path, 0o644, BoltOptions(readOnly, timeout))
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	g := &Graph{db: db, readOnly: readOnly}
	if readOnly {
		err = db.View(func(tx *bolt.Tx) error {
			v, err := checkVersion(tx)
			g.legacy = v == versionV1
			return err
		})
	} else {
		err = db.Update(func(btx *bolt.Tx) error {
			for _, b := range allBuckets {
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
			if err != nil || v == Version {
				return err
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
func BoltOptions(readOnly bool, timeout time.Duration) *bolt.Options {
	return &bolt.Options{Timeout: timeout, ReadOnly: readOnly, NoFreelistSync: true, FreelistType: bolt.FreelistMapType, InitialMmapSize: initialMmapSize}
}

func checkVersion(tx *bolt.Tx) (string, error) {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return "", fmt.Errorf("%w: no meta bucket", ErrVersion)
	}
	v := string(m.Get(keyVersion))
	if v != Version && v != versionV1 {
		return v, fmt.Errorf("%w: %q (this program reads %s and %s)", ErrVersion, v, versionV1, Version)
	}
	return v, nil
}

// upgrade turns a version 1 file into version 2: it builds the in-links
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
			t.inAdd = append(t.inAdd, uint64(dst)<<32|uint64(src))
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
func (g *Graph) View(fn func(*Tx) error) error {
	return g.db.View(func(btx *bolt.Tx) error {
		t := newTx(btx)
		t.legacy = g.legacy
		return fn(t)
	})
}

// Update runs fn in a read-write transaction, committed atomically when
// fn returns nil. Changes that the transaction gathers in memory (id
// counters, in-links, the site graph, the frontier set) are written
// before the commit.
func (g *Graph) Update(fn func(*Tx) error) error {
	return g.db.Update(func(btx *bolt.Tx) error {
		t := newTx(btx)
		if err := fn(t); err != nil {
			return err
		}
		return t.flush()
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
	newURLs  map[string]uint64 // every URL created in the transaction
	unsorted []string          // those of them not written yet
	newDocs  map[uint64][]byte // records of new documents not written yet (encoded: few pointers for the GC)
	newSites map[string]uint64 // site keys created in the transaction, not written yet
	newOut   map[uint64][]byte // out-link sets stored in the transaction, not written yet
	urls     *bolt.Cursor      // reused for lookups (bbolt's Get allocates a cursor)

	frontier      *roaring.Bitmap // loaded on first use
	frontierDirty bool

	// In-link changes (target<<32 | source), applied grouped by target
	// by flushLinks.
	inAdd, inDel []uint64
	// Site graph changes: (source site, target site) → link count delta.
	siteDeltas map[[2]uint32]int64
}

func newTx(btx *bolt.Tx) *Tx { return &Tx{tx: btx} }

// flush writes what the transaction gathered in memory.
func (t *Tx) flush() error {
	if err := t.flushNew(); err != nil {
		return err
	}
	m := t.tx.Bucket(bucketMeta)
	for k, v := range t.counters {
		if err := m.Put([]byte(k), u64(v)); err != nil {
			return fmt.Errorf("write counter %s: %w", k, err)
		}
	}
	t.counters = nil
	if err := t.flushLinks(); err != nil {
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
// transaction: site and URL keys in sorted order, documents in id order.
func (t *Tx) flushNew() error {
	if len(t.newSites) > 0 {
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
	}
	if err := t.flushOut(); err != nil {
		return err
	}
	if len(t.unsorted) == 0 && len(t.newDocs) == 0 {
		return nil
	}
	keys := t.unsorted
	slices.Sort(keys)
	urls := t.tx.Bucket(bucketURLs)
	for _, u := range keys {
		if err := urls.Put([]byte(u), u64(t.newURLs[u])); err != nil {
			return fmt.Errorf("add url %s: %w", u, err)
		}
	}
	ids := make([]uint64, 0, len(t.newDocs))
	for id := range t.newDocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	docs := t.tx.Bucket(bucketDocs)
	for _, id := range ids {
		if err := docs.Put(u64(id), t.newDocs[id]); err != nil {
			return fmt.Errorf("put doc %d: %w", id, err)
		}
	}
	t.unsorted, t.newDocs, t.urls = nil, nil, nil
	return nil
}

// CreatedURL returns the id of a URL created in this transaction. With
// a lookup in a read transaction begun before it (as the seeder does on
// other cores), it tells whether a URL is known without LookupURL.
func (t *Tx) CreatedURL(url string) (uint64, bool) {
	id, ok := t.newURLs[url]
	return id, ok
}

// LookupURL returns the id of a normalised URL.
func (t *Tx) LookupURL(url string) (uint64, bool) {
	if id, ok := t.newURLs[url]; ok {
		return id, true
	}
	if t.urls == nil {
		t.urls = t.tx.Bucket(bucketURLs).Cursor()
	}
	k, v := t.urls.Seek([]byte(url))
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
// and created=false and leaves d alone.
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
	t.next(keyNextDoc)
	if t.newURLs == nil {
		t.newURLs = map[string]uint64{}
	}
	if t.newDocs == nil {
		t.newDocs = map[uint64][]byte{}
	}
	t.newURLs[url] = id
	t.unsorted = append(t.unsorted, url)
	d.ID, d.URL = id, url
	t.newDocs[id] = nil // PutDoc keeps new documents in memory
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
	v, ok := t.newDocs[id]
	if !ok {
		v = t.tx.Bucket(bucketDocs).Get(u64(id))
	}
	if v == nil {
		return fmt.Errorf("doc %d: %w", id, ErrNotFound)
	}
	return decodeDoc(id, v, d)
}

// DocSite returns the site id of a document, decoding no more of its
// record than that.
func (t *Tx) DocSite(id uint64) (uint64, error) {
	v, ok := t.newDocs[id]
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
	// bbolt keeps the value until the commit: a fresh slice each time.
	v := appendDoc(make([]byte, 0, 64+len(d.URL)+len(d.Title)), d)
	if _, ok := t.newDocs[d.ID]; ok {
		t.newDocs[d.ID] = v
	} else if err := t.tx.Bucket(bucketDocs).Put(u64(d.ID), v); err != nil {
		return fmt.Errorf("put doc %d: %w", d.ID, err)
	}
	fr, err := t.frontierSet()
	if err != nil {
		return err
	}
	if d.InFrontier() {
		if fr.CheckedAdd(uint32(d.ID)) {
			t.frontierDirty = true
		}
	} else if fr.CheckedRemove(uint32(d.ID)) {
		t.frontierDirty = true
	}
	return nil
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
