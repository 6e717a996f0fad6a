package scripts_test

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/wacz"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestOldCollection runs this version's binaries on a copy of a
// collection the crawler left before issue 37 (testdata/oldnames: a batch
// harvested into data-00001.warc.gz, without an index): the gatherer
// reads every page through the fetch log, the seeder takes the batch in
// and the collection checks; harvester index writes the file's index,
// whose lines point at its records, and harvester wacz packs the batch
// under a name of its own.
func TestOldCollection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	bin := stageBinaries(t)
	col := filepath.Join(t.TempDir(), "col")
	copyDir(t, filepath.Join("testdata", "oldnames", "col"), col)
	b := &collection.Batch{ID: 1, Dir: filepath.Join(col, collection.BatchesDir, "000001")}
	const old = "data-00001.warc.gz"

	run(t, nil, filepath.Join(bin, "gatherer"), "run", "-c", col, "-q")
	recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := parsed.ReadFile(filepath.Join(b.ParsedPath(), parsed.DocsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(recs) || len(docs) != 3 {
		t.Fatalf("%d docs for %d fetch log lines, want 3", len(docs), len(recs))
	}
	for i, d := range docs {
		if recs[i].WARC != old || d.Status != 200 || d.Err != "" || d.Title == "" || d.TextBytes == 0 || len(d.Links) == 0 {
			t.Errorf("%s (from %s): status %d, error %q, title %q, %d text bytes, %d links", d.URL, recs[i].WARC, d.Status, d.Err, d.Title, d.TextBytes, len(d.Links))
		}
	}
	run(t, nil, filepath.Join(bin, "seeder"), "run", "-c", col, "-q")
	run(t, nil, filepath.Join(bin, "seeder"), "check", "-c", col)
	if !b.Done(collection.StageSeeded) {
		t.Fatal("the batch is not seeded")
	}

	out := run(t, nil, filepath.Join(bin, "harvester"), "index", "-c", col)
	if !strings.Contains(out, "1 indexes written (6 lines)") {
		t.Errorf("harvester index: %s", out)
	}
	lines, err := cdxj.ReadFile(filepath.Join(b.HarvestPath(), cdxj.IndexName(old)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		resp, err := warcio.ReadResponse(filepath.Join(b.HarvestPath(), l.Filename), l.Offset, l.Length, 1<<20)
		if err != nil || resp.URL != l.URL || resp.Status != l.Status || l.Filename != old {
			t.Errorf("%s: record %s at %d: %v, %v", l.URL, l.Filename, l.Offset, resp, err)
		}
	}

	pack := filepath.Join(t.TempDir(), "old.wacz")
	if out := run(t, nil, filepath.Join(bin, "harvester"), "wacz", "-c", col, pack); !strings.Contains(out, "packed 1 batches: 1 WARC files") || !strings.Contains(out, "3 pages") {
		t.Errorf("harvester wacz: %s", out)
	}
	zr, err := zip.OpenReader(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if want := wacz.ArchiveDir + "000001-" + old; len(names) != 5 || names[0] != want {
		t.Errorf("entries %v, want %s first", names, want)
	}
	if st, err := os.Stat(filepath.Join(b.HarvestPath(), old)); err != nil || st.Size() != int64(zr.File[0].UncompressedSize64) {
		t.Errorf("the WARC file was not packed as it is: %v", err)
	}
}
