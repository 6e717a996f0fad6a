package seeder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

var t0 = time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)

const robotsPrivate = "User-agent: *\nDisallow: /private\n"

// firstBatch builds the collection of TestRunFirstBatch: five seeds, one
// of them scheduled by the "manager", and batch 1 fetching four of them.
func firstBatch(t *testing.T, cfg config.Config, check bool) *collection.Collection {
	t.Helper()
	var col *collection.Collection
	if check {
		col = newCollection(t, cfg)
	} else {
		col = newCollectionUnchecked(t, cfg)
	}
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/", "http://c.cl/x", "http://a.cl/private/old", "http://d.cl/", "http://f.cl/")
	// The manager marks what it schedules.
	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.Update(func(tx *linkgraph.Tx) error {
		id, _ := tx.LookupURL("http://d.cl/")
		d, _ := tx.Doc(id)
		d.State, d.Batch = linkgraph.StateScheduled, 1
		return tx.PutDoc(d)
	})
	g.Close()

	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/", "http://b.cl/", "http://c.cl/x", "http://d.cl/", "http://f.cl/"},
		robots: []fetchlog.Robots{
			{Site: "http://a.cl", Status: 200, Fetched: t0, Body: robotsPrivate},
			{Site: "http://b.cl", Status: 503, Fetched: t0},
			{Site: "http://c.cl", Status: 404, Fetched: t0},
		},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t0, MIME: "text/html", Title: "A", Hash: "h1", Links: []parsed.Link{
				{URL: "http://a.cl/page1", Anchor: "Page  One "}, // new, depth 1
				{URL: "http://a.cl/private/p"},                   // new, excluded by robots
				{URL: "http://b.cl/", Anchor: "B site"},          // known
				{URL: "http://x.com/"},                           // out-of-scope
				{URL: "http://a.cl/logo.png"},                    // extension
				{URL: "mailto:x@a.cl"},                           // scheme
				{URL: "http://a.cl/", Anchor: "home"},            // self-link: kept, no anchor
				{URL: "http://e.cl/", NoFollow: true},            // nofollow: no new URL
				{URL: "http://b.cl/deep", Anchor: "Deep"},        // new, other site: depth 0
				{URL: "http://a.cl/page1#frag", Anchor: "Again"}, // same id as page1
				{URL: "http://127.0.0.1/"},                       // ip-host
				{URL: "http://a.cl/page1/../page2"},              // new a.cl/page2: 5th url of a.cl
				{URL: "http://c.cl/x", NoFollow: true},           // nofollow to a known URL: kept
				{URL: "http://a.cl/page3"},                       // site-cap
				{URL: "http://exa mple.cl/"},                     // unparsable
				{URL: "http://a.cl/page1", Anchor: "Page One"},   // anchor already there
				{URL: "http://a.cl/page1", Anchor: " "},          // empty anchor
			}},
			{URL: "http://b.cl/", Err: "robots"}, // robots.txt of b.cl was 503: not attempted
			{URL: "http://c.cl/x", Status: 301, Fetched: t0, Redirect: "http://c.cl/y"},
			{URL: "http://f.cl/", Err: "dns: no such host", Fetched: t0},
		},
	})
	return col
}

