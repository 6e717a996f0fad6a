package manager

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func daysAgo(n float64) time.Time { return testNow.Add(-time.Duration(n * 24 * float64(time.Hour))) }

// fixture is a collection in a temporary directory whose graph.db is
// checked for consistency when the test ends.
type fixture struct {
	t   *testing.T
	col *collection.Collection
	cfg config.Config
	ids map[string]uint64 // URL → doc id of the pages added
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	col, err := collection.Create(t.TempDir(), config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, col: col, cfg: config.Defaults(), ids: map[string]uint64{}}
	// The tests' batches last batch_duration, as each test sets it; the
	// adaptive length has tests of its own (batchlength_test.go).
	f.cfg.Manager.BatchCycleFactor = 0
	f.open().Close() // graph.db, as seeder init makes it with the collection
	t.Cleanup(func() {
		f.view(func(tx *linkgraph.Tx) error {
			if errs := tx.Check(10); len(errs) > 0 {
				t.Errorf("graph.db check: %v", errors.Join(errs...))
			}
			return nil
		})
	})
	return f
}

func (f *fixture) open() *linkgraph.Graph {
	f.t.Helper()
	g, err := linkgraph.Open(f.col.GraphPath(), false, time.Second)
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

func (f *fixture) update(fn func(tx *linkgraph.Tx) error) {
	f.t.Helper()
	g := f.open()
	defer g.Close()
	if err := g.Update(fn); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) view(fn func(tx *linkgraph.Tx) error) {
	f.t.Helper()
	g := f.open()
	defer g.Close()
	if err := g.View(fn); err != nil {
		f.t.Fatal(err)
	}
}

// page describes a document to add; zero fields keep AddURL's defaults
// (pending).
type page struct {
	url      string
	depth    int
	found    int
	state    linkgraph.State
	batch    int
	visits   int
	changes  int
	first    time.Time
	fetched  time.Time
	failures int
	anchors  []string
	links    []string // URLs of out-links (added first if unknown)
	lm, etag string
	history  []linkgraph.Visit
}

// add adds the pages in order (so their ids follow the order), then
// their links.
func (f *fixture) add(pages ...page) {
	f.t.Helper()
	f.update(func(tx *linkgraph.Tx) error {
		addURL := func(u string, depth, found int) (uint64, error) {
			site, _, err := tx.AddSite(urlnorm.SiteKey(u))
			if err != nil {
				return 0, err
			}
			id, created, err := tx.AddURL(u, site, depth, found)
			if err != nil {
				return 0, err
			}
			f.ids[u] = id
			if created { // the seeder counts a site's pages
				s, err := tx.Site(site)
				if err != nil {
					return 0, err
				}
				s.Pages++
				if err := tx.PutSite(s); err != nil {
					return 0, err
				}
			}
			return id, nil
		}
		for _, p := range pages {
			id, err := addURL(p.url, p.depth, p.found)
			if err != nil {
				return err
			}
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if p.state != "" {
				d.State = p.state
			}
			d.Batch, d.Visits, d.Changes, d.FirstFetched, d.Fetched = p.batch, p.visits, p.changes, p.first, p.fetched
			d.Failures, d.Anchors = p.failures, p.anchors
			d.LastModified, d.ETag, d.History = p.lm, p.etag, p.history
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		for _, p := range pages {
			if len(p.links) == 0 {
				continue
			}
			bm := roaring.New()
			for _, l := range p.links {
				id, err := addURL(l, 1, 1)
				if err != nil {
					return err
				}
				bm.Add(uint32(id))
			}
			if err := tx.SetOutLinks(f.ids[p.url], bm); err != nil {
				return err
			}
		}
		return nil
	})
}

// site changes the record of the site with key (which must exist).
func (f *fixture) site(key string, change func(s *linkgraph.Site)) {
	f.t.Helper()
	f.update(func(tx *linkgraph.Tx) error {
		id, ok := tx.SiteID(key)
		if !ok {
			f.t.Fatalf("no site %s", key)
		}
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		change(s)
		return tx.PutSite(s)
	})
}

func (f *fixture) doc(url string) *linkgraph.Doc {
	f.t.Helper()
	var d *linkgraph.Doc
	f.view(func(tx *linkgraph.Tx) error {
		var err error
		d, err = tx.Doc(f.ids[url])
		return err
	})
	return d
}

func (f *fixture) batchState(id int) (linkgraph.BatchState, bool) {
	f.t.Helper()
	var b linkgraph.BatchState
	var ok bool
	f.view(func(tx *linkgraph.Tx) error {
		var err error
		b, ok, err = tx.Batch(id)
		return err
	})
	return b, ok
}

func (f *fixture) options() Options {
	return Options{Config: f.cfg, Now: func() time.Time { return testNow }, GraphTimeout: time.Second}
}

func (f *fixture) run() (*Result, error) {
	f.t.Helper()
	return Run(context.Background(), f.col, f.options())
}

func (f *fixture) mustRun() *Result {
	f.t.Helper()
	res, err := f.run()
	if err != nil {
		f.t.Fatalf("run: %v", err)
	}
	return res
}

func (f *fixture) cancel(force bool) (*CancelResult, error) {
	return Cancel(context.Background(), f.col, CancelOptions{Force: force, GraphTimeout: time.Second})
}
