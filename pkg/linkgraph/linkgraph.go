// Package linkgraph is the crawl's memory in graph.db (bbolt): every URL
// ever seen with its id and document record, every site, and the link
// graph as one roaring bitmap of out-link ids per document. Only the
// manager and the seeder open it, one at a time (bbolt's file lock).
//
// Buckets (docs/format/linkgraph.md):
//
//	meta     "version" → "1"; "next_doc", "next_site" → uint64 (8 bytes, big endian)
//	urls     normalised URL → doc id (8 bytes BE)
//	docs     doc id (8 bytes BE) → Doc (JSON)
//	sites    site key ("http://host[:port]") → site id (8 bytes BE)
//	siterec  site id (8 bytes BE) → Site (JSON)
//	out      doc id (8 bytes BE) → roaring bitmap of out-link doc ids (portable format)
//	batches  batch id (8 bytes BE) → BatchState (JSON)
package linkgraph

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bolt "go.etcd.io/bbolt"
)

// Version is the graph.db format version.
const Version = "1"

var (
	bucketMeta    = []byte("meta")
	bucketURLs    = []byte("urls")
	bucketDocs    = []byte("docs")
	bucketSites   = []byte("sites")
	bucketSiteRec = []byte("siterec")
	bucketOut     = []byte("out")
	bucketBatches = []byte("batches")
	// bucketIn holds in-link sets mirroring bucketOut (seeder).
	bucketIn = []byte("in")
	// bucketSiteLinks holds the site graph: site id → roaring set of
	// linked site ids (seeder).
	bucketSiteLinks = []byte("sitelinks")
	// bucketScores holds the manager's per-document estimator state
	// (OPIC cash and history, imported historical PageRank): doc id →
	// value, layout owned by pkg/manager.
	bucketScores = []byte("scores")
	allBuckets   = [][]byte{bucketMeta, bucketURLs, bucketDocs, bucketSites, bucketSiteRec, bucketOut, bucketBatches, bucketIn, bucketSiteLinks, bucketScores}

	keyVersion  = []byte("version")
	keyNextDoc  = []byte("next_doc")
	keyNextSite = []byte("next_site")
)

// Sentinel errors.
var (
	// ErrVersion means graph.db was written by an incompatible version.
	ErrVersion = errors.New("unsupported graph.db version")
	// ErrBusy means another process has graph.db open.
	ErrBusy = errors.New("graph.db is in use by another process")
	// ErrTooManyDocs means the 32-bit id space of the roaring bitmaps is full.
	ErrTooManyDocs = errors.New("too many documents for 32-bit ids")
)

// State is where a document stands in the crawl.
type State string

// Document states.
const (
	StatePending   State = "pending"   // known, never fetched, may be scheduled
	StateScheduled State = "scheduled" // in a batch that has not been seeded yet
	StateFetched   State = "fetched"   // fetched (any HTTP status); may be revisited
	StateFailed    State = "failed"    // the last attempt got no response
	StateExcluded  State = "excluded"  // robots.txt or a site cap forbids it; never scheduled
)

// Doc is what the crawl knows of one URL.
type Doc struct {
	ID        uint64    `json:"id"`
	URL       string    `json:"url"`
	Site      uint64    `json:"site"`
	Depth     int       `json:"depth"`            // links from the site's entry point (new sites start at 0)
	State     State     `json:"state"`            //
	Reason    string    `json:"reason,omitempty"` // why excluded or failed
	Batch     int       `json:"batch,omitempty"`  // batch that last scheduled it
	Found     int       `json:"found,omitempty"`  // batch in which it was discovered (0 = seed)
	Status    int       `json:"status,omitempty"` // last HTTP status
	Fetched   time.Time `json:"fetched,omitzero"` // last fetch
	Visits    int       `json:"visits,omitempty"` // fetches with a response
	Changes   int       `json:"changes,omitempty"`
	Hash      string    `json:"hash,omitempty"` // last text hash
	MIME      string    `json:"mime,omitempty"`
	Title     string    `json:"title,omitempty"`
	Redirect  string    `json:"redirect,omitempty"`
	Anchors   []string  `json:"anchors,omitempty"` // a few anchor texts of in-links (representational quality)
	NoIndex   bool      `json:"noindex,omitempty"`
	Canonical string    `json:"canonical,omitempty"`

	// FirstFetched is the first fetch with a response; with Fetched,
	// Visits and Changes it gives the manager the page's rate of change.
	FirstFetched time.Time `json:"firstFetched,omitzero"`
	// Failures counts the attempts in a row that got no response (reset
	// to 0 by a response); the manager stops scheduling a page that failed
	// too often.
	Failures int `json:"failures,omitempty"`
	// LastModified and ETag are the validators of the last response, sent
	// back on a revisit as a conditional GET.
	LastModified string `json:"lastModified,omitempty"`
	ETag         string `json:"etag,omitempty"`
	// History is the visit history, oldest first, at most MaxHistory
	// visits (the freshness estimator's input).
	History []Visit `json:"history,omitempty"`
}

