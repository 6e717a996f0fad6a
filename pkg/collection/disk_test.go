package collection

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keepBytes is a Keeper of a fixed number of bytes.
type keepBytes int64

func (k keepBytes) Of(int64) int64 { return int64(k) }

func TestCheckFree(t *testing.T) {
	dir := t.TempDir()
	sp, err := StatSpace(dir)
	if err != nil || sp.Free <= 0 || sp.Size < sp.Free {
		t.Fatalf("StatSpace: %+v %v", sp, err)
	}
	if err := CheckFree(dir, nil, 0, ""); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := CheckFree(dir, keepBytes(0), 1<<62, ""); err != nil {
		t.Errorf("a limit of 0: %v", err)
	}
	if err := CheckFree(dir, keepBytes(1), 0, ""); err != nil {
		t.Errorf("1 byte to keep: %v", err)
	}
	err = CheckFree(dir, keepBytes(sp.Size), 0, "run 'gatherer compact'")
	var df *DiskFull
	if !errors.Is(err, ErrDiskFull) || !errors.As(err, &df) || df.Keep != sp.Size || !strings.Contains(err.Error(), "gatherer compact") {
		t.Errorf("keeping the whole disk: %v", err)
	}
	err = CheckFree(dir, keepBytes(1), sp.Free, "")
	if !errors.As(err, &df) || df.Need != sp.Free || !strings.Contains(err.Error(), "more is needed") {
		t.Errorf("needing all that is free: %v", err)
	}
	if err := CheckFree(filepath.Join(dir, "missing"), keepBytes(1), 0, ""); err == nil || errors.Is(err, ErrDiskFull) {
		t.Errorf("a missing directory: %v", err)
	}
}

func TestDiskUse(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	use, err := DiskUse(dir)
	if err != nil {
		t.Fatal(err)
	}
	// One copy of the file (hard links count once), plus the directory.
	if use < 64<<10 || use >= 2*64<<10 {
		t.Errorf("disk use %d, want one 64 KiB file and a directory", use)
	}
}

func TestBytesPerURL(t *testing.T) {
	c, err := Create(filepath.Join(t.TempDir(), "col"), []byte("# config\n"))
	if err != nil {
		t.Fatal(err)
	}
	if per, n, err := c.BytesPerURL(5); per != 0 || n != 0 || err != nil {
		t.Errorf("no batch: %d per URL over %d batches, %v", per, n, err)
	}
	b := c.Batch(1)
	if err := os.MkdirAll(filepath.Join(b.Dir, "harvest"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.File(), []byte("# batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.Dir, "harvest", "data.warc.gz"), make([]byte, 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.TextPath(), "seg-000001.dat"), make([]byte, 50<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkDone(StageHarvested, map[string]int{"urls": 10}); err != nil {
		t.Fatal(err)
	}
	per, n, err := c.BytesPerURL(5)
	if err != nil || n != 1 || per < 15<<10 || per > 18<<10 {
		t.Errorf("one batch of 10 URLs and 150 KiB: %d per URL over %d batches, %v", per, n, err)
	}
}
