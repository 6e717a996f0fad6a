package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// TestFollowIdle: through the command line, --follow with one batch and
// no newer one harvests it, prints its summary (no total line) and exits
// 0; with nothing ready it exits 3 as a plain run does.
func TestFollowIdle(t *testing.T) {
	web, urls := smallWeb(t, 2, 3)
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, web.Config(wait))
	ht.WriteBatch(t, col.Batch(1).Dir, 1, ht.Entries(urls...))
	out, errs, code := runCLI(t, "run", "-c", dir, "--follow", "-q")
	if code != command.ExitOK || !strings.Contains(out, "batch 000001: 6 URLs, 4 fetched") || strings.Contains(out, "followed") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if _, errs, code := runCLI(t, "run", "-c", dir, "--follow"); code != command.ExitNothingToDo {
		t.Errorf("nothing to do: exit %d, %s", code, errs)
	}
}

// followProcess starts `harvester run --follow` on the collection dir in
// a subprocess.
func followProcess(t *testing.T, dir string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "-c", dir, "--follow", "-q")
	cmd.Env = append(os.Environ(), "WIRE_HARVESTER_TEST_MAIN=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout
}

// TestFollowKillAndResume: a following harvester is killed (SIGKILL)
// with two batches in flight, the second written while the first ran;
// a rerun — with --follow, or plain runs one batch at a time — resumes
// both: every URL of each batch ends with exactly one fetch log line,
// and no host was asked twice at once or under its wait, across the
// batches and the kill.
func TestFollowKillAndResume(t *testing.T) {
	for _, follow := range []bool{true, false} {
		t.Run(fmt.Sprintf("rerun follow=%v", follow), func(t *testing.T) {
			web, dir, col, cmd, urls1, urls2 := twoInFlight(t)
			cmd.Process.Kill()
			cmd.Wait()
			for _, id := range []int{1, 2} {
				if b := col.Batch(id); b.Done(collection.StageHarvested) {
					t.Fatalf("batch %d done before the kill (%d lines): not two in flight", id, lines(b.Dir))
				}
			}

			if follow {
				out, errs, code := runCLI(t, "run", "-c", dir, "--follow", "-q")
				if code != command.ExitOK || strings.Count(out, "(resumed)") != 2 || !strings.Contains(out, "followed 2 batches (000001, 000002)") {
					t.Fatalf("rerun --follow: exit %d\nstdout %s\nstderr %s", code, out, errs)
				}
			} else {
				for _, want := range []string{"batch 000001", "batch 000002"} {
					out, errs, code := runCLI(t, "run", "-c", dir, "-q")
					if code != command.ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "(resumed)") {
						t.Fatalf("rerun: exit %d, want %s resumed\nstdout %s\nstderr %s", code, want, out, errs)
					}
				}
			}
			for id, want := range map[int][]string{1: urls1, 2: urls2} {
				b := col.Batch(id)
				recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
				if err != nil || !b.Done(collection.StageHarvested) {
					t.Fatalf("batch %d: %v (harvested %v)", id, err, b.Done(collection.StageHarvested))
				}
				seen := map[string]int{}
				for _, r := range recs {
					seen[r.URL]++
				}
				for _, u := range want {
					if seen[u] != 1 {
						t.Errorf("batch %d: %s logged %d times", id, u, seen[u])
					}
				}
				if len(recs) != len(want) {
					t.Errorf("batch %d: %d lines for %d URLs", id, len(recs), len(want))
				}
				if _, err := os.Stat(filepath.Join(b.Dir, harvester.PartialDir)); !os.IsNotExist(err) {
					t.Errorf("batch %d: partial directory left: %v", id, err)
				}
			}
			if err := web.CheckWait(wait); err != nil {
				t.Errorf("politeness across the batches and the kill: %v", err)
			}
			if err := web.CheckOneConnPerHost(); err != nil {
				t.Error(err)
			}
		})
	}
}

// twoInFlight starts `harvester run --follow` on a collection of the
// small web with batch 1, writes batch 2 once batch 1 logged a few lines,
// and returns once batch 2 logged a few too: two batches in flight.
// Batch 1 holds hosts h0-h2 and the first half of h3's pages; batch 2
// the rest of h3's, and h4 and h5 (free at once).
func twoInFlight(t *testing.T) (*ht.Web, string, *collection.Collection, *exec.Cmd, []string, []string) {
	t.Helper()
	web, all := smallWeb(t, 6, 12)
	var urls1, urls2 []string
	h3 := 0
	for _, u := range all {
		first := strings.Contains(u, "//h0.test") || strings.Contains(u, "//h1.test") || strings.Contains(u, "//h2.test")
		if strings.Contains(u, "//h3.test") && h3 < 6 {
			first, h3 = true, h3+1
		}
		if first {
			urls1 = append(urls1, u)
		} else {
			urls2 = append(urls2, u)
		}
	}
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, web.Config(wait))
	b1, b2 := ht.Entries(urls1...), ht.Entries(urls2...)
	for i := range b2 {
		b2[i].DocID += 1000
	}
	ht.WriteBatch(t, col.Batch(1).Dir, 1, b1)
	cmd, _ := followProcess(t, dir)
	waitLines := func(b *collection.Batch, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for lines(b.Dir) < n {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("batch %s: fewer than %d lines logged", b.Name(), n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitLines(col.Batch(1), 4)
	ht.WriteBatch(t, col.Batch(2).Dir, 2, b2)
	waitLines(col.Batch(2), 3)
	return web, dir, col, cmd, urls1, urls2
}

// TestFollowSIGTERM: SIGTERM stops every harvest of a following
// harvester as it stops one (exit 143, each batch's partial directory
// kept with stopped.json saying interrupted); a rerun with --follow
// resumes both.
func TestFollowSIGTERM(t *testing.T) {
	_, dir, col, cmd, urls1, urls2 := twoInFlight(t)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != command.ExitInterrupted+int(syscall.SIGTERM) {
		t.Fatalf("after SIGTERM: %v, want exit 143", err)
	}
	for _, id := range []int{1, 2} {
		b := col.Batch(id)
		data, err := os.ReadFile(filepath.Join(b.Dir, harvester.PartialDir, harvester.StoppedFile))
		if b.Done(collection.StageHarvested) || err != nil || !strings.Contains(string(data), harvester.StoppedInterrupted) {
			t.Errorf("batch %d: harvested %v, stopped.json %s %v; want interrupted, unpublished", id, b.Done(collection.StageHarvested), data, err)
		}
	}
	out, errs, code := runCLI(t, "run", "-c", dir, "--follow", "-q")
	if code != command.ExitOK || !strings.Contains(out, fmt.Sprintf("batch 000001: %d URLs", len(urls1))) || !strings.Contains(out, fmt.Sprintf("batch 000002: %d URLs", len(urls2))) {
		t.Fatalf("rerun --follow: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