// MaxHistory is the number of visits a document's History keeps.
const MaxHistory = 16

// Visit is one fetch of a document with a response.
type Visit struct {
	Time         time.Time `json:"t"`
	Status       int       `json:"s,omitempty"`
	Changed      bool      `json:"c,omitempty"`  // text hash differs from the previous visit
	LastModified string    `json:"lm,omitempty"` // Last-Modified header of the response
}

// Site is what the crawl knows of one site (scheme, host and port).
type Site struct {
	ID            uint64    `json:"id"`
	Key           string    `json:"key"` // scheme://host[:port]
	Pages         int       `json:"pages"`
	RobotsStatus  int       `json:"robotsStatus,omitempty"`
	RobotsBody    string    `json:"robotsBody,omitempty"`
	RobotsErr     string    `json:"robotsErr,omitempty"`
	RobotsFetched time.Time `json:"robotsFetched,omitzero"`
	// Server estimates measured by the harvester (Cao et al.: EWMA with
	// alpha 0.8), kept so the next batch can rank servers from the start.
	ConnectMs       float64   `json:"connectMs,omitempty"`
	ResponseMs      float64   `json:"responseMs,omitempty"`
	RequestsPerConn float64   `json:"requestsPerConn,omitempty"`
	EstimatesAt     time.Time `json:"estimatesAt,omitzero"`
}

// BatchState records what has happened to a batch in graph.db.
type BatchState struct {
	ID      int       `json:"id"`
	URLs    int       `json:"urls"`
	Managed time.Time `json:"managed,omitzero"`
	Seeded  time.Time `json:"seeded,omitzero"`
}

// Graph is an open graph.db.
type Graph struct {
	db       *bolt.DB
	readOnly bool
}

// Open opens (creating if needed, unless readOnly) the graph database at
// path. It waits at most timeout for another process's lock.
func Open(path string, readOnly bool, timeout time.Duration) (*Graph, error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: timeout, ReadOnly: readOnly, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	g := &Graph{db: db, readOnly: readOnly}
	if readOnly {
		err = db.View(func(tx *bolt.Tx) error { return checkVersion(tx, path) })
	} else {
		err = db.Update(func(tx *bolt.Tx) error {
			for _, b := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			m := tx.Bucket(bucketMeta)
			if m.Get(keyVersion) == nil {
				return m.Put(keyVersion, []byte(Version))
			}
			return checkVersion(tx, path)
		})
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return g, nil
}

func checkVersion(tx *bolt.Tx, path string) error {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return fmt.Errorf("%w: %s has no meta bucket", ErrVersion, path)
	}
	if v := string(m.Get(keyVersion)); v != Version {
		return fmt.Errorf("%w: %q (this program reads %s)", ErrVersion, v, Version)
	}
	return nil
}

// Close closes the database.
func (g *Graph) Close() error { return g.db.Close() }