func TestRunFirstBatch(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	s := runBatch(t, col, cfg, 0, false)

	wantRejected := map[string]int{"out-of-scope": 1, "extension": 1, "scheme": 1, "nofollow": 1, "ip-host": 1, "site-cap": 1, "unparsable": 1}
	if !reflect.DeepEqual(s.Rejected, wantRejected) {
		t.Errorf("rejected %v, want %v", s.Rejected, wantRejected)
	}
	if s.Docs != 4 || s.Fetched != 2 || s.Pending != 1 || s.Missing != 1 || s.Failed != 1 {
		t.Errorf("doc counts %+v", s)
	}
	if s.NewURLs != 5 || s.NewSites != 0 || s.NewExcluded != 1 || s.RobotsChanged != 1 || s.RobotsExcluded != 1 {
		t.Errorf("new/robots counts %+v", s)
	}
	if s.OutLinks != 8 || s.Links != 18 {
		t.Errorf("links read %d, stored %d; want 18, 8", s.Links, s.OutLinks)
	}

	g := readGraph(t, col)
	if len(g.docs) != 11 || len(g.sites) != 5 {
		t.Errorf("%d docs, %d sites; want 11, 5", len(g.docs), len(g.sites))
	}
	type want struct {
		depth  int
		state  linkgraph.State
		reason string
	}
	for url, w := range map[string]want{
		"http://a.cl/":            {0, linkgraph.StateFetched, ""},
		"http://b.cl/":            {0, linkgraph.StatePending, ""},
		"http://c.cl/x":           {0, linkgraph.StateFetched, ""},
		"http://a.cl/private/old": {0, linkgraph.StateExcluded, "robots"}, // re-checked: robots.txt arrived
		"http://d.cl/":            {0, linkgraph.StatePending, ""},        // scheduled, no record
		"http://a.cl/page1":       {1, linkgraph.StatePending, ""},
		"http://a.cl/private/p":   {1, linkgraph.StateExcluded, "robots"},
		"http://b.cl/deep":        {0, linkgraph.StatePending, ""}, // Nakahira: an external URL is a new start
		"http://a.cl/page2":       {1, linkgraph.StatePending, ""},
		"http://c.cl/y":           {1, linkgraph.StatePending, ""}, // redirect target
		"http://f.cl/":            {0, linkgraph.StateFailed, "dns: no such host"},
	} {
		d := g.doc(t, url)
		if d.Depth != w.depth || d.State != w.state || d.Reason != w.reason {
			t.Errorf("%s: depth %d state %s reason %q; want %d %s %q", url, d.Depth, d.State, d.Reason, w.depth, w.state, w.reason)
		}
	}
	if d := g.doc(t, "http://f.cl/"); d.Failures != 1 || d.Visits != 0 {
		t.Errorf("f.cl/ failures %d visits %d, want 1 0", d.Failures, d.Visits)
	}
	if _, ok := g.docs["http://e.cl/"]; ok {
		t.Error("a nofollow link created a URL")
	}
	if _, ok := g.sites["http://e.cl"]; ok {
		t.Error("a nofollow link created a site")
	}
	a := g.doc(t, "http://a.cl/")
	if a.Visits != 1 || a.Changes != 0 || a.Title != "A" || a.Hash != "h1" || a.Status != 200 || !a.Fetched.Equal(t0) || !a.FirstFetched.Equal(t0) || a.Batch != 1 {
		t.Errorf("a.cl/ record %+v", a)
	}
	if c := g.doc(t, "http://c.cl/x"); c.Status != 301 || c.Redirect != "http://c.cl/y" || c.Visits != 1 {
		t.Errorf("c.cl/x record %+v", c)
	}
	if d := g.doc(t, "http://a.cl/page1"); !reflect.DeepEqual(d.Anchors, []string{"Page One", "Again"}) || d.Found != 1 {
		t.Errorf("page1 anchors %q found %d", d.Anchors, d.Found)
	}
	if d := g.doc(t, "http://b.cl/"); !reflect.DeepEqual(d.Anchors, []string{"B site"}) {
		t.Errorf("b.cl anchors %q", d.Anchors)
	}
	if d := g.doc(t, "http://a.cl/"); len(d.Anchors) != 0 {
		t.Errorf("self-link anchor stored: %q", d.Anchors)
	}
	wantOut := map[string][]string{
		"http://a.cl/":  {"http://a.cl/", "http://a.cl/page1", "http://a.cl/page2", "http://a.cl/private/p", "http://b.cl/", "http://b.cl/deep", "http://c.cl/x"},
		"http://c.cl/x": {"http://c.cl/y"},
	}
	if !reflect.DeepEqual(g.out, wantOut) {
		t.Errorf("out-links\n got %v\nwant %v", g.out, wantOut)
	}
	if site := g.sites["http://a.cl"]; site.Pages != 5 || site.RobotsStatus != 200 || site.RobotsBody != robotsPrivate {
		t.Errorf("site a.cl %+v", site)
	}
	if site := g.sites["http://b.cl"]; site.RobotsStatus != 503 || site.RobotsBody != "" || !site.RobotsFetched.Equal(t0) {
		t.Errorf("site b.cl %+v", site)
	}

	// The batch is done: neither the next-ready search nor its number
	// takes it again.
	if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg}); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("second run: %v, want ErrNothingToDo", err)
	}
	if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Batch: 1}); !errors.Is(err, collection.ErrAlreadyDone) {
		t.Errorf("rerun of batch 1: %v, want ErrAlreadyDone", err)
	}
	var marker Summary
	if err := col.Batch(1).Summary(collection.StageSeeded, &marker); err != nil || marker.Docs != 4 {
		t.Errorf("marker %+v, %v", marker, err)
	}
}

