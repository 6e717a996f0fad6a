package linkgraph

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/wirecrawl/wire/pkg/capture"
)

type bboltTx = bolt.Tx

var t0 = time.Date(2026, 11, 22, 1, 2, 3, 456789, time.UTC)

func fullDoc() *Doc {
	return &Doc{
		ID: 7, URL: "http://a.cl/ñ?x=1", Site: 3, Depth: 4, State: StateFetched, Reason: "parse: bad", Batch: 12, Found: 2,
		Status: 200, Fetched: t0, Visits: 3, Changes: 1, Hash: "abc123", MIME: "text/html", Title: "Título",
		Redirect: "http://a.cl/r", Anchors: []string{"uno", "dos"}, NoIndex: true, Canonical: "http://a.cl/c",
		FirstFetched: t0.Add(-time.Hour), Failures: 0, LastModified: "Sun, 22 Nov 2026 00:00:00 GMT", ETag: `"e1"`,
		History: []Visit{{Time: t0.Add(-time.Hour), Status: 200}, {Time: t0, Status: 304, Changed: true, LastModified: "x"}},
		Sitemap: true, Source: "sitemap http://a.cl/sitemap.xml", SitemapLastMod: t0.Add(time.Minute), ChangeFreq: "daily", Priority: 1.8,
		Simhash: 0x8f3a00c2e41d9b07, NearDup: 5, SimhashVersion: 2,
		Capture: capture.Capture{ID: "<urn:uuid:6f1c9a52-3b7e-4d0a-8c2f-9e4b1a7d5c30>", Date: time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC), Digest: "sha1:2CKOYS3I5ZUQAPJ3NS2JSLWOBOV6DEYG"},
	}
}

