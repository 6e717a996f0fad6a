package linkgraph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
)

// damageFixture writes a graph.db of a few hundred pages (documents with
// links, enough for branch pages) and returns its path, closed.
func damageFixture(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *Tx) error {
		site, _, err := tx.AddSite("http://a.cl")
		if err != nil {
			return err
		}
		const n = 2000
		if err := bumpPages(tx, site, n); err != nil {
			return err
		}
		for i := range n {
			if _, _, err := tx.AddURL(fmt.Sprintf("http://a.cl/page/%06d", i), site, 1, 0); err != nil {
				return err
			}
		}
		for i := uint64(1); i <= n; i += 3 {
			if err := tx.SetOutLinks(i, roaring.BitmapOf(uint32(i%n+1), uint32((i*7)%n+1))); err != nil {
				return err
			}
		}
		// The manager's scores: the only nested buckets of graph.db.
		if err := tx.PutScoreVector("opic", make([]float64, n)); err != nil {
			return err
		}
		if err := tx.PutScoreMeta("opic-round", []byte("3")); err != nil {
			return err
		}
		return tx.PutScores("history", func(put func(string, float64) error) error { return put("http://a.cl/page/000001", 0.5) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	// bbolt grew the file by its allocation step (16 MB); cut it to the
	// pages in use, so that each damaged copy is small.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newestMeta(f, st.Size())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(m.pgid)*int64(m.pageSize)); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll opens path read-only and reads it every way the tools do:
// bbolt's page check, the graph's invariants, every document.
func readAll(path string) error {
	g, err := Open(path, true, time.Second)
	if err != nil {
		return err
	}
	defer g.Close()
	problems, err := g.CheckPages(10)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	return g.View(func(tx *Tx) error {
		if errs := tx.Check(10); len(errs) > 0 {
			return errors.Join(errs...)
		}
		_, err := tx.Stats()
		return err
	})
}

func TestDamagedGraph(t *testing.T) {
	pageSize := int64(os.Getpagesize())
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		open   func(path string) error // default readAll
		want   string                  // in the message
	}{
		{"truncated", func(t *testing.T, path string) { truncate(t, path, 8*pageSize) }, nil, "truncated"},
		{"truncated to one page", func(t *testing.T, path string) { truncate(t, path, pageSize) }, nil, "truncated"},
		{"empty", func(t *testing.T, path string) { truncate(t, path, 0) }, nil, "empty"},
		{"empty, opened for writing", func(t *testing.T, path string) { truncate(t, path, 0) },
			func(path string) error { _, err := Open(path, false, time.Second); return err }, "empty"},
		{"missing", func(t *testing.T, path string) { os.Remove(path) }, nil, "missing"},
		{"missing, opened as existing", func(t *testing.T, path string) { os.Remove(path) },
			func(path string) error { _, err := OpenExisting(path, false, time.Second); return err }, "missing"},
		{"both meta pages zeroed", func(t *testing.T, path string) {
			writeAt(t, path, 0, make([]byte, 2*pageSize))
		}, nil, "not a readable bbolt file"},
		{"random page", func(t *testing.T, path string) {
			b := make([]byte, pageSize)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			writeAt(t, path, 5*pageSize, b)
		}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := damageFixture(t)
			tc.damage(t, path)
			open := tc.open
			if open == nil {
				open = readAll
			}
			err := open(path)
			var de *DamagedError
			if !errors.As(err, &de) || !errors.Is(err, collection.ErrDamaged) {
				// A random page may hit a page no reader needs (a free
				// one), or one that bbolt's check reports: either is no
				// crash.
				if tc.want == "" {
					return
				}
				t.Fatalf("got %v, want a DamagedError", err)
			}
			msg := err.Error()
			if tc.want != "" && !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not say %q", msg, tc.want)
			}
			if !strings.Contains(msg, path) || !strings.Contains(msg, "seeder restore") {
				t.Errorf("message %q does not name the file and the repair", msg)
			}
			if _, err := os.Stat(path); err == nil && tc.want == "empty" {
				if st, _ := os.Stat(path); st.Size() != 0 {
					t.Errorf("the empty file was made a database")
				}
			}
		})
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func writeAt(t testing.TB, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// FuzzDamagedPage flips bytes in one page of a graph.db and reads it
// every way the tools do: whatever the damage, the result is an error
// or success, never a panic or a fault that escapes.
func FuzzDamagedPage(f *testing.F) {
	fixture := damageFixture(f)
	clean, err := os.ReadFile(fixture)
	if err != nil {
		f.Fatal(err)
	}
	pages := uint32(len(clean) / os.Getpagesize())
	f.Add(uint32(0), uint16(16), []byte{0xff})
	f.Add(uint32(1), uint16(56), []byte{1, 2, 3})
	f.Add(uint32(3), uint16(0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add(uint32(4), uint16(16), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff})
	f.Add(uint32(5), uint16(8), []byte{0x01})
	f.Add(uint32(6), uint16(24), []byte{0xde, 0xad, 0xbe, 0xef})
	f.Fuzz(func(t *testing.T, page uint32, off uint16, flip []byte) {
		if len(flip) == 0 || len(flip) > 64 {
			return
		}
		b := append([]byte(nil), clean...)
		at := int(page%pages)*os.Getpagesize() + int(off)%os.Getpagesize()
		for i, x := range flip {
			if at+i < len(b) {
				b[at+i] ^= x
			}
		}
		path := filepath.Join(t.TempDir(), "graph.db")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = readAll(path) // an error is fine; a panic fails the test
	})
}

// TestCheckPagesHealthy: an undamaged graph.db, the manager's nested
// score buckets included, passes the page check with no problem.
func TestCheckPagesHealthy(t *testing.T) {
	g, err := OpenExisting(damageFixture(t), true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	problems, err := g.CheckPages(10)
	if err != nil || len(problems) > 0 {
		t.Fatalf("healthy graph: %v %v", problems, err)
	}
}
