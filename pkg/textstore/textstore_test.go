package textstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

var update = flag.Bool("update", false, "rewrite the frozen fixture testdata/v1 (only when the format version changes)")

// page is a text and its entry as the gatherer would add them.
func page(url string, id uint64, text string) (Meta, string) {
	return Meta{URL: url, DocID: id, Hash: xxhash.Sum64String(text), Status: 200, Fetched: time.Date(2026, 11, 22, 1, 2, 3, 4, time.UTC),
		MIME: "text/html", Charset: "utf-8", Lang: "es", Title: "Título de " + url, Description: "desc"}, text
}

// write makes segment id in dir from pairs of url and text.
func write(t *testing.T, dir string, id int, mode Mode, words int, pages ...[2]string) WriterStats {
	t.Helper()
	w, err := Create(dir, id, mode, words)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i, p := range pages {
		m, text := page(p[0], uint64(100*id+i), p[1])
		if _, err := w.Add(m, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	st := w.Stats()
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return st
}

// open opens dir and verifies every segment when the test ends.
func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, g := range s.Segments() {
			if err := s.Verify(g.ID); err != nil {
				t.Errorf("verify: %v", err)
			}
		}
		s.Close()
	})
	return s
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("palabra ñandú 日本 ", 20000)
	texts := [][2]string{
		{"http://a.cl/", "hola mundo"},
		{"http://b.cl/x?y=1", long},
		{"http://a.cl/empty", ""},
		{"http://c.cl/", "línea uno\nlínea dos"},
	}
	write(t, dir, 3, ModeFull, 0, texts...)
	s := open(t, dir)
	for i, p := range texts {
		text, m, err := s.Get(p[0])
		if err != nil {
			t.Fatalf("%s: %v", p[0], err)
		}
		want, _ := page(p[0], uint64(300+i), p[1])
		if text != p[1] {
			t.Errorf("%s: text of %d bytes, want %d", p[0], len(text), len(p[1]))
		}
		if m.URL != want.URL || m.DocID != want.DocID || m.Hash != want.Hash || m.Title != want.Title || !m.Fetched.Equal(want.Fetched) ||
			m.Status != 200 || m.MIME != "text/html" || m.Charset != "utf-8" || m.Lang != "es" || m.Description != "desc" || m.Segment != 3 ||
			m.TextBytes != len(p[1]) || m.StoredBytes != len(p[1]) {
			t.Errorf("%s: meta %+v", p[0], m)
		}
		text2, m2, err := s.GetByDocID(want.DocID)
		if err != nil || text2 != text || m2.URL != m.URL {
			t.Errorf("doc %d: %q %v", want.DocID, m2.URL, err)
		}
	}
	if _, _, err := s.Get("http://nowhere.cl/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing URL: %v", err)
	}
	if _, _, err := s.GetByDocID(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing doc: %v", err)
	}
	// Entries come out in URL order.
	var urls []string
	if err := s.Scan(3, func(m Meta) error { urls = append(urls, m.URL); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(urls, " ") != "http://a.cl/ http://a.cl/empty http://b.cl/x?y=1 http://c.cl/" {
		t.Errorf("scan order %v", urls)
	}
	// Compression works on repetitive text.
	if info := s.Segments()[0]; info.DataBytes > int64(len(long))/4 {
		t.Errorf("data file %d bytes for %d bytes of text", info.DataBytes, len(long))
	}
}

func TestDedupe(t *testing.T) {
	dir := t.TempDir()
	st := write(t, dir, 1, ModeFull, 0,
		[2]string{"http://a.cl/", "same text"},
		[2]string{"http://b.cl/", "other text"},
		[2]string{"http://c.cl/", "same text"},
		[2]string{"http://d.cl/", "same text"})
	if st.Records != 2 || st.Duplicates != 2 || st.Entries != 4 {
		t.Errorf("stats %+v, want 2 records, 2 duplicates, 4 entries", st)
	}
	s := open(t, dir)
	a, _ := s.Lookup("http://a.cl/")
	c, _ := s.Lookup("http://c.cl/")
	if a.Offset != c.Offset || a.Length != c.Length || a.Length == 0 {
		t.Errorf("duplicates point at %d+%d and %d+%d", a.Offset, a.Length, c.Offset, c.Length)
	}
	for _, u := range []string{"http://a.cl/", "http://c.cl/", "http://d.cl/"} {
		if text, _, err := s.Get(u); err != nil || text != "same text" {
			t.Errorf("%s: %q %v", u, text, err)
		}
	}
}

func TestNewestSegmentWins(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, 1, ModeFull, 0, [2]string{"http://a.cl/", "first visit"}, [2]string{"http://only1.cl/", "old"})
	write(t, dir, 7, ModeFull, 0, [2]string{"http://a.cl/", "third visit"})
	write(t, dir, 2, ModeFull, 0, [2]string{"http://a.cl/", "second visit"}, [2]string{"http://only2.cl/", "x"})
	s := open(t, dir)
	if text, m, err := s.Get("http://a.cl/"); err != nil || text != "third visit" || m.Segment != 7 {
		t.Errorf("got %q from %d (%v), want the text of segment 7", text, m.Segment, err)
	}
	if text, _, _ := s.Get("http://only1.cl/"); text != "old" {
		t.Errorf("only in segment 1: %q", text)
	}
	if m, err := s.LookupBefore(7, "http://a.cl/"); err != nil || m.Segment != 2 {
		t.Errorf("before 7: segment %d, %v", m.Segment, err)
	}
	if _, err := s.LookupBefore(1, "http://a.cl/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("before 1: %v", err)
	}
	prev, err := s.PreviousHashes(7, []string{"http://a.cl/", "http://only2.cl/", "http://new.cl/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) != 2 || prev["http://a.cl/"] != xxhash.Sum64String("second visit") || prev["http://only2.cl/"] != xxhash.Sum64String("x") {
		t.Errorf("previous hashes %v", prev)
	}
	// Doc ids: newest segment wins as well.
	if _, m, err := s.GetByDocID(700); err != nil || m.URL != "http://a.cl/" {
		t.Errorf("doc 700: %+v %v", m, err)
	}
}

func TestRewriteIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	pages := [][2]string{{"http://b.cl/", "b"}, {"http://a.cl/", "a"}, {"http://c.cl/", "b"}}
	write(t, dir, 5, ModeFull, 0, pages...)
	dat1, _ := os.ReadFile(DataPath(dir, 5))
	idx1, _ := os.ReadFile(IndexPath(dir, 5))
	write(t, dir, 5, ModeFull, 0, pages...)
	dat2, _ := os.ReadFile(DataPath(dir, 5))
	idx2, _ := os.ReadFile(IndexPath(dir, 5))
	if !bytes.Equal(dat1, dat2) || !bytes.Equal(idx1, idx2) {
		t.Error("rewriting a segment with the same pages changed its files")
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 2 {
		t.Errorf("%d files left, want 2", len(files))
	}
}

func TestAbortLeavesOldSegment(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, 1, ModeFull, 0, [2]string{"http://a.cl/", "kept"})
	w, err := Create(dir, 1, ModeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, text := page("http://a.cl/", 1, "discarded")
	w.Add(m, text, nil)
	w.Abort()
	s := open(t, dir)
	if text, _, err := s.Get("http://a.cl/"); err != nil || text != "kept" {
		t.Errorf("%q %v", text, err)
	}
	// An orphan data file (a crash between the two renames) is ignored.
	os.WriteFile(DataPath(dir, 9), []byte("junk"), 0o644)
	s2 := open(t, dir)
	if len(s2.Segments()) != 1 {
		t.Errorf("segments %+v", s2.Segments())
	}
}

func TestModes(t *testing.T) {
	dir := t.TempDir()
	text := "uno dos  tres\ncuatro cinco"
	write(t, dir, 1, ModeSummary, 3, [2]string{"http://a.cl/", text})
	write(t, dir, 2, ModeNone, 0, [2]string{"http://b.cl/", text})
	w, _ := Create(dir, 3, ModeFull, 0)
	m, _ := page("http://c.cl/", 1, text)
	m.Flags = FlagNoIndex
	w.Add(m, text, nil)
	w.Commit()
	s := open(t, dir)
	for _, c := range []struct{ url, want string }{{"http://a.cl/", "uno dos  tres"}, {"http://b.cl/", ""}, {"http://c.cl/", ""}} {
		got, m, err := s.Get(c.url)
		if err != nil || got != c.want || m.TextBytes != len(text) || m.Hash != xxhash.Sum64String(text) {
			t.Errorf("%s: %q (%d of %d bytes) %v", c.url, got, m.StoredBytes, m.TextBytes, err)
		}
	}
	if g := s.Segments(); g[0].Mode != ModeSummary || g[0].SummaryWords != 3 || g[1].Mode != ModeNone {
		t.Errorf("segments %+v", g)
	}
}

func TestFirstWords(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"a b c", 2, "a b"},
		{"  a\n\nb  c ", 2, "  a\n\nb"},
		{"a b", 5, "a b"},
		{"ñandú  日本語 x", 2, "ñandú  日本語"},
		{"a\u00a0b c", 1, "a"},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		if got := FirstWords(c.in, c.n); got != c.want {
			t.Errorf("FirstWords(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if _, err := ParseMode("partial"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}

func TestVersionCheck(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, 1, ModeFull, 0, [2]string{"http://a.cl/", "x"})
	idx, _ := os.ReadFile(IndexPath(dir, 1))
	binary.LittleEndian.PutUint32(idx[8:], Version+1)
	os.WriteFile(IndexPath(dir, 1), idx, 0o644)
	_, err := Open(dir)
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("open: %v, want ErrVersion", err)
	}
	if !strings.Contains(err.Error(), "segment 000001") {
		t.Errorf("error does not name the segment: %v", err)
	}
}

// TestDamage: truncated or corrupted files give ErrCorrupt, never a panic.
func TestDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(dir string)
		atOpen bool // the damage is found by Open, else by Get or Verify
	}{
		{"index truncated", func(dir string) { truncate(dir, IndexPath(dir, 1), -5) }, true},
		{"index header only", func(dir string) { truncate(dir, IndexPath(dir, 1), IndexHeaderSize) }, true},
		{"index empty", func(dir string) { truncate(dir, IndexPath(dir, 1), 0) }, true},
		{"data truncated", func(dir string) { truncate(dir, DataPath(dir, 1), -3) }, true},
		{"data missing", func(dir string) { os.Remove(DataPath(dir, 1)) }, true},
		{"index header bit flip", func(dir string) { flip(IndexPath(dir, 1), 17) }, true},
		{"bad magic", func(dir string) { flip(IndexPath(dir, 1), 0) }, true},
		{"data record bit flip", func(dir string) { flip(DataPath(dir, 1), DataHeaderSize+RecordHeaderSize+2) }, false},
		{"data record length", func(dir string) { flip(DataPath(dir, 1), DataHeaderSize) }, false},
		{"entry bit flip", func(dir string) { flip(IndexPath(dir, 1), IndexHeaderSize+1) }, false},
		{"table bit flip", func(dir string) { flipFromEnd(IndexPath(dir, 1), 9) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, 1, ModeFull, 0, [2]string{"http://a.cl/", strings.Repeat("texto ", 100)}, [2]string{"http://b.cl/", "b"})
			c.damage(dir)
			s, err := Open(dir)
			if c.atOpen {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("open: %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			_, _, gerr := s.Get("http://a.cl/")
			verr := s.Verify(1)
			if !errors.Is(verr, ErrCorrupt) {
				t.Errorf("verify: %v, want ErrCorrupt", verr)
			}
			if gerr != nil && !errors.Is(gerr, ErrCorrupt) && !errors.Is(gerr, ErrNotFound) {
				t.Errorf("get: %v", gerr)
			}
		})
	}
}