// Every field of Doc must survive the binary record: a field added to
// Doc without adding it to appendDoc and decodeDoc fails here.
func TestDocRoundTrip(t *testing.T) {
	d := fullDoc()
	v := reflect.ValueOf(*d)
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() && v.Type().Field(i).Name != "Failures" {
			t.Errorf("fullDoc leaves %s zero: give it a value so the round trip covers it", v.Type().Field(i).Name)
		}
	}
	var got Doc
	if err := decodeDoc(7, appendDoc(nil, d), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, d) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, *d)
	}
	// A record without the fields appended by issue 20 (simhash, nearDup,
	// the simhash's version) is the record of before, and reads them as
	// zero.
	old := fullDoc()
	old.Simhash, old.NearDup, old.SimhashVersion, old.Capture = 0, 0, 0, capture.Capture{}
	rec := appendDoc(nil, old)
	noCapture := fullDoc()
	noCapture.Capture = capture.Capture{}
	if full := appendDoc(nil, noCapture); len(full) != len(rec)+10 {
		t.Errorf("the appended fields take %d bytes, want 10", len(full)-len(rec))
	}
	if err := decodeDoc(7, rec, &got); err != nil || !reflect.DeepEqual(&got, old) {
		t.Errorf("record without simhash: %+v, %v", got, err)
	}
	if err := decodeDoc(7, append(rec, 1, 2), &got); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated simhash: %v", err)
	}
	// A near-duplicate that is no sitemap entry: section 1 is written
	// zero so that section 2 can follow, and both read back.
	nd := &Doc{ID: 3, URL: "http://a.cl/nd", State: StateFetched, Simhash: 42, NearDup: 9, SimhashVersion: 2}
	if err := decodeDoc(3, appendDoc(nil, nd), &got); err != nil || !reflect.DeepEqual(&got, nd) {
		t.Errorf("near-duplicate without sitemap fields: %+v, %v", got, err)
	}
	// The record of a fingerprint of version 1, as written before the
	// version was recorded (section 2 ends it): it loads, of version 1,
	// and is written again byte for byte.
	v1 := fullDoc()
	v1.SimhashVersion, v1.Capture = 1, capture.Capture{}
	rec1 := appendDoc(nil, v1)
	if full := appendDoc(nil, noCapture); len(rec1) != len(full)-1 || string(rec1) != string(full[:len(full)-1]) {
		t.Errorf("a version-1 record is not the version-2 record without its last byte")
	}
	if err := decodeDoc(7, rec1, &got); err != nil || got.SimhashVersion != 1 || got.Simhash != v1.Simhash || got.NearDup != 5 {
		t.Errorf("version-1 record: %+v, %v", got, err)
	}
	if string(appendDoc(nil, &got)) != string(rec1) {
		t.Errorf("version-1 record written back differs")
	}
	// A JSON record (format version 1) with a simhash is of version 1.
	if err := decodeDoc(7, []byte(`{"url":"http://a.cl/","state":"fetched","simhash":42}`), &got); err != nil || got.SimhashVersion != 1 {
		t.Errorf("JSON record with a simhash: %+v, %v", got, err)
	}
	// Without a simhash, no version.
	nv := &Doc{ID: 4, URL: "http://a.cl/nv", State: StateFetched, NearDup: 9, SimhashVersion: 2}
	if err := decodeDoc(4, appendDoc(nil, nv), &got); err != nil || got.SimhashVersion != 0 || got.NearDup != 9 {
		t.Errorf("version without a simhash: %+v, %v", got, err)
	}
	// The stored capture (section 4, issue 37) follows sections 1 to 3,
	// written zero when the page has nothing of theirs; a record without
	// it is the record of before, byte for byte.
	cp := &Doc{ID: 5, URL: "http://a.cl/cp", State: StateFetched, Capture: fullDoc().Capture}
	cpRec := appendDoc(nil, cp)
	if err := decodeDoc(5, cpRec, &got); err != nil || !reflect.DeepEqual(&got, cp) {
		t.Errorf("capture without the other sections: %+v, %v", got, err)
	}
	withV1 := fullDoc()
	withV1.SimhashVersion = 1
	if err := decodeDoc(7, appendDoc(nil, withV1), &got); err != nil || !reflect.DeepEqual(&got, withV1) {
		t.Errorf("capture after a version-1 simhash: %+v, %v", got, err)
	}
	plain := &Doc{ID: 5, URL: "http://a.cl/cp", State: StateFetched}
	if bare := appendDoc(nil, plain); len(cpRec) <= len(bare) || string(cpRec[:len(bare)]) != string(bare) {
		t.Errorf("the record with a capture does not extend the record without one")
	}
	if err := decodeDoc(5, cpRec[:len(cpRec)-3], &got); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated capture: %v", err)
	}
	odd := &Doc{ID: 1, URL: "http://a.cl/", State: "weird", Depth: -1}
	if err := decodeDoc(1, appendDoc(nil, odd), &got); err != nil || !reflect.DeepEqual(&got, odd) {
		t.Errorf("unknown state: %+v, %v", got, err)
	}
}

// decodeDocView decodes what decodeDoc decodes, one record after another
// into the same Doc (whose Anchors and History arrays it reuses), and its
// strings share the record's memory.
func TestDecodeDocView(t *testing.T) {
	few := &Doc{ID: 9, URL: "http://b.cl/", State: StatePending, Anchors: []string{"one"}}
	tests := []struct {
		name string
		doc  *Doc
	}{
		{"full", fullDoc()},
		{"one anchor, no history", few},
		{"empty", &Doc{ID: 2}},
		{"full again", fullDoc()},
		{"one anchor again", few},
	}
	var view Doc
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := appendDoc(nil, tt.doc)
			var want Doc
			if err := decodeDoc(tt.doc.ID, rec, &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeDocView(tt.doc.ID, rec, &view); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&view, &want) {
				t.Errorf("view\n got %+v\nwant %+v", view, want)
			}
			if len(view.URL) > 0 && !shares(rec, view.URL) {
				t.Errorf("URL %q is a copy, not the record's memory", view.URL)
			}
			if len(want.URL) > 0 && shares(rec, want.URL) {
				t.Errorf("decodeDoc's URL %q shares the record's memory", want.URL)
			}
		})
	}
}