// A run killed between its commit and its marker: the next run writes the
// marker and counts nothing twice.
func TestRunCrashBeforeMarker(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 1, false)
	before := readGraph(t, col)
	if err := os.Remove(filepath.Join(col.Batch(1).Dir, "seeded.done")); err != nil {
		t.Fatal(err)
	}
	s := runBatch(t, col, cfg, 0, false)
	if !s.Recovered || !col.Batch(1).Done(collection.StageSeeded) {
		t.Fatalf("summary %+v: want recovered and marker written", s)
	}
	if after := readGraph(t, col); !reflect.DeepEqual(before, after) {
		t.Error("recovery changed graph.db")
	}
}

// --force takes a batch in again; the result is the same as once.
func TestRunForceIsIdempotent(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Force: true}); !errors.Is(err, ErrForceNeedsBatch) {
		t.Errorf("force without batch: %v", err)
	}
	runBatch(t, col, cfg, 1, false)
	before := readGraph(t, col)
	s := runBatch(t, col, cfg, 1, true)
	if !s.Forced || s.NewURLs != 0 || s.Changed != 0 {
		t.Errorf("forced summary %+v", s)
	}
	after := readGraph(t, col)
	if !reflect.DeepEqual(before, after) {
		for url, d := range after.docs {
			if !reflect.DeepEqual(d, before.docs[url]) {
				t.Errorf("%s\nbefore %+v\n after %+v", url, before.docs[url], d)
			}
		}
		t.Error("forced rerun changed graph.db")
	}
}

// A second batch revisits a.cl/ (changed text, fewer links), fetches a
// new page, and a.cl's robots.txt no longer forbids /private.
func TestRunSecondBatch(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 1, false)
	t1 := t0.Add(24 * time.Hour)
	writeBatch(t, col, 2, testBatch{
		urls:   []string{"http://a.cl/", "http://a.cl/page1", "http://b.cl/deep", "http://c.cl/y", "http://f.cl/"},
		robots: []fetchlog.Robots{{Site: "http://a.cl", Status: 200, Fetched: t1, Body: "User-agent: *\nAllow: /\n"}},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t1, Hash: "h2", Links: []parsed.Link{{URL: "http://a.cl/page1"}}},
			{URL: "http://a.cl/page1", Status: 200, Fetched: t1, Hash: "p1", Links: []parsed.Link{
				{URL: "http://a.cl/"}, {URL: "http://b.cl/deep/more"}, {URL: "http://c.cl/y", Anchor: "why"},
			}},
			{URL: "http://b.cl/deep", Err: "timeout: read"},
			{URL: "http://c.cl/y", Err: "host-gave-up"},
			{URL: "http://f.cl/", Status: 200, Fetched: t1},
		},
	})
	s := runBatch(t, col, cfg, 0, false)
	if s.Batch != 2 || s.Changed != 1 || s.RobotsRestored != 2 || s.Failed != 1 || s.Pending != 1 {
		t.Errorf("summary %+v", s)
	}
	g := readGraph(t, col)
	if a := g.doc(t, "http://a.cl/"); a.Visits != 2 || a.Changes != 1 || a.Hash != "h2" || !a.Fetched.Equal(t1) || !a.FirstFetched.Equal(t0) || a.Depth != 0 {
		t.Errorf("a.cl/ after revisit %+v", a)
	}
	if !reflect.DeepEqual(g.out["http://a.cl/"], []string{"http://a.cl/page1"}) {
		t.Errorf("a.cl/ out-links not replaced: %v", g.out["http://a.cl/"])
	}
	for _, u := range []string{"http://a.cl/private/old", "http://a.cl/private/p"} {
		if d := g.doc(t, u); d.State != linkgraph.StatePending || d.Reason != "" {
			t.Errorf("%s not restored: %s %q", u, d.State, d.Reason)
		}
	}
	if d := g.doc(t, "http://b.cl/deep"); d.State != linkgraph.StateFailed || d.Reason != "timeout: read" || d.Failures != 1 {
		t.Errorf("b.cl/deep %s %q failures %d", d.State, d.Reason, d.Failures)
	}
	if d := g.doc(t, "http://f.cl/"); d.Failures != 0 || d.Visits != 1 || d.State != linkgraph.StateFetched {
		t.Errorf("f.cl/ after a response: failures %d visits %d %s", d.Failures, d.Visits, d.State)
	}
	if d := g.doc(t, "http://c.cl/y"); d.State != linkgraph.StatePending || !reflect.DeepEqual(d.Anchors, []string{"why"}) {
		t.Errorf("c.cl/y %s %q", d.State, d.Anchors)
	}
	// Linked from a page of another site: a new starting point.
	if d := g.doc(t, "http://b.cl/deep/more"); d.Depth != 0 {
		t.Errorf("b.cl/deep/more depth %d: linked from a.cl, want 0", d.Depth)
	}
	// a.cl/page2 keeps its depth; a.cl/ keeps 0 though page1 links to it.
	if d := g.doc(t, "http://a.cl/page2"); d.Depth != 1 {
		t.Errorf("page2 depth %d", d.Depth)
	}
}

