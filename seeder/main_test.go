package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// seederRun runs the seeder's command line as the binary would and
// returns its exit code, standard output and standard error.
func seederRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter, app.Reader = &out, &errOut, strings.NewReader(stdin)
	err := app.Run(append([]string{"seeder"}, args...))
	if err != nil {
		errOut.WriteString("seeder: " + err.Error() + "\n")
	}
	return command.ExitCode(err), out.String(), errOut.String()
}

func TestCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "col")
	c := "--collection=" + dir

	if code, out, errOut := seederRun(t, "", "init", c, "--scope-domains=cl,gob.ar", "--scope-max-pages-per-site=100"); code != 0 || !strings.Contains(out, "created collection") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, collection.ConfigFile))
	if err != nil || !strings.Contains(string(cfg), `domains = ["cl", "gob.ar"]`) || !strings.Contains(string(cfg), "max_pages_per_site = 100") {
		t.Errorf("wire.toml does not hold the flags given to init:\n%s", cfg)
	}
	if code, _, errOut := seederRun(t, "", "init", c); code != command.ExitFailure || !strings.Contains(errOut, "already exists") {
		t.Errorf("second init: exit %d, %s", code, errOut)
	}

	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	os.WriteFile(seeds, []byte("http://www.uchile.cl/\nhttp://www.uchile.com/\n\n# comment\nhttp://www.argentina.gob.ar/\n"), 0o644)
	code, out, errOut := seederRun(t, "", "add", c, seeds)
	if code != 0 || errOut != seeds+":2: out-of-scope: \"http://www.uchile.com/\"\n" || !strings.Contains(out, "2 added") {
		t.Errorf("add: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = seederRun(t, "http://www.uchile.cl/\nhttp://www.puc.cl/\nftp://x.cl/\n", "add", c, "-")
	if code != 0 || errOut != "stdin:3: scheme: \"ftp://x.cl/\"\n" || !strings.Contains(out, "1 added") || !strings.Contains(out, "1 already known") {
		t.Errorf("add -: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// A 20 MB line with binary bytes is echoed as one short escaped line.
	long := "http://www.uchile.cl/\x1b[2J" + strings.Repeat("a", 20<<20) + "\n"
	code, _, errOut = seederRun(t, long, "add", c, "-")
	if code != 0 || strings.Count(errOut, "\n") != 1 || len(errOut) > 200 || strings.Contains(errOut, "\x1b") || !strings.HasPrefix(errOut, `stdin:1: `) || !strings.HasSuffix(errOut, "(20971545 bytes)\n") {
		t.Errorf("add of a 20 MB line: exit %d, %d bytes on stderr: %.300q", code, len(errOut), errOut)
	}
	if code, _, _ := seederRun(t, "", "add", c, filepath.Join(dir, "missing.txt")); code != command.ExitFailure {
		t.Errorf("add of a missing file: exit %d", code)
	}
	if code, _, _ := seederRun(t, "", "add", c); code != command.ExitUsage {
		t.Errorf("add without a file: exit %d", code)
	}

	if code, _, _ := seederRun(t, "", "run", c); code != command.ExitNothingToDo {
		t.Errorf("run with no batch: exit %d, want %d", code, command.ExitNothingToDo)
	}
	if code, _, _ := seederRun(t, "", "run", c, "--force"); code != command.ExitUsage {
		t.Errorf("run --force without --batch: exit %d", code)
	}

	writeOneBatch(t, dir)
	code, out, errOut = seederRun(t, "", "run", c, "--quiet")
	if code != 0 || !strings.Contains(out, "batch 000001 seeded") || !strings.Contains(out, "2 urls") {
		t.Errorf("run: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, _, errOut := seederRun(t, "", "run", c, "--batch=1"); code != command.ExitFailure || !strings.Contains(errOut, "already done") {
		t.Errorf("rerun: exit %d, %s", code, errOut)
	}

	code, out, _ = seederRun(t, "", "stats", c, "--json")
	var st struct {
		Docs    int            `json:"docs"`
		Sites   int            `json:"sites"`
		Links   int            `json:"links"`
		ByState map[string]int `json:"byState"`
		Batches struct {
			Total, Seeded, Recorded int
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("stats --json: exit %d, %v\n%s", code, err, out)
	}
	if st.Docs != 5 || st.Sites != 3 || st.Links != 2 || st.ByState["fetched"] != 1 || st.Batches.Seeded != 1 || st.Batches.Recorded != 1 {
		t.Errorf("stats %+v", st)
	}
	if code, out, _ := seederRun(t, "", "stats", c); code != 0 || !strings.Contains(out, "docs     5") {
		t.Errorf("stats: exit %d\n%s", code, out)
	}
	if code, out, errOut := seederRun(t, "", "add", c, "--sitemap", "http://www.uchile.cl/sitemap.xml"); code != 0 || !strings.Contains(out, "1 sitemaps to fetch") {
		t.Errorf("add --sitemap URL: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if code, out, _ := seederRun(t, "", "stats", c); code != 0 || !strings.Contains(out, "sitemaps 1 (0 read") {
		t.Errorf("stats after add --sitemap: exit %d\n%s", code, out)
	}

	if code, out, _ := seederRun(t, "", "check", c); code != 0 || !strings.HasSuffix(out, "ok\n") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	if code, out, _ := seederRun(t, "", "requeue", c, "--dry-run"); code != 0 || !strings.HasPrefix(out, "0 pages") {
		t.Errorf("requeue --dry-run: exit %d\n%s", code, out)
	}
	if code, _, _ := seederRun(t, "", "requeue", c, "stray"); code != command.ExitUsage {
		t.Errorf("requeue with an argument: exit %d, want %d", code, command.ExitUsage)
	}
	os.Remove(filepath.Join(dir, collection.GraphFile))
	if code, _, errOut := seederRun(t, "", "check", c); code != command.ExitDamaged || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "seeder restore") {
		t.Errorf("check without graph.db: exit %d, want %d and one line naming the repair\n%s", code, command.ExitDamaged, errOut)
	}
}

// writeOneBatch schedules www.uchile.cl/ (doc 1) as batch 1, fetched with
// two links.
func writeOneBatch(t *testing.T, dir string) {
	t.Helper()
	col, err := collection.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := col.Batch(1)
	entries := []batch.Entry{{DocID: 1, Site: "http://www.uchile.cl", Score: 1, Kind: batch.KindNew, URL: "http://www.uchile.cl/"}}
	h := batch.Header{Batch: 1, Created: time.Now(), Strategy: "breadth-first", Counts: map[string]int{"urls": 1}}
	if err := collection.WriteAtomic(b.File(), func(w io.Writer) error { return batch.Write(w, h, entries) }); err != nil {
		t.Fatal(err)
	}
	err = collection.WriteAtomic(filepath.Join(b.ParsedPath(), parsed.DocsFile), func(w io.Writer) error {
		pw := parsed.NewWriter(w)
		pw.Write(&parsed.Doc{DocID: 1, URL: "http://www.uchile.cl/", Status: 200, Fetched: time.Now(), Links: []parsed.Link{
			{URL: "http://www.uchile.cl/a", Anchor: "A"}, {URL: "http://www.puc.cl/b"}, {URL: "http://www.google.com/"},
		}})
		return pw.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	b.MarkDone(collection.StageHarvested, "test")
	b.MarkDone(collection.StageGathered, "test")
}

// seeder release through the command line: a batch with the Sydney
// strategy on parks links, release --all takes them in.
func TestReleaseCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "col")
	c := "--collection=" + dir
	if code, out, errOut := seederRun(t, "", "init", c, "--seeder-new-links-per-page=1", "--seeder-frontier-low-water=0"); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := seederRun(t, "http://www.uchile.cl/\n", "add", c, "-"); code != 0 {
		t.Fatalf("add: exit %d\n%s%s", code, out, errOut)
	}
	writeOneBatch(t, dir)
	code, out, errOut := seederRun(t, "", "run", c)
	if code != 0 || !strings.Contains(out, "1 links parked") || !strings.Contains(out, "release     none: frontier 1 (low water 0), 1 park files waiting") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := seederRun(t, "", "stats", c); code != 0 || !strings.Contains(out, "frontier 1 urls waiting; 1 links parked in 1 files") {
		t.Errorf("stats: exit %d\n%s", code, out)
	}
	if code, out, _ := seederRun(t, "", "release", c); code != 0 || !strings.Contains(out, "release     none") {
		t.Errorf("release above low water: exit %d\n%s", code, out)
	}
	code, out, errOut = seederRun(t, "", "release", c, "--all")
	if code != 0 || !strings.Contains(out, "1 park files, 1 links: 1 new urls") || !strings.Contains(out, "frontier 1 -> 2") {
		t.Errorf("release --all: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := seederRun(t, "", "check", c); code != 0 {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	if code, _, _ := seederRun(t, "", "release", c, "extra"); code != command.ExitUsage {
		t.Errorf("release with an argument: exit %d", code)
	}
}

// Settings of the scope and the frontier are validated before anything is
// written: a bad value is a usage error (exit 2) naming the setting.
func TestBadSettings(t *testing.T) {
	for _, c := range []struct {
		flag, want string
	}{
		{"--seeder-frontier-overflow=keep", "seeder.frontier_overflow"},
		{"--seeder-new-links-per-page=-1", "seeder.new_links_per_page"},
		{"--scope-exclude=(", "scope.exclude"},
		{"--scope-include=[a-", "scope.include"},
		{"--scope-session-params=a=b", "scope.session_params"},
	} {
		dir := filepath.Join(t.TempDir(), "col")
		code, _, errOut := seederRun(t, "", "init", "--collection="+dir, c.flag)
		if code != command.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("init %s: exit %d, %s", c.flag, code, errOut)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("init %s created %s", c.flag, dir)
		}
	}
}
