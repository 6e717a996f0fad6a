package linkgraph

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Score vectors round-trip whole, shrink and grow, and rewrite only the
// chunks that changed.
func TestScoreVector(t *testing.T) {
	g, _ := openTemp(t)
	v := make([]float64, 2*ScoreChunk+17)
	for i := range v {
		v[i] = float64(i) / 3
	}
	v[5] = math.Inf(1)
	put := func(x []float64) {
		t.Helper()
		if err := g.Update(func(tx *Tx) error { return tx.PutScoreVector("test", x) }); err != nil {
			t.Fatal(err)
		}
	}
	get := func() []float64 {
		t.Helper()
		var got []float64
		if err := g.View(func(tx *Tx) error {
			var err error
			got, err = tx.ScoreVector("test")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := get(); got != nil {
		t.Fatalf("missing vector read as %d values", len(got))
	}
	put(v)
	if got := get(); !slices.Equal(got, v) {
		t.Fatalf("round trip differs (%d values)", len(got))
	}
	put(v[:10])
	if got := get(); !slices.Equal(got, v[:10]) {
		t.Fatalf("shrunk vector: %v", got)
	}
	put(v)
	// A change in the first chunk leaves the second as it was.
	var before, after []byte
	g.View(func(tx *Tx) error {
		before = slices.Clone(tx.scores().Bucket(vectorKey("test")).Get(u64(1)))
		return nil
	})
	v2 := slices.Clone(v)
	v2[0] = -1
	put(v2)
	g.View(func(tx *Tx) error {
		after = slices.Clone(tx.scores().Bucket(vectorKey("test")).Get(u64(1)))
		return nil
	})
	if !slices.Equal(before, after) || get()[0] != -1 {
		t.Error("chunk contents wrong after a partial change")
	}
	if err := g.Update(func(tx *Tx) error { return tx.DeleteScores("test") }); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != nil {
		t.Errorf("deleted vector read as %d values", len(got))
	}
}

// Tables are keyed by URL; the join walks the urls bucket beside them.
func TestScoreTableAndJoin(t *testing.T) {
	g, _ := openTemp(t)
	err := g.Update(func(tx *Tx) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		for _, u := range []string{"http://a.cl/1", "http://a.cl/2", "http://a.cl/4"} {
			id, _, err := tx.AddURL(u, site, 0, 0)
			if err != nil {
				return err
			}
			s, _ := tx.Site(site)
			s.Pages++
			if err := tx.PutSite(s); err != nil {
				return err
			}
			_ = id
		}
		if err := tx.PutScoreMeta("m", []byte("x")); err != nil {
			return err
		}
		return tx.PutScores("t", func(put func(string, float64) error) error {
			for _, kv := range []struct {
				k string
				v float64
			}{{"http://a.cl/0", 9}, {"http://a.cl/2", 0.2}, {"http://a.cl/3", 0.3}, {"http://a.cl/4", 0.4}, {"http://z.cl/", 1}} {
				if err := put(kv.k, kv.v); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		got := map[uint64]float64{}
		if err := tx.JoinURLScores("t", func(id uint64, v float64) error { got[id] = v; return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[2] != 0.2 || got[3] != 0.4 {
			t.Errorf("join %v, want doc 2 → 0.2, doc 3 → 0.4", got)
		}
		if n := tx.ScoreTableLen("t"); n != 5 {
			t.Errorf("table has %d entries", n)
		}
		if v, ok, err := tx.ScoreOf("t", "http://a.cl/3"); !ok || err != nil || v != 0.3 {
			t.Errorf("ScoreOf %v %v %v", v, ok, err)
		}
		if string(tx.ScoreMeta("m")) != "x" || tx.ScoreMeta("none") != nil {
			t.Error("meta")
		}
		var keys []string
		tx.ForEachScore("t", func(k []byte, _ float64) error { keys = append(keys, string(k)); return nil })
		if !slices.IsSorted(keys) || len(keys) != 5 {
			t.Errorf("keys %v", keys)
		}
		return nil
	})
	if err := g.Update(func(tx *Tx) error { return tx.ClearScoreTable("t") }); err != nil {
		t.Fatal(err)
	}
	g.View(func(tx *Tx) error {
		if n := tx.ScoreTableLen("t"); n != 0 {
			t.Errorf("cleared table has %d entries", n)
		}
		return nil
	})
}

// A graph.db without the scores bucket (read-only, older) reads as empty
// and refuses writes with ErrNoScores.
func TestScoresWithoutBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketScores) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	g, err = Open(path, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.View(func(tx *Tx) error {
		if v, err := tx.ScoreVector("x"); v != nil || err != nil {
			t.Errorf("vector %v %v", v, err)
		}
		if tx.ScoreMeta("x") != nil || tx.ScoreTableLen("x") != 0 {
			t.Error("meta or table")
		}
		if err := tx.JoinURLScores("x", func(uint64, float64) error { return nil }); err != nil {
			t.Error(err)
		}
		return nil
	})
}