// URLs the harvester did not request because it ended the batch early
// ("deferred: tail", "deferred: deadline") go back to the frontier as
// they were: a revisit stays fetched with its visits, a failed page keeps
// its failure count (no new failure), a new page is pending again.
func TestRunDeferred(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 1, false)
	before := readGraph(t, col)
	t1 := t0.Add(24 * time.Hour)
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://a.cl/", "http://a.cl/page1", "http://b.cl/deep"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Err: "deferred: tail"},
			{URL: "http://a.cl/page1", Err: "deferred: deadline"},
			{URL: "http://b.cl/deep", Err: "timeout: read"},
		},
	})
	runBatch(t, col, cfg, 0, false)
	writeBatch(t, col, 3, testBatch{
		urls: []string{"http://b.cl/deep"},
		docs: []*parsed.Doc{{URL: "http://b.cl/deep", Err: "deferred: tail", Fetched: t1}},
	})
	s := runBatch(t, col, cfg, 0, false)
	if s.Pending != 1 || s.Failed != 0 {
		t.Errorf("batch 3 summary %+v: a deferred URL is not attempted, not failed", s)
	}
	g := readGraph(t, col)
	a, old := g.doc(t, "http://a.cl/"), before.doc(t, "http://a.cl/")
	if a.State != linkgraph.StateFetched || a.Visits != old.Visits || a.Failures != 0 || !a.Fetched.Equal(old.Fetched) || a.Hash != old.Hash {
		t.Errorf("a.cl/ after a deferred revisit: %s visits %d failures %d; before: visits %d", a.State, a.Visits, a.Failures, old.Visits)
	}
	if d := g.doc(t, "http://b.cl/deep"); d.State != linkgraph.StateFailed || d.Failures != 1 {
		t.Errorf("b.cl/deep after a failure then a deferral: %s failures %d, want failed with 1", d.State, d.Failures)
	}
	if d := g.doc(t, "http://a.cl/page1"); d.State == linkgraph.StateScheduled || d.Failures != 0 {
		t.Errorf("a.cl/page1 after a deferral: %s failures %d", d.State, d.Failures)
	}
}

