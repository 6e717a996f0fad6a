package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// newCollection makes a collection with a home page linking to three
// pages, two on its site and one on another.
func newCollection(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := collection.Create(dir, config.Render(config.Defaults())); err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Update(func(tx *linkgraph.Tx) error {
		bm := roaring.New()
		for i, u := range []string{"http://a.cl/", "http://a.cl/1", "http://a.cl/2", "http://b.cl/"} {
			site, _, err := tx.AddSite(u[:strings.Index(u[7:], "/")+7])
			if err != nil {
				return err
			}
			id, _, err := tx.AddURL(u, site, min(i, 1), min(i, 1))
			if err != nil {
				return err
			}
			if i > 0 {
				bm.Add(uint32(id))
			}
		}
		return tx.SetOutLinks(1, bm)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runApp runs the binary's app with args and returns its exit code and
// output.
func runApp(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.RunContext(context.Background(), append([]string{"manager"}, args...))
	if err != nil {
		errOut.WriteString("manager: " + err.Error() + "\n")
	}
	return command.ExitCode(err), out.String(), errOut.String()
}

func TestRunShowCancel(t *testing.T) {
	dir := newCollection(t)
	code, out, errOut := runApp(t, "run", "-c", dir, "--manager-strategy", "backlink", "--manager-max-pages-per-site", "2")
	if code != command.ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"batch       000001", "strategy    backlink", "urls        3", "sites       2", "new         3", "revisits    0", "elapsed"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "batches", "000001", "batch.tsv")); err != nil {
		t.Fatal(err)
	}

	code, out, _ = runApp(t, "show", "-c", dir, "1")
	if code != command.ExitOK || !strings.Contains(out, "max_pages_per_site=2") || !strings.Contains(out, "http://a.cl") {
		t.Errorf("show 1: exit %d\n%s", code, out)
	}
	code, out, _ = runApp(t, "show", filepath.Join(dir, "batches", "000001", "batch.tsv"))
	if code != command.ExitOK || !strings.Contains(out, "000001") {
		t.Errorf("show FILE: exit %d\n%s", code, out)
	}

	// One page of a.cl was over the limit of 2; then nothing is left.
	code, out, _ = runApp(t, "run", "-c", dir, "-q", "--manager-max-pages-per-site", "2")
	if code != command.ExitOK || !strings.Contains(out, "urls        1") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
	code, _, errOut = runApp(t, "run", "-c", dir, "-q")
	if code != command.ExitNothingToDo || !strings.Contains(errOut, "frontier is empty") {
		t.Errorf("third run: exit %d, %s", code, errOut)
	}

	code, out, errOut = runApp(t, "cancel", "-c", dir, "-q")
	if code != command.ExitOK || !strings.Contains(out, "cancelled batch 000002: 1 pages") {
		t.Errorf("cancel: exit %d\n%s%s", code, out, errOut)
	}
	code, _, _ = runApp(t, "show", "-c", dir, "2")
	if code != command.ExitFailure {
		t.Errorf("show of a cancelled batch: exit %d", code)
	}
	if err := os.WriteFile(filepath.Join(dir, "batches", "000001", "harvested.done"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runApp(t, "cancel", "-c", dir, "--force")
	if code != command.ExitFailure || !strings.Contains(errOut, "harvested") {
		t.Errorf("cancel of a harvested batch: exit %d, %s", code, errOut)
	}
}

func TestShowMalformedAndUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "batch.tsv")
	content := "# wire-batch 1\n# batch: 000001\n# columns: docid site score depth kind url\n1\thttp://a.cl\tx\t0\tnew\thttp://a.cl/\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runApp(t, "show", path)
	if code != command.ExitFailure || !strings.Contains(errOut, "line 4") {
		t.Errorf("malformed: exit %d, %s", code, errOut)
	}
	if code, _, _ := runApp(t, "show"); code != command.ExitUsage {
		t.Errorf("show without argument: exit %d", code)
	}
	if code, _, _ := runApp(t, "run", "-c", newCollection(t), "--manager-strategy", "random"); code != command.ExitUsage {
		t.Errorf("unknown strategy: exit %d", code)
	}
	if code, _, _ := runApp(t, "cancel", "-c", t.TempDir()); code != command.ExitUsage {
		t.Errorf("cancel outside a collection: exit %d, want %d (usage: not a collection)", code, command.ExitUsage)
	}
}

func TestStatsExplainHistory(t *testing.T) {
	dir := newCollection(t)
	code, out, errOut := runApp(t, "stats", "-c", dir)
	if code != command.ExitOK || !strings.Contains(out, "known       4") || !strings.Contains(out, "links       3") {
		t.Errorf("stats: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runApp(t, "stats", "-c", dir, "--json")
	var tot struct {
		Docs    int            `json:"docs"`
		ByState map[string]int `json:"byState"`
	}
	if code != command.ExitOK || json.Unmarshal([]byte(out), &tot) != nil || tot.Docs != 4 || tot.ByState["pending"] != 4 {
		t.Errorf("stats --json: exit %d\n%s", code, out)
	}

	code, out, errOut = runApp(t, "explain", "-c", dir, "--manager-strategy", "backlink", "http://A.cl/1")
	if flat := strings.Join(strings.Fields(out), " "); code != command.ExitOK || !strings.Contains(flat, "url http://a.cl/1") || !strings.Contains(flat, "next batch in the next batch") || !strings.Contains(flat, "IQ 1 1 in-links") {
		t.Errorf("explain: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = runApp(t, "explain", "-c", dir, "http://nowhere.cl/"); code != command.ExitFailure || !strings.Contains(errOut, "not in graph.db") {
		t.Errorf("explain unknown: exit %d %s", code, errOut)
	}
	if code, _, _ = runApp(t, "explain", "-c", dir); code != command.ExitUsage {
		t.Errorf("explain without URL: exit %d", code)
	}

	// The historical strategy needs an import; export this collection's
	// PageRank and import it into itself by file.
	code, _, errOut = runApp(t, "run", "-c", dir, "--manager-strategy", "historical")
	if code != command.ExitFailure || !strings.Contains(errOut, "history import") {
		t.Errorf("historical without import: exit %d %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "pr.tsv")
	if code, _, errOut = runApp(t, "history", "export", "-c", dir, file); code != command.ExitOK || !strings.Contains(errOut, "exported the PageRank of 4 pages") {
		t.Errorf("export: exit %d %s", code, errOut)
	}
	code, out, errOut = runApp(t, "history", "import", "-c", dir, file)
	if code != command.ExitOK || !strings.Contains(out, "imported 4 PageRank values") || !strings.Contains(out, "4 of them URLs this collection knows") {
		t.Errorf("import: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runApp(t, "run", "-c", dir, "--manager-strategy", "historical", "--manager-historical-new-pages", "parent")
	if code != command.ExitOK || !strings.Contains(out, "strategy    historical") || !strings.Contains(out, "historical PageRank of 4 pages") {
		t.Errorf("historical run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runApp(t, "show", "-c", dir, "--site", "http://a.cl", "--kind", "new", "1")
	if code != command.ExitOK || !strings.Contains(out, "3 of 4 entries match, 3 shown") || strings.Contains(out, "\thttp://b.cl/\n") {
		t.Errorf("show --site: exit %d\n%s", code, out)
	}
	if code, _, _ = runApp(t, "show", "-c", dir, "--kind", "old", "1"); code != command.ExitUsage {
		t.Errorf("show --kind old: exit %d", code)
	}
	if code, _, _ = runApp(t, "history", "import", "-c", dir, filepath.Join(dir, "nothing")); code != command.ExitFailure {
		t.Errorf("import of a missing file: exit %d", code)
	}
}

// TestTimeScale runs explain and run through the binary on a collection
// whose wire.toml sets manager.time_scale to 1/1440 (issue 35): a page
// fetched 30 minutes ago has the prior's λ of 48 changes a day (one per
// 30 minutes), is past min_revisit (7 minutes) and goes into the batch as
// a revisit; the batch file records the scale. The flag overriding the
// scale back to 1 gives the real-time figures.
func TestTimeScale(t *testing.T) {
	dir := newCollection(t)
	path := filepath.Join(dir, config.FileName)
	toml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	scaled := strings.Replace(string(toml), "\ntime_scale = 1.0\n", "\ntime_scale = 0.000694444444444444\n", 1)
	if scaled == string(toml) {
		t.Fatal("the sample config has no time_scale = 1.0 line")
	}
	if err := os.WriteFile(path, []byte(scaled), 0o644); err != nil {
		t.Fatal(err)
	}
	fetched := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		id, _ := tx.LookupURL("http://a.cl/1")
		d, err := tx.Doc(id)
		if err != nil {
			return err
		}
		d.State, d.Visits, d.Status, d.Fetched, d.FirstFetched = linkgraph.StateFetched, 1, 200, fetched, fetched
		d.History = []linkgraph.Visit{{Time: fetched, Status: 200}}
		return tx.PutDoc(d)
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runApp(t, "explain", "-c", dir, "http://a.cl/1")
	flat := strings.Join(strings.Fields(out), " ")
	if code != command.ExitOK || !strings.Contains(flat, "λ = 48 changes/day") || !strings.Contains(flat, "next batch in the next batch") ||
		!strings.Contains(flat, "time scale 0.000694444 (a day lasts 1m0s)") {
		t.Errorf("explain at time scale 1/1440: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runApp(t, "explain", "-c", dir, "--manager-time-scale", "1", "http://a.cl/1")
	flat = strings.Join(strings.Fields(out), " ")
	if code != command.ExitOK || !strings.Contains(flat, "λ = 0.03333 changes/day") || !strings.Contains(flat, "less than min_revisit/8 = 21h0m0s") || strings.Contains(flat, "time scale") {
		t.Errorf("explain at time scale 1: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runApp(t, "explain", "-c", dir, "--manager-time-scale", "0", "http://a.cl/1")
	if code != command.ExitUsage || !strings.Contains(errOut, "manager.time_scale: must be between 1e-05 and 1") {
		t.Errorf("explain at time scale 0: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runApp(t, "run", "-c", dir, "-q")
	if code != command.ExitOK || !strings.Contains(out, "revisits    1") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runApp(t, "show", "-c", dir, "1")
	if code != command.ExitOK || !strings.Contains(out, "time_scale=0.000694444444444444") || !strings.Contains(out, "min_revisit=168h0m0s") {
		t.Errorf("show 1: exit %d\n%s", code, out)
	}
}
