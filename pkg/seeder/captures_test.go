package seeder

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestCaptures: a collection crawled before graph.db kept stored
// captures (docs.jsonl records without recordId) gets them from its
// seeded batches' WARC files: each page the capture of its last 2xx
// response stored whole (a later 304 does not replace it), a batch not
// seeded is not read, a dry run counts without writing, and a second run
// changes nothing.
func TestCaptures(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://a.cl/b")
	ids := map[string]uint64{"http://a.cl/": 1, "http://a.cl/b": 2}
	page := func(url string, status int, body string, at time.Duration) gathertest.Page {
		return gathertest.Page{DocID: ids[url], URL: url, Status: status, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(body), At: gathertest.Fetched.Add(at)}
	}
	old := func(url string, status int, at time.Duration) *parsed.Doc { // what a gatherer of before wrote
		return &parsed.Doc{URL: url, Status: status, Fetched: gathertest.Fetched.Add(at), MIME: "text/html", Title: "t", Hash: "h"}
	}
	batches := []struct {
		pages  []gathertest.Page
		docs   []*parsed.Doc
		seeded bool
	}{
		{[]gathertest.Page{page("http://a.cl/", 200, "<p>one</p>", 0), page("http://a.cl/b", 200, "<p>b one</p>", time.Second)},
			[]*parsed.Doc{old("http://a.cl/", 200, 0), old("http://a.cl/b", 200, time.Second)}, true},
		{[]gathertest.Page{page("http://a.cl/", 304, "", time.Hour), page("http://a.cl/b", 200, "<p>b two</p>", time.Hour+time.Second)},
			[]*parsed.Doc{old("http://a.cl/", 304, time.Hour), old("http://a.cl/b", 200, time.Hour+time.Second)}, true},
		{[]gathertest.Page{page("http://a.cl/", 200, "<p>three</p>", 2*time.Hour)}, // gathered, not seeded
			[]*parsed.Doc{old("http://a.cl/", 200, 2*time.Hour)}, false},
	}
	for i, b := range batches {
		id := i + 1
		var urls []string
		for _, p := range b.pages {
			urls = append(urls, p.URL)
		}
		writeBatch(t, col, id, testBatch{urls: urls, docs: b.docs})
		gathertest.Harvest(t, col.Batch(id).Dir, b.pages)
		if b.seeded {
			runBatch(t, col, cfg, id, false)
		}
	}
	if d := readGraph(t, col).doc(t, "http://a.cl/"); !d.Capture.IsZero() {
		t.Fatalf("a capture before the upgrade: %+v", d.Capture)
	}
	// The captures the WARC files hold.
	want := map[string]capture.Capture{}
	for id, url := range map[int]string{1: "http://a.cl/", 2: "http://a.cl/b"} {
		dir := col.Batch(id).HarvestPath()
		recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.URL == url {
				resp, err := warcio.ReadResponse(filepath.Join(dir, r.WARC), r.Offset, r.Length, 0)
				if err != nil {
					t.Fatal(err)
				}
				want[url] = resp.Capture()
			}
		}
	}

	s, err := Captures(context.Background(), CapturesOptions{Collection: col, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	// a.cl/ from batch 1 (the 304 of batch 2 is no capture), a.cl/b from
	// batch 1 and then from batch 2.
	if s.Recorded != 3 || s.Batches != 2 || s.Records != 3 || s.Kept != 0 {
		t.Errorf("dry run: %+v", s)
	}
	if d := readGraph(t, col).doc(t, "http://a.cl/"); !d.Capture.IsZero() {
		t.Errorf("the dry run wrote %+v", d.Capture)
	}
	s, err = Captures(context.Background(), CapturesOptions{Collection: col})
	if err != nil {
		t.Fatal(err)
	}
	if s.Recorded != 3 || s.Kept != 0 || s.Unreadable != 0 || s.Mismatched != 0 {
		t.Errorf("run: %+v", s)
	}
	g := readGraph(t, col)
	for url, c := range want {
		if d := g.doc(t, url); d.Capture != c || c.IsZero() {
			t.Errorf("%s: capture %+v, want %+v", url, d.Capture, c)
		}
	}
	if s, err := Captures(context.Background(), CapturesOptions{Collection: col}); err != nil || s.Recorded != 0 || s.Kept != 3 {
		t.Errorf("second run: %+v, %v", s, err)
	}
	// A seeded batch whose harvest was removed is skipped, and named.
	if err := os.RemoveAll(col.Batch(1).HarvestPath()); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s, err = Captures(context.Background(), CapturesOptions{Collection: col})
	if s != nil {
		s.WriteText(&out)
	}
	if err != nil || len(s.Skipped) != 1 || s.Batches != 1 || !strings.Contains(out.String(), "skipped 000001: no harvest output") {
		t.Errorf("run without batch 1's harvest: %v\n%s", err, out.String())
	}
}