// An unreachable robots.txt (5xx) excludes nothing by itself: the
// harvester's "robots" verdicts go back to pending, and the rules known
// from the last 2xx robots.txt still apply to new URLs.
func TestRobotsUnreachableKeepsKnownRules(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://a.cl/page1")
	writeBatch(t, col, 1, testBatch{
		urls:   []string{"http://a.cl/"},
		robots: []fetchlog.Robots{{Site: "http://a.cl", Status: 200, Fetched: t0, Body: robotsPrivate}},
		docs:   []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0}},
	})
	runBatch(t, col, cfg, 1, false)
	t1 := t0.Add(time.Hour)
	writeBatch(t, col, 2, testBatch{
		urls:   []string{"http://a.cl/", "http://a.cl/page1"},
		robots: []fetchlog.Robots{{Site: "http://a.cl", Status: 503, Fetched: t1, Err: ""}},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t1, Links: []parsed.Link{{URL: "http://a.cl/private/q"}, {URL: "http://a.cl/public"}}},
			{URL: "http://a.cl/page1", Err: "robots"},
		},
	})
	s := runBatch(t, col, cfg, 2, false)
	if s.Excluded != 0 || s.Pending != 1 || s.RobotsChanged != 0 || s.NewExcluded != 1 {
		t.Errorf("summary %+v", s)
	}
	g := readGraph(t, col)
	if d := g.doc(t, "http://a.cl/page1"); d.State != linkgraph.StatePending {
		t.Errorf("page1 %s %q, want pending", d.State, d.Reason)
	}
	if d := g.doc(t, "http://a.cl/private/q"); d.State != linkgraph.StateExcluded {
		t.Errorf("private/q %s, want excluded by the last known rules", d.State)
	}
	if d := g.doc(t, "http://a.cl/public"); d.State != linkgraph.StatePending {
		t.Errorf("public %s", d.State)
	}
	if site := g.sites["http://a.cl"]; site.RobotsStatus != 503 || site.RobotsBody != robotsPrivate || !site.RobotsFetched.Equal(t1) {
		t.Errorf("site %+v", site)
	}
}

// A known URL found again by a shorter path gets the smaller depth.
func TestRunDepthDecreases(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://a.cl/deep")
	g, _ := openGraph(col, false, time.Second)
	g.Update(func(tx *linkgraph.Tx) error {
		id, _ := tx.LookupURL("http://a.cl/deep")
		d, _ := tx.Doc(id)
		d.Depth = 7
		return tx.PutDoc(d)
	})
	g.Close()
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{{URL: "http://a.cl/deep"}}}},
	})
	runBatch(t, col, cfg, 1, false)
	if d := readGraph(t, col).doc(t, "http://a.cl/deep"); d.Depth != 1 {
		t.Errorf("depth %d, want 1", d.Depth)
	}
}

// A parsed record that does not match graph.db aborts the batch, and
// nothing of it is written.
func TestRunMismatch(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/")
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{{URL: "http://a.cl/new"}}},
			{DocID: 2, URL: "http://b.cl/", Status: 200, Fetched: t0}, // not in batch.tsv
		},
	})
	before := readGraph(t, col)
	_, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg})
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("run: %v, want ErrMismatch", err)
	}
	if after := readGraph(t, col); !reflect.DeepEqual(before, after) {
		t.Error("a failed run changed graph.db")
	}
	if col.Batch(1).Done(collection.StageSeeded) {
		t.Error("a failed run wrote its marker")
	}
}

func TestRunNotReady(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg}); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("empty collection: %v", err)
	}
	if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Batch: 3}); !errors.Is(err, collection.ErrNoBatch) {
		t.Errorf("missing batch: %v", err)
	}
}

// Check passes on a seeded collection and finds injected corruption.
func TestCheckFindsCorruption(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, false)
	runBatch(t, col, cfg, 1, false)
	if problems, err := check(col, time.Second, 0, false); err != nil || len(problems) != 0 {
		t.Fatalf("check of a sound collection: %v %v", problems, err)
	}

	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		if err := tx.SetOutLinks(1, roaring.BitmapOf(2, 999)); err == nil { // dangling link
			t.Error("SetOutLinks took a link to a missing document")
		}
		d, err := tx.Doc(2)
		if err != nil {
			return err
		}
		d.URL += "-renamed" // id → URL no longer matches URL → id
		if err := tx.PutDoc(d); err != nil {
			return err
		}
		site, _ := tx.SiteID("http://a.cl")
		rec, _ := tx.Site(site)
		rec.Pages = 99 // wrong page count
		if err := tx.PutSite(rec); err != nil {
			return err
		}
		return tx.DeleteBatch(1) // marker without record
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := check(col, time.Second, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{"-renamed maps to id 0", "pages 99, but 5 documents", "batch 000001: has seeded.done but graph.db does not record it"} {
		if !strings.Contains(all, want) {
			t.Errorf("check found:\n%s\nwant a problem %q", all, want)
		}
	}
}

