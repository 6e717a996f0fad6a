package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/wacz"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// oldHarvest copies pkg/warcio's frozen harvest — a data-00001.warc.gz
// and its fetch log, written by the harvester before issue 37, without
// an index — into batch id of col, with a batch file of its URLs and the
// harvested marker: a batch of an old collection.
func oldHarvest(t *testing.T, col *collection.Collection, id int) *collection.Batch {
	t.Helper()
	src := filepath.Join("..", "pkg", "warcio", "testdata", "harvest")
	recs, err := fetchlog.ReadFile(filepath.Join(src, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range recs {
		urls = append(urls, r.URL)
	}
	b := col.Batch(id)
	ht.WriteBatch(t, b.Dir, id, ht.Entries(urls...))
	if err := os.MkdirAll(b.HarvestPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"data-00001.warc.gz", fetchlog.LogFile} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(b.HarvestPath(), name), data, 0o644)
	}
	if err := b.MarkDone(collection.StageHarvested, map[string]int{"version": 1}); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIndexAndWACZ runs harvester index and harvester wacz on a crawled
// collection: two batches harvested by this harvester (unique WARC file
// names, indexed when published) and one of an old collection
// (data-00001.warc.gz, no index). index writes the missing index, wacz
// packs the three batches, or a range of them, into files whose
// manifest, index and records check out as a replay tool reads them.
func TestIndexAndWACZ(t *testing.T) {
	web, urls := smallWeb(t, 2, 3)
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, web.Config(wait))
	ht.WriteBatch(t, col.Batch(1).Dir, 1, ht.Entries(urls[:3]...))
	ht.WriteBatch(t, col.Batch(2).Dir, 2, ht.Entries(urls[3:]...))
	for i := 0; i < 2; i++ {
		if out, errs, code := runCLI(t, "run", "-c", dir, "-q"); code != command.ExitOK {
			t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
		}
	}
	old := oldHarvest(t, col, 3)

	// index: only the old batch lacks its index.
	out, errs, code := runCLI(t, "index", "-c", dir)
	if code != command.ExitOK || !strings.Contains(out, "indexed 3 batches: 3 WARC files, 1 indexes written (5 lines), 2 already indexed") {
		t.Fatalf("index: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := cdxj.ReadFile(filepath.Join(old.HarvestPath(), "data-00001.cdxj")); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI(t, "index", "-c", dir, "--batches", "2-3", "--force"); code != command.ExitOK || !strings.Contains(out, "indexed 2 batches: 2 WARC files, 2 indexes written") {
		t.Errorf("index --force: exit %d, %s", code, out)
	}
	if out, _, code := runCLI(t, "index", "--batch-dir", old.Dir); code != command.ExitOK || !strings.Contains(out, "1 already indexed") {
		t.Errorf("index --batch-dir: exit %d, %s", code, out)
	}

	// wacz: the whole collection, then a range.
	all := filepath.Join(t.TempDir(), "all.wacz")
	out, errs, code = runCLI(t, "wacz", "-c", dir, all)
	if code != command.ExitOK || !strings.Contains(out, "packed 3 batches: 3 WARC files") {
		t.Fatalf("wacz: exit %d\n%s\n%s", code, out, errs)
	}
	names := checkWACZ(t, all, indexLines(t, col, 1, 2, 3))
	for _, id := range []int{1, 2} {
		n, ok := warcio.ParseName(strings.TrimPrefix(names[id-1], wacz.ArchiveDir))
		if !ok || n.Batch != id || n.Prefix != "wire" {
			t.Errorf("batch %d packed as %s, want its unique name", id, names[id-1])
		}
	}
	if names[2] != wacz.ArchiveDir+"000003-data-00001.warc.gz" {
		t.Errorf("the old batch's file packed as %s", names[2])
	}
	part := filepath.Join(t.TempDir(), "part.wacz")
	if out, errs, code := runCLI(t, "wacz", "-c", dir, "--batches", "2-", "--title", "two batches", part); code != command.ExitOK || !strings.Contains(out, "packed 2 batches") {
		t.Fatalf("wacz --batches: exit %d\n%s\n%s", code, out, errs)
	}
	if names := checkWACZ(t, part, indexLines(t, col, 2, 3)); len(names) != 2 || names[1] != wacz.ArchiveDir+"000003-data-00001.warc.gz" {
		t.Errorf("batches 2- packed %v", names)
	}

	// Refusals: usage, nothing to do, damage.
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"wacz", "-c", dir, filepath.Join(t.TempDir(), "x.zip")}, command.ExitUsage, "must end in .wacz"},
		{[]string{"wacz", "-c", dir}, command.ExitUsage, "missing argument"},
		{[]string{"wacz", "-c", dir, "--batches", "7-3", all}, command.ExitUsage, "comes before"},
		{[]string{"wacz", "-c", dir, "--batches", "9-", filepath.Join(t.TempDir(), "x.wacz")}, command.ExitNothingToDo, "no harvested batch"},
		{[]string{"index", "-c", dir, "--batches", "x"}, command.ExitUsage, "batch range"},
		{[]string{"index", "-c", dir, "--batches", "1", "--batch-dir", old.Dir}, command.ExitUsage, "cannot be used together"},
		{[]string{"index", "-c", t.TempDir()}, command.ExitUsage, "not a collection"},
	} {
		if _, errs, code := runCLI(t, tt.args...); code != tt.code || !strings.Contains(errs, tt.says) {
			t.Errorf("%v: exit %d, %s; want %d saying %q", tt.args, code, errs, tt.code, tt.says)
		}
	}
	warc := filepath.Join(old.HarvestPath(), "data-00001.warc.gz")
	data, _ := os.ReadFile(warc)
	data[len(data)/2] ^= 0xff
	os.WriteFile(warc, data, 0o644)
	if _, errs, code := runCLI(t, "index", "-c", dir, "--batches", "3", "--force"); code != command.ExitDamaged || !strings.Contains(errs, "data-00001.warc.gz") {
		t.Errorf("damaged WARC file: exit %d, %s", code, errs)
	}
	lock, err := collection.LockPath(filepath.Join(col.Batch(1).Dir, "harvester.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, errs, code := runCLI(t, "index", "-c", dir, "--batches", "1"); code != command.ExitLocked {
		t.Errorf("batch locked by a harvester: exit %d, %s", code, errs)
	}
}

