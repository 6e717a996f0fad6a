package textstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// addPages writes segment id with pages (url, text), each pointing at an
// older stored text when one is equal, as the gatherer does.
func addPages(t *testing.T, dir string, id int, mode Mode, pages ...[2]string) []Added {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := Create(dir, id, mode, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	var out []Added
	for i, p := range pages {
		m, text := page(p[0], uint64(100*id+i), p[1])
		older, ok, err := s.FindText(id, m.Hash, mode.Keep(text, 2))
		if err != nil {
			t.Fatal(err)
		}
		var o *Meta
		if ok {
			o = &older
		}
		a, err := w.Add(m, text, o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return out
}

// texts returns the text of every URL, from a fresh Store.
func texts(t *testing.T, dir string, urls ...string) map[string]string {
	t.Helper()
	s := open(t, dir)
	out := map[string]string{}
	for _, u := range urls {
		text, _, err := s.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		out[u] = text
	}
	return out
}

func TestDuplicatesAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	addPages(t, dir, 1, ModeFull, [2]string{"http://a.cl/", "texto común"}, [2]string{"http://b.cl/", "otro"}, [2]string{"http://g.cl/", "tres palabras aquí"})
	added := addPages(t, dir, 2, ModeFull,
		[2]string{"http://c.cl/", "texto común"}, // stored in segment 1 by a.cl
		[2]string{"http://a.cl/", "texto común"}, // unchanged page: points at its own old text
		[2]string{"http://d.cl/", "nuevo"},
		[2]string{"http://e.cl/", "nuevo"}) // stored in this segment by d.cl
	want := []Added{{Of: "http://a.cl/"}, {Of: "http://a.cl/"}, {Stored: true}, {Of: "http://d.cl/"}}
	if !slices.Equal(added, want) {
		t.Errorf("added %+v, want %+v", added, want)
	}
	s := open(t, dir)
	if info, _ := s.Segment(2); info.Records != 1 {
		t.Errorf("segment 2 stores %d texts, want 1", info.Records)
	}
	_, c, _ := s.Get("http://c.cl/")
	if c.Segment != 2 || c.RecordSegment != 1 || c.RecordCRC == 0 {
		t.Errorf("c.cl: %+v", c)
	}
	got := texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/", "http://e.cl/")
	if got["http://c.cl/"] != "texto común" || got["http://e.cl/"] != "nuevo" || got["http://a.cl/"] != "texto común" {
		t.Errorf("texts %v", got)
	}
	// A summary is only shared with an equal summary.
	addPages(t, dir, 3, ModeSummary, [2]string{"http://f.cl/", "tres palabras aquí"})
	if _, f, _ := open(t, dir).Get("http://f.cl/"); f.RecordSegment != 3 {
		t.Errorf("summary points at a full text: %+v", f)
	}
}

func TestRewriteGenerations(t *testing.T) {
	dir := t.TempDir()
	addPages(t, dir, 1, ModeFull, [2]string{"http://a.cl/", "uno"}, [2]string{"http://x.cl/", "compartido"})
	addPages(t, dir, 2, ModeFull, [2]string{"http://b.cl/", "dos"}, [2]string{"http://y.cl/", "compartido"})
	// Batch 1 gathered again with other content (a newer gatherer): a new
	// generation; its old data file stays, since segment 2 points into it.
	addPages(t, dir, 1, ModeFull, [2]string{"http://a.cl/", "uno, otra vez"}, [2]string{"http://x.cl/", "compartido, no"})
	if _, err := os.Stat(DataPathGen(dir, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(DataPath(dir, 1)); err != nil {
		t.Errorf("generation 0 removed while segment 2 points into it: %v", err)
	}
	got := texts(t, dir, "http://a.cl/", "http://y.cl/")
	if got["http://a.cl/"] != "uno, otra vez" || got["http://y.cl/"] != "compartido" {
		t.Errorf("texts %v", got)
	}
	// The newest segment written again: nothing can point into its old
	// data file, which goes at once.
	addPages(t, dir, 2, ModeFull, [2]string{"http://b.cl/", "dos bis"})
	if _, err := os.Stat(DataPath(dir, 2)); !os.IsNotExist(err) {
		t.Errorf("old data file of the newest segment kept: %v", err)
	}
	if got := texts(t, dir, "http://b.cl/"); got["http://b.cl/"] != "dos bis" {
		t.Errorf("texts %v", got)
	}
}

// storeFiles lists the segment files of dir.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestCompact(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("una página larga ", 500)
	addPages(t, dir, 1, ModeFull, [2]string{"http://a.cl/", "a1"}, [2]string{"http://b.cl/", long}, [2]string{"http://c.cl/", "c1"})
	addPages(t, dir, 2, ModeFull, [2]string{"http://a.cl/", "a2"}, [2]string{"http://d.cl/", long}, [2]string{"http://e.cl/", "e2"})
	addPages(t, dir, 3, ModeSummary, [2]string{"http://a.cl/", "a3 tres palabras"}, [2]string{"http://c.cl/", "c1"})
	// A crashed writer's leftovers.
	os.WriteFile(filepath.Join(dir, ".seg-000004.dat.tmp-123"), []byte("half"), 0o644)
	os.WriteFile(DataPath(dir, 4), []byte("WIRETXTD orphan"), 0o644)
	urls := []string{"http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/", "http://e.cl/"}
	before := texts(t, dir, urls...)
	st, err := Compact(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := CompactStats{Segments: 3, Into: 3, Generation: 1, FirstBatch: 1, EntriesIn: 8, Entries: 5, Replaced: 3, Records: 4, Shared: 2}
	got := st
	got.FilesBefore, got.BytesBefore, got.BytesAfter, got.Removed = 0, 0, 0, 0
	if got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if st.Removed != 7 || st.BytesAfter >= st.BytesBefore {
		t.Errorf("removed %d files, %d bytes before, %d after", st.Removed, st.BytesBefore, st.BytesAfter)
	}
	if files := storeFiles(t, dir); !slices.Equal(files, []string{"seg-000003.g1.dat", "seg-000003.idx"}) {
		t.Errorf("files after compaction: %v", files)
	}
	after := texts(t, dir, urls...)
	for _, u := range urls {
		if before[u] != after[u] {
			t.Errorf("%s: %q before, %q after", u, before[u], after[u])
		}
	}
	s := open(t, dir)
	info := s.Segments()
	if len(info) != 1 || !info[0].Compacted || info[0].FirstBatch != 1 || info[0].Entries != 5 {
		t.Errorf("segments %+v", info)
	}
	_, b, _ := s.Get("http://b.cl/")
	_, d, _ := s.Get("http://d.cl/")
	if b.Offset != d.Offset || b.Batch != 1 || d.Batch != 2 {
		t.Errorf("the same text twice: %+v %+v", b, d)
	}
	if _, c, _ := s.Get("http://c.cl/"); c.Batch != 3 || c.Flags&FlagSummary != 0 {
		t.Errorf("c.cl: %+v", c)
	}
	// Nothing left to do.
	if st, err := Compact(dir); err != nil || st.Segments != 0 {
		t.Errorf("second compaction: %+v %v", st, err)
	}
	// The compacted segment cannot be gathered again; a newer one can,
	// and points at the compacted texts.
	if _, err := Create(dir, 3, ModeFull, 0); !errors.Is(err, ErrCompacted) {
		t.Errorf("Create over a compacted segment: %v", err)
	}
	addPages(t, dir, 4, ModeFull, [2]string{"http://f.cl/", long}, [2]string{"http://a.cl/", "a4"})
	if _, f, _ := open(t, dir).Get("http://f.cl/"); f.RecordSegment != 3 || f.RecordGen != 1 {
		t.Errorf("f.cl: %+v", f)
	}
	if _, err := Compact(dir); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, dir, "http://f.cl/", "http://a.cl/", "http://e.cl/"); got["http://f.cl/"] != long || got["http://a.cl/"] != "a4" || got["http://e.cl/"] != "e2" {
		t.Errorf("after the second compaction: %v", got)
	}
	if files := storeFiles(t, dir); !slices.Equal(files, []string{"seg-000004.g1.dat", "seg-000004.idx"}) {
		t.Errorf("files: %v", files)
	}
}

// TestCompactCrash: the states a killed compaction can leave behind read
// the same as before, and the next compaction finishes the job.
func TestCompactCrash(t *testing.T) {
	build := func(t *testing.T) (string, map[string]string) {
		dir := t.TempDir()
		addPages(t, dir, 1, ModeFull, [2]string{"http://a.cl/", "a1"}, [2]string{"http://b.cl/", "b1"})
		addPages(t, dir, 2, ModeFull, [2]string{"http://a.cl/", "a2"}, [2]string{"http://c.cl/", "b1"})
		return dir, texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/")
	}
	copyFiles := func(t *testing.T, from, to string) {
		for _, name := range storeFiles(t, from) {
			b, err := os.ReadFile(filepath.Join(from, name))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(to, name), b, 0o644)
		}
	}
	t.Run("killed before the index rename", func(t *testing.T) {
		dir, want := build(t)
		// The new data file and a half-written index are there.
		os.WriteFile(DataPathGen(dir, 2, 1), []byte("WIRETXTD\x02\x00\x00\x00\x02\x00\x00\x00"), 0o644)
		os.WriteFile(filepath.Join(dir, ".seg-000002.idx.tmp-9"), []byte("WIRETXTI"), 0o644)
		if got := texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/"); !mapsEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		if _, err := Compact(dir); err != nil {
			t.Fatal(err)
		}
		if got := texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/"); !mapsEqual(got, want) {
			t.Errorf("after compaction: got %v, want %v", got, want)
		}
		if files := storeFiles(t, dir); !slices.Equal(files, []string{"seg-000002.g2.dat", "seg-000002.idx"}) {
			t.Errorf("files: %v", files)
		}
	})
	t.Run("killed after the index rename", func(t *testing.T) {
		dir, want := build(t)
		saved := t.TempDir()
		copyFiles(t, dir, saved)
		if _, err := Compact(dir); err != nil {
			t.Fatal(err)
		}
		// Put back what the compaction removed after its commit point.
		for _, name := range []string{"seg-000001.idx", "seg-000001.dat", "seg-000002.dat"} {
			b, _ := os.ReadFile(filepath.Join(saved, name))
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if got := texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/"); !mapsEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		st, err := Compact(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Replaced != 2 || st.Entries != 3 {
			t.Errorf("stats %+v", st)
		}
		if got := texts(t, dir, "http://a.cl/", "http://b.cl/", "http://c.cl/"); !mapsEqual(got, want) {
			t.Errorf("after compaction: got %v, want %v", got, want)
		}
		if files := storeFiles(t, dir); !slices.Equal(files, []string{"seg-000002.g2.dat", "seg-000002.idx"}) {
			t.Errorf("files: %v", files)
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCompactV1: version 1 segments are compacted into a version 2 one.
func TestCompactV1(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"seg-000001.dat", "seg-000001.idx", "seg-000002.dat", "seg-000002.idx"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	if _, err := Compact(dir); err != nil {
		t.Fatal(err)
	}
	got := texts(t, dir, "http://www.uchile.cl/", "http://www.uchile.cl/copia")
	if got["http://www.uchile.cl/"] != "Universidad de" || got["http://www.uchile.cl/copia"] != "Universidad de Chile\nBienvenidos" {
		t.Errorf("texts %v", got)
	}
	if info := open(t, dir).Segments(); len(info) != 1 || info[0].Version != Version {
		t.Errorf("segments %+v", info)
	}
}

func TestRemoveTemp(t *testing.T) {
	dir := t.TempDir()
	if got, err := RemoveTemp(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Fatalf("missing dir: %v %v", got, err)
	}
	keep := []string{"seg-000001.idx", "seg-000001.dat", "seg-000001.1.dat", "notes.tmp-1", ".other.tmp-2"}
	gone := []string{".seg-000001.dat.tmp-123", ".seg-000002.idx.tmp-4", ".seg-000003.idx.entries.tmp-5"}
	for _, name := range append(append([]string{}, keep...), gone...) {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	got, err := RemoveTemp(dir)
	if err != nil || strings.Join(got, ",") != strings.Join(gone, ",") {
		t.Fatalf("RemoveTemp = %v, %v; want %v", got, err, gone)
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
}