// shares tells whether s points into b.
func shares(b []byte, s string) bool {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= start && p < start+uintptr(len(b))
}

// encodeDoc gives the record in a slice of its size, whatever the
// scratch buffer it is given, and hands the buffer back for reuse.
func TestEncodeDoc(t *testing.T) {
	for _, scratch := range [][]byte{nil, make([]byte, 3), make([]byte, 0, 4096)} {
		d := fullDoc()
		v, next := encodeDoc(d, scratch)
		if want := appendDoc(nil, d); string(v) != string(want) {
			t.Errorf("scratch of cap %d: record differs from appendDoc's", cap(scratch))
		}
		if cap(v) > len(v)+len(v)/8+16 { // more than the allocator's rounding
			t.Errorf("scratch of cap %d: record of %d bytes has capacity %d", cap(scratch), len(v), cap(v))
		}
		if cap(next) < len(v) {
			t.Errorf("scratch of cap %d: handed back a buffer of cap %d", cap(scratch), cap(next))
		}
		if &v[0] == &next[:1][0] {
			t.Errorf("scratch of cap %d: the record shares the scratch buffer", cap(scratch))
		}
	}
}

// Version 1 records (JSON) are still read.
func TestDocJSONRecord(t *testing.T) {
	d := fullDoc()
	v, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got Doc
	if err := decodeDoc(7, v, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, d) {
		t.Errorf("JSON record\n got %+v\nwant %+v", got, *d)
	}
	if s, err := docSite(7, v); err != nil || s != 3 {
		t.Errorf("docSite of JSON record %d, %v", s, err)
	}
	if s, err := docSite(7, appendDoc(nil, d)); err != nil || s != 3 {
		t.Errorf("docSite of binary record %d, %v", s, err)
	}
}

// FuzzDecodeDoc checks that no record makes the decoder panic or
// allocate without bound, and that what it accepts re-encodes to a
// record that decodes the same.
func FuzzDecodeDoc(f *testing.F) {
	f.Add(appendDoc(nil, fullDoc()))
	f.Add(appendDoc(nil, &Doc{}))
	f.Add([]byte(`{"id":1,"url":"http://a.cl/","state":"pending"}`))
	f.Add([]byte{2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Doc
		if err := decodeDoc(1, b, &d); err != nil {
			return
		}
		var d2 Doc
		rec := appendDoc(nil, &d)
		if err := decodeDoc(1, rec, &d2); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if rec2 := appendDoc(nil, &d2); string(rec2) != string(rec) {
			t.Fatalf("re-encoding changed the record\n%+v\n%+v", d, d2)
		}
	})
}

// FuzzDecodeSiteLinks checks that no stored site-graph value makes the
// decoder panic, and that what it accepts re-encodes to a value that
// decodes to the same map (graph.db's site_links bucket, written by the
// seeder, read back by every later run and by the manager).
func FuzzDecodeSiteLinks(f *testing.F) {
	f.Add(encodeSiteLinks(map[uint32]uint32{}))
	f.Add(encodeSiteLinks(map[uint32]uint32{2: 1}))
	f.Add(encodeSiteLinks(map[uint32]uint32{2: 1, 3: 400, 70000: 1 << 31, 70001: 5}))
	f.Add([]byte{})
	f.Add([]byte{0x7f})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := decodeSiteLinks(1, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := decodeSiteLinks(1, encodeSiteLinks(links))
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		if len(again) != len(links) {
			t.Fatalf("re-encoding changed the map: %d sites, then %d", len(links), len(again))
		}
		for s, n := range links {
			if again[s] != n {
				t.Fatalf("site %d: %d links, then %d", s, n, again[s])
			}
		}
	})
}
