package seeder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// hubBatch seeds http://a.cl/ and writes batch 1 fetching it, with links
// to n new pages of a.cl (anchors "p<i>"), in that order.
func hubBatch(t *testing.T, col *collection.Collection, cfg config.Config, n int) []string {
	t.Helper()
	addSeeds(t, col, cfg, "http://a.cl/")
	var links []parsed.Link
	var urls []string
	for i := range n {
		u := fmt.Sprintf("http://a.cl/p%02d", i)
		urls = append(urls, u)
		links = append(links, parsed.Link{URL: u, Anchor: fmt.Sprintf("p%d", i)})
	}
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: links}},
	})
	return urls
}

func frontierConfig(t, budget, lowWater int, overflow string) config.Config {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	cfg.Seeder.NewLinksPerPage = t
	cfg.Seeder.FrontierBudget = budget
	cfg.Seeder.FrontierLowWater = lowWater
	cfg.Seeder.FrontierOverflow = overflow
	return cfg
}

func parkFiles(t *testing.T, col *collection.Collection) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(col.Dir, FrontierDir, "*"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	return names
}

func releaseParked(t *testing.T, col *collection.Collection, cfg config.Config, all bool) *ReleaseSummary {
	t.Helper()
	s, err := Release(context.Background(), ReleaseOptions{Collection: col, Config: cfg, All: all, GraphTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The Sydney strategy (Castillo et al., Figure 2 with the links stored on
// disk, §3.2): of a page's 20 new links, t = 5 enter the frontier now, the
// other 15 are parked in one park file; released, they all get ids and
// the page's out-links are complete.
func TestSydneyParksAndReleases(t *testing.T) {
	cfg := frontierConfig(5, 0, 0, config.OverflowPark) // low water 0: only seeder release releases
	col := newCollection(t, cfg)
	urls := hubBatch(t, col, cfg, 20)
	s := runBatch(t, col, cfg, 1, false)
	if s.NewURLs != 5 || s.Parked != 15 || s.OutLinks != 5 || s.Frontier != 5 || s.Release == nil || s.Release.Files != 0 || s.Release.Left != 1 {
		t.Fatalf("summary %+v, release %+v", s, s.Release)
	}
	if got := parkFiles(t, col); !slices.Equal(got, []string{"park-00000001.sz"}) {
		t.Fatalf("park files %v", got)
	}
	g := readGraph(t, col)
	taken := 0
	for _, u := range urls {
		if d, ok := g.docs[u]; ok {
			taken++
			if d.Depth != 1 || d.Found != 1 || len(d.Anchors) != 1 {
				t.Errorf("%s: %+v", u, d)
			}
		}
	}
	if taken != 5 {
		t.Errorf("%d of the links have ids, want 5", taken)
	}
	// The same batch taken in again parks the same sample.
	again := newCollectionUnchecked(t, cfg)
	hubBatch(t, again, cfg, 20)
	runBatch(t, again, cfg, 1, false)
	if g2 := readGraph(t, again); !reflect.DeepEqual(g2.out, g.out) {
		t.Errorf("the sample is not reproducible:\n%v\n%v", g2.out, g.out)
	}

	r := releaseParked(t, col, cfg, false)
	if r.Files != 0 {
		t.Errorf("release with the frontier above low water 0 released %+v", r)
	}
	r = releaseParked(t, col, cfg, true)
	if r.Files != 1 || r.Links != 15 || r.NewURLs != 15 || r.OutLinks != 15 || r.FrontierAfter != 20 || r.Left != 0 {
		t.Errorf("release %+v", r)
	}
	if got := parkFiles(t, col); len(got) != 0 {
		t.Errorf("park files left after release: %v", got)
	}
	g = readGraph(t, col)
	want := append([]string{}, urls...)
	if !reflect.DeepEqual(g.out["http://a.cl/"], want) {
		t.Errorf("out-links after release\n got %v\nwant %v", g.out["http://a.cl/"], want)
	}
	for _, u := range urls {
		if d := g.doc(t, u); d.Depth != 1 || d.Found != 1 || len(d.Anchors) != 1 || d.State != linkgraph.StatePending {
			t.Errorf("%s after release: %+v", u, d)
		}
	}
}

// seeder run releases parked links by itself when the frontier is below
// seeder.frontier_low_water after the batch.
func TestRunReleasesBelowLowWater(t *testing.T) {
	cfg := frontierConfig(4, 0, 100, config.OverflowPark)
	col := newCollection(t, cfg)
	hubBatch(t, col, cfg, 10)
	s := runBatch(t, col, cfg, 1, false)
	if s.Parked != 6 || s.Release == nil || s.Release.Files != 1 || s.Release.NewURLs != 6 || s.Frontier != 10 {
		t.Fatalf("summary %+v, release %+v", s, s.Release)
	}
	var marker Summary
	if err := col.Batch(1).Summary(collection.StageSeeded, &marker); err != nil || marker.Release == nil || marker.Release.Files != 1 {
		t.Errorf("marker %+v, %v", marker, err)
	}
	if got := parkFiles(t, col); len(got) != 0 {
		t.Errorf("park files %v", got)
	}
}

// A parked link whose page has been fetched again since is stale: the
// page's new version was taken in (and parked its own links).
func TestReleaseDropsStaleLinks(t *testing.T) {
	cfg := frontierConfig(2, 0, 0, config.OverflowPark)
	col := newCollection(t, cfg)
	hubBatch(t, col, cfg, 5)
	runBatch(t, col, cfg, 1, false)
	t1 := t0.Add(time.Hour)
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t1, Links: []parsed.Link{{URL: "http://a.cl/new"}}}},
	})
	runBatch(t, col, cfg, 2, false)
	r := releaseParked(t, col, cfg, true)
	if r.Files != 1 || r.Stale != 3 || r.NewURLs != 0 {
		t.Errorf("release %+v", r)
	}
	g := readGraph(t, col)
	if !reflect.DeepEqual(g.out["http://a.cl/"], []string{"http://a.cl/new"}) {
		t.Errorf("out-links %v", g.out["http://a.cl/"])
	}
}

