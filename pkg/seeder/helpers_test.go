package seeder

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// testConfig is the default config with a small site cap.
func testConfig() config.Config {
	cfg := config.Defaults()
	cfg.Scope.Domains = []string{"cl"}
	cfg.Scope.MaxPagesPerSite = 5
	return cfg
}

// newCollection creates a collection in a temporary directory and, when
// the test ends, runs Check on it and fails the test on any problem (as
// bbolt's btesting.MustCreateDB does for its databases).
func newCollection(t *testing.T, cfg config.Config) *collection.Collection {
	t.Helper()
	col := newCollectionUnchecked(t, cfg)
	t.Cleanup(func() {
		problems, err := check(col, time.Second, 0, false)
		if err != nil {
			t.Errorf("check collection: %v", err)
		}
		for _, p := range problems {
			t.Errorf("check collection: %s", p)
		}
	})
	return col
}

func newCollectionUnchecked(t *testing.T, cfg config.Config) *collection.Collection {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "col")
	if _, err := Init(dir, cfg); err != nil {
		t.Fatal(err)
	}
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return col
}

// addSeeds adds URLs as a seed list and fails on any rejection.
func addSeeds(t *testing.T, col *collection.Collection, cfg config.Config, urls ...string) {
	t.Helper()
	var problems bytes.Buffer
	if _, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader(strings.Join(urls, "\n")), "seeds", &problems); err != nil {
		t.Fatal(err)
	}
	if problems.Len() > 0 {
		t.Fatalf("seed problems: %s", problems.String())
	}
}

// testBatch is a batch written by hand the way the manager, harvester and
// gatherer would.
type testBatch struct {
	urls    []string          // scheduled URLs (must be known)
	robots  []fetchlog.Robots // nil: no robots.jsonl
	servers []fetchlog.Server // nil: no servers.jsonl
	docs    []*parsed.Doc     // DocID filled from URL when 0
}

// writeBatch writes batch id with its batch.tsv, harvest/robots.jsonl,
// parsed/docs.jsonl and the harvested and gathered markers.
func writeBatch(t *testing.T, col *collection.Collection, id int, tb testBatch) {
	t.Helper()
	ids := map[string]uint64{}
	g, err := openGraph(col, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *linkgraph.Tx) error {
		for _, u := range tb.urls {
			docID, ok := tx.LookupURL(u)
			if !ok {
				t.Fatalf("batch url %s is not in graph.db", u)
			}
			ids[u] = docID
		}
		return nil
	})
	g.Close()

	b := col.Batch(id)
	var entries []batch.Entry
	for _, u := range tb.urls {
		entries = append(entries, batch.Entry{DocID: ids[u], Site: urlnorm.SiteKey(u), Score: 1, Kind: batch.KindNew, URL: u})
	}
	h := batch.Header{Batch: id, Created: time.Now(), Strategy: "breadth-first", Counts: map[string]int{"urls": len(entries)}}
	if err := collection.WriteAtomic(b.File(), func(w io.Writer) error { return batch.Write(w, h, entries) }); err != nil {
		t.Fatal(err)
	}
	if tb.robots != nil {
		err := collection.WriteAtomic(filepath.Join(b.HarvestPath(), fetchlog.RobotsFile), func(w io.Writer) error {
			return fetchlog.WriteLines(w, tb.robots, fetchlog.FormatRobots)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if tb.servers != nil {
		err := collection.WriteAtomic(filepath.Join(b.HarvestPath(), fetchlog.ServersFile), func(w io.Writer) error {
			return fetchlog.WriteLines(w, tb.servers, fetchlog.FormatServer)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err = collection.WriteAtomic(filepath.Join(b.ParsedPath(), parsed.DocsFile), func(w io.Writer) error {
		pw := parsed.NewWriter(w)
		for _, d := range tb.docs {
			if d.DocID == 0 {
				d.DocID = ids[d.URL]
			}
			if err := pw.Write(d); err != nil {
				return err
			}
		}
		return pw.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []collection.Stage{collection.StageHarvested, collection.StageGathered} {
		if err := b.MarkDone(s, map[string]int{"batch": id}); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot is the graph's content, for comparing two states.
type snapshot struct {
	docs  map[string]linkgraph.Doc // by URL
	ids   map[uint64]string
	sites map[string]linkgraph.Site
	out   map[string][]string // out-links by URL, as URLs
}

func readGraph(t *testing.T, col *collection.Collection) snapshot {
	t.Helper()
	g, err := openGraph(col, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := snapshot{docs: map[string]linkgraph.Doc{}, ids: map[uint64]string{}, sites: map[string]linkgraph.Site{}, out: map[string][]string{}}
	err = g.View(func(tx *linkgraph.Tx) error {
		if err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if _, dup := s.ids[d.ID]; dup {
				t.Errorf("id %d used twice", d.ID)
			}
			s.docs[d.URL] = *d
			s.ids[d.ID] = d.URL
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ForEachSite(func(site *linkgraph.Site) error {
			s.sites[site.Key] = *site
			return nil
		}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = g.View(func(tx *linkgraph.Tx) error {
		return tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
			var urls []string
			for _, target := range bm.ToArray() {
				urls = append(urls, s.ids[uint64(target)])
			}
			sort.Strings(urls)
			s.out[s.ids[id]] = urls
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s snapshot) doc(t *testing.T, url string) linkgraph.Doc {
	t.Helper()
	d, ok := s.docs[url]
	if !ok {
		t.Fatalf("no document for %s", url)
	}
	return d
}

func runBatch(t *testing.T, col *collection.Collection, cfg config.Config, id int, force bool) *Summary {
	t.Helper()
	s, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Batch: id, Force: force, GraphTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