func TestGraphBusy(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = Stats(col, 50*time.Millisecond)
	if !errors.Is(err, linkgraph.ErrBusy) || !errors.Is(err, collection.ErrLocked) {
		t.Errorf("stats on a held graph: %v, want ErrBusy and ErrLocked", err)
	}
}

// A batch of several chunks is taken in file order: new URLs get ids in
// the order their links appear, whatever the number of cores.
func TestRunManyChunks(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	col := newCollection(t, cfg)
	const n = 2*chunkSize + 88
	var seeds, urls []string
	var docs []*parsed.Doc
	for i := range n {
		u := fmt.Sprintf("http://s%d.cl/", i%7) + fmt.Sprintf("p%d", i)
		seeds = append(seeds, u)
		urls = append(urls, u)
		docs = append(docs, &parsed.Doc{URL: u, Status: 200, Fetched: t0, Links: []parsed.Link{{URL: fmt.Sprintf("http://new.cl/n%d", i)}}})
	}
	addSeeds(t, col, cfg, seeds...)
	writeBatch(t, col, 1, testBatch{urls: urls, docs: docs})
	var progress int
	s, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Progress: func(k int) { progress += k }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Docs != n || s.NewURLs != n || progress != n {
		t.Fatalf("docs %d new %d progress %d, want %d", s.Docs, s.NewURLs, progress, n)
	}
	g := readGraph(t, col)
	for i := range n {
		if d := g.doc(t, fmt.Sprintf("http://new.cl/n%d", i)); d.ID != uint64(n+1+i) {
			t.Fatalf("n%d has id %d, want %d", i, d.ID, n+1+i)
		}
	}
}

// A cancelled run writes nothing.
func TestRunCancelled(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	before := readGraph(t, col)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, RunOptions{Collection: col, Config: cfg}); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	if after := readGraph(t, col); !reflect.DeepEqual(before, after) || col.Batch(1).Done(collection.StageSeeded) {
		t.Error("a cancelled run changed the collection")
	}
}

// A forced rerun leaves alone the documents a later batch has scheduled.
func TestRunForceKeepsLaterBatches(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 1, false)
	g, _ := openGraph(col, false, time.Second)
	g.Update(func(tx *linkgraph.Tx) error {
		d, _ := tx.Doc(1)
		d.State, d.Batch = linkgraph.StateScheduled, 2
		return tx.PutDoc(d)
	})
	g.Close()
	s := runBatch(t, col, cfg, 1, true)
	if d := readGraph(t, col).doc(t, "http://a.cl/"); d.State != linkgraph.StateScheduled || d.Batch != 2 || s.Stale != 1 {
		t.Errorf("a.cl/ %s in batch %d after a forced rerun of batch 1 (stale %d)", d.State, d.Batch, s.Stale)
	}
}

