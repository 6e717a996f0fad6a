package seeder

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// TestComplete: Check finds the pages graph.db counts as fetched whose
// text is not stored (no text store entry; a record an old gatherer could
// not read, which kept its status), and Requeue puts exactly those back
// in the frontier, after which Check passes and a second Requeue finds
// nothing. The seeder itself no longer counts an old gatherer's unread
// record as fetched.
func TestComplete(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/")
	hash := func(text string) string { return extract.HashHex(extract.TextHash(text)) }
	oldUnread := "gatherer: bad WARC record: wire-00001.warc.gz at 5: inflate: unexpected EOF"
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: hash("alpha"), LastModified: "x"},
			{URL: "http://b.cl/", Status: 200, Fetched: t0, MIME: "text/html", Hash: hash("beta"), ETag: `"b"`},
			{URL: "http://c.cl/", Status: 200, Fetched: t0, MIME: "text/html", Err: oldUnread},
			{URL: "http://d.cl/", Status: 404, Fetched: t0},
		},
	})
	// The text store holds a.cl/ only.
	w, err := textstore.Create(col.TextPath(), 1, textstore.ModeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Add(textstore.Meta{URL: "http://a.cl/", DocID: 1, Hash: extract.TextHash("alpha"), Status: 200, Fetched: t0, Batch: 1}, "alpha", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	s := runBatch(t, col, cfg, 1, false)
	if s.Fetched != 3 || s.Pending != 1 {
		t.Errorf("seeded %+v: an old gatherer's unread record is not a response", s)
	}
	if d := readGraph(t, col).doc(t, "http://c.cl/"); d.State != linkgraph.StatePending || d.Visits != 0 {
		t.Errorf("c.cl/ taken in as %s with %d visits, want pending", d.State, d.Visits)
	}
	// graph.db as a seeder before issue 18 left it: c.cl/ fetched.
	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(func(tx *linkgraph.Tx) error {
		id, _ := tx.LookupURL("http://c.cl/")
		d, err := tx.Doc(id)
		if err != nil {
			return err
		}
		d.State, d.Status, d.Reason, d.Visits, d.Fetched, d.FirstFetched = linkgraph.StateFetched, 200, oldUnread, 1, t0, t0
		return tx.PutDoc(d)
	}); err != nil {
		t.Fatal(err)
	}
	g.Close()

	problems, err := Check(col, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	if len(problems) != 3 || !strings.HasPrefix(problems[0], "2 pages are fetched") || !strings.Contains(all, "seeder requeue") ||
		!strings.Contains(all, "http://b.cl/ (batch 000001): the text store has no entry") || !strings.Contains(all, "http://c.cl/ (batch 000001): its WARC record was not read") {
		t.Errorf("check found:\n%s", all)
	}

	before := readGraph(t, col)
	dry, err := Requeue(context.Background(), RequeueOptions{Collection: col, DryRun: true})
	if err != nil || len(dry.Lost) != 2 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if after := readGraph(t, col); after.doc(t, "http://b.cl/").State != linkgraph.StateFetched {
		t.Error("the dry run changed graph.db")
	}
	rs, err := Requeue(context.Background(), RequeueOptions{Collection: col})
	if err != nil || len(rs.Lost) != 2 {
		t.Fatalf("requeue: %+v %v", rs, err)
	}
	after := readGraph(t, col)
	for _, u := range []string{"http://b.cl/", "http://c.cl/"} {
		d, old := after.doc(t, u), before.doc(t, u)
		if d.State != linkgraph.StatePending || d.Visits != old.Visits || d.ETag != "" || d.LastModified != "" || d.Reason != "" || !d.InFrontier() {
			t.Errorf("%s requeued as %+v", u, d)
		}
	}
	if a := after.doc(t, "http://a.cl/"); a.State != linkgraph.StateFetched || a.LastModified != "x" {
		t.Errorf("a.cl/, whose text is stored, changed: %+v", a)
	}
	if d := after.doc(t, "http://d.cl/"); d.State != linkgraph.StateFetched {
		t.Errorf("d.cl/ (404, no text) changed: %+v", d)
	}
	if problems, err := Check(col, time.Second, 0); err != nil || len(problems) != 0 {
		t.Errorf("check after requeue: %q %v", problems, err)
	}
	if again, err := Requeue(context.Background(), RequeueOptions{Collection: col}); err != nil || len(again.Lost) != 0 {
		t.Errorf("second requeue: %+v %v", again, err)
	}
}