// View runs fn in a read-only transaction.
func (g *Graph) View(fn func(*Tx) error) error {
	return g.db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// Update runs fn in a read-write transaction, committed atomically when
// fn returns nil.
func (g *Graph) Update(fn func(*Tx) error) error {
	return g.db.Update(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
}

// Tx is a transaction on the graph.
type Tx struct {
	tx *bolt.Tx
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

func (t *Tx) next(key []byte) (uint64, error) {
	m := t.tx.Bucket(bucketMeta)
	n := getU64(m.Get(key)) + 1
	return n, m.Put(key, u64(n))
}

// LookupURL returns the id of a normalised URL.
func (t *Tx) LookupURL(url string) (uint64, bool) {
	v := t.tx.Bucket(bucketURLs).Get([]byte(url))
	if v == nil {
		return 0, false
	}
	return getU64(v), true
}

// AddURL gives a new normalised URL an id and a pending document record;
// for a known URL it returns the existing id and created=false.
func (t *Tx) AddURL(url string, site uint64, depth, found int) (id uint64, created bool, err error) {
	if id, ok := t.LookupURL(url); ok {
		return id, false, nil
	}
	id, err = t.next(keyNextDoc)
	if err != nil {
		return 0, false, fmt.Errorf("add url %s: %w", url, err)
	}
	if id > math.MaxUint32 {
		return 0, false, fmt.Errorf("add url %s: %w", url, ErrTooManyDocs)
	}
	if err := t.tx.Bucket(bucketURLs).Put([]byte(url), u64(id)); err != nil {
		return 0, false, fmt.Errorf("add url %s: %w", url, err)
	}
	d := Doc{ID: id, URL: url, Site: site, Depth: depth, State: StatePending, Found: found}
	if err := t.PutDoc(&d); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// ForEachSiteURL calls fn with every URL of a site ("http://host[:port]")
// and its id, in URL order. The urls bucket is sorted by URL and every
// normal URL of the site starts with key+"/", so this is a range scan
// that decodes no document.
func (t *Tx) ForEachSiteURL(siteKey string, fn func(url string, id uint64) error) error {
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
	v := t.tx.Bucket(bucketDocs).Get(u64(id))
	if v == nil {
		return nil, fmt.Errorf("doc %d: not found", id)
	}
	var d Doc
	if err := json.Unmarshal(v, &d); err != nil {
		return nil, fmt.Errorf("doc %d: %w", id, err)
	}
	return &d, nil
}

// PutDoc writes a document record.
func (t *Tx) PutDoc(d *Doc) error {
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("put doc %d: %w", d.ID, err)
	}
	if err := t.tx.Bucket(bucketDocs).Put(u64(d.ID), v); err != nil {
		return fmt.Errorf("put doc %d: %w", d.ID, err)
	}
	return nil
}

// ForEachDoc calls fn for every document in id order.
func (t *Tx) ForEachDoc(fn func(*Doc) error) error {
	return t.tx.Bucket(bucketDocs).ForEach(func(k, v []byte) error {
		var d Doc
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("doc %d: %w", getU64(k), err)
		}
		return fn(&d)
	})
}

// SiteID returns the id of a site key.
func (t *Tx) SiteID(key string) (uint64, bool) {
	v := t.tx.Bucket(bucketSites).Get([]byte(key))
	if v == nil {
		return 0, false
	}
	return getU64(v), true
}

// AddSite gives a new site key an id; for a known key it returns the
// existing id.
func (t *Tx) AddSite(key string) (id uint64, created bool, err error) {
	if id, ok := t.SiteID(key); ok {
		return id, false, nil
	}
	if id, err = t.next(keyNextSite); err != nil {
		return 0, false, fmt.Errorf("add site %s: %w", key, err)
	}
	if err := t.tx.Bucket(bucketSites).Put([]byte(key), u64(id)); err != nil {
		return 0, false, fmt.Errorf("add site %s: %w", key, err)
	}
	return id, true, t.PutSite(&Site{ID: id, Key: key})
}

// Site reads a site record.
func (t *Tx) Site(id uint64) (*Site, error) {
	v := t.tx.Bucket(bucketSiteRec).Get(u64(id))
	if v == nil {
		return nil, fmt.Errorf("site %d: not found", id)
	}
	var s Site
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("site %d: %w", id, err)
	}
	return &s, nil
}

// PutSite writes a site record.
func (t *Tx) PutSite(s *Site) error {
	v, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("put site %d: %w", s.ID, err)
	}
	if err := t.tx.Bucket(bucketSiteRec).Put(u64(s.ID), v); err != nil {
		return fmt.Errorf("put site %d: %w", s.ID, err)
	}
	return nil
}

// ForEachSite calls fn for every site in id order.
func (t *Tx) ForEachSite(fn func(*Site) error) error {
	return t.tx.Bucket(bucketSiteRec).ForEach(func(k, v []byte) error {
		var s Site
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("site %d: %w", getU64(k), err)
		}
		return fn(&s)
	})
}

// OutLinks returns a copy of the out-link set of a document (empty if it
// has none), safe to keep after the transaction.
func (t *Tx) OutLinks(id uint64) (*roaring.Bitmap, error) {
	bm := roaring.New()
	v := t.tx.Bucket(bucketOut).Get(u64(id))
	if v == nil {
		return bm, nil
	}
	if err := bm.UnmarshalBinary(v); err != nil {
		return nil, fmt.Errorf("out-links of doc %d: %w", id, err)
	}
	return bm, nil
}

// SetOutLinks replaces the out-link set of a document.
func (t *Tx) SetOutLinks(id uint64, bm *roaring.Bitmap) error {
	bm.RunOptimize()
	v, err := bm.ToBytes()
	if err != nil {
		return fmt.Errorf("out-links of doc %d: %w", id, err)
	}
	if err := t.tx.Bucket(bucketOut).Put(u64(id), v); err != nil {
		return fmt.Errorf("out-links of doc %d: %w", id, err)
	}
	return nil
}

