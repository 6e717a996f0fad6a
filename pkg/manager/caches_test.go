package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// cacheWeb fills f with a web of n pages on a few sites, the first half
// fetched with links, and returns the random source the cycles go on
// with.
func cacheWeb(f *fixture, n int) *rand.Rand {
	r := rand.New(rand.NewPCG(3, 4))
	var pages []page
	for i := range n {
		p := page{url: fmt.Sprintf("http://s%d.cl/p%d", i%7, i), depth: 1 + i%4, found: i % 3}
		if i < n/2 {
			p.state, p.visits, p.fetched = linkgraph.StateFetched, 1, daysAgo(float64(8+i%40))
			for range 1 + r.IntN(8) {
				p.links = append(p.links, fmt.Sprintf("http://s%d.cl/p%d", r.IntN(7), r.IntN(n)))
			}
		}
		pages = append(pages, p)
	}
	f.add(pages...)
	return r
}

// seedCycle does what the seeder does with a harvested batch, roughly:
// each entry fetched now with a new out-link set (some to new URLs, a few
// empty), and the links of a few other pages added to or emptied.
func seedCycle(f *fixture, r *rand.Rand, entries int, cycle int, now time.Time) int {
	f.t.Helper()
	changed := 0
	f.update(func(tx *linkgraph.Tx) error {
		last := tx.LastDocID()
		target := func() (linkgraph.Target, error) {
			if r.IntN(5) == 0 { // a URL not known yet
				u := fmt.Sprintf("http://s%d.cl/new-%d-%d", r.IntN(9), cycle, r.IntN(1000))
				site, _, err := tx.AddSite(urlnorm.SiteKey(u))
				if err != nil {
					return linkgraph.Target{}, err
				}
				id, created, err := tx.AddURL(u, site, 2, cycle)
				if err != nil || !created {
					return linkgraph.Target{Doc: id, Site: site}, err
				}
				s, err := tx.Site(site) // the seeder counts a site's pages
				if err != nil {
					return linkgraph.Target{}, err
				}
				s.Pages++
				return linkgraph.Target{Doc: id, Site: site}, tx.PutSite(s)
			}
			id := 1 + r.Uint64N(last)
			site, err := tx.DocSite(id)
			return linkgraph.Target{Doc: id, Site: site}, err
		}
		batchID := 0
		for id := uint64(1); id <= last; id++ {
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if d.State != linkgraph.StateScheduled {
				continue
			}
			batchID = d.Batch
			d.State, d.Visits, d.Fetched = linkgraph.StateFetched, d.Visits+1, now
			d.History = append(d.History, linkgraph.Visit{Time: now, Status: 200, Changed: r.IntN(2) == 0})
			if err := tx.PutDoc(d); err != nil {
				return err
			}
			var targets []linkgraph.Target
			for range r.IntN(10) { // 0: the page has no links now
				tg, err := target()
				if err != nil {
					return err
				}
				targets = append(targets, tg)
			}
			if _, err := tx.ReplaceOutLinks(id, d.Site, targets); err != nil {
				return err
			}
			changed++
		}
		for range 3 { // links found again on pages not in the batch
			id := 1 + r.Uint64N(last)
			site, err := tx.DocSite(id)
			if err != nil {
				return err
			}
			tg, err := target()
			if err != nil {
				return err
			}
			if _, err := tx.AddOutLinks(id, site, []linkgraph.Target{tg}); err != nil {
				return err
			}
		}
		if batchID > 0 {
			return tx.PutBatch(linkgraph.BatchState{ID: batchID, URLs: entries, Managed: now, Seeded: now})
		}
		return nil
	})
	return changed
}

// graphRows reads every non-empty out-link set of graph.db.
func graphRows(tx *linkgraph.Tx) (map[uint32][]uint32, error) {
	rows := map[uint32][]uint32{}
	err := tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		if !bm.IsEmpty() {
			rows[uint32(id)] = bm.ToArray()
		}
		return nil
	})
	return rows, err
}

