package wacz_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/wacz"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// fixtureDir is pkg/warcio's frozen harvest: data-00001.warc.gz, which the
// harvester fetched from a loopback test server, and its fetch log.
var fixtureDir = filepath.Join("..", "warcio", "testdata", "harvest")

const oldName = "data-00001.warc.gz"

// harvestCopy makes batch directory root/name whose harvest/ holds the
// fixture's WARC file under the name warc (the fetch log rewritten to
// match), indexed or not.
func harvestCopy(t *testing.T, root, name, warc string, index bool) wacz.Batch {
	t.Helper()
	dir := filepath.Join(root, name)
	hdir := filepath.Join(dir, collection.HarvestDir)
	if err := os.MkdirAll(hdir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fixtureDir, oldName))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(hdir, warc), data, 0o644)
	log, err := os.ReadFile(filepath.Join(fixtureDir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(hdir, fetchlog.LogFile), bytes.ReplaceAll(log, []byte(oldName), []byte(warc)), 0o644)
	if index {
		if _, err := cdxj.IndexDir(hdir, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	return wacz.Batch{Name: name, Dir: dir}
}

// TestWrite packs three batches — two from an old collection, both with
// a data-00001.warc.gz (the case of issue 37: the replay found one of
// them), one indexed and one not, and one with a unique name, gathered —
// then opens the WACZ as a replay tool does: the manifest's hashes and
// sizes, every index line pointing at a record that reads at its offset
// and length inside the ZIP file, and the page list.
func TestWrite(t *testing.T) {
	root := t.TempDir()
	newName := "wire-20261127122320-000003-s1of1-00001.warc.gz"
	batches := []wacz.Batch{
		harvestCopy(t, root, "000001", oldName, false),
		harvestCopy(t, root, "000002", oldName, true),
		harvestCopy(t, root, "000003", newName, true),
	}
	// Batch 3 is gathered: its titles go into the page list.
	recs, err := fetchlog.ReadFile(filepath.Join(batches[2].Dir, collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var docs bytes.Buffer
	w := parsed.NewWriter(&docs)
	for _, r := range recs {
		w.Write(&parsed.Doc{DocID: r.DocID, URL: r.URL, Status: r.Status, Fetched: r.Fetched, Title: "title of " + r.URL})
	}
	w.Flush()
	os.MkdirAll(filepath.Join(batches[2].Dir, collection.ParsedDir), 0o755)
	os.WriteFile(filepath.Join(batches[2].Dir, collection.ParsedDir, parsed.DocsFile), docs.Bytes(), 0o644)

	out := filepath.Join(t.TempDir(), "crawl.wacz")
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sum, err := wacz.Write(context.Background(), out, batches, wacz.Options{Title: "test crawl", Software: "wire test", Now: func() time.Time { return created }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Batches != 3 || sum.WARCFiles != 3 || sum.IndexLines != 15 || sum.Pages != 6 {
		t.Errorf("summary %+v", sum)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]*zip.File{}
	var names []string
	for _, f := range zr.File {
		entries[f.Name] = f
		names = append(names, f.Name)
		if f.Method != zip.Store {
			t.Errorf("%s: method %d, want stored", f.Name, f.Method)
		}
	}
	wantNames := "archive/000001-data-00001.warc.gz archive/000002-data-00001.warc.gz archive/" + newName +
		" indexes/index.cdxj pages/pages.jsonl datapackage.json datapackage-digest.json"
	if got := strings.Join(names, " "); got != wantNames {
		t.Fatalf("entries\n%s\nwant\n%s", got, wantNames)
	}

	// datapackage.json lists every other file with its SHA-256 and size,
	// and datapackage-digest.json hashes it.
	manifest := read(t, entries[wacz.PackagePath])
	var pkg wacz.Package
	if err := json.Unmarshal(manifest, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Profile != "data-package" || pkg.WACZVersion != "1.1.1" || pkg.Title != "test crawl" || pkg.Created != "2026-12-01T10:00:00Z" || len(pkg.Resources) != 5 {
		t.Errorf("datapackage.json: %s", manifest)
	}
	for _, r := range pkg.Resources {
		f := entries[r.Path]
		if f == nil {
			t.Errorf("resource %s not in the file", r.Path)
			continue
		}
		data := read(t, f)
		sum := sha256.Sum256(data)
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != int64(len(data)) || r.Name != strings.ToLower(filepath.Base(r.Path)) {
			t.Errorf("resource %+v: the file has %d bytes, sha256 %x", r, len(data), sum)
		}
	}
	var digest wacz.Digest
	if err := json.Unmarshal(read(t, entries[wacz.DigestPath]), &digest); err != nil {
		t.Fatal(err)
	}
	if s := sha256.Sum256(manifest); digest.Path != "datapackage.json" || digest.Hash != "sha256:"+hex.EncodeToString(s[:]) {
		t.Errorf("datapackage-digest.json %+v", digest)
	}

	// The index is sorted, and each line's record is read where a replay
	// tool reads it: in the ZIP file, at the entry's data offset plus the
	// line's offset.
	index := filepath.Join(t.TempDir(), "index.cdxj")
	os.WriteFile(index, read(t, entries[wacz.IndexPath]), 0o644)
	lines, err := cdxj.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	perFile := map[string]int{}
	for _, l := range lines {
		f := entries[wacz.ArchiveDir+l.Filename]
		if f == nil {
			t.Errorf("%s: no archive/%s", l.URL, l.Filename)
			continue
		}
		start, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := warcio.ReadResponse(out, start+l.Offset, l.Length, 1<<20)
		if err != nil || resp.URL != l.URL || resp.Status != l.Status {
			t.Errorf("%s: record at %s+%d: %v, %v", l.URL, l.Filename, l.Offset, resp, err)
		}
		perFile[l.Filename]++
	}
	if len(lines) != 15 || len(perFile) != 3 {
		t.Errorf("%d index lines over %v, want 5 in each of the 3 files", len(lines), perFile)
	}

	// pages.jsonl: the format line, then the 2xx HTML pages of each batch,
	// titled when the batch was gathered.
	sc := bufio.NewScanner(bytes.NewReader(read(t, entries[wacz.PagesPath])))
	var pages []map[string]string
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("pages.jsonl line %q: %v", sc.Text(), err)
		}
		pages = append(pages, m)
	}
	if len(pages) != 7 || pages[0]["format"] != "json-pages-1.0" {
		t.Fatalf("pages.jsonl: %v", pages)
	}
	for i, pg := range pages[1:] {
		if _, err := time.Parse(time.RFC3339, pg["ts"]); err != nil || pg["url"] == "" || pg["id"] == "" {
			t.Errorf("page %v", pg)
		}
		if titled := pg["title"] != ""; titled != (i >= 4) {
			t.Errorf("page %v: title only in the gathered batch 000003", pg)
		}
	}
	if pkg.MainPageURL != pages[1]["url"] || pkg.MainPageDate != pages[1]["ts"] {
		t.Errorf("main page %s %s, want the first page", pkg.MainPageURL, pkg.MainPageDate)
	}
}

// TestWriteRefuses: what cannot make a sound package is an error, and no
// file is left behind.
func TestWriteRefuses(t *testing.T) {
	root := t.TempDir()
	newName := "wire-20261127122320-000003-s1of1-00001.warc.gz"
	a := harvestCopy(t, root, "000003", newName, true)
	b := harvestCopy(t, root, "000004", newName, true) // a copied file: the same unique name
	c := harvestCopy(t, root, "000005", "wire-20261127122320-000005-s1of1-00001.warc.gz", false)
	// c's index says it is of another file.
	idx := filepath.Join(c.Dir, collection.HarvestDir, cdxj.IndexName("wire-20261127122320-000005-s1of1-00001.warc.gz"))
	lines, _, err := cdxj.FromWARC(filepath.Join(c.Dir, collection.HarvestDir, "wire-20261127122320-000005-s1of1-00001.warc.gz"), "other.warc.gz")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	cdxj.Write(&buf, lines)
	os.WriteFile(idx, buf.Bytes(), 0o644)
	for _, tt := range []struct {
		name    string
		batches []wacz.Batch
		want    string
		format  bool
	}{
		{"duplicate name", []wacz.Batch{a, b}, "has the name of one of batch 000003", false},
		{"no harvest", []wacz.Batch{a, {Name: "000009", Dir: filepath.Join(root, "000009")}}, "batch 000009", false},
		{"index of another file", []wacz.Batch{c}, "a line of other.warc.gz", true},
	} {
		out := filepath.Join(t.TempDir(), "x.wacz")
		_, err := wacz.Write(context.Background(), out, tt.batches, wacz.Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, cdxj.ErrFormat) != tt.format {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
		if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
			t.Errorf("%s: left %v behind", tt.name, left)
		}
	}
}

// TestWriteCancelled: a cancelled run (SIGINT) stops and leaves no file.
func TestWriteCancelled(t *testing.T) {
	b := harvestCopy(t, t.TempDir(), "000001", oldName, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "x.wacz")
	if _, err := wacz.Write(ctx, out, []wacz.Batch{b}, wacz.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
		t.Errorf("left %v behind", left)
	}
}

func read(t *testing.T, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return data
}