// ForEachOutLinks calls fn with every document that has out-links, in id
// order; bm is a fresh copy.
func (t *Tx) ForEachOutLinks(fn func(id uint64, bm *roaring.Bitmap) error) error {
	return t.tx.Bucket(bucketOut).ForEach(func(k, v []byte) error {
		bm := roaring.New()
		if err := bm.UnmarshalBinary(v); err != nil {
			return fmt.Errorf("out-links of doc %d: %w", getU64(k), err)
		}
		return fn(getU64(k), bm)
	})
}

// Batch reads what graph.db records of a batch.
func (t *Tx) Batch(id int) (BatchState, bool, error) {
	v := t.tx.Bucket(bucketBatches).Get(u64(uint64(id)))
	if v == nil {
		return BatchState{ID: id}, false, nil
	}
	var b BatchState
	if err := json.Unmarshal(v, &b); err != nil {
		return b, false, fmt.Errorf("batch %d state: %w", id, err)
	}
	return b, true, nil
}

// PutBatch records the state of a batch.
func (t *Tx) PutBatch(b BatchState) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("batch %d state: %w", b.ID, err)
	}
	return t.tx.Bucket(bucketBatches).Put(u64(uint64(b.ID)), v)
}

// DeleteBatch forgets a batch (used when the manager cancels it).
func (t *Tx) DeleteBatch(id int) error {
	return t.tx.Bucket(bucketBatches).Delete(u64(uint64(id)))
}

// Stats counts what the graph holds.
type Stats struct {
	Docs    int           `json:"docs"`
	Sites   int           `json:"sites"`
	Links   uint64        `json:"links"`
	ByState map[State]int `json:"byState"`
}

// Stats counts documents by state, sites and links.
func (t *Tx) Stats() (Stats, error) {
	s := Stats{ByState: map[State]int{}}
	err := t.ForEachDoc(func(d *Doc) error {
		s.Docs++
		s.ByState[d.State]++
		return nil
	})
	if err != nil {
		return s, err
	}
	s.Sites = t.tx.Bucket(bucketSites).Stats().KeyN
	err = t.ForEachOutLinks(func(_ uint64, bm *roaring.Bitmap) error {
		s.Links += bm.GetCardinality()
		return nil
	})
	return s, err
}

// Check verifies the graph's invariants and returns every violation found
// (at most limit): each URL maps to a document with that URL, ids are
// below the counters, every document's site exists, every out-link points
// to an existing document.
func (t *Tx) Check(limit int) []error {
	var errs []error
	add := func(format string, args ...any) bool {
		errs = append(errs, fmt.Errorf(format, args...))
		return len(errs) < limit
	}
	nextDoc := getU64(t.tx.Bucket(bucketMeta).Get(keyNextDoc))
	nextSite := getU64(t.tx.Bucket(bucketMeta).Get(keyNextSite))
	docs := t.tx.Bucket(bucketDocs)
	urlCount := 0
	stop := errors.New("stop")
	err := t.tx.Bucket(bucketURLs).ForEach(func(k, v []byte) error {
		urlCount++
		id := getU64(v)
		d, err := t.Doc(id)
		if err != nil {
			if !add("url %s: id %d has no document", k, id) {
				return stop
			}
			return nil
		}
		if d.URL != string(k) && !add("url %s: document %d has url %s", k, id, d.URL) {
			return stop
		}
		if id > nextDoc && !add("url %s: id %d above counter %d", k, id, nextDoc) {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		errs = append(errs, err)
	}
	if n := docs.Stats().KeyN; n != urlCount && len(errs) < limit {
		errs = append(errs, fmt.Errorf("%d documents but %d urls", n, urlCount))
	}
	err = t.ForEachDoc(func(d *Doc) error {
		if d.Site == 0 || d.Site > nextSite {
			if !add("doc %d: site %d does not exist", d.ID, d.Site) {
				return stop
			}
		}
		return nil
	})
	if err != nil && err != stop {
		errs = append(errs, err)
	}
	err = t.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		if docs.Get(u64(id)) == nil && !add("out-links of missing doc %d", id) {
			return stop
		}
		if !bm.IsEmpty() && uint64(bm.Maximum()) > nextDoc && !add("doc %d links to id %d above counter %d", id, bm.Maximum(), nextDoc) {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		errs = append(errs, err)
	}
	return errs
}