func cacheRows(t *testing.T, c *linkCache) map[uint32][]uint32 {
	t.Helper()
	rows := map[uint32][]uint32{}
	if err := c.forEach(context.Background(), func(src uint32, targets []uint32) error {
		rows[src] = slices.Clone(targets)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// graphFacts computes the facts of every document of graph.db.
func graphFacts(tx *linkgraph.Tx, rules *limits) ([]docFacts, error) {
	var all []docFacts
	err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
		all = append(all, factsOf(d, rules))
		return nil
	})
	return all, err
}

func cacheFacts(t *testing.T, c *docCache) []docFacts {
	t.Helper()
	var all []docFacts
	if err := c.forEach(context.Background(), func(f *docFacts) error {
		all = append(all, *f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all
}

// The incremental caches, over cycles of runs and seeding a day apart
// (every fetched page's freshness changes between runs), hold exactly
// what graph.db gives — the links cache its out-links, the documents
// cache the facts of its documents — and a plan made from them is the
// plan made from graph.db; a cache that is torn, damaged, from another
// state of graph.db, written by a run killed before it reset the change
// log, or (documents) made under other settings is rebuilt, never used;
// a killed run's temporary files are removed.
func TestCachesIncremental(t *testing.T) {
	for _, strategy := range []string{StrategyPageRank, StrategyPartialPageRank, StrategyOPIC} {
		t.Run(strategy, func(t *testing.T) { testCachesIncremental(t, strategy) })
	}
}

func testCachesIncremental(t *testing.T, strategy string) {
	f := newFixture(t)
	f.cfg.Manager.Strategy = strategy
	f.cfg.Manager.BatchSize = 40
	f.cfg.Manager.PageRankInterval = 60
	r := cacheWeb(f, 400)
	withLinks := readsLinks(strategy)
	paths := []string{f.col.DocsCachePath()}
	if withLinks {
		paths = append(paths, f.col.LinksCachePath())
	}
	stale := map[string][]byte{} // caches of an earlier state
	hows := map[string]int{}
	for cycle := 1; cycle <= 13; cycle++ {
		now := testNow.Add(time.Duration(cycle) * 24 * time.Hour)
		want, wantDocs := "updated", ""
		for _, path := range paths {
			switch cycle {
			case 1:
				want = "rebuilt" // no cache yet
			case 2:
				stale[path], _ = os.ReadFile(path)
			case 3: // torn: the file cut short
				data, _ := os.ReadFile(path)
				os.WriteFile(path, data[:len(data)/2], 0o644)
				want = "rebuilt"
			case 5: // damaged in the middle, same size and token: found
				// when the plan reads it, which Run then rebuilds
				data, _ := os.ReadFile(path)
				data[len(data)/2] ^= 0x40
				os.WriteFile(path, data, 0o644)
				want = "damaged"
			case 7: // a cache of an earlier state of graph.db
				os.WriteFile(path, stale[path], 0o644)
				want = "rebuilt"
			case 9: // killed after appending to the cache, before resetting the log
				f.view(func(tx *linkgraph.Tx) error {
					src, c, err := linkSource(), (*segFile)(nil), error(nil)
					if path == f.col.DocsCachePath() {
						src = docSource(newLimits(&f.cfg.Manager))
						dc, e := openDocCache(path)
						c, err = dc.segFile, e
					} else {
						lc, e := openLinkCache(path)
						c, err = lc.segFile, e
					}
					if err != nil {
						return err
					}
					_, err = appendSegment(context.Background(), tx, c, src, roaring.BitmapOf(1, 2), 12345)
					return err
				})
				want = "rebuilt"
			case 10: // killed while writing one
				os.WriteFile(filepath.Join(f.col.Dir, "."+filepath.Base(path)+".tmp-1"), []byte("torn"), 0o644)
			case 11: // killed while appending: the end of the file is not a trailer
				fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				fh.Write([]byte("torn append"))
				fh.Close()
				want = "rebuilt"
			case 12: // other settings: the documents' facts change, the links do not
				f.cfg.Manager.MinRevisit = config.Duration(6 * 24 * time.Hour)
				wantDocs = "rebuilt"
			}
		}
		if wantDocs == "" {
			wantDocs = want
		}
		g := f.open()
		caches := &runCaches{}
		rules := newLimits(&f.cfg.Manager)
		docs, res, err := refreshDocs(context.Background(), f.col, g, rules, factsFingerprint(&f.cfg.Manager), slog.New(slog.DiscardHandler))
		if err != nil {
			g.Close()
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		caches.docs = docs
		if !sameHow(res.how, wantDocs) {
			t.Errorf("cycle %d: documents cache %s (%s), want %s", cycle, res.how, res.why, wantDocs)
		}
		hows[res.how]++
		if withLinks {
			links, res, err := refreshLinks(context.Background(), f.col, g, slog.New(slog.DiscardHandler))
			if err != nil {
				g.Close()
				t.Fatalf("cycle %d: %v", cycle, err)
			}
			caches.links = links
			if !sameHow(res.how, want) {
				t.Errorf("cycle %d: links cache %s (%s), want %s", cycle, res.how, res.why, want)
			}
			hows["links "+res.how]++
		}
		if want == "damaged" {
			// The checksums find the damage as the cache is read; Run
			// rebuilds it and plans again.
			err := caches.docs.forEach(context.Background(), func(*docFacts) error { return nil })
			if withLinks && err == nil {
				err = caches.links.forEach(context.Background(), func(uint32, []uint32) error { return nil })
			}
			if !errors.Is(err, errCache) {
				t.Errorf("cycle %d: reading a damaged cache: %v, want errCache", cycle, err)
			}
		}
		err = g.View(func(tx *linkgraph.Tx) error {
			if want == "damaged" {
				return nil
			}
			wantFacts, err := graphFacts(tx, rules)
			if err != nil {
				return err
			}
			if got := cacheFacts(t, caches.docs); !reflect.DeepEqual(got, wantFacts) {
				t.Errorf("cycle %d: documents cache holds %d documents, graph.db %d, and they differ", cycle, len(got), len(wantFacts))
			}
			if withLinks {
				wantRows, err := graphRows(tx)
				if err != nil {
					return err
				}
				if got := cacheRows(t, caches.links); !reflect.DeepEqual(got, wantRows) {
					t.Errorf("cycle %d: links cache holds %d rows, graph.db %d, and they differ", cycle, len(got), len(wantRows))
				}
			}
			cfg := f.cfg
			p1, err := makePlan(context.Background(), tx, &cfg, now, slog.New(slog.DiscardHandler), 0, cycle, nil, caches)
			if err != nil {
				return err
			}
			p2, err := makePlan(context.Background(), tx, &cfg, now, slog.New(slog.DiscardHandler), 0, cycle, nil, nil)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(p1.entries, p2.entries) || !reflect.DeepEqual(p1.stats, p2.stats) || len(p1.entries) == 0 || (withLinks && strategy != StrategyPageRank && p1.stats.Links == 0) {
				t.Errorf("cycle %d: the plan from the caches (%d entries, %d links, %+v) is not the plan from graph.db (%d, %d, %+v)",
					cycle, len(p1.entries), p1.stats.Links, p1.stats.Skipped, len(p2.entries), p2.stats.Links, p2.stats.Skipped)
			}
			return nil
		})
		g.Close()
		if err != nil {
			t.Fatal(err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(f.col.Dir, ".graph.*.tmp-*")); len(tmps) > 0 {
			t.Errorf("cycle %d: temporary files left: %v", cycle, tmps)
		}
		opts := f.options()
		opts.Now = func() time.Time { return now }
		res2, err := Run(context.Background(), f.col, opts)
		if err != nil {
			t.Fatalf("cycle %d: run: %v", cycle, err)
		}
		seedCycle(f, r, res2.URLs, cycle, now.Add(time.Hour))
	}
	if hows["appended"] == 0 || (withLinks && hows["links appended"] == 0) {
		t.Errorf("over the cycles the caches were %v: want some appended", hows)
	}
}

// TestCacheAppends: from one cycle to the next a cache grows by the rows
// of the documents that changed (a segment of their rows, the index and
// the trailer), not by the collection; once the appended segments pass a
// third of the rows' bytes the file is compacted into one segment; the
// cache holds what graph.db holds throughout.
func TestCacheAppends(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.BatchSize = 60
	r := cacheWeb(f, 400)
	hows := map[string]int{}
	var size int64
	segs := 0
	for cycle := 1; cycle <= 12; cycle++ {
		now := testNow.Add(time.Duration(cycle) * 24 * time.Hour)
		g := f.open()
		var changed uint64
		g.View(func(tx *linkgraph.Tx) error {
			_, ids, err := tx.DocChanges()
			changed = ids.GetCardinality()
			return err
		})
		rules := newLimits(&f.cfg.Manager)
		docs, res, err := refreshDocs(context.Background(), f.col, g, rules, factsFingerprint(&f.cfg.Manager), slog.New(slog.DiscardHandler))
		if err != nil {
			g.Close()
			t.Fatal(err)
		}
		hows[res.how]++
		t.Logf("cycle %d: %s, %d segments, %d bytes", cycle, res.how, len(docs.segs), docs.size)
		if res.how == "appended" && len(docs.segs) <= segs {
			hows["compacted"]++ // by the last cycle's run
			size = 0
		}
		segs = len(docs.segs)
		switch {
		case cycle == 1 && res.how != "rebuilt":
			t.Errorf("cycle 1: %s, want rebuilt", res.how)
		case cycle > 1 && res.how == "rebuilt":
			t.Errorf("cycle %d: rebuilt (%s)", cycle, res.why)
		case res.how == "appended" && size > 0:
			grew := docs.size - size
			if max := int64(changed)*(8+factsSize) + 2*(int64(len(docs.segs))*segIndexEntry+segTrailer); grew > max || changed == 0 {
				t.Errorf("cycle %d: the cache grew by %d bytes for %d changed documents, more than %d", cycle, grew, changed, max)
			}
		case res.how == "compacted":
			if len(docs.segs) != 1 {
				t.Errorf("cycle %d: compacted into %d segments", cycle, len(docs.segs))
			}
		}
		size = docs.size
		g.View(func(tx *linkgraph.Tx) error {
			want, err := graphFacts(tx, rules)
			if got := cacheFacts(t, docs); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("cycle %d: the cache does not hold graph.db's facts (%v)", cycle, err)
			}
			return nil
		})
		g.Close()
		opts := f.options()
		opts.Now = func() time.Time { return now }
		res2, err := Run(context.Background(), f.col, opts)
		if err != nil {
			t.Fatalf("cycle %d: run: %v", cycle, err)
		}
		seedCycle(f, r, res2.URLs, cycle, now.Add(time.Hour))
	}
	if hows["appended"] < 5 || hows["compacted"] == 0 {
		t.Errorf("over the cycles the documents cache was %v: want mostly appended, sometimes compacted", hows)
	}
}

// sameHow tells whether a refresh that did how is what the test wants:
// "updated" is appended or compacted; "damaged" (found only when read)
// anything.
func sameHow(how, want string) bool {
	switch want {
	case "updated":
		return how == "appended" || how == "compacted"
	case "damaged":
		return true
	}
	return how == want
}
