package linkgraph

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/wirecrawl/wire/pkg/capture"
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

	// Sitemap marks a sitemap (or sitemap index, or feed): the manager
	// schedules it as a batch entry of kind sitemap and the gatherer reads
	// its URLs (docs/sitemaps.md).
	Sitemap bool `json:"sitemap,omitempty"`
	// Source names where a URL first came from when it was not a page's
	// link: "sitemap URL" (listed by that sitemap), "robots URL" (a
	// robots.txt Sitemap: line), "probe" (/sitemap.xml tried by
	// seeder.sitemap_probe); empty for seeds and links.
	Source string `json:"source,omitempty"`
	// SitemapLastMod is the newest <lastmod> a trusted sitemap gave for
	// the URL; newer than Fetched, the stored copy is stale.
	SitemapLastMod time.Time `json:"sitemapLastmod,omitzero"`
	// ChangeFreq is the URL's <changefreq> in its sitemap (a weak hint).
	ChangeFreq string `json:"changefreq,omitempty"`
	// Priority is the URL's <priority> in its sitemap plus one (0: none),
	// so the zero value means absent.
	Priority float64 `json:"priority,omitempty"`
	// Simhash is the similarity fingerprint of the last fetched text
	// (docs.jsonl's simhash; 0 for none).
	Simhash uint64 `json:"simhash,omitempty"`
	// SimhashVersion is the version of the fingerprint scheme of Simhash
	// (pkg/simhash's Version, docs.jsonl's parsed.Doc.SimhashVersion):
	// fingerprints of two versions are never compared. Records written
	// before it was recorded, and records whose Simhash is set with
	// SimhashVersion 0 or 1, read as version 1; without a Simhash it is 0.
	SimhashVersion int `json:"simhashVersion,omitempty"`
	// NearDup is the id of a fetched page this one is a near-duplicate of
	// (simhash within simhash.Distance), or that its rel=canonical names;
	// 0 for none. The manager lowers the value of such a page.
	NearDup uint64 `json:"nearDup,omitempty"`
	// Capture is the page's stored capture: the WARC response record of
	// its last 2xx response stored whole (its record id, date and
	// payload digest, from docs.jsonl). A revisit (a 304, or a 2xx with
	// the same payload) leaves it as it is, so it always names a record
	// that holds the payload; the manager writes it into the batch and
	// the harvester's revisit records refer to it (issue 37). Zero when
	// none is known: never fetched whole, or fetched before captures
	// were recorded (seeder captures fills those in).
	Capture capture.Capture `json:"capture,omitzero"`
}

// HasFetchedCopy tells whether the collection holds a fetched copy of
// the page: it is fetched, or it failed (or is scheduled again) after
// having been fetched.
func (d *Doc) HasFetchedCopy() bool {
	switch d.State {
	case StateFetched:
		return true
	case StateFailed, StateScheduled:
		return d.Visits > 0 && !d.Fetched.IsZero()
	}
	return false
}

