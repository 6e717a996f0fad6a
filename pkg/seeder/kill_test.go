package seeder_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/seeder"
	"github.com/wirecrawl/wire/pkg/seeder/internal/benchgen"
)

var killPages = flag.Int("kill.pages", 10000, "pages of the batch TestKillAndRerun kills the seeder in")

// TestKillAndRerun runs the built seeder binary on a large batch (20,000
// pages, 400,000 links; the Sydney strategy with t = 2 parks links and the
// release after the batch takes them back) and kills it with SIGKILL at random
// points, several times, before letting a run finish. Then seeder check
// must pass, and graph.db and the park files must be exactly those of an
// uninterrupted run: no link lost, none doubled, no visit counted twice.
func TestKillAndRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the seeder and seeds a large batch several times")
	}
	bin := t.TempDir()
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin+string(filepath.Separator), "./seeder")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build seeder: %v\n%s", err, out)
	}
	seederBin := filepath.Join(bin, "seeder")

	spec := benchgen.Default
	spec.Pages = *killPages
	spec.Sites = max(spec.Pages/50, 10)
	src := filepath.Join(t.TempDir(), "src")
	if _, err := benchgen.Generate(src, spec); err != nil {
		t.Fatal(err)
	}
	copyCol := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		if out, err := exec.Command("cp", "-r", src, dir).CombinedOutput(); err != nil {
			t.Fatalf("copy collection: %v %s", err, out)
		}
		return dir
	}
	// Sydney with t = 8, and a low water mark that makes every run
	// release what it parked: both transactions get killed.
	settings := []string{"--seeder-new-links-per-page=2", "--seeder-frontier-low-water=100000000", "--quiet"}
	run := func(dir string) *exec.Cmd {
		cmd := exec.Command(seederBin, append([]string{"run", "--collection", dir}, settings...)...)
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}

	ref := copyCol("ref")
	start := time.Now()
	cmd := run(ref)
	if cmd.Wait() != nil {
		t.Fatalf("reference run: %s%s", cmd.Stdout, cmd.Stderr)
	}
	took := time.Since(start)
	t.Logf("reference run: %s\n%s", took, cmd.Stdout)

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("kill points from seed %d", seed)
	dir := copyCol("killed")
	// Six kill points anywhere in the run, earliest first: a killed run
	// starts over, so the late ones can land after the batch's commit,
	// in the release or before the marker.
	var points []float64
	for range 6 {
		points = append(points, 0.05+0.95*rng.Float64())
	}
	slices.Sort(points)
	kills := 0
	for attempt, p := range points {
		delay := time.Duration(float64(took) * p)
		cmd := run(dir)
		timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if err == nil {
			t.Logf("run %d finished before its kill at %s", attempt, delay)
			break
		}
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("run %d failed by itself: %v\n%s%s", attempt, err, cmd.Stdout, cmd.Stderr)
		}
		kills++
		t.Logf("run %d killed after %s, %s", attempt, delay, phase(t, dir))
	}
	if cmd := run(dir); cmd.Wait() != nil {
		// The batch may have been finished by a run that outlived its kill.
		if !strings.Contains(cmd.Stderr.(*bytes.Buffer).String(), "nothing to do") {
			t.Fatalf("final run: %s%s", cmd.Stdout, cmd.Stderr)
		}
	}
	if kills == 0 {
		t.Error("no run was killed")
	}

	// seeder check without its completeness check: benchgen writes no
	// text store.
	killed, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if problems, err := seeder.CheckWithoutTexts(killed, 30*time.Second); err != nil || len(problems) > 0 {
		t.Fatalf("seeder check after the kills: %v\n%s", err, strings.Join(problems, "\n"))
	}
	want, got := snapshotCollection(t, ref), snapshotCollection(t, dir)
	if len(got.links) == 0 {
		t.Fatal("no links stored")
	}
	if missing, extra := diff(want.links, got.links); len(missing)+len(extra) > 0 {
		t.Errorf("links: %d lost (%v), %d extra (%v)", len(missing), first(missing), len(extra), first(extra))
	}
	if missing, extra := diff(want.inLinks, got.inLinks); len(missing)+len(extra) > 0 {
		t.Errorf("in-links: %d lost, %d extra", len(missing), len(extra))
	}
	if !reflect.DeepEqual(want.docs, got.docs) {
		missing, extra := diff(want.docs, got.docs)
		t.Errorf("documents differ: %d only in the reference (%v), %d only after the kills (%v)", len(missing), first(missing), len(extra), first(extra))
	}
	if !slices.Equal(want.frontier, got.frontier) || !reflect.DeepEqual(want.parked, got.parked) || !reflect.DeepEqual(want.sites, got.sites) {
		t.Errorf("frontier %d vs %d urls, park files %v vs %v, sites equal %v", len(want.frontier), len(got.frontier), want.parked, got.parked, reflect.DeepEqual(want.sites, got.sites))
	}
}

