package textstore

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDamagedSegment overwrites segment 1 of a frozen fixture with
// arbitrary bytes (segment 2, intact, may point into it): opening,
// reading, verifying and compacting the store must give errors, never
// panic or ask for absurd amounts of memory.
func FuzzDamagedSegment(f *testing.F) {
	for _, v := range []string{"v1", "v2"} {
		idx, err := os.ReadFile(filepath.Join("testdata", v, "seg-000001.idx"))
		if err != nil {
			f.Fatal(err)
		}
		dat, err := os.ReadFile(filepath.Join("testdata", v, "seg-000001.dat"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v, idx, dat)
		f.Add(v, idx[:IndexHeaderSizeV1], dat)
	}
	f.Fuzz(func(t *testing.T, v string, idx, dat []byte) {
		if v != "v1" && v != "v2" {
			return
		}
		dir := t.TempDir()
		for _, name := range []string{"seg-000002.idx", "seg-000002.dat", "seg-000003.idx", "seg-000003.dat"} {
			if b, err := os.ReadFile(filepath.Join("testdata", v, name)); err == nil {
				os.WriteFile(filepath.Join(dir, name), b, 0o644)
			}
		}
		os.WriteFile(IndexPath(dir, 1), idx, 0o644)
		os.WriteFile(DataPath(dir, 1), dat, 0o644)
		s, err := Open(dir)
		if err != nil {
			return
		}
		defer s.Close()
		s.Get("http://www.uchile.cl/")
		s.Get("http://www.uchile.cl/tercera")
		s.GetByDocID(100)
		s.FindText(2, 0x1234, "Universidad de Chile\nBienvenidos")
		for _, g := range s.Segments() {
			s.Verify(g.ID)
			s.Scan(g.ID, func(m Meta) error { _, err := s.Text(m); return err })
		}
		Compact(dir)
	})
}
