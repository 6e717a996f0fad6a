package textstore

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDamagedSegment overwrites the frozen fixture's segment 1 with
// arbitrary bytes: opening and reading it must give errors, never panic
// or ask for absurd amounts of memory.
func FuzzDamagedSegment(f *testing.F) {
	idx, err := os.ReadFile(filepath.Join("testdata", "v1", "seg-000001.idx"))
	if err != nil {
		f.Fatal(err)
	}
	dat, err := os.ReadFile(filepath.Join("testdata", "v1", "seg-000001.dat"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(idx, dat)
	f.Add(idx[:IndexHeaderSize], dat)
	f.Fuzz(func(t *testing.T, idx, dat []byte) {
		dir := t.TempDir()
		os.WriteFile(IndexPath(dir, 1), idx, 0o644)
		os.WriteFile(DataPath(dir, 1), dat, 0o644)
		s, err := Open(dir)
		if err != nil {
			return
		}
		defer s.Close()
		s.Get("http://www.uchile.cl/")
		s.GetByDocID(100)
		s.Verify(1)
		s.Scan(1, func(m Meta) error { _, err := s.Text(m); return err })
	})
}
