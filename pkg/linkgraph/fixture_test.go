package linkgraph

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// updateFixture rewrites testdata/graph-vN.db from graph-v1.db (go test
// ./pkg/linkgraph -run TestCurrentFixture -update-fixture). Only when the
// format version changes: the file is the frozen sample of its version.
var updateFixture = flag.Bool("update-fixture", false, "rewrite testdata/graph-v"+Version+".db")

// currentFixture is the frozen graph.db of the current format version.
var currentFixture = "graph-v" + Version + ".db"

// makeCurrentFixture writes testdata/graph-vN.db: the version 1 sample
// upgraded, with the site fields later versions added (address,
// streaming flag, estimates) and the manager's score buckets, compacted.
func makeCurrentFixture(t *testing.T) {
	path := copyFixture(t, "graph-v1.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *Tx) error {
		id, ok := tx.SiteID("http://a.cl")
		if !ok {
			t.Fatal("no site http://a.cl in the v1 sample")
		}
		s, err := tx.Site(id)
		if err != nil {
			return err
		}
		s.IP, s.ConnectMs, s.ResponseMs, s.EstimatesAt = "10.0.0.1", 12, 40, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		s.Streak, s.Streaming = 3, &Streaming{Since: 1, Last: 1, At: s.EstimatesAt, Reason: "streaming: 3 responses in a row cut (last: body cap 2097152 bytes)"}
		if err := tx.PutSite(s); err != nil {
			return err
		}
		if err := tx.PutScoreVector("opic", []float64{0.5, 0.25}); err != nil {
			return err
		}
		return tx.PutScoreMeta("opic-round", []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join("testdata", currentFixture)
	os.Remove(out)
	dst, err := bolt.Open(out, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, src, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCurrentFixture opens testdata/graph-vN.db, a graph.db of the
// current format version frozen in the repository: it must keep opening
// and reading as it was written, read-only and for writing, and pass
// both checks (the records' and the pages').
func TestCurrentFixture(t *testing.T) {
	if *updateFixture {
		makeCurrentFixture(t)
	}
	if _, err := os.Stat(filepath.Join("testdata", currentFixture)); err != nil {
		t.Fatalf("%v: a graph.db of format version %s must be frozen in testdata (run with -update-fixture once)", err, Version)
	}
	for _, readOnly := range []bool{true, false} {
		g, err := OpenExisting(copyFixture(t, currentFixture), readOnly, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if g.Legacy() {
			t.Errorf("read-only %v: the current version reads as legacy", readOnly)
		}
		err = g.View(func(tx *Tx) error {
			st, err := tx.Stats()
			if err != nil {
				return err
			}
			if st.Docs != 11 || st.Sites != 5 || st.Links != 8 || st.Frontier != 6 || st.SiteLinks != 2 {
				t.Errorf("stats %+v", st)
			}
			id, _ := tx.LookupURL("http://a.cl/page1")
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if !slices.Equal(d.Anchors, []string{"Page One", "Again"}) || d.Depth != 1 || d.State != StatePending {
				t.Errorf("page1 %+v", d)
			}
			sid, _ := tx.SiteID("http://a.cl")
			s, err := tx.Site(sid)
			if err != nil {
				return err
			}
			if s.IP != "10.0.0.1" || s.ResponseMs != 40 || s.Streak != 3 || s.Streaming == nil || s.Streaming.Since != 1 {
				t.Errorf("site record %+v", s)
			}
			if v, err := tx.ScoreVector("opic"); err != nil || !slices.Equal(v, []float64{0.5, 0.25}) {
				t.Errorf("score vector %v, %v", v, err)
			}
			if errs := tx.Check(10); len(errs) > 0 {
				t.Errorf("check: %v", errs)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if problems, err := g.CheckPages(10); err != nil || len(problems) > 0 {
			t.Errorf("page check: %v %v", problems, err)
		}
		g.Close()
	}
}
