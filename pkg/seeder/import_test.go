package seeder

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// robotsNoDeep is the newer robots.txt copy the new collection has of
// b.cl before the import.
const robotsNoDeep = "User-agent: *\nDisallow: /deep\n"

// oldCrawl is the collection of TestRunFirstBatch after its batch: sites
// a, b, c, d and f (robots.txt copies of a, b and c, fetched at t0);
// depth-0 pages a.cl/, b.cl/, c.cl/x, d.cl/, f.cl/, b.cl/deep and the
// excluded a.cl/private/old; a.cl/ the only page fetched with a 2xx.
func oldCrawl(t *testing.T) *collection.Collection {
	t.Helper()
	cfg := testConfig()
	col := firstBatch(t, cfg, true)
	runBatch(t, col, cfg, 0, false)
	return col
}

// recrawl is a new collection whose scope leaves d.cl out, that already
// knows a.cl/ and b.cl/, with a robots.txt copy of b.cl newer than the
// old crawl's.
func recrawl(t *testing.T) (*collection.Collection, config.Config) {
	t.Helper()
	cfg := testConfig()
	cfg.Scope.Exclude = []string{`^http://d\.cl/`}
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/")
	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Update(func(tx *linkgraph.Tx) error {
		id, ok := tx.SiteID("http://b.cl")
		if !ok {
			t.Fatal("no site b.cl")
		}
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		s.RobotsStatus, s.RobotsBody, s.RobotsFetched = 200, robotsNoDeep, t0.Add(time.Hour)
		return tx.PutSite(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	return col, cfg
}

func TestImport(t *testing.T) {
	old := oldCrawl(t)
	col, cfg := recrawl(t)
	out := filepath.Join(t.TempDir(), "seeds.txt")
	var problems bytes.Buffer
	opts := ImportOptions{Collection: col, Config: cfg, From: old.Dir, SeedsOut: out, Problems: &problems, GraphTimeout: time.Second}
	s, err := Import(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Sites: d.cl is out of scope; a.cl and b.cl were known; a.cl takes
	// the old copy (it had none), b.cl keeps its newer one.
	if s.From != old.Dir || s.Sites != 4 || s.NewSites != 2 || s.Robots != 2 || s.OutOfScope != 1 {
		t.Errorf("sites summary %+v, want 4 sites, 2 new, 2 robots copies, 1 out of scope", s)
	}
	// Seeds: the six depth-0 pages not excluded; d.cl/ out of scope,
	// a.cl/ and b.cl/ known, b.cl/deep excluded by b.cl's own robots.txt.
	wantSeeds := SeedSummary{Lines: 6, Added: 3, Known: 2, Excluded: 1, Rejected: map[string]int{"excluded": 1}}
	if s.Seeds == nil || !reflect.DeepEqual(*s.Seeds, wantSeeds) {
		t.Errorf("seeds summary %+v, want %+v", s.Seeds, wantSeeds)
	}
	if !strings.Contains(problems.String(), `excluded: "http://d.cl/"`) {
		t.Errorf("problems %q, want d.cl/ excluded", problems.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(data))
	sort.Strings(got)
	want := []string{"http://a.cl/", "http://b.cl/", "http://b.cl/deep", "http://c.cl/x", "http://d.cl/", "http://f.cl/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("seeds file %q, want %q", got, want)
	}
	var text bytes.Buffer
	s.WriteText(&text)
	if !strings.HasPrefix(text.String(), "sites: 4 of "+old.Dir+" imported (2 new here, 2 robots.txt copies), 1 out of scope\nseeds: 6 urls read: 3 added (1 excluded by robots.txt), 2 already known, 0 new sites;") {
		t.Errorf("text summary %q", text.String())
	}

	g := readGraph(t, col)
	if len(g.sites) != 4 {
		t.Errorf("sites %v, want a, b, c, f", g.sites)
	}
	if _, ok := g.sites["http://d.cl"]; ok {
		t.Error("site d.cl, out of scope, imported")
	}
	if a := g.sites["http://a.cl"]; a.RobotsStatus != 200 || a.RobotsBody != robotsPrivate || !a.RobotsFetched.Equal(t0) || a.Pages != 1 {
		t.Errorf("site a.cl %+v, want the old robots.txt and this collection's page count", a)
	}
	if b := g.sites["http://b.cl"]; b.RobotsStatus != 200 || b.RobotsBody != robotsNoDeep || !b.RobotsFetched.Equal(t0.Add(time.Hour)) {
		t.Errorf("site b.cl %+v, want its own newer robots.txt", b)
	}
	if c := g.sites["http://c.cl"]; c.RobotsStatus != 404 || !c.RobotsFetched.Equal(t0) {
		t.Errorf("site c.cl %+v, want the old robots.txt copy", c)
	}
	for url, state := range map[string]linkgraph.State{
		"http://a.cl/":     linkgraph.StatePending,
		"http://b.cl/":     linkgraph.StatePending,
		"http://c.cl/x":    linkgraph.StatePending,
		"http://f.cl/":     linkgraph.StatePending,
		"http://b.cl/deep": linkgraph.StateExcluded,
	} {
		if d := g.doc(t, url); d.Depth != 0 || d.State != state {
			t.Errorf("%s: depth %d state %s, want 0 %s", url, d.Depth, d.State, state)
		}
	}
	if len(g.docs) != 5 {
		t.Errorf("%d docs, want 5", len(g.docs))
	}

	// Twice adds nothing.
	s, err = Import(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sites != 4 || s.NewSites != 0 || s.Robots != 0 || s.Seeds.Added != 0 || s.Seeds.NewSites != 0 {
		t.Errorf("second import %+v seeds %+v, want nothing new", s, s.Seeds)
	}
	if g2 := readGraph(t, col); !reflect.DeepEqual(g2, g) {
		t.Error("second import changed graph.db")
	}
}

func TestImportFetched(t *testing.T) {
	old := oldCrawl(t)
	col, cfg := recrawl(t)
	s, err := Import(context.Background(), ImportOptions{Collection: col, Config: cfg, From: old.Dir, Seeds: ImportFetched})
	if err != nil {
		t.Fatal(err)
	}
	// Only a.cl/ was fetched with a 2xx, and it is known here.
	if s.Seeds.Lines != 1 || s.Seeds.Known != 1 || s.Seeds.Added != 0 {
		t.Errorf("seeds %+v, want a.cl/ only", s.Seeds)
	}
}

func TestImportErrors(t *testing.T) {
	old := oldCrawl(t)
	col, cfg := recrawl(t)
	before := readGraph(t, col)
	opts := func(f func(*ImportOptions)) ImportOptions {
		o := ImportOptions{Collection: col, Config: cfg, From: old.Dir, GraphTimeout: 50 * time.Millisecond}
		f(&o)
		return o
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		opts  ImportOptions
		hold  func(t *testing.T) func() // holds something for the call
		want  []error
		words string
	}{
		{name: "self", opts: opts(func(o *ImportOptions) { o.From = col.Dir }), want: []error{ErrImportSelf}, words: "is this collection"},
		{name: "seed choice", opts: opts(func(o *ImportOptions) { o.Seeds = "all" }), want: []error{ErrImportSeeds}},
		{name: "not a collection", opts: opts(func(o *ImportOptions) { o.From = t.TempDir() }), want: []error{collection.ErrNotCollection}},
		{name: "seeder lock", opts: opts(func(*ImportOptions) {}), want: []error{collection.ErrLocked},
			hold: func(t *testing.T) func() {
				l, err := col.Lock(LockName)
				if err != nil {
					t.Fatal(err)
				}
				return func() { l.Release() }
			}},
		{name: "old graph busy", opts: opts(func(*ImportOptions) {}), want: []error{linkgraph.ErrBusy}, words: "wait until its manager or seeder is done",
			hold: func(t *testing.T) func() {
				g, err := openGraph(old, false, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				return func() { g.Close() }
			}},
		{name: "new graph busy", opts: opts(func(*ImportOptions) {}), want: []error{linkgraph.ErrBusy}, words: "import into",
			hold: func(t *testing.T) func() {
				g, err := openGraph(col, false, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				return func() { g.Close() }
			}},
		{name: "cancelled", ctx: cancelled, opts: opts(func(*ImportOptions) {}), want: []error{context.Canceled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hold != nil {
				defer tc.hold(t)()
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			_, err := Import(ctx, tc.opts)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v, want %v", err, w)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tc.words) {
				t.Errorf("error %q does not say %q", err, tc.words)
			}
		})
	}
	if after := readGraph(t, col); !reflect.DeepEqual(after, before) {
		t.Error("a failed import changed graph.db")
	}
}
