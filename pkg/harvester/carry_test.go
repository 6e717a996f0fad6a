package harvester

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
)

// TestPreviousHarvest: the previous harvest of batch N is the newest
// batch below N marked harvested, whatever lies above N or between
// (a batch not harvested yet, a cancelled batch's directory, a stray
// file); none for the first batch or without one.
func TestPreviousHarvest(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, harvested bool) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if harvested {
			if err := os.WriteFile(filepath.Join(dir, name, "harvested.done"), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("000001", true)
	mk("000002", true)
	mk("000003", false) // managed, not harvested
	mk(".cancelled-000004", true)
	mk("000006", true) // newer than the batch asked about
	if err := os.WriteFile(filepath.Join(dir, "000005"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   int
		want string
	}{
		{1, ""},
		{2, "000001"},
		{3, "000002"},
		{4, "000002"},
		{5, "000002"},
		{7, "000006"},
	} {
		b := &collection.Batch{ID: c.id, Dir: filepath.Join(dir, collection.BatchName(c.id))}
		want := ""
		if c.want != "" {
			want = filepath.Join(dir, c.want, collection.HarvestDir)
		}
		if got := previousHarvest(b); got != want {
			t.Errorf("batch %d: previous harvest %q, want %q", c.id, got, want)
		}
	}
	if got := previousHarvest(&collection.Batch{ID: 3, Dir: filepath.Join(t.TempDir(), "missing", "000003")}); got != "" {
		t.Errorf("no siblings: %q", got)
	}
}
