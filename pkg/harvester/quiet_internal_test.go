package harvester

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// TestQuietSince: when a run may start without a floor of a whole wait,
// and from when.
func TestQuietSince(t *testing.T) {
	end1 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	end2 := end1.Add(3 * time.Second)
	type prev struct {
		id       int
		finished time.Time
		holds    bool
		shard    string
	}
	for _, tc := range []struct {
		name     string
		prevs    []prev
		batch    int // the run's batch (default 3)
		shard    Shard
		resuming bool
		partial  string // a directory in batch 1 ("": none)
		later    bool   // batch 4 harvested
		want     time.Time
		ok       bool
	}{
		{name: "first harvest", ok: true},
		{name: "two quiet harvests", prevs: []prev{{1, end1, true, ""}, {2, end2, true, ""}}, want: end2, ok: true},
		{name: "resume", prevs: []prev{{2, end2, true, ""}}, resuming: true},
		{name: "shard run", prevs: []prev{{2, end2, true, ""}}, shard: Shard{I: 1, N: 2}},
		{name: "a harvest without holds", prevs: []prev{{1, end1, false, ""}, {2, end2, true, ""}}},
		{name: "a harvest in shards", prevs: []prev{{2, end2, true, "1/2"}}},
		{name: "a harvest being written", prevs: []prev{{2, end2, true, ""}}, partial: collection.HarvestPartialDir},
		{name: "a shard being written", prevs: []prev{{2, end2, true, ""}}, partial: collection.ShardPartialDir(1, 2)},
		{name: "a later batch harvested", prevs: []prev{{2, end2, true, ""}}, later: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col, err := collection.Create(t.TempDir(), config.Render(config.Defaults()))
			if err != nil {
				t.Fatal(err)
			}
			mark := func(id int, sum map[string]any) {
				b := col.Batch(id)
				if err := os.MkdirAll(filepath.Join(b.Dir, collection.HarvestDir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(b.File(), []byte("# wire-batch 2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := b.MarkDone(collection.StageHarvested, sum); err != nil {
					t.Fatal(err)
				}
			}
			var dirs []string
			for i := len(tc.prevs) - 1; i >= 0; i-- { // newest first
				p := tc.prevs[i]
				mark(p.id, map[string]any{"finished": p.finished, "holds": p.holds, "shard": p.shard})
				dirs = append(dirs, filepath.Join(col.Batch(p.id).Dir, collection.HarvestDir))
			}
			if tc.partial != "" {
				if err := os.MkdirAll(filepath.Join(col.Batch(1).Dir, tc.partial), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.later {
				mark(4, map[string]any{"finished": end2.Add(time.Second), "holds": true})
			}
			id := tc.batch
			if id == 0 {
				id = 3
			}
			b := col.Batch(id)
			if err := os.MkdirAll(b.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			got, ok := quietSince(b, tc.shard, tc.resuming, dirs)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("quietSince = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
