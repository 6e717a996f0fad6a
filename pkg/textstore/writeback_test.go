package textstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritebackFile: a WritebackFile writes every byte it is given, in
// order, and hands them to the writeback once a step's worth has been
// written since the last hand-over.
func TestWritebackFile(t *testing.T) {
	for _, tc := range []struct {
		name        string
		writes      []int // sizes, in order
		wantStarted int64 // bytes handed to the writeback at the end
	}{
		{"nothing", nil, 0},
		{"less than a step", []int{1000, 2000}, 0},
		{"one byte short of a step", []int{WritebackStep - 1}, 0},
		{"exactly a step", []int{WritebackStep}, WritebackStep},
		{"a step in small writes", []int{WritebackStep / 2, WritebackStep / 2}, WritebackStep},
		{"a step and a bit", []int{WritebackStep / 2, WritebackStep/2 + 10, 100}, WritebackStep + 10},
		{"one large write", []int{3*WritebackStep + 7}, 3*WritebackStep + 7},
		{"two steps", []int{WritebackStep + 1, WritebackStep - 1, WritebackStep, 5}, 3 * WritebackStep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			w := NewWritebackFile(f)
			var want bytes.Buffer
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				if m, err := w.Write(p); m != n || err != nil {
					t.Fatalf("write %d: %d, %v", i, m, err)
				}
				want.Write(p)
			}
			if w.started != tc.wantStarted || w.off != int64(want.Len()) {
				t.Errorf("handed over %d of %d bytes, want %d of %d", w.started, w.off, tc.wantStarted, want.Len())
			}
			got, err := os.ReadFile(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("file holds %d bytes, not the %d written", len(got), want.Len())
			}
		})
	}
}

// TestCommitIndexFails: when the index cannot be put in place (its name
// is taken by a directory), Commit says so and leaves no temporary file;
// the data file, renamed first, is an orphan a later commit or
// compaction ignores.
func TestCommitIndexFails(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, 1, ModeFull, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, text := page("http://a.cl/", 1, "text")
	if _, err := w.Add(m, text, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(IndexPath(dir, 1), "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "commit text segment 1") {
		t.Fatalf("commit: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}
