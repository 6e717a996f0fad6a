package manager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// markCycle writes the harvested and seeded markers of batch id as the
// harvester and the seeder do: its harvest ended at end, its seeding
// started after and took took.
func markCycle(t *testing.T, col *collection.Collection, id int, end time.Time, after, took time.Duration) {
	t.Helper()
	b := col.Batch(id)
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.File(), []byte("# wire-batch 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkDone(collection.StageHarvested, map[string]any{"batch": id, "finished": end}); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkDone(collection.StageSeeded, map[string]any{"batch": id, "started": end.Add(after), "elapsed": took.String()}); err != nil {
		t.Fatal(err)
	}
}

// TestBatchLength: a batch lasts batch_cycle_factor times what the
// newest seeded batch's gathering and seeding took, plus the harvester's
// start floor (max(wait, address_wait)), within four waits
// (and one second) and batch_duration.
func TestBatchLength(t *testing.T) {
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		wait    time.Duration
		factor  float64
		longest time.Duration
		cycles  map[int][2]time.Duration // batch -> gap after the harvest, seeding time
		next    int
		want    time.Duration
		why     string
	}{
		{"first batch, wait 0", 0, 4, time.Hour, nil, 1, time.Second, "no seeded batch"},
		{"first batch, wait 0.5 s", 500 * time.Millisecond, 4, time.Hour, nil, 1, 2 * time.Second, "no seeded batch"},
		{"first batch, default wait", 15 * time.Second, 4, time.Hour, nil, 1, time.Minute, "no seeded batch"},
		{"fast stages", 0, 4, time.Hour, map[int][2]time.Duration{1: {time.Second, 2 * time.Second}}, 2, 13 * time.Second, "4 x 3.25s"}, // and address_wait 250 ms
		{"the newest seeded batch counts", 0, 4, time.Hour, map[int][2]time.Duration{1: {time.Second, 2 * time.Second}, 2: {0, 5 * time.Second}}, 4, 21 * time.Second, "batch 000002"},
		{"a later batch does not count", 0, 4, time.Hour, map[int][2]time.Duration{1: {0, 2 * time.Second}, 3: {0, 9 * time.Second}}, 3, 9 * time.Second, "batch 000001"},
		{"the wait in the cycle", 15 * time.Second, 4, time.Hour, map[int][2]time.Duration{1: {0, 3 * time.Second}}, 2, 72 * time.Second, "4 x 18s"},
		{"the shortest", 15 * time.Second, 2, time.Hour, map[int][2]time.Duration{1: {0, 3 * time.Second}}, 2, time.Minute, "2 x 18s"},
		{"stages run by hand", 15 * time.Second, 4, time.Hour, map[int][2]time.Duration{1: {50 * time.Minute, 3 * time.Second}}, 2, time.Hour, "4 x 50m18s"},
		{"seeded a year after its harvest", 0, 1000, time.Hour, map[int][2]time.Duration{1: {365 * 24 * time.Hour, time.Second}}, 2, time.Hour, "1000 x"},
		{"off", 0, 0, time.Hour, map[int][2]time.Duration{1: {0, time.Second}}, 2, time.Hour, "batch_duration"},
		{"no time sizing", 0, 4, 0, map[int][2]time.Duration{1: {0, time.Second}}, 2, 0, "batch_duration"},
		{"batch_duration below the shortest", 15 * time.Second, 4, 10 * time.Second, nil, 1, 10 * time.Second, "no seeded batch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			col, err := collection.Create(filepath.Join(t.TempDir(), "col"), nil)
			if err != nil {
				t.Fatal(err)
			}
			for id, c := range tc.cycles {
				markCycle(t, col, id, end, c[0], c[1])
			}
			cfg := config.Defaults()
			cfg.Harvester.Wait = config.Duration(tc.wait)
			cfg.Manager.BatchCycleFactor = tc.factor
			cfg.Manager.BatchDuration = config.Duration(tc.longest)
			got, why := batchLength(col, &cfg, tc.next)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("batch %d: %v (%s), want %v (%s)", tc.next, got, why, tc.want, tc.why)
			}
		})
	}
}

// TestBatchLengthQuiet: after a harvest that left its holds, the next
// harvest starts quiet (docs/harvester.md, "The start floor"): the cycle
// is the stages' time alone, without a wait.
func TestBatchLengthQuiet(t *testing.T) {
	end := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	col, err := collection.Create(filepath.Join(t.TempDir(), "col"), nil)
	if err != nil {
		t.Fatal(err)
	}
	markCycle(t, col, 1, end, 0, 3*time.Second)
	b := col.Batch(1)
	if err := b.MarkDone(collection.StageHarvested, map[string]any{"batch": 1, "finished": end, "holds": true}); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Harvester.Wait = config.Duration(15 * time.Second)
	got, why := batchLength(col, &cfg, 2)
	if got != time.Minute || !strings.Contains(why, "4 x 3s") || !strings.Contains(why, "starting quiet") {
		t.Errorf("after a quiet harvest: %v (%s), want 1m0s, 4 x 3s (the shortest: four waits)", got, why)
	}
	cfg.Harvester.Wait = config.Duration(0)
	if got, why := batchLength(col, &cfg, 2); got != 12*time.Second {
		t.Errorf("at wait 0: %v (%s), want 12s, without the 250 ms address floor", got, why)
	}
}

// TestRunBatchLength: manager run writes the adaptive length into the
// batch's header (the harvester's deadline is twice it) and sizes the
// batch by it: at a 1 s wait, a batch of 4 s holds four URLs of a site
// that has twenty.
func TestRunBatchLength(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.BatchCycleFactor = 4
	f.cfg.Harvester.Wait = config.Duration(time.Second)
	var pages []page
	for i := range 20 {
		pages = append(pages, page{url: "http://a.cl/p" + string(rune('a'+i))})
	}
	f.add(pages...)
	res := f.mustRun()
	h, entries := readBatch(t, f.col, 1)
	if h.Params["batch_duration"] != "4s" || res.BatchDuration != 4*time.Second {
		t.Errorf("batch_duration %q (result %v), want 4s: no batch seeded yet", h.Params["batch_duration"], res.BatchDuration)
	}
	if len(entries) < 2 || len(entries) > 5 {
		t.Errorf("%d URLs of a.cl in a 4 s batch at a 1 s wait, want about 4", len(entries))
	}
}