// SitemapPriority returns the URL's sitemap <priority> and whether its
// sitemap gave one.
func (d *Doc) SitemapPriority() (float64, bool) {
	return math.Round((d.Priority-1)*1000) / 1000, d.Priority > 0
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

// InFrontier tells whether the document is in the frontier: known and
// never attempted, waiting to be fetched (pending, or scheduled for its
// first fetch). Excluded documents, fetched ones and ones that failed are
// not. graph.db keeps the set of these ids (Tx.Frontier).
func (d *Doc) InFrontier() bool {
	switch d.State {
	case StatePending:
		return true
	case StateScheduled:
		return d.Visits == 0 && d.Failures == 0
	}
	return false
}

// AddVisit appends a visit to the history, dropping the oldest beyond
// MaxHistory.
func (d *Doc) AddVisit(v Visit) {
	d.History = append(d.History, v)
	if n := len(d.History) - MaxHistory; n > 0 {
		d.History = append(d.History[:0], d.History[n:]...)
	}
}

// docRecordV2 is the first byte of a binary document record (format
// version 2). Version 1 records are JSON objects and start with '{'.
const docRecordV2 = 2

// stateCodes are the one-byte codes of the known states in a binary
// record; code 0 is followed by the state as a string.
var stateCodes = map[State]byte{StatePending: 1, StateScheduled: 2, StateFetched: 3, StateFailed: 4, StateExcluded: 5}

var codeStates = [...]State{1: StatePending, 2: StateScheduled, 3: StateFetched, 4: StateFailed, 5: StateExcluded}

// appendDoc appends the binary record of d (docs/format/linkgraph.md,
// "Doc records"). The id is the key and is not repeated.
func appendDoc(b []byte, d *Doc) []byte {
	b = append(b, docRecordV2)
	b = binary.AppendUvarint(b, d.Site)
	if c, ok := stateCodes[d.State]; ok {
		b = append(b, c)
	} else {
		b = append(b, 0)
		b = appendString(b, string(d.State))
	}
	for _, v := range [...]int{d.Depth, d.Batch, d.Found, d.Status, d.Visits, d.Changes, d.Failures} {
		b = binary.AppendVarint(b, int64(v))
	}
	b = appendTime(b, d.Fetched)
	b = appendTime(b, d.FirstFetched)
	var flags byte
	if d.NoIndex {
		flags |= 1
	}
	b = append(b, flags)
	for _, s := range [...]string{d.URL, d.Reason, d.Hash, d.MIME, d.Title, d.Redirect, d.Canonical, d.LastModified, d.ETag} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Anchors)))
	for _, a := range d.Anchors {
		b = appendString(b, a)
	}
	b = binary.AppendUvarint(b, uint64(len(d.History)))
	for _, v := range d.History {
		b = appendTime(b, v.Time)
		b = binary.AppendVarint(b, int64(v.Status))
		c := byte(0)
		if v.Changed {
			c = 1
		}
		b = append(b, c)
		b = appendString(b, v.LastModified)
	}
	// Fields appended later, in sections, each written only when it or a
	// later one is set, so that the records of other documents keep
	// their bytes (older records end before them and read as zero).
	// Section 1, sitemaps (issue 19):
	captured := !d.Capture.IsZero()
	version := d.Simhash != 0 && d.SimhashVersion > 1 || captured
	later := d.Simhash != 0 || d.NearDup != 0 || version
	if d.Sitemap || d.Source != "" || !d.SitemapLastMod.IsZero() || d.ChangeFreq != "" || d.Priority != 0 || later {
		var f byte
		if d.Sitemap {
			f |= 1
		}
		b = append(b, f)
		b = appendString(b, d.Source)
		b = appendTime(b, d.SitemapLastMod)
		b = appendString(b, d.ChangeFreq)
		b = binary.AppendUvarint(b, uint64(math.Round(d.Priority*1000)))
	}
	// Section 2, near-duplicates (issue 20):
	if later {
		b = binary.LittleEndian.AppendUint64(b, d.Simhash)
		b = binary.AppendUvarint(b, d.NearDup)
	}
	// Section 3, the simhash's version when not 1 (simhash version 2,
	// 2026-11-28), or when section 4 follows:
	if version {
		b = binary.AppendUvarint(b, uint64(d.SimhashVersion))
	}
	// Section 4, the stored capture (issue 37):
	if captured {
		b = appendString(b, d.Capture.ID)
		b = appendTime(b, d.Capture.Date)
		b = appendString(b, d.Capture.Digest)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime writes a time as nanoseconds since 1970 (varint); the zero
// time is 0.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

// decoder reads a binary record; the first error sticks.
type decoder struct {
	b   []byte
	err error
	// view makes the strings share the record's memory instead of
	// copying it (decodeDocView).
	view bool
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated %s", ErrCorrupt, what)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) string(what string) string {
	n := d.uvarint(what)
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail(what)
		return ""
	}
	var s string
	if d.view {
		s = unsafe.String(unsafe.SliceData(d.b), int(n))
	} else {
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
}

func (d *decoder) time(what string) time.Time {
	n := d.varint(what)
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// decodeDoc reads a document record of either version into d.
func decodeDoc(id uint64, v []byte, d *Doc) error {
	return decodeRecord(id, v, d, false)
}

// decodeDocView is decodeDoc for a record that is only looked at and
// encoded again while v stays unchanged: d's strings share v's memory
// (none is copied), and d's Anchors and History reuse their arrays.
func decodeDocView(id uint64, v []byte, d *Doc) error {
	return decodeRecord(id, v, d, true)
}

// decodeRecord is decodeDoc, with view as in decodeDocView.
func decodeRecord(id uint64, v []byte, d *Doc, view bool) error {
	if len(v) > 0 && v[0] == '{' {
		*d = Doc{}
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("doc %d: %w: %w", id, ErrCorrupt, err)
		}
		d.ID = id
		d.SimhashVersion = simhashVersion(d.Simhash, d.SimhashVersion)
		return nil
	}
	if len(v) == 0 || v[0] != docRecordV2 {
		return fmt.Errorf("doc %d: %w: unknown record version", id, ErrCorrupt)
	}
	dec := decoder{b: v[1:], view: view}
	anchors, history := d.Anchors[:0], d.History[:0]
	*d = Doc{ID: id}
	if !view {
		anchors, history = nil, nil
	}
	d.Site = dec.uvarint("site")
	if c := dec.byte("state"); c == 0 {
		d.State = State(dec.string("state"))
	} else if int(c) < len(codeStates) {
		d.State = codeStates[c]
	} else {
		return fmt.Errorf("doc %d: %w: unknown state code %d", id, ErrCorrupt, c)
	}
	for _, p := range [...]*int{&d.Depth, &d.Batch, &d.Found, &d.Status, &d.Visits, &d.Changes, &d.Failures} {
		*p = int(dec.varint("counter"))
	}
	d.Fetched = dec.time("fetched")
	d.FirstFetched = dec.time("firstFetched")
	d.NoIndex = dec.byte("flags")&1 != 0
	for _, p := range [...]*string{&d.URL, &d.Reason, &d.Hash, &d.MIME, &d.Title, &d.Redirect, &d.Canonical, &d.LastModified, &d.ETag} {
		*p = dec.string("string field")
	}
	if n := dec.uvarint("anchors"); n > 0 && dec.err == nil {
		if n > uint64(len(dec.b)) {
			dec.fail("anchors")
		} else {
			d.Anchors = slices.Grow(anchors, int(n))[:n]
			for i := range d.Anchors {
				d.Anchors[i] = dec.string("anchor")
			}
		}
	}
	if n := dec.uvarint("history"); n > 0 && dec.err == nil {
		if n > uint64(len(dec.b)) {
			dec.fail("history")
		} else {
			d.History = slices.Grow(history, int(n))[:n]
			for i := range d.History {
				h := &d.History[i]
				h.Time = dec.time("visit time")
				h.Status = int(dec.varint("visit status"))
				h.Changed = dec.byte("visit changed") != 0
				h.LastModified = dec.string("visit last-modified")
			}
		}
	}
	if dec.err != nil {
		return fmt.Errorf("doc %d: %w", id, dec.err)
	}
	// Fields appended to the format later go here, each read only while
	// bytes remain (older records end before them and read as zero).
	if len(dec.b) > 0 {
		d.Sitemap = dec.byte("sitemap flags")&1 != 0
		d.Source = dec.string("source")
		d.SitemapLastMod = dec.time("sitemap lastmod")
		d.ChangeFreq = dec.string("changefreq")
		d.Priority = float64(dec.uvarint("priority")) / 1000
		if dec.err == nil && len(dec.b) > 0 {
			if len(dec.b) < 8 {
				return fmt.Errorf("doc %d: %w: truncated simhash", id, ErrCorrupt)
			}
			d.Simhash = binary.LittleEndian.Uint64(dec.b)
			dec.b = dec.b[8:]
			d.NearDup = dec.uvarint("nearDup")
			if dec.err == nil && len(dec.b) > 0 {
				d.SimhashVersion = int(dec.uvarint("simhash version"))
			}
			if dec.err == nil && len(dec.b) > 0 {
				d.Capture.ID = dec.string("capture id")
				d.Capture.Date = dec.time("capture date")
				d.Capture.Digest = dec.string("capture digest")
			}
		}
		if dec.err != nil {
			return fmt.Errorf("doc %d: %w", id, dec.err)
		}
	}
	d.SimhashVersion = simhashVersion(d.Simhash, d.SimhashVersion)
	return nil
}

// simhashVersion is the version of a record's simhash fp, v as recorded:
// 0 without a fingerprint, 1 for one recorded without a version (the
// records written before versions were).
func simhashVersion(fp uint64, v int) int {
	switch {
	case fp == 0:
		return 0
	case v < 1:
		return 1
	}
	return v
}

// docSite reads only the site id of a document record.
func docSite(id uint64, v []byte) (uint64, error) {
	if len(v) > 1 && v[0] == docRecordV2 {
		s, n := binary.Uvarint(v[1:])
		if n <= 0 {
			return 0, fmt.Errorf("doc %d: %w: truncated site", id, ErrCorrupt)
		}
		return s, nil
	}
	var d Doc
	if err := decodeDoc(id, v, &d); err != nil {
		return 0, err
	}
	return d.Site, nil
}
