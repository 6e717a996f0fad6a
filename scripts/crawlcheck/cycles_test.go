package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// TestCycles reads the markers of two batches, the second written beside
// the first's seeding, and prints where the time went.
func TestCycles(t *testing.T) {
	dir := t.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type marks struct {
		written, hs, he, gs, gsecs, ss float64
		elapsed                        string
	}
	for i, m := range []marks{
		{written: 0, hs: 0.1, he: 2.1, gs: 0.2, gsecs: 2.0, ss: 2.3, elapsed: "500ms"},
		{written: 2.5, hs: 3.0, he: 4.0, gs: 4.0, gsecs: 0.25, ss: 4.3, elapsed: "200ms"},
	} {
		b := col.Batch(i + 1)
		if err := os.MkdirAll(b.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b.File(), []byte("# wire-batch 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(b.File(), at(m.written), at(m.written)); err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(b.MarkDone(collection.StageHarvested, map[string]any{"started": at(m.hs), "finished": at(m.he)}))
		must(b.MarkDone(collection.StageGathered, map[string]any{"started": at(m.gs), "seconds": m.gsecs}))
		must(b.MarkDone(collection.StageSeeded, map[string]any{"started": at(m.ss), "elapsed": m.elapsed}))
	}
	cs, err := readCycles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printCycles(&out, cs, time.Time{})
	got := out.String()
	for _, want := range []string{
		// batch 1: harvest 0.1-2.1, gathered 0.1 s after it, seeded 0.7 s after it; batch 2 written 0.3 s after seeding
		"000001      0.00         0.10-2.10    2.00            +0.10    +0.70   -0.30",
		// batch 2: the harvester idle 0.9 s before it
		"000002      2.50         3.00-4.00    1.00   0.90     +0.25    +0.50",
		"harvester busy 3.00 s, idle 0.90 s between harvests; medians after a harvest ended: gathered +0.25 s, seeded +0.70 s; next batch after seeded -0.30 s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}