// The fixed budget (§3.3): with overflow "drop" the new URLs over the
// budget are forgotten and counted; with "park" they wait on disk, and a
// release takes in only what the budget allows and parks the rest again.
func TestFrontierBudget(t *testing.T) {
	t.Run("drop", func(t *testing.T) {
		cfg := frontierConfig(0, 4, 0, config.OverflowDrop)
		col := newCollection(t, cfg)
		hubBatch(t, col, cfg, 10)
		s := runBatch(t, col, cfg, 1, false)
		// The seed left the frontier when it was fetched: 4 new URLs fit.
		if s.NewURLs != 4 || s.Rejected[ReasonBudget] != 6 || s.Parked != 0 || s.Frontier != 4 {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("park", func(t *testing.T) {
		cfg := frontierConfig(0, 4, 0, config.OverflowPark)
		col := newCollection(t, cfg)
		hubBatch(t, col, cfg, 10)
		s := runBatch(t, col, cfg, 1, false)
		if s.NewURLs != 4 || s.Parked != 6 || s.Frontier != 4 {
			t.Errorf("summary %+v", s)
		}
		// Two of the four are fetched: the frontier has room for two.
		writeBatch(t, col, 2, testBatch{
			urls: []string{"http://a.cl/p00", "http://a.cl/p01"},
			docs: []*parsed.Doc{{URL: "http://a.cl/p00", Status: 404, Fetched: t0}, {URL: "http://a.cl/p01", Status: 404, Fetched: t0}},
		})
		runBatch(t, col, cfg, 2, false)
		r := releaseParked(t, col, cfg, true)
		if r.Files != 1 || r.NewURLs != 2 || r.Reparked != 4 || r.FrontierAfter != 4 || r.Left != 1 {
			t.Errorf("release %+v", r)
		}
		if got := parkFiles(t, col); !slices.Equal(got, []string{"park-00000002.sz"}) {
			t.Errorf("park files %v", got)
		}
	})
}

// New URLs deeper than the manager would ever schedule are not taken in.
func TestTooDeep(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	cfg.Manager.MaxDepthStatic, cfg.Manager.MaxDepthDynamic = 1, 0
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/")
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/"},
		docs: []*parsed.Doc{{URL: "http://a.cl/", Status: 200, Fetched: t0, Links: []parsed.Link{
			{URL: "http://a.cl/static"},   // depth 1: taken
			{URL: "http://a.cl/dyn?id=1"}, // dynamic at depth 1 > 0: too deep
			{URL: "http://b.cl/dyn?id=1"}, // another site: depth 0
		}}},
	})
	s := runBatch(t, col, cfg, 1, false)
	if s.NewURLs != 2 || s.Rejected[ReasonTooDeep] != 1 {
		t.Errorf("summary %+v", s)
	}
}

// A park file without a record (a run killed before its commit) is
// removed by the next run; check passes meanwhile.
func TestOrphanParkRemoved(t *testing.T) {
	cfg := frontierConfig(0, 0, 0, config.OverflowPark)
	col := newCollection(t, cfg)
	hubBatch(t, col, cfg, 1)
	dir := filepath.Join(col.Dir, FrontierDir)
	os.MkdirAll(dir, 0o755)
	for _, name := range []string{"park-00000007.sz", ".park-00000008.sz.tmp-123", "README"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	runBatch(t, col, cfg, 1, false)
	if got := parkFiles(t, col); !slices.Equal(got, []string{"README"}) {
		t.Errorf("files left %v", got)
	}
}

func TestParkFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := createPark(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := []parkedLink{
		{Src: 1, Fetched: t0, Depth: 2, Batch: 4, URL: "http://a.cl/x?y=1", Anchor: "an anchor"},
		{Src: 9, Depth: 0, Batch: 0, URL: "http://b.cl/", Anchor: ""},
	}
	for _, l := range in {
		if err := w.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	var out []parkedLink
	if err := readPark(filepath.Join(dir, parkName(3)), func(l parkedLink) error { out = append(out, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip\n got %+v\nwant %+v", out, in)
	}
}

// FuzzReadPark checks that no park file content makes the reader panic,
// and that what it accepts writes back to a file that reads the same.
func FuzzReadPark(f *testing.F) {
	f.Add("# wire-parked 1\n# columns: src fetched depth batch url anchor\n1\t0\t2\t3\thttp://a.cl/\tx\n")
	f.Add("# wire-parked 1\n# columns: src fetched depth batch url anchor\n1\t-5\t2\t3\thttp://a.cl/\t\n")
	f.Add("# wire-parked 2\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, content string) {
		var links []parkedLink
		err := readParkFrom(strings.NewReader(content), "fuzz", func(l parkedLink) error {
			links = append(links, l)
			return nil
		})
		if err != nil {
			return
		}
		dir := t.TempDir()
		w, err := createPark(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			if strings.ContainsAny(l.URL+l.Anchor, "\t\n") {
				return // the writer's callers never give these
			}
			w.Write(l)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		var again []parkedLink
		if err := readPark(filepath.Join(dir, parkName(1)), func(l parkedLink) error { again = append(again, l); return nil }); err != nil {
			t.Fatalf("written back: %v", err)
		}
		if !reflect.DeepEqual(links, again) {
			t.Fatalf("round trip\n%+v\n%+v", links, again)
		}
	})
}
