package seeder

import (
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestRevisitKeepsStoredPage: a 2xx the harvester stored as an
// identical-payload-digest revisit (docs.jsonl "revisit") is taken in as
// a 304 is: a visit, unchanged, the title, links and stored capture kept,
// the validators it carries updated. A 2xx stored whole records its
// capture; a record without one keeps the stored capture; a malformed
// one is counted and ignored.
func TestRevisitKeepsStoredPage(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://a.cl/b")
	first := capture.Capture{ID: "<urn:uuid:11111111-1111-4111-8111-111111111111>", Date: t0, Digest: "sha1:AAAA"}
	second := capture.Capture{ID: "<urn:uuid:22222222-2222-4222-8222-222222222222>", Date: t0.Add(3 * time.Hour), Digest: "sha1:BBBB"}
	full := func(at time.Duration, hash string, c capture.Capture) *parsed.Doc {
		return &parsed.Doc{URL: "http://a.cl/", Status: 200, Fetched: t0.Add(at), MIME: "text/html", Title: "A", Hash: hash, ETag: `"e1"`,
			RecordID: c.ID, RecordDate: c.DateString(), PayloadDigest: c.Digest, Links: []parsed.Link{{URL: "http://a.cl/b", Anchor: "b"}}}
	}
	revisit := &parsed.Doc{URL: "http://a.cl/", Status: 200, Fetched: t0.Add(time.Hour), MIME: "text/html", Bytes: 120, Hash: "h1", Unchanged: true, Revisit: true, ETag: `"e2"`}
	notModified := &parsed.Doc{URL: "http://a.cl/", Status: 304, Fetched: t0.Add(2 * time.Hour), Hash: "h1", Unchanged: true, Revisit: true}
	noCapture := full(4*time.Hour, "h2", capture.Capture{}) // an old gatherer's record, or a record not read
	bad := full(5*time.Hour, "h2", capture.Capture{})
	bad.RecordID, bad.RecordDate, bad.PayloadDigest = "<urn:uuid:x>", "yesterday", "sha1:CC"

	for i, c := range []struct {
		doc         *parsed.Doc
		title       string
		links       int
		capture     capture.Capture
		visits      int
		changes     int
		etag        string
		notModified int
		captures    int
		badCaptures int
	}{
		{full(0, "h1", first), "A", 1, first, 1, 0, `"e1"`, 0, 1, 0},
		{revisit, "A", 1, first, 2, 0, `"e2"`, 1, 0, 0},
		{notModified, "A", 1, first, 3, 0, `"e2"`, 1, 0, 0},
		{full(3*time.Hour, "h2", second), "A", 1, second, 4, 1, `"e1"`, 0, 1, 0},
		{noCapture, "A", 1, second, 5, 1, `"e1"`, 0, 0, 0},
		{bad, "A", 1, second, 6, 1, `"e1"`, 0, 0, 1},
	} {
		id := i + 1
		tb := testBatch{urls: []string{"http://a.cl/"}, docs: []*parsed.Doc{c.doc}}
		writeBatch(t, col, id, tb)
		s := runBatch(t, col, cfg, id, false)
		g := readGraph(t, col)
		d := g.doc(t, "http://a.cl/")
		if d.Title != c.title || len(g.out["http://a.cl/"]) != c.links || d.Capture != c.capture || d.Visits != c.visits || d.Changes != c.changes || d.ETag != c.etag || d.State != linkgraph.StateFetched {
			t.Errorf("batch %d: title %q, %d links, capture %+v, %d visits, %d changes, etag %s, %s; want %q, %d, %+v, %d, %d, %s",
				id, d.Title, len(g.out["http://a.cl/"]), d.Capture, d.Visits, d.Changes, d.ETag, d.State, c.title, c.links, c.capture, c.visits, c.changes, c.etag)
		}
		if last := d.History[len(d.History)-1]; last.Changed != (id == 4) || last.Status != c.doc.Status {
			t.Errorf("batch %d: last visit %+v", id, last)
		}
		if s.NotModified != c.notModified || s.Captures != c.captures || s.BadCaptures != c.badCaptures || s.Changed != 0 && c.changes == 0 {
			t.Errorf("batch %d: summary not modified %d, captures %d, bad %d, changed %d", id, s.NotModified, s.Captures, s.BadCaptures, s.Changed)
		}
	}
}
