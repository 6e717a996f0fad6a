package linkgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// openTemp opens a new graph.db in a temporary directory and checks its
// invariants when the test ends (as bbolt's btesting.MustCreateDB does).
func openTemp(t *testing.T) (*Graph, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mustCheck(t, g)
		g.Close()
	})
	return g, path
}

func mustCheck(t *testing.T, g *Graph) {
	t.Helper()
	if err := g.View(func(tx *Tx) error {
		return errors.Join(tx.Check(10)...)
	}); err != nil {
		t.Errorf("graph check: %v", err)
	}
}

func TestAddURLOneID(t *testing.T) {
	g, _ := openTemp(t)
	var a, b, c uint64
	err := g.Update(func(tx *Tx) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		a, _, _ = tx.AddURL("http://a.cl/", site, 0, 0)
		b, _, _ = tx.AddURL("http://a.cl/x", site, 1, 0)
		var created bool
		c, created, _ = tx.AddURL("http://a.cl/", site, 3, 1)
		if created {
			t.Error("known URL created again")
		}
		if err := bumpPages(tx, site, 2); err != nil {
			return err
		}
		bm := roaring.BitmapOf(uint32(b))
		return tx.SetOutLinks(a, bm)
	})
	if err != nil {
		t.Fatal(err)
	}
	if a != c || a == b || a != 1 || b != 2 {
		t.Fatalf("ids a=%d b=%d c=%d", a, b, c)
	}
	err = g.View(func(tx *Tx) error {
		d, err := tx.Doc(a)
		if err != nil {
			return err
		}
		if d.URL != "http://a.cl/" || d.Depth != 0 || d.State != StatePending {
			t.Errorf("doc %+v", d)
		}
		bm, err := tx.OutLinks(a)
		if err != nil {
			return err
		}
		if !bm.Contains(uint32(b)) || bm.GetCardinality() != 1 {
			t.Errorf("out-links %v", bm.ToArray())
		}
		in, err := tx.InLinks(b)
		if err != nil {
			return err
		}
		if !slices.Equal(in.ToArray(), []uint32{uint32(a)}) {
			t.Errorf("in-links of b %v", in.ToArray())
		}
		st, err := tx.Stats()
		if st.Docs != 2 || st.Sites != 1 || st.Links != 1 || st.Frontier != 2 || st.SiteLinks != 0 {
			t.Errorf("stats %+v", st)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bumpPages adds n to a site's page count (the seeder's job).
func bumpPages(tx *Tx, site uint64, n int) error {
	s, err := tx.Site(site)
	if err != nil {
		return err
	}
	s.Pages += n
	return tx.PutSite(s)
}

func TestBusyAndVersion(t *testing.T) {
	_, path := openTemp(t)
	if _, err := Open(path, false, 50*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("second open: %v, want ErrBusy", err)
	}
}

func TestUnknownVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.db.Update(func(btx *bboltTx) error { return btx.Bucket(bucketMeta).Put(keyVersion, []byte("9")) })
	g.Close()
	for _, ro := range []bool{true, false} {
		if _, err := Open(path, ro, time.Second); !errors.Is(err, ErrVersion) {
			t.Errorf("open version 9 (read-only %v): %v, want ErrVersion", ro, err)
		}
	}
}

// TestVersion2Upgrade: a version 2 file (written by a program that kept
// no change logs, or kept them and was then mixed with one that did not)
// is read as it is, and opened for writing becomes version 3 with its
// change logs dropped: their tokens read 0, so that every cache built on
// them is rebuilt.
func TestVersion2Upgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	smallGraph(t, g)
	if err := g.Update(func(tx *Tx) error {
		if err := tx.ResetDocChanges(7); err != nil {
			return err
		}
		return tx.ResetOutChanges(8)
	}); err != nil {
		t.Fatal(err)
	}
	g.db.Update(func(btx *bboltTx) error { return btx.Bucket(bucketMeta).Put(keyVersion, []byte(versionV2)) })
	g.Close()
	version := func(g *Graph) string {
		var v []byte
		g.db.View(func(btx *bboltTx) error {
			v = append(v, btx.Bucket(bucketMeta).Get(keyVersion)...)
			return nil
		})
		return string(v)
	}
	tokens := func(g *Graph) (doc, out uint64) {
		g.View(func(tx *Tx) error {
			doc, _, err = tx.DocChanges()
			if err == nil {
				out, _, err = tx.OutChanges()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return doc, out
	}
	ro, err := Open(path, true, time.Second)
	if err != nil {
		t.Fatalf("version 2 read-only: %v", err)
	}
	if v := version(ro); v != versionV2 || ro.Legacy() {
		t.Errorf("version 2 read-only: version %q, legacy %v", v, ro.Legacy())
	}
	ro.Close()
	g, err = Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if v := version(g); v != Version || Version != "3" {
		t.Errorf("version after opening for writing %q, want 3", v)
	}
	if doc, out := tokens(g); doc != 0 || out != 0 {
		t.Errorf("change log tokens after the upgrade %d, %d, want 0 (never reset)", doc, out)
	}
	mustCheck(t, g)
}

// graph builds a small graph in one transaction: sites a.cl, b.cl, c.cl
// and documents 1..6 with every site's pages counted.
func smallGraph(t *testing.T, g *Graph) {
	t.Helper()
	err := g.Update(func(tx *Tx) error {
		for _, u := range []string{"http://a.cl/", "http://a.cl/1", "http://b.cl/", "http://b.cl/1", "http://c.cl/", "http://a.cl/2"} {
			key := u[:strings.Index(u[7:], "/")+7]
			site, _, err := tx.AddSite(key)
			if err != nil {
				return err
			}
			if _, _, err := tx.AddURL(u, site, 0, 0); err != nil {
				return err
			}
			if err := bumpPages(tx, site, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Replacing out-link sets, in one transaction or several, keeps the
// in-links an exact mirror and the site graph counted per pair of sites.
// TestInLinksAndSiteGraph runs its steps without PrepareFlush, with it
// at the end of each transaction (the in-link sets computed on a
// snapshot), at its start (nothing to prepare yet) and in the middle
// (changes after it: computed again).
func TestInLinksAndSiteGraph(t *testing.T) {
	for _, when := range []string{"never", "end", "start", "middle"} {
		t.Run(when, func(t *testing.T) { testInLinksAndSiteGraph(t, when) })
	}
}

func testInLinksAndSiteGraph(t *testing.T, when string) {
	g, _ := openTemp(t)
	smallGraph(t, g)
	prep := func(tx *Tx, at string) {
		if at == when {
			tx.PrepareFlush()
		}
	}
	// a.cl = site 1 (docs 1, 2, 6), b.cl = 2 (docs 3, 4), c.cl = 3 (doc 5)
	tg := func(ids ...uint64) []Target {
		site := map[uint64]uint64{1: 1, 2: 1, 6: 1, 3: 2, 4: 2, 5: 3}
		var out []Target
		for _, id := range ids {
			out = append(out, Target{Doc: id, Site: site[id]})
		}
		return out
	}
	steps := []struct {
		name string
		fn   func(tx *Tx) error
	}{
		{"first links", func(tx *Tx) error {
			if _, err := tx.ReplaceOutLinks(1, 1, tg(2, 3, 4, 4, 1)); err != nil {
				return err
			}
			_, err := tx.ReplaceOutLinks(3, 2, tg(1, 5))
			return err
		}},
		{"replace twice in one transaction", func(tx *Tx) error {
			if _, err := tx.ReplaceOutLinks(1, 1, tg(2, 5)); err != nil {
				return err
			}
			prep(tx, "middle")
			if _, err := tx.ReplaceOutLinks(1, 1, tg(2, 3, 6)); err != nil {
				return err
			}
			return tx.SetOutLinks(6, roaring.BitmapOf(3))
		}},
		{"empty set", func(tx *Tx) error {
			_, err := tx.ReplaceOutLinks(3, 2, nil)
			return err
		}},
	}
	wantIn := []map[uint64][]uint32{
		{1: {1, 3}, 2: {1}, 3: {1}, 4: {1}, 5: {3}},
		{1: {3}, 2: {1}, 3: {1, 6}, 5: {3}, 6: {1}},
		{2: {1}, 3: {1, 6}, 6: {1}},
	}
	wantSites := []map[[2]uint64]uint32{
		{{1, 2}: 2, {2, 1}: 1, {2, 3}: 1},
		{{1, 2}: 2, {2, 1}: 1, {2, 3}: 1},
		{{1, 2}: 2},
	}
	for i, st := range steps {
		if err := g.Update(func(tx *Tx) error {
			prep(tx, "start")
			if err := st.fn(tx); err != nil {
				return err
			}
			prep(tx, "end")
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		mustCheck(t, g)
		g.View(func(tx *Tx) error {
			got := map[uint64][]uint32{}
			tx.ForEachInLinks(func(id uint64, bm *roaring.Bitmap) error {
				got[id] = bm.ToArray()
				return nil
			})
			if !reflect.DeepEqual(got, wantIn[i]) {
				t.Errorf("%s: in-links %v, want %v", st.name, got, wantIn[i])
			}
			sites := map[[2]uint64]uint32{}
			tx.ForEachSiteLinks(func(site uint64, linked *roaring.Bitmap, counts []uint32) error {
				for j, s := range linked.ToArray() {
					sites[[2]uint64{site, uint64(s)}] = counts[j]
				}
				return nil
			})
			if !reflect.DeepEqual(sites, wantSites[i]) {
				t.Errorf("%s: site graph %v, want %v", st.name, sites, wantSites[i])
			}
			return nil
		})
	}
}

func TestFrontierFollowsStates(t *testing.T) {
	g, _ := openTemp(t)
	smallGraph(t, g)
	set := func(id uint64, fn func(d *Doc)) {
		t.Helper()
		if err := g.Update(func(tx *Tx) error {
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			fn(d)
			return tx.PutDoc(d)
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(1, func(d *Doc) { d.State = StateScheduled })                        // first fetch scheduled: still frontier
	set(2, func(d *Doc) { d.State, d.Visits = StateFetched, 1 })             // fetched: out
	set(3, func(d *Doc) { d.State = StateExcluded })                         // excluded: out
	set(4, func(d *Doc) { d.State, d.Failures = StateFailed, 1 })            // failed: out
	set(5, func(d *Doc) { d.State, d.Visits = StateScheduled, 2 })           // a revisit: out
	set(6, func(d *Doc) { d.State = StateExcluded; d.State = StatePending }) // back to pending: in
	g.View(func(tx *Tx) error {
		fr, err := tx.Frontier()
		if err != nil {
			return err
		}
		if got := fr.ToArray(); !slices.Equal(got, []uint32{1, 6}) {
			t.Errorf("frontier %v, want [1 6]", got)
		}
		return nil
	})
}

func TestCheckFindsViolations(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(tx *Tx) error
		want    string
	}{
		{"dangling out-link", func(tx *Tx) error {
			return tx.tx.Bucket(bucketOut).Put(u64(1), mustBytes(roaring.BitmapOf(99)))
		}, "links to missing doc 99"},
		{"in-link without out-link", func(tx *Tx) error {
			return tx.tx.Bucket(bucketIn).Put(u64(2), mustBytes(roaring.BitmapOf(5)))
		}, "do not mirror out-links"},
		{"out-link without in-link", func(tx *Tx) error {
			return tx.tx.Bucket(bucketIn).Delete(u64(3))
		}, "in-links of doc 3 missing"},
		{"site graph count", func(tx *Tx) error {
			return tx.tx.Bucket(bucketSiteLinks).Put(u64(1), encodeSiteLinks(map[uint32]uint32{2: 7}))
		}, "7 links from site 1 to site 2"},
		{"frontier set", func(tx *Tx) error {
			return tx.tx.Bucket(bucketMeta).Put(keyFrontier, mustBytes(roaring.BitmapOf(1)))
		}, "frontier set"},
		{"url to wrong id", func(tx *Tx) error {
			return tx.tx.Bucket(bucketURLs).Put([]byte("http://a.cl/1"), u64(1))
		}, "maps to id 1"},
		{"site pages", func(tx *Tx) error { return bumpPages(tx, 2, 3) }, "pages 5, but 2 documents"},
		{"document on another site", func(tx *Tx) error {
			d, _ := tx.Doc(5)
			d.Site = 1
			return tx.tx.Bucket(bucketDocs).Put(u64(5), appendDoc(nil, d))
		}, "is not on its site"},
		{"counter", func(tx *Tx) error { return tx.tx.Bucket(bucketMeta).Put(keyNextDoc, u64(9)) }, "counter next_doc 9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "graph.db")
			g, err := Open(path, false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			smallGraph(t, g)
			g.Update(func(tx *Tx) error {
				tx.ReplaceOutLinks(1, 1, []Target{{3, 2}, {2, 1}})
				return nil
			})
			mustCheck(t, g)
			g.db.Update(func(btx *bboltTx) error { return c.corrupt(newTx(btx)) })
			g.View(func(tx *Tx) error {
				errs := tx.Check(10)
				if !strings.Contains(errors.Join(errs...).Error()+" ", c.want) {
					t.Errorf("check found %v, want %q", errs, c.want)
				}
				return nil
			})
		})
	}
}

// ForEachSiteURL is a key range: it must not spill into a site whose key
// merely starts with the same characters (another port, a longer host).
func TestForEachSiteURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var got []string
	err = g.Update(func(tx *Tx) error {
		for _, u := range []string{"http://a.cl/", "http://a.cl/x?y", "http://a.cl:8080/", "http://a.cla.cl/", "http://a.c/", "https://a.cl/", "http://a.cl/z"} {
			site, _, err := tx.AddSite(u[:strings.Index(u[8:], "/")+8])
			if err != nil {
				return err
			}
			if _, _, err := tx.AddURL(u, site, 0, 0); err != nil {
				return err
			}
		}
		return tx.ForEachSiteURL("http://a.cl", func(u string, id uint64) error {
			got = append(got, u)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://a.cl/", "http://a.cl/x?y", "http://a.cl/z"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// copyFixture copies a frozen graph.db from testdata to a temporary file.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	in, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "graph.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// testdata/graph-v1.db was written by the version 1 seeder (the batch of
// pkg/seeder's TestRunFirstBatch): it must keep opening, read-only as it
// is, and for writing upgraded to version 2 with every invariant.
func TestVersion1Fixture(t *testing.T) {
	path := copyFixture(t, "graph-v1.db")
	g, err := Open(path, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var before Stats
	var page1 *Doc
	g.View(func(tx *Tx) error {
		if !g.Legacy() {
			t.Error("a version 1 file read-only should be legacy")
		}
		if _, err := tx.InLinks(1); !errors.Is(err, ErrNeedsUpgrade) {
			t.Errorf("InLinks on version 1: %v, want ErrNeedsUpgrade", err)
		}
		if errs := tx.Check(10); len(errs) > 0 {
			t.Errorf("check version 1: %v", errs)
		}
		id, ok := tx.LookupURL("http://a.cl/page1")
		if !ok {
			t.Fatal("page1 missing")
		}
		page1, err = tx.Doc(id)
		before, err = tx.Stats()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if before.Docs != 11 || before.Sites != 5 || before.Links != 8 || before.Frontier != 6 {
		t.Errorf("version 1 stats %+v", before)
	}
	if !slices.Equal(page1.Anchors, []string{"Page One", "Again"}) || page1.Depth != 1 || page1.State != StatePending {
		t.Errorf("page1 %+v", page1)
	}
	g.Close()

	g, err = Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	mustCheck(t, g)
	g.View(func(tx *Tx) error {
		after, err := tx.Stats()
		if err != nil {
			return err
		}
		if after.Docs != before.Docs || after.Links != before.Links || after.Frontier != before.Frontier || after.SiteLinks != 2 {
			t.Errorf("upgraded stats %+v, before %+v", after, before)
		}
		in, err := tx.InLinks(page1.ID)
		if err != nil || in.GetCardinality() != 1 {
			t.Errorf("in-links of page1 %v, %v", in, err)
		}
		d, err := tx.Doc(page1.ID)
		if err != nil || !reflect.DeepEqual(d, page1) {
			t.Errorf("page1 after upgrade %+v, %v", d, err)
		}
		return nil
	})
	var v []byte
	g.db.View(func(btx *bboltTx) error {
		v = append(v, btx.Bucket(bucketMeta).Get(keyVersion)...)
		return nil
	})
	if string(v) != Version {
		t.Errorf("version after upgrade %q", v)
	}
}

// TestPrepareFlushURLs: URLs created before and after PrepareFlush, and
// in-links read in the middle of the transaction after it, all land.
func TestPrepareFlushURLs(t *testing.T) {
	g, _ := openTemp(t)
	var ids []uint64
	err := g.Update(func(tx *Tx) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		for _, u := range []string{"http://a.cl/z", "http://a.cl/b"} {
			id, _, err := tx.AddURL(u, site, 0, 1)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if _, err := tx.ReplaceOutLinks(ids[0], site, []Target{{Doc: ids[1], Site: site}}); err != nil {
			return err
		}
		tx.PrepareFlush()
		tx.PrepareFlush() // a second call does nothing
		id, _, err := tx.AddURL("http://a.cl/m", site, 0, 1)
		if err != nil {
			return err
		}
		ids = append(ids, id)
		in, err := tx.InLinks(ids[1])
		if err != nil {
			return err
		}
		if got := in.ToArray(); !reflect.DeepEqual(got, []uint32{uint32(ids[0])}) {
			t.Errorf("in-links of %d in the transaction: %v", ids[1], got)
		}
		if _, err = tx.ReplaceOutLinks(ids[2], site, []Target{{Doc: ids[1], Site: site}}); err != nil {
			return err
		}
		rec, err := tx.Site(site)
		if err != nil {
			return err
		}
		rec.Pages = len(ids) // the caller keeps the page count
		return tx.PutSite(rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		for i, u := range []string{"http://a.cl/z", "http://a.cl/b", "http://a.cl/m"} {
			if id, ok := tx.LookupURL(u); !ok || id != ids[i] {
				t.Errorf("%s: %d %v, want %d", u, id, ok, ids[i])
			}
		}
		in, err := tx.InLinks(ids[1])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := in.ToArray(), []uint32{uint32(ids[0]), uint32(ids[2])}; !reflect.DeepEqual(got, want) {
			t.Errorf("in-links of %d: %v, want %v", ids[1], got, want)
		}
		return nil
	})
}

// TestUpdateDocs: records committed before and created in the
// transaction are read, updated on several goroutines and written back
// (only the changed ones), with the frontier set in step.
func TestUpdateDocs(t *testing.T) {
	g, _ := openTemp(t)
	var ids []uint64
	addDocs := func(tx *Tx, from, to int) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		for i := from; i < to; i++ {
			id, _, err := tx.AddURL(fmt.Sprintf("http://a.cl/%d", i), site, 5, 1)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		rec, err := tx.Site(site)
		if err != nil {
			return err
		}
		rec.Pages = to
		return tx.PutSite(rec)
	}
	if err := g.Update(func(tx *Tx) error { return addDocs(tx, 0, 600) }); err != nil {
		t.Fatal(err)
	}
	err := g.Update(func(tx *Tx) error {
		if err := addDocs(tx, 600, 1000); err != nil {
			return err
		}
		n, err := tx.UpdateDocs(ids, func(i int, d *Doc) bool {
			if d.ID != ids[i] {
				t.Errorf("index %d: doc %d, want %d", i, d.ID, ids[i])
			}
			switch i % 3 {
			case 0:
				d.Depth = 1
				return true
			case 1:
				d.State, d.Reason = StateExcluded, "robots"
				return true
			}
			d.Depth = 2 // not written: update says unchanged
			return false
		})
		if n != 667 {
			t.Errorf("%d written, want 667", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		for i, id := range ids {
			d, err := tx.Doc(id)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]int{0: 1, 1: 5, 2: 5}[i%3]
			if d.Depth != want || (d.State == StateExcluded) != (i%3 == 1) {
				t.Errorf("doc %d: depth %d, state %s", id, d.Depth, d.State)
			}
		}
		return nil
	})
}

// TestUpdateDocsWritesAhead: UpdateDocs writes the new URLs, out-links
// and in-links while the records are updated; URLs and links added
// after it (and before it, with or without PrepareFlush) all end up
// written, the graph consistent (openTemp checks it at the end).
func TestUpdateDocsWritesAhead(t *testing.T) {
	for _, prep := range []bool{false, true} {
		t.Run(fmt.Sprintf("PrepareFlush %v", prep), func(t *testing.T) {
			g, _ := openTemp(t)
			smallGraph(t, g) // a.cl = site 1 (docs 1, 2, 6), b.cl = 2 (docs 3, 4), c.cl = 3 (doc 5)
			var before, after uint64
			err := g.Update(func(tx *Tx) error {
				var err error
				if before, _, err = tx.AddURL("http://a.cl/before", 1, 1, 1); err != nil {
					return err
				}
				if _, err := tx.ReplaceOutLinks(1, 1, []Target{{Doc: before, Site: 1}, {Doc: 3, Site: 2}}); err != nil {
					return err
				}
				if prep {
					tx.PrepareFlush()
				}
				if _, err := tx.UpdateDocs([]uint64{1, before}, func(i int, d *Doc) bool {
					d.Anchors = append(d.Anchors, "x")
					return true
				}); err != nil {
					return err
				}
				// Written by UpdateDocs already (read from the buckets,
				// which InLinks or LookupURL would flush first).
				if tx.tx.Bucket(bucketIn).Get(u64(3)) == nil {
					t.Error("in-links of 3 not written by UpdateDocs")
				}
				if tx.tx.Bucket(bucketURLs).Get([]byte("http://a.cl/before")) == nil {
					t.Error("new URL not written by UpdateDocs")
				}
				if tx.tx.Bucket(bucketOut).Get(u64(1)) == nil {
					t.Error("out-links of 1 not written by UpdateDocs")
				}
				if after, _, err = tx.AddURL("http://a.cl/after", 1, 2, 1); err != nil {
					return err
				}
				_, err = tx.ReplaceOutLinks(before, 1, []Target{{Doc: after, Site: 1}, {Doc: 5, Site: 3}})
				if err != nil {
					return err
				}
				return bumpPages(tx, 1, 2)
			})
			if err != nil {
				t.Fatal(err)
			}
			g.View(func(tx *Tx) error {
				for u, want := range map[string]uint64{"http://a.cl/before": before, "http://a.cl/after": after} {
					if id, ok := tx.LookupURL(u); !ok || id != want {
						t.Errorf("%s: %d %v, want %d", u, id, ok, want)
					}
				}
				for id, want := range map[uint64][]uint32{before: {1}, 3: {1}, after: {uint32(before)}, 5: {uint32(before)}} {
					in, err := tx.InLinks(id)
					if err != nil || !reflect.DeepEqual(in.ToArray(), want) {
						t.Errorf("in-links of %d: %v, %v; want %v", id, in, err, want)
					}
				}
				for _, id := range []uint64{1, before} {
					if d, err := tx.Doc(id); err != nil || !slices.Contains(d.Anchors, "x") {
						t.Errorf("doc %d not updated: %+v, %v", id, d, err)
					}
				}
				return nil
			})
		})
	}
}

// TestRewrittenRecordsWait: the records of known documents that a
// transaction rewrites are kept until its end (written in id order) and
// read back from there in the meantime.
func TestRewrittenRecordsWait(t *testing.T) {
	g, _ := openTemp(t)
	smallGraph(t, g)
	err := g.Update(func(tx *Tx) error {
		for _, id := range []uint64{6, 2, 4} {
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			d.Title = fmt.Sprint("title ", id)
			if err := tx.PutDoc(d); err != nil {
				return err
			}
			if stored, err := decodeStored(tx, id); err != nil || stored.Title != "" {
				t.Errorf("doc %d written before the end of the transaction: %+v, %v", id, stored, err)
			}
			if d, err := tx.Doc(id); err != nil || d.Title != fmt.Sprint("title ", id) {
				t.Errorf("doc %d read back in the transaction: %+v, %v", id, d, err)
			}
			if site, err := tx.DocSite(id); err != nil || site != d.Site {
				t.Errorf("site of doc %d read back: %d, %v", id, site, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		for _, id := range []uint64{6, 2, 4} {
			if d, err := decodeStored(tx, id); err != nil || d.Title != fmt.Sprint("title ", id) {
				t.Errorf("doc %d after the commit: %+v, %v", id, d, err)
			}
		}
		return nil
	})
}

// decodeStored decodes the record of id as the docs bucket holds it.
func decodeStored(tx *Tx, id uint64) (*Doc, error) {
	var d Doc
	err := decodeDoc(id, tx.tx.Bucket(bucketDocs).Get(u64(id)), &d)
	return &d, err
}

// TestFreelistKept: graph.db keeps its freelist on disk, so that opening
// it for writing reads a few pages, not every page of the file (without
// it bbolt rebuilds the freelist by walking the whole file at every open:
// a cost that grows with the graph). Read from the current meta page:
// freelist page id, not bbolt's "no freelist" marker.
func TestFreelistKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(func(tx *Tx) error {
		_, _, err := tx.AddURL("http://www.a.cl/", 1, 0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A meta page: page header (16 bytes), then magic, version, page
	// size, flags (4 bytes each), root bucket (16), freelist (8), pgid
	// (8), txid (8). The current meta is the one with the larger txid.
	le := binary.LittleEndian.Uint64
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))
	if pageSize < 512 || 2*pageSize > len(data) {
		t.Fatalf("page size %d in a file of %d bytes", pageSize, len(data))
	}
	meta := func(p int) (freelist, txid uint64) {
		m := data[p*pageSize+16:]
		return le(m[32:40]), le(m[48:56])
	}
	f0, tx0 := meta(0)
	f1, tx1 := meta(1)
	freelist := f0
	if tx1 > tx0 {
		freelist = f1
	}
	if freelist == ^uint64(0) {
		t.Errorf("graph.db has no freelist on disk (NoFreelistSync): every writable open reads the whole file")
	}
}

// TestUpdateDocsRewritten: records of known documents rewritten earlier
// in the transaction wait for UpdateDocs (not written ahead): the ones
// it changes end up with both changes, the others as rewritten.
func TestUpdateDocsRewritten(t *testing.T) {
	g, _ := openTemp(t)
	smallGraph(t, g) // docs 1 to 6
	err := g.Update(func(tx *Tx) error {
		for _, id := range []uint64{2, 3, 5} {
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			d.Title = fmt.Sprintf("t%d", id)
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		_, err := tx.UpdateDocs([]uint64{1, 2, 3, 4}, func(i int, d *Doc) bool {
			if d.ID%2 == 1 {
				return false
			}
			d.Anchors = append(d.Anchors, "x")
			return true
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		for id, want := range map[uint64][2]string{1: {"", ""}, 2: {"t2", "x"}, 3: {"t3", ""}, 4: {"", "x"}, 5: {"t5", ""}, 6: {"", ""}} {
			d, err := tx.Doc(id)
			if err != nil {
				t.Fatal(err)
			}
			if d.Title != want[0] || strings.Join(d.Anchors, ",") != want[1] {
				t.Errorf("doc %d: title %q, anchors %q; want %q", id, d.Title, d.Anchors, want)
			}
		}
		return nil
	})
}

// TestWriteConcurrently: a transaction large enough for every bucket to
// be a tree of several levels writes its records on one goroutine while
// its URLs, out-links, in-links and site graph are written on another
// (UpdateDocs, then the commit); everything lands where it belongs.
// Under the race detector (go test -race ./pkg/linkgraph) it also shows
// that the two goroutines share nothing they write in bbolt.
func TestWriteConcurrently(t *testing.T) {
	const sites, pages = 20, 300
	g, _ := openTemp(t)
	url := func(s, p int) string {
		return fmt.Sprintf("http://www.sitio%02d.cl/seccion%d/pagina-%d.html", s, p%7, p)
	}
	ids := map[string]uint64{}
	siteIDs := make([]uint64, sites)
	// links of page p of site s: the next pages of the site and page p of
	// the next site (of the first half of the pages before the second
	// transaction, of all of them after it).
	links := func(s, p, n int) []Target {
		var ts []Target
		for _, q := range []int{(p + 1) % n, (p + 2) % n, (p + 5) % n} {
			ts = append(ts, Target{Doc: ids[url(s, q)], Site: siteIDs[s]})
		}
		return append(ts, Target{Doc: ids[url((s+1)%sites, p)], Site: siteIDs[(s+1)%sites]})
	}
	addPages := func(tx *Tx, from, to int) error {
		for s := range sites {
			if siteIDs[s] == 0 {
				id, _, err := tx.AddSite(fmt.Sprintf("http://www.sitio%02d.cl", s))
				if err != nil {
					return err
				}
				siteIDs[s] = id
			}
			for p := from; p < to; p++ {
				id, _, err := tx.AddURL(url(s, p), siteIDs[s], 1, 0)
				if err != nil {
					return err
				}
				ids[url(s, p)] = id
			}
			if err := bumpPages(tx, siteIDs[s], to-from); err != nil {
				return err
			}
		}
		for s := range sites {
			for p := range to {
				if _, err := tx.ReplaceOutLinks(ids[url(s, p)], siteIDs[s], links(s, p, to)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := g.Update(func(tx *Tx) error { return addPages(tx, 0, pages/2) }); err != nil {
		t.Fatal(err)
	}
	err := g.Update(func(tx *Tx) error {
		// Rewrite some known records before UpdateDocs and others in it.
		for s := range sites {
			d, err := tx.Doc(ids[url(s, 0)])
			if err != nil {
				return err
			}
			d.Title = "rewritten"
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		if err := addPages(tx, pages/2, pages); err != nil {
			return err
		}
		tx.PrepareFlush()
		var all []uint64
		for _, id := range ids {
			all = append(all, id)
		}
		slices.Sort(all)
		_, err := tx.UpdateDocs(all, func(i int, d *Doc) bool {
			if d.ID%3 == 0 {
				return false
			}
			d.Anchors = append(d.Anchors, fmt.Sprint("anchor of ", d.ID))
			return true
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = g.View(func(tx *Tx) error {
		if n := tx.LastDocID(); n != uint64(sites*pages) {
			t.Errorf("last doc id %d, want %d", n, sites*pages)
		}
		for s := range sites {
			for p := range pages {
				u := url(s, p)
				id, ok := tx.LookupURL(u)
				if !ok || id != ids[u] {
					t.Fatalf("%s: id %d %v, want %d", u, id, ok, ids[u])
				}
				d, err := tx.Doc(id)
				if err != nil {
					return err
				}
				wantAnchors := 1
				if id%3 == 0 {
					wantAnchors = 0
				}
				if d.URL != u || len(d.Anchors) != wantAnchors || (p == 0) != (d.Title == "rewritten") {
					t.Errorf("doc %d: %+v", id, d)
				}
				out, err := tx.OutLinks(id)
				if err != nil {
					return err
				}
				want := roaring.New()
				for _, l := range links(s, p, pages) {
					want.Add(uint32(l.Doc))
				}
				if !out.Equals(want) {
					t.Errorf("out-links of %s: %v, want %v", u, out.ToArray(), want.ToArray())
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