func truncate(dir, path string, n int64) {
	st, _ := os.Stat(path)
	if n < 0 {
		n = st.Size() + n
	}
	os.Truncate(path, n)
}

func flip(path string, off int) {
	b, _ := os.ReadFile(path)
	b[off] ^= 0x40
	os.WriteFile(path, b, 0o644)
}

func flipFromEnd(path string, back int) {
	b, _ := os.ReadFile(path)
	b[len(b)-back] ^= 0x40
	os.WriteFile(path, b, 0o644)
}

// TestFrozen opens segments written by each version of the format and
// kept in testdata: later versions of the code must keep reading them (or
// refuse them with ErrVersion once a version is dropped). testdata/v1 was
// written by version 1 of this package and can no longer be rewritten;
// go test -update rewrites testdata/v2 (only when the format changes).
func TestFrozen(t *testing.T) {
	if *update {
		dir := filepath.Join("testdata", "v2")
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		write(t, dir, 1, ModeFull, 0, [2]string{"http://www.uchile.cl/", "Universidad de Chile\nBienvenidos"}, [2]string{"http://www.uchile.cl/copia", "Universidad de Chile\nBienvenidos"})
		w, err := Create(dir, 2, ModeSummary, 2)
		if err != nil {
			t.Fatal(err)
		}
		m, text := page("http://www.uchile.cl/", 200, "Universidad de Chile, segunda visita")
		m.Headings = []Heading{{1, "Universidad de Chile"}, {2, "Noticias"}}
		w.Add(m, text, nil)
		// The same text as a page of segment 1: pointed at, not stored.
		s, _ := Open(dir)
		m, text = page("http://www.uchile.cl/espejo", 201, "Universidad de Chile\nBienvenidos")
		older, ok, err := s.FindText(2, m.Hash, ModeSummary.Keep(text, 2))
		if err != nil || ok {
			t.Fatalf("a summary found a full text: %v %v", ok, err)
		}
		w.Add(m, text, nil)
		s.Close()
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		_ = older
		// Segment 3 points at the text segment 1 stored.
		s, _ = Open(dir)
		w, _ = Create(dir, 3, ModeFull, 0)
		m, text = page("http://www.uchile.cl/tercera", 300, "Universidad de Chile\nBienvenidos")
		older, ok, err = s.FindText(3, m.Hash, text)
		if err != nil || !ok || older.URL != "http://www.uchile.cl/" && older.URL != "http://www.uchile.cl/copia" {
			t.Fatalf("FindText: %+v %v %v", older, ok, err)
		}
		if a, _ := w.Add(m, text, &older); a.Stored || a.Of == "" {
			t.Fatalf("added %+v", a)
		}
		s.Close()
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		dir, url, text string
		seg, recSeg    int
	}{
		{"v1", "http://www.uchile.cl/", "Universidad de", 2, 2},
		{"v1", "http://www.uchile.cl/copia", "Universidad de Chile\nBienvenidos", 1, 1},
		{"v2", "http://www.uchile.cl/", "Universidad de", 2, 2},
		{"v2", "http://www.uchile.cl/copia", "Universidad de Chile\nBienvenidos", 1, 1},
		{"v2", "http://www.uchile.cl/espejo", "Universidad de", 2, 2},
		{"v2", "http://www.uchile.cl/tercera", "Universidad de Chile\nBienvenidos", 3, 1},
	} {
		s := open(t, filepath.Join("testdata", c.dir))
		text, m, err := s.Get(c.url)
		if err != nil || text != c.text || m.Segment != c.seg || m.RecordSegment != c.recSeg || m.Title != "Título de "+c.url {
			t.Errorf("%s %s: %q from %d (record in %d), %+v, %v", c.dir, c.url, text, m.Segment, m.RecordSegment, m, err)
		}
	}
	s := open(t, filepath.Join("testdata", "v2"))
	if _, m, _ := s.Get("http://www.uchile.cl/"); len(m.Headings) != 2 || m.Headings[1] != (Heading{2, "Noticias"}) || m.Batch != 2 || m.Flags&FlagSummary == 0 {
		t.Errorf("v2 entry: %+v", m)
	}
}

func TestCreateChecks(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		id    int
		mode  Mode
		words int
	}{{0, ModeFull, 0}, {1000000, ModeFull, 0}, {1, Mode(9), 0}, {1, ModeSummary, 0}} {
		if _, err := Create(dir, c.id, c.mode, c.words); err == nil {
			t.Errorf("Create(%d, %v, %d) succeeded", c.id, c.mode, c.words)
		}
	}
	if got := SegmentName(42); got != "seg-000042" {
		t.Errorf("SegmentName(42) = %s", got)
	}
	for name, want := range map[string]int{"seg-000042.idx": 42, "seg-42.idx": 0, "seg-000042.dat": 0, ".seg-000042.idx.tmp-1": 0} {
		if id, _ := parseIndexName(name); id != want {
			t.Errorf("parseIndexName(%q) = %d, want %d", name, id, want)
		}
	}
}

// TestCRCString: crcString is crc of the string's bytes.
func TestCRCString(t *testing.T) {
	for _, s := range []string{"", "a", "hello, world", strings.Repeat("ü", 1000)} {
		if got, want := crcString(s), crc([]byte(s)); got != want {
			t.Errorf("%.20q: %08x, want %08x", s, got, want)
		}
	}
}