// indexLines counts the lines of the indexes of the batches' WARC files.
func indexLines(t *testing.T, col *collection.Collection, ids ...int) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		files, _ := filepath.Glob(filepath.Join(col.Batch(id).HarvestPath(), "*"+cdxj.Suffix))
		for _, f := range files {
			lines, err := cdxj.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n += len(lines)
		}
	}
	return n
}

// checkWACZ opens a WACZ file as a replay tool does and checks it: every
// resource of datapackage.json with its SHA-256 and size, the digest of
// the manifest, and every line of the index (lines of them) pointing at
// a record that reads at its offset inside the ZIP file. It returns the
// names of the WARC files in archive/, in order.
func checkWACZ(t *testing.T, path string, lines int) []string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]*zip.File{}
	var warcs []string
	for _, f := range zr.File {
		files[f.Name] = f
		if strings.HasPrefix(f.Name, wacz.ArchiveDir) {
			warcs = append(warcs, f.Name)
		}
	}
	read := func(name string) []byte {
		f := files[name]
		if f == nil {
			t.Fatalf("%s: no %s", path, name)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	manifest := read(wacz.PackagePath)
	var pkg wacz.Package
	if err := json.Unmarshal(manifest, &pkg); err != nil || pkg.WACZVersion != "1.1.1" {
		t.Fatalf("datapackage.json %s: %v", manifest, err)
	}
	if len(pkg.Resources) != len(warcs)+2 {
		t.Errorf("%d resources for %d WARC files, the index and the pages", len(pkg.Resources), len(warcs))
	}
	for _, r := range pkg.Resources {
		data := read(r.Path)
		sum := sha256.Sum256(data)
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != int64(len(data)) {
			t.Errorf("resource %+v does not match its %d bytes", r, len(data))
		}
	}
	var digest wacz.Digest
	json.Unmarshal(read(wacz.DigestPath), &digest)
	if sum := sha256.Sum256(manifest); digest.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("datapackage-digest.json %+v", digest)
	}
	r := cdxj.NewReader(bytes.NewReader(read(wacz.IndexPath)), "index")
	n := 0
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		f := files[wacz.ArchiveDir+l.Filename]
		if f == nil {
			t.Errorf("%s: no archive/%s", l.URL, l.Filename)
			continue
		}
		start, _ := f.DataOffset()
		resp, err := warcio.ReadResponse(path, start+l.Offset, l.Length, 1<<20)
		if err != nil || resp.URL != l.URL || resp.Status != l.Status {
			t.Errorf("%s: record %s+%d: %v", l.URL, l.Filename, l.Offset, err)
		}
	}
	if n != lines {
		t.Errorf("%s: %d index lines, want %d", path, n, lines)
	}
	return warcs
}

// TestDefaultTitle: the archive's title without --title names the
// collection (an absolute name, whatever the spelling of --collection)
// and the range, when not every batch.
func TestDefaultTitle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cl-2026")
	for _, tt := range []struct {
		o    waczOptions
		want string
	}{
		{waczOptions{Collection: dir}, "wire crawl of cl-2026"},
		{waczOptions{Collection: dir + "/."}, "wire crawl of cl-2026"},
		{waczOptions{Collection: dir, Batches: collection.BatchRange{First: 1}}, "wire crawl of cl-2026"},
		{waczOptions{Collection: dir, Batches: collection.BatchRange{First: 3, Last: 7}}, "wire crawl of cl-2026, batches 3-7"},
		{waczOptions{BatchDir: filepath.Join(dir, "batches", "000042")}, "wire crawl of 000042"},
	} {
		if got := defaultTitle(tt.o); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.o, got, tt.want)
		}
	}
}
