package gatherer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
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

// fuzzPages is a small harvest with a record of each kind the gatherer
// reads: an HTML page, a gzip-encoded one, a 304, a redirect without a
// location in the fetch log, and an error page (read only to verify).
func fuzzPages() []gathertest.Page {
	return []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/", Status: 200, Header: html("text/html"), Body: []byte(`<title>A</title><p>uno dos tres</p><a href="/b">b</a>`)},
		{DocID: 2, URL: "http://www.a.cl/gz", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}},
			Body: []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xb2)I,JO-\xb1\xcbM\x2c\xcaO\x04\x00\x00\x00\xff\xff")},
		{DocID: 3, URL: "http://www.a.cl/same", Status: 304, Header: http.Header{"Etag": {`"v2"`}}},
		{DocID: 4, URL: "http://www.a.cl/moved", Status: 302, Header: http.Header{"Location": {"/b"}}},
		{DocID: 5, URL: "http://www.a.cl/gone", Status: 404, Header: html("text/html"), Body: []byte("<p>no</p>")},
		{DocID: 6, URL: "http://www.a.cl/b", Status: 200, Header: html("text/html; charset=windows-1252"), Body: []byte("<p>caf\xe9</p>")},
	}
}

// FuzzDamagedWARC flips bytes of a harvest's WARC file (three bytes of
// input per flip: position, then the bits to flip) and may cut it, then
// gathers the batch twice, with --verify-digests or not. Without salvage
// the run succeeds or stops with collection.ErrDamaged, and never
// publishes a half batch; with salvage it succeeds with one record per
// fetch log line, each read or unread, and unread records only if the
// strict run stopped. A panic in a worker would end the process: the
// pipeline recovers none, so the fuzzer sees every one.
func FuzzDamagedWARC(f *testing.F) {
	base := filepath.Join(f.TempDir(), collection.BatchName(1))
	if err := os.MkdirAll(base, 0o755); err != nil {
		f.Fatal(err)
	}
	gathertest.Harvest(f, base, fuzzPages())
	recs, err := fetchlog.ReadFile(filepath.Join(base, collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		f.Fatal(err)
	}
	warcName := recs[0].WARC
	warc, err := os.ReadFile(filepath.Join(base, collection.HarvestDir, warcName))
	if err != nil {
		f.Fatal(err)
	}
	logData, err := os.ReadFile(filepath.Join(base, collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{}, uint16(0), false)
	f.Add([]byte{}, uint16(len(warc)/2), true)
	for _, r := range recs {
		if r.WARC == "" {
			continue
		}
		for _, at := range []int64{0, 3, 10, r.Length / 2, r.Length - 8, r.Length - 2} {
			p := r.Offset + at
			f.Add([]byte{byte(p >> 8), byte(p), 0x01}, uint16(0), false)
			f.Add([]byte{byte(p >> 8), byte(p), 0x80}, uint16(0), true)
		}
	}
	f.Fuzz(func(t *testing.T, flips []byte, cut uint16, verify bool) {
		data := bytes.Clone(warc)
		for i := 0; i+2 < len(flips); i += 3 {
			p := (int(flips[i])<<8 | int(flips[i+1])) % len(data)
			data[p] ^= flips[i+2]
		}
		if cut > 0 && int(cut) < len(data) {
			data = data[:cut]
		}
		root := t.TempDir()
		dir := filepath.Join(root, collection.BatchName(1))
		hdir := filepath.Join(dir, collection.HarvestDir)
		if err := os.MkdirAll(hdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hdir, warcName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(hdir, fetchlog.LogFile), logData, 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{BatchDir: dir, BatchID: 1, TextDir: filepath.Join(root, "text"), Workers: 2, VerifyDigests: verify}
		_, strictErr := Run(context.Background(), o)
		if strictErr != nil && !errors.Is(strictErr, collection.ErrDamaged) {
			t.Fatalf("strict run: %v, want success or ErrDamaged", strictErr)
		}
		b := &collection.Batch{ID: 1, Dir: dir}
		if strictErr != nil && (b.Done(collection.StageGathered) || exists(b.ParsedPath())) {
			t.Fatalf("a run stopped by damage published the batch: %v", strictErr)
		}
		o.Salvage = true
		s, err := Run(context.Background(), o)
		if err != nil {
			t.Fatalf("salvage: %v", err)
		}
		docs, err := parsed.ReadFile(filepath.Join(b.ParsedPath(), parsed.DocsFile))
		if err != nil {
			t.Fatal(err)
		}
		unread := 0
		for i, d := range docs {
			if d.DocID != recs[i].DocID {
				t.Fatalf("record %d is doc %d, the fetch log's is %d", i, d.DocID, recs[i].DocID)
			}
			if strings.HasPrefix(d.Err, parsed.Unread+": ") {
				unread++
				if d.Status != 0 || d.Hash != "" {
					t.Errorf("unread doc %d: %+v", d.DocID, d)
				}
			}
		}
		if len(docs) != len(recs) || unread != s.Unread {
			t.Fatalf("%d records of %d, %d unread, the summary says %d", len(docs), len(recs), unread, s.Unread)
		}
		if strictErr == nil && unread > 0 {
			t.Errorf("the strict run succeeded, the salvage found %d unread records", unread)
		}
		if strictErr != nil && unread == 0 && !strings.Contains(strictErr.Error(), ": the file ") {
			// Stopped on a record it read, not on the file's size (which
			// may cut only records that are not read): the salvage must
			// have met the same record.
			t.Errorf("the strict run stopped (%v), the salvage read every record", strictErr)
		}
	})
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