// Each visit goes to the history with its validators, at most
// linkgraph.MaxHistory of them; a 304 keeps the content and updates the
// validators it carries. The harvester's server estimates go to the
// sites of their host, unless newer ones are stored; the address goes
// there in any case.
func TestRunHistoryValidatorsServers(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://a.cl:8080/", "http://b.cl/")
	for i := 1; i <= linkgraph.MaxHistory+2; i++ {
		at := t0.Add(time.Duration(i) * time.Hour)
		d := &parsed.Doc{URL: "http://a.cl/", Status: 200, Fetched: at, Hash: fmt.Sprintf("h%d", i/2), Title: "A", LastModified: fmt.Sprintf("lm%d", i), ETag: fmt.Sprintf(`"e%d"`, i)}
		if i%3 == 0 {
			d = &parsed.Doc{URL: "http://a.cl/", Status: 304, Fetched: at, Hash: "ignored", ETag: `"e304"`}
		}
		tb := testBatch{urls: []string{"http://a.cl/"}, docs: []*parsed.Doc{d}}
		if i == 1 {
			tb.urls = append(tb.urls, "http://a.cl:8080/", "http://b.cl/")
			tb.servers = []fetchlog.Server{
				{Host: "a.cl", IP: "10.1.2.3", ConnectMs: 12, ResponseMs: 40, RequestsPerConn: 9, Measured: at},
				{Host: "zz.cl", ConnectMs: 1, Measured: at},
			}
		}
		if i == 2 {
			tb.servers = []fetchlog.Server{{Host: "a.cl", ConnectMs: 99, Measured: t0}} // older than stored
		}
		if i == 3 {
			// The name moved: a line with older estimates (or none, as for
			// a name deferred by a harvester shard) still gives the address.
			tb.servers = []fetchlog.Server{{Host: "a.cl", IP: "10.9.9.9", ConnectMs: 77, Measured: t0}}
		}
		writeBatch(t, col, i, tb)
		runBatch(t, col, cfg, i, false)
	}
	g := readGraph(t, col)
	a := g.doc(t, "http://a.cl/")
	n := linkgraph.MaxHistory + 2
	if a.Visits != n || len(a.History) != linkgraph.MaxHistory {
		t.Fatalf("visits %d, history %d", a.Visits, len(a.History))
	}
	if first := a.History[0]; !first.Time.Equal(t0.Add(3*time.Hour)) || first.Status != 304 {
		t.Errorf("oldest kept visit %+v, want the third", first)
	}
	last := a.History[len(a.History)-1]
	if !last.Time.Equal(t0.Add(time.Duration(n)*time.Hour)) || last.Status != 304 || last.Changed {
		t.Errorf("last visit %+v", last)
	}
	prev := a.History[len(a.History)-2] // visit 17: hash h8 after h8 (visit 16)
	if prev.Status != 200 || prev.Changed || prev.LastModified != "lm17" {
		t.Errorf("visit 17 %+v", prev)
	}
	if v := a.History[len(a.History)-3]; !v.Changed { // visit 16: h8 after h7 (15 was a 304)
		t.Errorf("visit 16 %+v should be a change", v)
	}
	if a.ETag != `"e304"` || a.LastModified != "lm17" || a.Hash != "h8" {
		t.Errorf("validators after a 304: etag %s last-modified %s hash %s", a.ETag, a.LastModified, a.Hash)
	}
	// The move reached a.cl's site, in batch 3; a.cl:8080 was not.
	for key, ip := range map[string]string{"http://a.cl": "10.9.9.9", "http://a.cl:8080": "10.1.2.3"} {
		if s := g.sites[key]; s.ConnectMs != 12 || s.IP != ip || s.ResponseMs != 40 || s.RequestsPerConn != 9 || !s.EstimatesAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("site %s estimates %+v", key, s)
		}
	}
	if s := g.sites["http://b.cl"]; s.ConnectMs != 0 || !s.EstimatesAt.IsZero() {
		t.Errorf("b.cl got estimates %+v", s)
	}
}

// A robots.txt fetch cut short (an error with a 200 status) is
// unreachable, as the harvester treated it (robots.ForFetch): the
// known rules stay.
func TestRobotsFetchErrorIsUnreachable(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/")
	writeBatch(t, col, 1, testBatch{
		urls:   []string{"http://a.cl/"},
		robots: []fetchlog.Robots{{Site: "http://a.cl", Status: 200, Fetched: t0, Body: "User-agent: *\nDisallow: /", Err: "timeout: no data for 20s"}},
		docs:   []*parsed.Doc{{URL: "http://a.cl/", Err: "robots"}},
	})
	s := runBatch(t, col, cfg, 1, false)
	if s.RobotsChanged != 0 || s.Pending != 1 || s.Excluded != 0 {
		t.Errorf("summary %+v", s)
	}
	if site := readGraph(t, col).sites["http://a.cl"]; site.RobotsBody != "" || site.RobotsErr == "" {
		t.Errorf("site %+v", site)
	}
}

