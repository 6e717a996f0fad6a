package seeder

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestRestore seeds three batches with a backup after the first, damages
// graph.db every way, and restores it: the tools say it is damaged (no
// crash), and after seeder restore graph.db holds what it held before,
// with the batches seeded since taken in once.
func TestRestore(t *testing.T) {
	damages := []struct {
		name   string
		damage func(path string) error
	}{
		{"truncated", func(path string) error { return os.Truncate(path, 16<<10) }},
		{"emptied", func(path string) error { return os.Truncate(path, 0) }},
		{"deleted", os.Remove},
		{"random root page", func(path string) error {
			// The root page of the newer meta page (bbolt's layout, in
			// the machine's byte order): a page every reader needs.
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			ps := int64(os.Getpagesize())
			le := binary.NativeEndian
			meta := data[16:]
			if le.Uint64(data[ps+16+48:]) > le.Uint64(meta[48:]) {
				meta = data[ps+16:]
			}
			root := int64(le.Uint64(meta[16:]))
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			b := make([]byte, ps)
			for i := range b {
				b[i] = byte(i*131 + 7)
			}
			_, err = f.WriteAt(b, root*ps)
			return err
		}},
	}
	for _, tc := range damages {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Seeder.BackupEvery = 1
			col := newCollection(t, cfg)
			addSeeds(t, col, cfg, "http://a.cl/")
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			page := func(n int) string { return fmt.Sprintf("http://a.cl/p%d", n) }
			urls := []string{"http://a.cl/"}
			for id := 1; id <= 3; id++ {
				if id == 2 {
					cfg.Seeder.BackupEvery = 0 // the backup is the one after batch 1
				}
				var docs []*parsed.Doc
				for _, u := range urls {
					docs = append(docs, &parsed.Doc{URL: u, Status: 200, Fetched: t0.Add(time.Duration(id) * time.Hour), MIME: "text/html", Hash: u, Links: []parsed.Link{
						{URL: page(2 * id), Anchor: "next"}, {URL: page(2*id + 1)},
					}})
				}
				writeBatch(t, col, id, testBatch{urls: urls, docs: docs})
				runBatch(t, col, cfg, id, false)
				urls = []string{page(2 * id), page(2*id + 1)}
			}
			want := readGraph(t, col)

			if err := tc.damage(col.GraphPath()); err != nil {
				t.Fatal(err)
			}
			_, err := check(col, time.Second, 0, false)
			if !errors.Is(err, collection.ErrDamaged) {
				t.Fatalf("check: got %v, want damaged", err)
			}
			if _, err := Run(context.Background(), RunOptions{Collection: col, Config: cfg, Batch: 3, Force: true}); !errors.Is(err, collection.ErrDamaged) {
				t.Fatalf("run: got %v, want damaged", err)
			}

			s, err := Restore(context.Background(), RestoreOptions{Collection: col, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Seeded, []int{2, 3}) {
				t.Errorf("seeded again %v, want [2 3]", s.Seeded)
			}
			problems, err := check(col, time.Second, 0, false) // no text store in these batches
			if err != nil || len(problems) > 0 {
				t.Fatalf("check after restore: %v %v", problems, err)
			}
			got := readGraph(t, col)
			if !reflect.DeepEqual(got.ids, want.ids) {
				t.Errorf("ids after restore differ:\n got %v\nwant %v", got.ids, want.ids)
			}
			for u, d := range want.docs {
				g := got.docs[u]
				if g.State != d.State || g.Visits != d.Visits || g.Depth != d.Depth {
					t.Errorf("%s: got %+v, want %+v", u, g, d)
				}
			}
			if !reflect.DeepEqual(got.out, want.out) {
				t.Errorf("out-links after restore differ")
			}
			// And the crawl goes on: the restored graph.db is writable.
			g, err := linkgraph.OpenExisting(col.GraphPath(), false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			g.Close()
		})
	}
}
