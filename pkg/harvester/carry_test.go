package harvester

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
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
		got := ""
		if dirs := previousHarvests(b, 0, time.Now()); len(dirs) > 0 {
			got = dirs[0]
			if len(dirs) > 1 {
				t.Errorf("batch %d: %d harvests at horizon 0 (no servers files), want 1", c.id, len(dirs))
			}
		}
		if got != want {
			t.Errorf("batch %d: previous harvest %q, want %q", c.id, got, want)
		}
	}
	if got := previousHarvests(&collection.Batch{ID: 3, Dir: filepath.Join(t.TempDir(), "missing", "000003")}, time.Hour, time.Now()); got != nil {
		t.Errorf("no siblings: %q", got)
	}
	// Within the horizon, older harvests count too, newest first, up to the
	// first whose servers file is older than the horizon.
	now := time.Now()
	for name, age := range map[string]time.Duration{"000001": time.Hour, "000002": 5 * time.Minute, "000006": time.Second} {
		p := filepath.Join(dir, name, collection.HarvestDir, fetchlog.ServersFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	b := &collection.Batch{ID: 7, Dir: filepath.Join(dir, "000007")}
	h := func(name string) string { return filepath.Join(dir, name, collection.HarvestDir) }
	for _, c := range []struct {
		horizon time.Duration
		want    []string
	}{
		{0, []string{h("000006")}},
		{10 * time.Minute, []string{h("000006"), h("000002")}},
		{2 * time.Hour, []string{h("000006"), h("000002"), h("000001")}},
	} {
		if got := previousHarvests(b, c.horizon, now); !slices.Equal(got, c.want) {
			t.Errorf("horizon %v: %q, want %q", c.horizon, got, c.want)
		}
	}
}