// Include and exclude patterns and the session parameters of the config
// apply to links, and every rejection is counted by reason.
func TestRunScopePatterns(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	cfg.Scope.Include = []string{`^http://a\.cl/`}
	cfg.Scope.Exclude = []string{`/calendar/`}
	cfg.Scope.SessionParams = []string{"token"}
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/")
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{
			{URL: "http://a.cl/news?token=9&id=1"}, // session parameter removed
			{URL: "http://a.cl/news?id=1&sid=2"},   // sid is not a session parameter here
			{URL: "http://a.cl/calendar/2026"},     // excluded
			{URL: "http://b.cl/"},                  // not included
			{URL: "http://a.cl/x.jpg"},             // extension
		}}},
	})
	s := runBatch(t, col, cfg, 1, false)
	want := map[string]int{"excluded": 1, "not-included": 1, "extension": 1}
	if !reflect.DeepEqual(s.Rejected, want) || s.NewURLs != 2 {
		t.Errorf("rejected %v, new %d; want %v, 2", s.Rejected, s.NewURLs, want)
	}
	g := readGraph(t, col)
	for _, u := range []string{"http://a.cl/news?id=1", "http://a.cl/news?id=1&sid=2"} {
		g.doc(t, u)
	}
}

// A harvest merged from shards (docs/format/harvest.md: the shards'
// robots.jsonl and servers.jsonl concatenated) is taken in as one: the
// robots.txt and server estimates of every shard are stored.
func TestRunShardedHarvest(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/")
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/", "http://b.cl/"},
		robots: []fetchlog.Robots{ // shard 1, then shard 2
			{Site: "http://a.cl", Status: 200, Fetched: t0, Body: robotsPrivate},
			{Site: "http://b.cl", Status: 200, Fetched: t0.Add(time.Second), Body: "User-agent: *\nDisallow: /x\n"},
		},
		servers: []fetchlog.Server{
			{Host: "a.cl", ConnectMs: 5, ResponseMs: 10, Measured: t0},
			{Host: "b.cl", ConnectMs: 7, ResponseMs: 20, Measured: t0},
		},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{{URL: "http://a.cl/private/1"}}},
			{URL: "http://b.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{{URL: "http://b.cl/x/1"}, {URL: "http://b.cl/y"}}},
		},
	})
	s := runBatch(t, col, cfg, 1, false)
	if s.RobotsSites != 2 || s.ServerSites != 2 || s.NewExcluded != 2 || s.NewURLs != 3 {
		t.Errorf("summary %+v", s)
	}
	g := readGraph(t, col)
	if g.sites["http://b.cl"].ResponseMs != 20 || g.sites["http://a.cl"].RobotsBody != robotsPrivate {
		t.Errorf("sites %+v", g.sites)
	}
}

// Pages the gatherer could not read back from their WARC records
// (gatherer run --salvage: status 0, "unread: ...") are not attempted, as
// deferred ones are: a revisit stays as it was before the batch, a new
// page is pending again with no visit and no failure.
func TestRunUnread(t *testing.T) {
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 1, false)
	before := readGraph(t, col)
	t1 := t0.Add(24 * time.Hour)
	unread := parsed.Unread + ": wire-00001.warc.gz at 1234: inflate: unexpected EOF"
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://a.cl/", "http://a.cl/page1"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/", Err: unread, Fetched: t1},
			{URL: "http://a.cl/page1", Err: unread, Fetched: t1},
		},
	})
	s := runBatch(t, col, cfg, 0, false)
	if s.Pending != 2 || s.Failed != 0 || s.Fetched != 0 {
		t.Errorf("summary %+v: unread pages are not attempted, neither fetched nor failed", s)
	}
	g := readGraph(t, col)
	a, old := g.doc(t, "http://a.cl/"), before.doc(t, "http://a.cl/")
	if a.State != linkgraph.StateFetched || a.Visits != old.Visits || a.Failures != 0 || !a.Fetched.Equal(old.Fetched) || a.Hash != old.Hash {
		t.Errorf("a.cl/ after an unread revisit: %s visits %d failures %d fetched %v; before: visits %d fetched %v", a.State, a.Visits, a.Failures, a.Fetched, old.Visits, old.Fetched)
	}
	if d := g.doc(t, "http://a.cl/page1"); d.State != linkgraph.StatePending || d.Visits != 0 || d.Failures != 0 || !d.Fetched.IsZero() {
		t.Errorf("a.cl/page1 after an unread first visit: %s visits %d failures %d fetched %v, want pending", d.State, d.Visits, d.Failures, d.Fetched)
	}
}
