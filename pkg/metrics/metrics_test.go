package metrics

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFinish(t *testing.T) {
	dir := t.TempDir()
	r := New("gatherer", "/data/cl")
	r.Set("batch_urls", "URLs.", 42)
	r.SetCount("gatherer_docs_total", "Docs.", 40)
	r.SetCount("gatherer_docs_total", "Docs.", 41)
	r.SetBy("gatherer_errors", "Errors by kind.", "kind", map[string]int{"read": 2, "fetch": 1})
	if err := r.Finish(dir, true, 0); err != nil {
		t.Fatal(err)
	}
	mfs, err := ReadFile(filepath.Join(dir, "gatherer.prom"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"wire_batch_urls", []string{"stage", "gatherer", "collection", "/data/cl"}, 42},
		{"wire_gatherer_docs_total", nil, 41},
		{"wire_gatherer_errors", []string{"kind", "read"}, 2},
		{"wire_gatherer_errors", []string{"kind", "fetch"}, 1},
		{"wire_stage_exit_code", nil, 0},
	} {
		if got := Value(mfs, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	last := Value(mfs, LastSuccess)
	if now := float64(time.Now().Unix()); last < now-5 || last > now+1 {
		t.Errorf("last success %v, want now (%v)", last, now)
	}
	for _, name := range []string{"wire_stage_wall_seconds", "wire_stage_peak_memory_bytes", "wire_stage_start_timestamp_seconds"} {
		if Value(mfs, name) <= 0 {
			t.Errorf("%s missing", name)
		}
	}

	// A failure keeps the last success of the file it replaces.
	time.Sleep(10 * time.Millisecond)
	r2 := New("gatherer", "/data/cl")
	if err := r2.Finish(dir, false, 6); err != nil {
		t.Fatal(err)
	}
	mfs, err = ReadFile(filepath.Join(dir, "gatherer.prom"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Value(mfs, LastSuccess); got != last {
		t.Errorf("after a failure: last success %v, want %v", got, last)
	}
	if got := Value(mfs, "wire_stage_exit_code"); got != 6 {
		t.Errorf("exit code %v, want 6", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("metrics directory holds %d files, want gatherer.prom alone", len(entries))
	}

	// A first run that fails has no last success at all.
	r3 := New("seeder", "/data/cl")
	if err := r3.Finish(dir, false, 1); err != nil {
		t.Fatal(err)
	}
	if mfs, _ := ReadFile(filepath.Join(dir, "seeder.prom")); mfs[LastSuccess] != nil {
		t.Error("a failed first run has a last success")
	}
}

func TestNilRun(t *testing.T) {
	var r *Run
	r.Set("x", "x", 1)
	r.SetCount("x_total", "x", 1)
	r.SetBy("y", "y", "k", map[string]int{"a": 1})
	if err := r.Finish(t.TempDir(), true, 0); err != nil {
		t.Fatal(err)
	}
}

func TestServe(t *testing.T) {
	r := New("harvester", "/data/cl")
	r.SetCount("harvest_run_pages_total", "Pages.", 7)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stop, err := r.Serve(ctx, "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `wire_harvest_run_pages_total{collection="/data/cl",stage="harvester"} 7`) {
		t.Errorf("served:\n%s", body)
	}
	stop()
	stop() // twice is fine
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("still served after stop")
	}
}
