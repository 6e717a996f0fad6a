package linkgraph

import (
	"errors"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// The out-link change log names every document whose out-link set was
// written since the last reset, by every way of writing one, across
// transactions; a reset empties it (this transaction's writes included)
// and gives it the new token; a transaction that fails logs nothing.
func TestOutChanges(t *testing.T) {
	g, _ := openTemp(t)
	smallGraph(t, g)
	// a.cl = site 1 (docs 1, 2, 6), b.cl = 2 (docs 3, 4), c.cl = 3 (doc 5)
	state := func() (uint64, []uint32) {
		t.Helper()
		var token uint64
		var ids []uint32
		if err := g.View(func(tx *Tx) error {
			tk, bm, err := tx.OutChanges()
			token, ids = tk, bm.ToArray()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return token, ids
	}
	update := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := g.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name  string
		fn    func(tx *Tx) error
		token uint64
		ids   []uint32
	}{
		{"new graph", nil, 0, nil},
		{"replace", func(tx *Tx) error {
			_, err := tx.ReplaceOutLinks(1, 1, []Target{{2, 1}, {3, 2}})
			return err
		}, 0, []uint32{1}},
		{"replace an existing set, add, set", func(tx *Tx) error {
			if _, err := tx.ReplaceOutLinks(1, 1, []Target{{4, 2}}); err != nil {
				return err
			}
			if _, err := tx.AddOutLinks(3, 2, []Target{{5, 3}}); err != nil {
				return err
			}
			return tx.SetOutLinks(6, bitmapOf(1, 2))
		}, 0, []uint32{1, 3, 6}},
		{"reset after a write", func(tx *Tx) error {
			if _, err := tx.AddOutLinks(4, 2, []Target{{1, 1}}); err != nil {
				return err
			}
			return tx.ResetOutChanges(77)
		}, 77, nil},
		{"write after the reset", func(tx *Tx) error {
			if err := tx.ResetOutChanges(78); err != nil {
				return err
			}
			_, err := tx.ReplaceOutLinks(5, 3, []Target{{1, 1}})
			return err
		}, 78, []uint32{5}},
		{"records only", func(tx *Tx) error {
			d, err := tx.Doc(2)
			if err != nil {
				return err
			}
			d.State = StateFetched
			return tx.PutDoc(d)
		}, 78, []uint32{5}},
	}
	for _, s := range steps {
		if s.fn != nil {
			update(s.fn)
		}
		token, ids := state()
		if token != s.token || !slices.Equal(ids, s.ids) {
			t.Errorf("%s: token %d, ids %v; want %d, %v", s.name, token, ids, s.token, s.ids)
		}
	}
	// A failed transaction logs nothing; a read in the writing
	// transaction sees its own writes.
	errBoom := g.Update(func(tx *Tx) error {
		if _, err := tx.ReplaceOutLinks(2, 1, []Target{{1, 1}}); err != nil {
			return err
		}
		_, bm, err := tx.OutChanges()
		if err != nil {
			return err
		}
		if got := bm.ToArray(); !slices.Equal(got, []uint32{2, 5}) {
			t.Errorf("in the transaction: %v, want [2 5]", got)
		}
		return errTestRollback
	})
	if errBoom != errTestRollback {
		t.Fatalf("update: %v", errBoom)
	}
	if token, ids := state(); token != 78 || !slices.Equal(ids, []uint32{5}) {
		t.Errorf("after a rollback: token %d, ids %v", token, ids)
	}
	if err := g.Update(func(tx *Tx) error { return tx.ResetOutChanges(0) }); err == nil {
		t.Error("reset with token 0 accepted")
	}
}

var errTestRollback = errors.New("roll back")

func bitmapOf(ids ...uint32) *roaring.Bitmap { return roaring.BitmapOf(ids...) }

// The document change log names every document whose record was written
// or created since the last reset, through PutDoc, UpdateDocs or AddURL,
// and not those whose out-links alone were written.
func TestDocChanges(t *testing.T) {
	g, _ := openTemp(t)
	state := func() (uint64, []uint32) {
		t.Helper()
		var token uint64
		var ids []uint32
		if err := g.View(func(tx *Tx) error {
			tk, bm, err := tx.DocChanges()
			token, ids = tk, bm.ToArray()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return token, ids
	}
	put := func(tx *Tx, id uint64) error {
		d, err := tx.Doc(id)
		if err != nil {
			return err
		}
		d.Visits++
		return tx.PutDoc(d)
	}
	steps := []struct {
		name  string
		fn    func(tx *Tx) error
		token uint64
		ids   []uint32
	}{
		{"new documents", func(tx *Tx) error { return nil }, 0, []uint32{1, 2, 3, 4, 5, 6}},
		{"reset", func(tx *Tx) error { return tx.ResetDocChanges(5) }, 5, nil},
		{"put", func(tx *Tx) error { return put(tx, 2) }, 5, []uint32{2}},
		{"update docs", func(tx *Tx) error {
			_, err := tx.UpdateDocs([]uint64{3, 4}, func(i int, d *Doc) bool { return i == 0 })
			return err
		}, 5, []uint32{2, 3}},
		{"out-links only", func(tx *Tx) error {
			_, err := tx.ReplaceOutLinks(1, 1, []Target{{2, 1}})
			return err
		}, 5, []uint32{2, 3}},
		{"a new URL", func(tx *Tx) error {
			if _, _, err := tx.AddURL("http://c.cl/new", 3, 1, 1); err != nil {
				return err
			}
			return bumpPages(tx, 3, 1)
		}, 5, []uint32{2, 3, 7}},
		{"reset between writes", func(tx *Tx) error {
			if err := put(tx, 4); err != nil {
				return err
			}
			if err := tx.ResetDocChanges(6); err != nil {
				return err
			}
			return put(tx, 5)
		}, 6, []uint32{5}},
	}
	for i, s := range steps {
		if i == 0 {
			smallGraph(t, g)
		} else if err := g.Update(s.fn); err != nil {
			t.Fatal(err)
		}
		token, ids := state()
		if token != s.token || !slices.Equal(ids, s.ids) {
			t.Errorf("%s: token %d, ids %v; want %d, %v", s.name, token, ids, s.token, s.ids)
		}
	}
}
