package linkgraph

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

func openTemp(t *testing.T) (*Graph, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.View(func(tx *Tx) error {
			if errs := tx.Check(10); len(errs) > 0 {
				return errors.Join(errs...)
			}
			return nil
		}); err != nil {
			t.Errorf("graph check: %v", err)
		}
		g.Close()
	})
	return g, path
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
		st, err := tx.Stats()
		if st.Docs != 2 || st.Sites != 1 || st.Links != 1 {
			t.Errorf("stats %+v", st)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBusyAndVersion(t *testing.T) {
	_, path := openTemp(t)
	if _, err := Open(path, false, 50*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Fatalf("second open: %v, want ErrBusy", err)
	}
}

func TestCheckFindsDanglingLink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Update(func(tx *Tx) error {
		s, _, _ := tx.AddSite("http://a.cl")
		id, _, _ := tx.AddURL("http://a.cl/", s, 0, 0)
		return tx.SetOutLinks(id, roaring.BitmapOf(99))
	})
	g.View(func(tx *Tx) error {
		if errs := tx.Check(10); len(errs) != 1 {
			t.Errorf("check found %v, want one dangling link", errs)
		}
		return nil
	})
}

// ForEachSiteURL is a key range: it must not spill into a site whose key
// merely starts with the same characters (another port, a longer host).
func TestForEachSiteURL(t *testing.T) {
	g, _ := openTemp(t)
	var got []string
	err := g.Update(func(tx *Tx) error {
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
