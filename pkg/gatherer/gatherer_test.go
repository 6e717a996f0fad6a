package gatherer

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/langid"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// fixture reads a page of pkg/extract's testdata (real Debian pages).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "extract", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func html(ct string) http.Header { return http.Header{"Content-Type": {ct}} }

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// batch1 is a harvest with one page of each kind the gatherer meets.
func batch1(t *testing.T) []gathertest.Page {
	about := fixture(t, "pages/sqlite-about.html")
	return []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "Last-Modified": {"Sat, 21 Nov 2026 10:00:00 GMT"}, "Etag": {`"abc-123"`}}, Body: about},
		{DocID: 2, URL: "http://www.a.cl/copy", Status: 200, Header: html("text/html"), Body: about},
		{DocID: 3, URL: "http://www.a.cl/logo.png", Status: 200, Header: html("image/png"), Body: []byte("\x89PNG\r\n\x1a\n<a href=x>")},
		{DocID: 4, URL: "http://www.a.cl/old", Status: 301, Header: http.Header{"Location": {"/new#frag"}}, Location: "/new#frag"},
		{DocID: 5, URL: "http://www.a.cl/missing", Status: 404, Header: html("text/html"), Body: []byte("<title>Not found</title><a href=/x>x</a>")},
		{DocID: 6, URL: "http://www.b.cl/", Err: "timeout: no response in 20s"},
		{DocID: 7, URL: "http://www.b.cl/private", Err: "robots"},
		{DocID: 8, URL: "http://www.a.cl/gz", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"gzip"}}, Body: gz(t, []byte("<title>Zipped</title><p>packed text</p>"))},
		{DocID: 9, URL: "http://www.a.cl/decoded", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "X-Wire-Decoded-Content-Encoding": {"gzip"}}, Body: []byte("<title>Decoded</title><p>plain text</p>")},
		{DocID: 10, URL: "http://www.a.cl/refresh", Status: 200, Header: html("text/html"), Body: []byte(`<meta http-equiv="refresh" content="0; url=/target.html"><p>Moved</p>`)},
		{DocID: 11, URL: "http://www.a.cl/private", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "X-Robots-Tag": {"noindex, nofollow"}}, Body: []byte(`<p>secret</p><a href="/s">s</a>`)},
		{DocID: 12, URL: "http://www.a.cl/ru", Status: 200, Header: html("text/html; charset=koi8-r"), Body: fixture(t, "charset/koi8r-header.html")},
		{DocID: 13, URL: "http://www.a.cl/302", Status: 302, Header: http.Header{"Location": {"https://www.c.cl/login"}}},
		{DocID: 14, URL: "http://www.a.cl/damaged", Status: 200, Header: html("text/html"), Body: []byte("<p>lost</p>"), Damage: true},
		{DocID: 15, URL: "http://www.a.cl/br", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "Content-Encoding": {"br"}}, Body: []byte("\x0b\x02\x80")},
	}
}