// phase tells how far a killed run got: whether graph.db records the
// batch as seeded (its transaction committed) and what park files exist.
func phase(t *testing.T, dir string) string {
	t.Helper()
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var seeded bool
	var parked linkgraph.ParkedStats
	g.View(func(tx *linkgraph.Tx) error {
		st, _, _ := tx.Batch(1)
		seeded = !st.Seeded.IsZero()
		s, err := tx.Stats()
		parked = s.Parked
		return err
	})
	files, _ := filepath.Glob(filepath.Join(dir, seeder.FrontierDir, "*"))
	if !seeded {
		return fmt.Sprintf("before the batch's commit (%d files under frontier/)", len(files))
	}
	return fmt.Sprintf("after the batch's commit: %d park files recorded, %d under frontier/", parked.Files, len(files))
}

// collectionState is what a seeded collection holds, by URL (ids may be
// given in the same order, but the comparison does not rely on it).
type collectionState struct {
	docs     []string // one line per document: URL and its fields
	links    []string // "src -> dst" URL pairs
	inLinks  []string // "dst <- src" URL pairs, from the in-link sets
	sites    []string
	frontier []string
	parked   map[string]string // park file → its bytes' length and checksum
}

func snapshotCollection(t *testing.T, dir string) collectionState {
	t.Helper()
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var s collectionState
	urls := map[uint64]string{}
	err = g.View(func(tx *linkgraph.Tx) error {
		if err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			urls[d.ID] = d.URL
			s.docs = append(s.docs, fmt.Sprintf("%s %s %q depth=%d found=%d visits=%d anchors=%q", d.URL, d.State, d.Reason, d.Depth, d.Found, d.Visits, d.Anchors))
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ForEachSite(func(site *linkgraph.Site) error {
			s.sites = append(s.sites, fmt.Sprintf("%s pages=%d", site.Key, site.Pages))
			return nil
		}); err != nil {
			return err
		}
		pairs := func(list *[]string, arrow string) func(uint64, *roaring.Bitmap) error {
			return func(id uint64, bm *roaring.Bitmap) error {
				for _, o := range bm.ToArray() {
					*list = append(*list, urls[id]+arrow+urls[uint64(o)])
				}
				return nil
			}
		}
		if err := tx.ForEachOutLinks(pairs(&s.links, " -> ")); err != nil {
			return err
		}
		if err := tx.ForEachInLinks(pairs(&s.inLinks, " <- ")); err != nil {
			return err
		}
		fr, err := tx.Frontier()
		if err != nil {
			return err
		}
		for _, id := range fr.ToArray() {
			s.frontier = append(s.frontier, urls[uint64(id)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.parked = map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, seeder.FrontierDir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		s.parked[filepath.Base(f)] = fmt.Sprintf("%d bytes, sum %d", len(b), sum(b))
	}
	for _, l := range [][]string{s.docs, s.links, s.inLinks, s.sites, s.frontier} {
		slices.Sort(l)
	}
	return s
}

func sum(b []byte) (n uint64) {
	for i, c := range b {
		n += uint64(c) * uint64(i+1)
	}
	return n
}

// diff returns what is only in want and only in got (both sorted).
func diff(want, got []string) (missing, extra []string) {
	for len(want) > 0 || len(got) > 0 {
		switch {
		case len(got) == 0 || (len(want) > 0 && want[0] < got[0]):
			missing, want = append(missing, want[0]), want[1:]
		case len(want) == 0 || got[0] < want[0]:
			extra, got = append(extra, got[0]), got[1:]
		default:
			want, got = want[1:], got[1:]
		}
	}
	return missing, extra
}

func first(l []string) []string { return l[:min(3, len(l))] }
