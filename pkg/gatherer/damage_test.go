package gatherer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// needsRead tells whether the gatherer reads a fetch log record's WARC
// record without --verify-digests: the body of a 2xx, the headers of a
// 304 and of a 3xx without a location.
func needsRead(rec fetchlog.Record) bool {
	switch {
	case rec.Err != "" || rec.WARC == "":
		return false
	case rec.Status >= 200 && rec.Status < 300, rec.Status == 304:
		return true
	case rec.Status >= 300 && rec.Status < 400:
		return rec.Location == ""
	}
	return false
}

// TestDamagedWARC: a WARC file truncated, emptied, deleted or with one
// corrupt record stops the run with collection.ErrDamaged, naming the
// file and the offset, and leaves the batch as it was (not gathered,
// nothing published); with Salvage the run takes in what can be read,
// and exactly the records that cannot be read are written as unread,
// with status 0, and are not in the text store.
func TestDamagedWARC(t *testing.T) {
	var pages []gathertest.Page
	for _, p := range batch1(t) {
		if !p.Damage {
			pages = append(pages, p)
		}
	}
	for _, tc := range []struct {
		name string
		// damage breaks the WARC file at path and returns the records
		// it made unreadable (by doc id), of recs.
		damage func(t *testing.T, path string, recs []fetchlog.Record) map[uint64]bool
		// first is the doc id whose record the error names.
		first uint64
	}{
		{"truncated", func(t *testing.T, path string, recs []fetchlog.Record) map[uint64]bool {
			cut := recs[len(recs)/2].Offset + 5
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			lost := map[uint64]bool{}
			for _, r := range recs {
				if r.WARC != "" && r.Offset+r.Length > cut && needsRead(r) {
					lost[r.DocID] = true
				}
			}
			return lost
		}, 0},
		{"emptied", func(t *testing.T, path string, recs []fetchlog.Record) map[uint64]bool {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			return readable(recs, nil)
		}, 1},
		{"deleted", func(t *testing.T, path string, recs []fetchlog.Record) map[uint64]bool {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			return readable(recs, nil)
		}, 1},
		{"bad record", func(t *testing.T, path string, recs []fetchlog.Record) map[uint64]bool {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.DocID == 12 {
					data[r.Offset+r.Length/2] ^= 0x55
				}
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return map[uint64]bool{12: true}
		}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := newCollection(t)
			b := gathertest.Batch(t, col, 1, pages)
			recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
			if err != nil {
				t.Fatal(err)
			}
			warc := filepath.Join(b.HarvestPath(), recs[0].WARC)
			lost := tc.damage(t, warc, recs)
			first := tc.first
			if first == 0 { // the first record of the fetch log past the cut
				st, _ := os.Stat(warc)
				for _, r := range recs {
					if r.WARC != "" && r.Offset+r.Length > st.Size() {
						first = r.DocID
						break
					}
				}
			}
			var firstRec fetchlog.Record
			for _, r := range recs {
				if r.DocID == first {
					firstRec = r
				}
			}

			o := options(t, col, b, 3)
			o.Salvage = false
			_, err = Run(context.Background(), o)
			if !errors.Is(err, collection.ErrDamaged) {
				t.Fatalf("without salvage: %v, want ErrDamaged", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, warc) || !strings.Contains(msg, fmt.Sprintf("offset %d ", firstRec.Offset)) || !strings.Contains(msg, "--salvage") || strings.Contains(msg, "\n") {
				t.Errorf("the error does not name %s at offset %d (doc %d) in one line: %s", warc, firstRec.Offset, first, msg)
			}
			if b.Done(collection.StageGathered) {
				t.Error("marked gathered after a failed run")
			}
			for _, p := range []string{b.ParsedPath(), filepath.Join(b.Dir, PartialDir), textstore.IndexPath(col.TextPath(), 1), textstore.DataPath(col.TextPath(), 1)} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after a run stopped by damage", p)
				}
			}

			s, err := Run(context.Background(), options(t, col, b, 3))
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			if s.Unread != len(lost) || s.Docs != len(pages) || len(s.Damaged) != min(len(lost), maxDamaged) {
				t.Errorf("salvage summary: %d docs, %d unread %q; want %d unread", s.Docs, s.Unread, s.Damaged, len(lost))
			}
			store, err := textstore.Open(col.TextPath())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for _, d := range readDocs(t, b) {
				unread := strings.HasPrefix(d.Err, parsed.Unread+": ")
				if unread != lost[d.DocID] {
					t.Errorf("doc %d (%s): unread %v, want %v: %+v", d.DocID, d.URL, unread, lost[d.DocID], d)
				}
				_, _, err := store.Get(d.URL)
				switch {
				case unread && (d.Status != 0 || d.Hash != "" || len(d.Links) != 0 || d.Redirect != ""):
					t.Errorf("unread doc %d keeps what was not read: %+v", d.DocID, d)
				case unread && !errors.Is(err, textstore.ErrNotFound):
					t.Errorf("unread doc %d in the text store: %v", d.DocID, err)
				case d.Hash != "" && err != nil:
					t.Errorf("doc %d was read, its text is not stored: %v", d.DocID, err)
				}
			}
		})
	}
}

// readable returns the records the gatherer reads, except those in keep.
func readable(recs []fetchlog.Record, keep map[uint64]bool) map[uint64]bool {
	out := map[uint64]bool{}
	for _, r := range recs {
		if needsRead(r) && !keep[r.DocID] {
			out[r.DocID] = true
		}
	}
	return out
}