func newCollection(t testing.TB) *collection.Collection {
	t.Helper()
	col, err := collection.Create(t.TempDir(), config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	return col
}

func options(t *testing.T, col *collection.Collection, b *collection.Batch, workers int) Options {
	t.Helper()
	o, err := OptionsFromConfig(config.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	// batch1 holds a damaged record (doc 14): these tests take in the
	// rest, as gatherer run --salvage does; TestDamagedWARC covers the
	// default, which stops.
	o.BatchDir, o.TextDir, o.Workers, o.Salvage = b.Dir, col.TextPath(), workers, true
	return o
}

func readDocs(t *testing.T, b *collection.Batch) []*parsed.Doc {
	t.Helper()
	docs, err := parsed.ReadFile(filepath.Join(b.ParsedPath(), parsed.DocsFile))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func TestRun(t *testing.T) {
	col := newCollection(t)
	pages := batch1(t)
	b := gathertest.Batch(t, col, 1, pages)
	s, err := Run(context.Background(), options(t, col, b, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Done(collection.StageGathered) {
		t.Error("no gathered.done marker")
	}
	if s.Languages["en"] == 0 {
		t.Errorf("summary languages: %v", s.Languages)
	}
	var marker Summary
	if err := b.Summary(collection.StageGathered, &marker); err != nil || marker.Docs != len(pages) {
		t.Errorf("marker: %+v %v", marker, err)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, PartialDir)); !os.IsNotExist(err) {
		t.Errorf("%s left behind", PartialDir)
	}
	docs := readDocs(t, b)
	if len(docs) != len(pages) {
		t.Fatalf("%d docs, want %d", len(docs), len(pages))
	}
	byID := map[uint64]*parsed.Doc{}
	for i, d := range docs {
		if d.DocID != pages[i].DocID || d.URL != pages[i].URL {
			t.Errorf("doc %d is %d %s: not in fetch log order", i, d.DocID, d.URL)
		}
		byID[d.DocID] = d
	}

	want := extract.New(extract.Options{}).Extract(pages[0].Body, "text/html", pages[0].URL)
	home := byID[1]
	if home.Status != 200 || home.Title != "About SQLite" || home.Charset != "utf-8" || home.MIME != "text/html" ||
		home.Hash != extract.HashHex(want.Hash) || home.TextBytes != len(want.Text) || len(home.Links) != len(want.Links) || home.Bytes != int64(len(pages[0].Body)) {
		t.Errorf("home page: %+v", home)
	}
	if home.LastModified != "Sat, 21 Nov 2026 10:00:00 GMT" || home.ETag != `"abc-123"` || home.DuplicateOf != "" {
		t.Errorf("home page validators, lang: %+v", home)
	}
	// Language and fingerprint, from the text (the page declares no lang).
	if home.DetectedLang != "en" || home.LangConf < langid.MinConfidence || home.Simhash != extract.HashHex(simhash.Sum(want.Text)) || home.SimhashVersion() != simhash.Version {
		t.Errorf("home page: detected language %q (%d), simhash %q of version %d", home.DetectedLang, home.LangConf, home.Simhash, home.SimhashVersion())
	}
	if c := byID[2]; c.Hash != home.Hash || c.Unchanged || c.DuplicateOf != "http://www.a.cl/" {
		t.Errorf("copy: hash %s unchanged %v duplicate of %q", c.Hash, c.Unchanged, c.DuplicateOf)
	}
	if d := byID[3]; d.MIME != "image/png" || d.Hash != "" || len(d.Links) != 0 || d.Title != "" {
		t.Errorf("image parsed: %+v", d)
	}
	if d := byID[4]; d.Redirect != "http://www.a.cl/new" || len(d.Links) != 0 {
		t.Errorf("301: redirect %q", d.Redirect)
	}
	if d := byID[13]; d.Redirect != "https://www.c.cl/login" {
		t.Errorf("302 without fetch log location: redirect %q", d.Redirect)
	}
	if d := byID[5]; d.Status != 404 || d.Title != "" || len(d.Links) != 0 {
		t.Errorf("404 parsed: %+v", d)
	}
	if d := byID[6]; d.Err != "timeout: no response in 20s" || d.Status != 0 {
		t.Errorf("fetch error: %+v", d)
	}
	if d := byID[7]; d.Err != "robots" {
		t.Errorf("robots: %+v", d)
	}
	if d := byID[8]; d.Title != "Zipped" || d.Err != "" {
		t.Errorf("gzip body: %+v", d)
	}
	if d := byID[9]; d.Title != "Decoded" || d.Err != "" {
		t.Errorf("decoded body: %+v", d)
	}
	if d := byID[10]; d.Redirect != "http://www.a.cl/target.html" || len(d.Links) != 1 {
		t.Errorf("meta refresh: %+v", d)
	}
	if d := byID[11]; !d.NoIndex || !d.NoFollow || len(d.Links) != 0 {
		t.Errorf("X-Robots-Tag: %+v", d)
	}
	if d := byID[12]; d.Charset != "koi8-r" || d.Title != "Всеобщая декларация прав человека" || d.Lang != "ru" {
		t.Errorf("koi8-r: %+v", d)
	}
	if d := byID[14]; !strings.HasPrefix(d.Err, parsed.Unread+": wire-00001.warc.gz at ") || d.Status != 0 {
		t.Errorf("damaged record: %+v", d)
	}
	if d := byID[15]; !strings.Contains(d.Err, "br") {
		t.Errorf("unsupported content-encoding: %+v", d)
	}

	if s.Docs != 15 || s.HTML != 7 || s.Other != 1 || s.FetchErrors != 2 || s.ReadErrors != 1 || s.Unread != 1 || len(s.Damaged) != 1 || s.Redirects != 3 || s.Duplicates != 1 || s.NoIndex != 1 {
		t.Errorf("summary %+v", s)
	}

	store, err := textstore.Open(col.TextPath())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Verify(1); err != nil {
		t.Error(err)
	}
	text, m, err := store.Get("http://www.a.cl/")
	if err != nil || text != want.Text || m.Title != "About SQLite" || m.DocID != 1 || m.Segment != 1 || m.Batch != 1 || len(m.Headings) != len(want.Headings) {
		t.Errorf("text store: %q %+v %v", text[:min(len(text), 40)], m, err)
	}
	if text, _, err := store.Get("http://www.a.cl/private"); err != nil || text != "" {
		t.Errorf("noindex page's text kept: %q %v", text, err)
	}
	if _, _, err := store.Get("http://www.a.cl/logo.png"); !errors.Is(err, textstore.ErrNotFound) {
		t.Errorf("image in text store: %v", err)
	}
}

// TestIdempotent: gathering a batch again, with any number of workers,
// gives byte-identical docs.jsonl and text segment.
func TestIdempotent(t *testing.T) {
	col := newCollection(t)
	b := gathertest.Batch(t, col, 1, batch1(t))
	files := func() [3][]byte {
		var out [3][]byte
		for i, p := range []string{filepath.Join(b.ParsedPath(), parsed.DocsFile), textstore.DataPath(col.TextPath(), 1), textstore.IndexPath(col.TextPath(), 1)} {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = data
		}
		return out
	}
	if _, err := Run(context.Background(), options(t, col, b, 1)); err != nil {
		t.Fatal(err)
	}
	first := files()
	for _, workers := range []int{1, 2, 7} {
		// The marker is missing after a crash; Run itself removes it.
		if _, err := Run(context.Background(), options(t, col, b, workers)); err != nil {
			t.Fatal(err)
		}
		again := files()
		for i := range first {
			if !bytes.Equal(first[i], again[i]) {
				t.Errorf("%d workers: file %d differs from the first run", workers, i)
			}
		}
	}
}

func TestUnchanged(t *testing.T) {
	col := newCollection(t)
	about := fixture(t, "pages/sqlite-about.html")
	gathertest.Batch(t, col, 1, []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/", Status: 200, Header: html("text/html"), Body: about},
		{DocID: 2, URL: "http://www.a.cl/news", Status: 200, Header: html("text/html"), Body: []byte("<p>monday</p>")},
		{DocID: 3, URL: "http://www.a.cl/static", Status: 200, Header: html("text/html"), Body: []byte("<p>static</p>")},
	})
	b1 := col.Batch(1)
	if _, err := Run(context.Background(), options(t, col, b1, 2)); err != nil {
		t.Fatal(err)
	}
	b2 := gathertest.Batch(t, col, 2, []gathertest.Page{
		// Same text, different markup: unchanged.
		{DocID: 1, URL: "http://www.a.cl/", Status: 200, Header: html("text/html"), Body: append([]byte("<!-- new banner -->"), about...)},
		{DocID: 2, URL: "http://www.a.cl/news", Status: 200, Header: html("text/html"), Body: []byte(`<html lang="es-CL"><meta name="description" content="Daily  news"><p>tuesday</p>`)},
		{DocID: 3, URL: "http://www.a.cl/static", Status: 304, Header: http.Header{"Etag": {`W/"v2"`}}},
		{DocID: 4, URL: "http://www.a.cl/new", Status: 200, Header: html("text/html"), Body: []byte("<p>static</p>")},
	})
	s, err := Run(context.Background(), options(t, col, b2, 2))
	if err != nil {
		t.Fatal(err)
	}
	// Batch 2 stores one text (tuesday): the unchanged page and the copy
	// of /static point at the texts batch 1 stored.
	if s.Older != 2 || s.Duplicates != 0 || s.StoredBytes != int64(len("tuesday")) {
		t.Errorf("older %d, duplicates %d, stored %d bytes", s.Older, s.Duplicates, s.StoredBytes)
	}
	docs := readDocs(t, b2)
	got := []bool{docs[0].Unchanged, docs[1].Unchanged, docs[2].Unchanged, docs[3].Unchanged}
	if got[0] != true || got[1] != false || got[2] != true || got[3] != false {
		t.Errorf("unchanged flags %v, want [true false true false]", got)
	}
	if docs[2].Hash != extract.HashHex(extract.TextHash("static")) {
		t.Errorf("304 record carries hash %q, want the previous one", docs[2].Hash)
	}
	if docs[2].ETag != `W/"v2"` || docs[1].Description != "Daily news" || docs[1].Lang != "es-CL" {
		t.Errorf("304 validators, description, lang: %+v %+v", docs[2], docs[1])
	}
	if docs[3].DuplicateOf != "http://www.a.cl/static" || docs[0].DuplicateOf != "" {
		t.Errorf("duplicate of: %q %q", docs[3].DuplicateOf, docs[0].DuplicateOf)
	}
	if s.Unchanged != 2 || s.NotModified != 1 {
		t.Errorf("summary %+v", s)
	}
	// The 304 page keeps its text from segment 1; the others are in 2.
	store, _ := textstore.Open(col.TextPath())
	defer store.Close()
	if text, m, err := store.Get("http://www.a.cl/static"); err != nil || text != "static" || m.Segment != 1 {
		t.Errorf("static: %q from %d, %v", text, m.Segment, err)
	}
	if text, m, _ := store.Get("http://www.a.cl/news"); text != "tuesday" || m.Segment != 2 {
		t.Errorf("news: %q from %d", text, m.Segment)
	}
	if text, m, _ := store.Get("http://www.a.cl/new"); text != "static" || m.Segment != 2 || m.RecordSegment != 1 {
		t.Errorf("new: %q from %d, stored in %d", text, m.Segment, m.RecordSegment)
	}
	if text, m, _ := store.Get("http://www.a.cl/"); text == "" || m.Segment != 2 || m.RecordSegment != 1 {
		t.Errorf("home: %d bytes from %d, stored in %d", len(text), m.Segment, m.RecordSegment)
	}
	// Rerunning batch 1 does not see batch 2 as older.
	os.Remove(filepath.Join(b1.Dir, "gathered.done"))
	if _, err := Run(context.Background(), options(t, col, b1, 2)); err != nil {
		t.Fatal(err)
	}
	for _, d := range readDocs(t, b1) {
		if d.Unchanged {
			t.Errorf("batch 1 rerun: %s unchanged", d.URL)
		}
	}
}

// TestIdenticalRevisit: a 200 the harvester stored as an
// identical-payload-digest revisit record (its payload digest the stored
// capture's) flows as a 304 does: nothing parsed, the record unchanged
// with the previous hash and the validators it carries, marked revisit,
// the text kept where batch 1 stored it. A 2xx response record read whole
// gives its capture (record id, date, payload digest) to the seeder; the
// revisit gives none.
func TestIdenticalRevisit(t *testing.T) {
	col := newCollection(t)
	body := []byte(`<html><title>Igual</title><p>static</p><a href="/x">x</a></html>`)
	gathertest.Batch(t, col, 1, []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/same", Status: 200, Header: html("text/html"), Body: body},
		{DocID: 2, URL: "http://www.a.cl/changed", Status: 200, Header: html("text/html"), Body: []byte("<p>monday</p>")},
	})
	b1 := col.Batch(1)
	if _, err := Run(context.Background(), options(t, col, b1, 2)); err != nil {
		t.Fatal(err)
	}
	first := readDocs(t, b1)
	var prev []capture.Capture
	for _, d := range first {
		c, err := d.Capture()
		if err != nil || c.IsZero() || d.Revisit {
			t.Fatalf("batch 1, %s: capture %+v, %v, revisit %v", d.URL, c, err, d.Revisit)
		}
		prev = append(prev, c)
	}
	etag := http.Header{"Content-Type": {"text/html"}, "Etag": {`"v3"`}}
	b2 := gathertest.Batch(t, col, 2, []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/same", Status: 200, Header: etag, Body: body, Previous: prev[0], Kind: "revisit"},
		{DocID: 2, URL: "http://www.a.cl/changed", Status: 200, Header: html("text/html"), Body: []byte("<p>tuesday</p>"), Previous: prev[1], Kind: "revisit"},
	})
	s, err := Run(context.Background(), options(t, col, b2, 2))
	if err != nil {
		t.Fatal(err)
	}
	docs := readDocs(t, b2)
	same, changed := docs[0], docs[1]
	if !same.Revisit || !same.Unchanged || !same.NotModified() || same.Status != 200 || same.Hash != first[0].Hash || same.Title != "" || len(same.Links) != 0 || same.ETag != `"v3"` || same.RecordID != "" {
		t.Errorf("identical revisit read as %+v", same)
	}
	if c, _ := changed.Capture(); changed.Revisit || changed.Unchanged || c.IsZero() || c.ID == prev[1].ID || c.Digest == prev[1].Digest {
		t.Errorf("changed page read as %+v", changed)
	}
	if s.Identical != 1 || s.NotModified != 0 || s.Unchanged != 1 || s.HTML != 1 || s.Other != 0 {
		t.Errorf("summary %+v", s)
	}
	store, _ := textstore.Open(col.TextPath())
	defer store.Close()
	if text, m, err := store.Get("http://www.a.cl/same"); err != nil || !strings.Contains(text, "static") || m.Segment != 1 {
		t.Errorf("same: %q from %d, %v", text, m.Segment, err)
	}
}

// TestCrash: a run that fails or is cancelled publishes nothing; leftovers
// of a killed run do not disturb the next one.
func TestCrash(t *testing.T) {
	col := newCollection(t)
	b := gathertest.Batch(t, col, 1, batch1(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, options(t, col, b, 2)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	for _, p := range []string{b.ParsedPath(), filepath.Join(b.Dir, PartialDir), filepath.Join(b.Dir, "gathered.done"), textstore.IndexPath(col.TextPath(), 1)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a cancelled run", p)
		}
	}
	// Leftovers of a run killed half-way through publishing.
	os.MkdirAll(filepath.Join(b.Dir, PartialDir), 0o755)
	os.WriteFile(filepath.Join(b.Dir, PartialDir, parsed.DocsFile), []byte("{half"), 0o644)
	os.MkdirAll(b.ParsedPath()+".old", 0o755)
	os.WriteFile(textstore.DataPath(col.TextPath(), 1), []byte("orphan"), 0o644)
	// The empty temporary file of a gatherer killed while creating its
	// segment (issue 18), and one of an index.
	tmps := []string{".seg-000001.dat.tmp-123456", ".seg-000001.idx.tmp-9"}
	for _, name := range tmps {
		os.WriteFile(filepath.Join(col.TextPath(), name), nil, 0o644)
	}
	if _, err := Run(context.Background(), options(t, col, b, 2)); err != nil {
		t.Fatal(err)
	}
	for _, name := range tmps {
		if _, err := os.Stat(filepath.Join(col.TextPath(), name)); !os.IsNotExist(err) {
			t.Errorf("%s left behind by the rerun: %v", name, err)
		}
	}
	if len(readDocs(t, b)) != 15 {
		t.Error("rerun after a crash did not gather every record")
	}
	if _, err := os.Stat(b.ParsedPath() + ".old"); !os.IsNotExist(err) {
		t.Error("parsed.old left behind")
	}
	// A missing fetch log fails without publishing anything.
	b2 := col.Batch(2)
	os.MkdirAll(b2.Dir, 0o755)
	if _, err := Run(context.Background(), Options{BatchDir: b2.Dir, TextDir: col.TextPath()}); err == nil {
		t.Error("batch without a fetch log gathered")
	}
	if _, err := os.Stat(b2.ParsedPath()); !os.IsNotExist(err) {
		t.Error("parsed/ published for a failed run")
	}
}

func TestTextModes(t *testing.T) {
	for _, mode := range []textstore.Mode{textstore.ModeSummary, textstore.ModeNone} {
		col := newCollection(t)
		b := gathertest.Batch(t, col, 1, []gathertest.Page{{DocID: 1, URL: "http://www.a.cl/", Status: 200, Header: html("text/html"), Body: []byte("<p>one two three four</p>")}})
		o := options(t, col, b, 1)
		o.TextMode, o.SummaryWords = mode, 2
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		store, _ := textstore.Open(col.TextPath())
		text, m, err := store.Get("http://www.a.cl/")
		store.Close()
		want := map[textstore.Mode]string{textstore.ModeSummary: "one two", textstore.ModeNone: ""}[mode]
		if err != nil || text != want || m.TextBytes != len("one two three four") {
			t.Errorf("%v: %q %+v %v", mode, text, m, err)
		}
	}
}

func TestBatchID(t *testing.T) {
	col := newCollection(t)
	b := gathertest.Batch(t, col, 42, batch1(t)[:1])
	if id, err := BatchID(b.Dir); err != nil || id != 42 {
		t.Errorf("BatchID(%s) = %d, %v", b.Dir, id, err)
	}
	// A copied batch directory with another name: the batch file says.
	other := filepath.Join(t.TempDir(), "copy")
	os.MkdirAll(other, 0o755)
	data, _ := os.ReadFile(b.File())
	os.WriteFile(filepath.Join(other, collection.BatchFile), data, 0o644)
	if id, err := BatchID(other); err != nil || id != 42 {
		t.Errorf("BatchID(%s) = %d, %v", other, id, err)
	}
}

func TestFindDoc(t *testing.T) {
	col := newCollection(t)
	b1 := gathertest.Batch(t, col, 1, batch1(t))
	if _, err := Run(context.Background(), options(t, col, b1, 2)); err != nil {
		t.Fatal(err)
	}
	d, path, err := FindDoc([]string{col.Batch(9).Dir, b1.Dir}, "http://www.a.cl/ru", 0)
	if err != nil || d.DocID != 12 || !strings.HasSuffix(path, filepath.Join("000001", "parsed", "docs.jsonl")) {
		t.Errorf("by URL: %+v %s %v", d, path, err)
	}
	if d, _, err := FindDoc([]string{b1.Dir}, "", 4); err != nil || d.URL != "http://www.a.cl/old" {
		t.Errorf("by doc id: %+v %v", d, err)
	}
	// "http://www.a.cl/" is a prefix of other URLs: only the exact one matches.
	if d, _, err := FindDoc([]string{b1.Dir}, "http://www.a.cl/", 0); err != nil || d.DocID != 1 {
		t.Errorf("prefix URL: %+v %v", d, err)
	}
	if _, _, err := FindDoc([]string{b1.Dir}, "http://nowhere.cl/", 0); !errors.Is(err, ErrNoDoc) {
		t.Errorf("missing: %v", err)
	}
}

func TestOptionsFromConfig(t *testing.T) {
	cfg := config.Defaults()
	cfg.Gatherer.FallbackCharset = "windows-1253"
	o, err := OptionsFromConfig(cfg)
	if err != nil || o.FallbackCharset != "windows-1253" || o.InflightBytes != cfg.Gatherer.InflightBytes {
		t.Errorf("%+v %v", o, err)
	}
	for _, bad := range []string{"klingon", "replacement", "utf-16be"} {
		cfg.Gatherer.FallbackCharset = bad
		if _, err := OptionsFromConfig(cfg); !errors.Is(err, config.ErrInvalid) {
			t.Errorf("fallback %q: %v", bad, err)
		}
	}
	cfg = config.Defaults()
	cfg.Gatherer.TextMode = "partial"
	if _, err := OptionsFromConfig(cfg); !errors.Is(err, config.ErrInvalid) {
		t.Errorf("text mode partial: %v", err)
	}
}

// TestSessionParamsFromConfig: links lose exactly the session parameters
// the operator configured (scope.session_params), as in the seeder.
func TestSessionParamsFromConfig(t *testing.T) {
	cfg := config.Defaults()
	cfg.Scope.SessionParams = []string{"tok"}
	o, err := OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.SessionParams) != 1 || o.SessionParams[0] != "tok" {
		t.Fatalf("options carry %v", o.SessionParams)
	}
	n := cfg.Scope.Normalizer()
	got, err := n.Normalize("http://a.cl/p?sid=1&tok=2&x=3")
	if err != nil || got != "http://a.cl/p?sid=1&x=3" {
		t.Errorf("normalised to %q, %v", got, err)
	}
}

// TestFailedRunClearsMarker: a run of an already gathered batch removes
// its gathered.done marker first (it is made durable while the batch is
// read and parsed), so a run that fails leaves the batch not gathered,
// whichever step fails.
func TestFailedRunClearsMarker(t *testing.T) {
	for _, tc := range []struct {
		name     string
		breakRun func(t *testing.T, o *Options)
	}{
		{"text store unusable", func(t *testing.T, o *Options) {
			o.TextDir = filepath.Join(t.TempDir(), "file")
			if err := os.WriteFile(o.TextDir, []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"cancelled", nil},
		{"segment cannot be committed", func(t *testing.T, o *Options) {
			// The index's name is taken by a directory: the commit fails
			// after the pipeline, while docs.jsonl is being synced.
			if err := os.MkdirAll(filepath.Join(textstore.IndexPath(o.TextDir, 1), "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := newCollection(t)
			b := gathertest.Batch(t, col, 1, batch1(t))
			if _, err := Run(context.Background(), options(t, col, b, 2)); err != nil {
				t.Fatal(err)
			}
			if !b.Done(collection.StageGathered) {
				t.Fatal("not marked after the first run")
			}
			o := options(t, col, b, 2)
			ctx := context.Background()
			if tc.breakRun != nil {
				os.RemoveAll(textstore.IndexPath(col.TextPath(), 1))
				tc.breakRun(t, &o)
			} else {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			if _, err := Run(ctx, o); err == nil {
				t.Fatal("the broken run succeeded")
			}
			if b.Done(collection.StageGathered) {
				t.Error("the batch is still marked gathered after a failed run")
			}
			if _, err := os.Stat(filepath.Join(b.Dir, PartialDir)); !os.IsNotExist(err) {
				t.Errorf("%s left behind: %v", PartialDir, err)
			}
		})
	}
}
