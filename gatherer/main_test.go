package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/gatherer"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// run runs the gatherer's command line in process and returns its
// standard output, standard error and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.RunContext(context.Background(), append([]string{"gatherer"}, args...))
	if err != nil {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), command.ExitCode(err)
}

func pages(t *testing.T) []gathertest.Page {
	about, err := os.ReadFile(filepath.Join("..", "pkg", "extract", "testdata", "pages", "sqlite-about.html"))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"text/html"}}
	return []gathertest.Page{
		{DocID: 11, URL: "http://www.a.cl/", Status: 200, Header: h, Body: about},
		{DocID: 12, URL: "http://www.a.cl/b", Status: 200, Header: h, Body: []byte(`<title>B</title><p>Texto de B</p><a href="/c" rel=nofollow>C</a>`)},
		{DocID: 13, URL: "http://www.a.cl/gone", Status: 404},
	}
}

func TestRunCatShow(t *testing.T) {
	dir := t.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	gathertest.Batch(t, col, 1, pages(t))

	// Another gatherer holds the lock: exit 4, nothing done.
	lock, err := col.Lock("gatherer")
	if err != nil {
		t.Fatal(err)
	}
	if _, e, code := run(t, "run", "--collection", dir); code != command.ExitLocked {
		t.Errorf("locked: exit %d: %s", code, e)
	}
	lock.Release()

	out, errOut, code := run(t, "run", "--collection", dir, "--quiet", "--gatherer-workers", "2")
	if code != command.ExitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"batch 000001 gathered", "docs      3: 2 HTML", "MB/s", "links"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Nothing left to do: exit 3. Already done: refused unless forced.
	if _, _, code := run(t, "run", "--collection", dir); code != command.ExitNothingToDo {
		t.Errorf("second run: exit %d, want %d", code, command.ExitNothingToDo)
	}
	if _, e, code := run(t, "run", "--collection", dir, "--batch", "1"); code != command.ExitFailure || !strings.Contains(e, collection.ErrAlreadyDone.Error()) {
		t.Errorf("run --batch 1: exit %d: %s", code, e)
	}
	if _, e, code := run(t, "run", "--collection", dir, "--batch", "1", "--force", "-q"); code != command.ExitOK {
		t.Errorf("run --batch 1 --force: exit %d: %s", code, e)
	}
	if _, e, code := run(t, "run", "--collection", dir, "--batch", "2"); code != command.ExitFailure || !strings.Contains(e, collection.ErrNoBatch.Error()) {
		t.Errorf("run --batch 2: exit %d: %s", code, e)
	}
	if _, _, code := run(t, "run", "--collection", dir, "--force"); code != command.ExitUsage {
		t.Errorf("--force alone: exit %d", code)
	}

	// cat by URL (normalised first) and by doc id.
	out, errOut, code = run(t, "cat", "--collection", dir, "HTTP://WWW.A.CL/b")
	if code != 0 || out != "Texto de B\nC\n" {
		t.Errorf("cat: exit %d, %q %s", code, out, errOut)
	}
	if out, _, _ := run(t, "cat", "--collection", dir, "11"); !strings.Contains(out, "About SQLite") {
		t.Errorf("cat 11: %.80q", out)
	}
	if _, e, code := run(t, "cat", "--collection", dir, "http://www.a.cl/nothing"); code != command.ExitFailure || !strings.Contains(e, textstore.ErrNotFound.Error()) {
		t.Errorf("cat missing: exit %d: %s", code, e)
	}
	if _, _, code := run(t, "cat", "--collection", dir); code != command.ExitUsage {
		t.Errorf("cat without argument: exit %d", code)
	}
	// cat --lang: the languages on standard error, the text alone on
	// standard output.
	out, errOut, code = run(t, "cat", "--collection", dir, "--lang", "11")
	if code != 0 || !strings.Contains(out, "About SQLite") || strings.Contains(out, "declared") ||
		errOut != "gatherer: http://www.a.cl/: lang declared none, detected en (confidence 100)\n" {
		t.Errorf("cat --lang 11: exit %d, %.80q, %q", code, out, errOut)
	}

	// show: the text store entry and the record with its links.
	out, errOut, code = run(t, "show", "--collection", dir, "http://www.a.cl/b")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"title        B", "charset      utf-8", "lang         declared none, detected unknown (confidence 0)", "status       200", "segment      000001", "hash         ", "text         12 bytes, 12 stored", "links      1", `http://www.a.cl/c  "C" [nofollow]`, filepath.Join("000001", "parsed", "docs.jsonl")} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	// A page with a record but no text (a 404) is still shown.
	out, _, code = run(t, "show", "--collection", dir, "13")
	if code != 0 || !strings.Contains(out, "text store: no entry") || !strings.Contains(out, "status 404") {
		t.Errorf("show 13: exit %d:\n%s", code, out)
	}
	if _, _, code := run(t, "show", "--collection", dir, "http://nowhere.cl/"); code != command.ExitFailure {
		t.Errorf("show missing: exit %d", code)
	}
}

// TestBatchDirMode: gathering a copied batch directory without a
// collection, as on a machine of its own.
func TestBatchDirMode(t *testing.T) {
	col, err := collection.Create(t.TempDir(), config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	b := gathertest.Batch(t, col, 7, pages(t))
	textDir := filepath.Join(t.TempDir(), "text")
	cfgFile := filepath.Join(t.TempDir(), "wire.toml")
	os.WriteFile(cfgFile, config.Render(config.Defaults()), 0o644)

	args := []string{"run", "--config", cfgFile, "--batch-dir", b.Dir, "--text-dir", textDir, "-q", "--gatherer-text-mode", "summary", "--gatherer-summary-words", "2"}
	if _, e, code := run(t, args...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, e)
	}
	if !b.Done(collection.StageGathered) {
		t.Error("no marker in the batch directory")
	}
	if _, err := os.Stat(textstore.IndexPath(textDir, 7)); err != nil {
		t.Error(err)
	}
	if _, e, code := run(t, args...); code != command.ExitFailure || !strings.Contains(e, collection.ErrAlreadyDone.Error()) {
		t.Errorf("second run: exit %d: %s", code, e)
	}
	out, e, code := run(t, "cat", "--config", cfgFile, "--text-dir", textDir, "http://www.a.cl/b")
	if code != 0 || out != "Texto de\n" {
		t.Errorf("cat: exit %d: %q %s", code, out, e)
	}
	out, e, code = run(t, "show", "--config", cfgFile, "--text-dir", textDir, "--batch-dir", b.Dir, "12")
	if code != 0 || !strings.Contains(out, "text_mode summary") || !strings.Contains(out, "links      1") {
		t.Errorf("show: exit %d: %s %s", code, out, e)
	}
	if _, _, code := run(t, "run", "--batch-dir", b.Dir); code != command.ExitUsage {
		t.Errorf("--batch-dir without --text-dir: exit %d", code)
	}
}

// TestCompact: two gathered batches, then gatherer compact; the texts
// read the same, the replaced version is gone, and the compacted batch
// cannot be gathered again.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"text/html"}}
	gathertest.Batch(t, col, 1, pages(t))
	gathertest.Batch(t, col, 2, []gathertest.Page{
		{DocID: 12, URL: "http://www.a.cl/b", Status: 200, Header: h, Body: []byte(`<title>B2</title><h1>Nuevo</h1><p>Texto nuevo de B</p>`)},
		{DocID: 14, URL: "http://www.a.cl/copia", Status: 200, Header: h, Body: []byte(`<title>Copia</title><p>Texto de B</p><a href="/c" rel=nofollow>C</a>`)},
	})
	if _, e, code := run(t, "compact", "--collection", dir); code != command.ExitNothingToDo {
		t.Errorf("compact of an empty store: exit %d: %s", code, e)
	}
	for range 2 {
		if _, e, code := run(t, "run", "--collection", dir, "-q"); code != 0 {
			t.Fatalf("run: exit %d: %s", code, e)
		}
	}
	// The copy in batch 2 points at the text batch 1 stored for /b.
	out, _, _ := run(t, "show", "--collection", dir, "http://www.a.cl/copia")
	for _, want := range []string{"batch        000002", "stored in    segment 000001", "duplicate  http://www.a.cl/b"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	before, _, _ := run(t, "cat", "--collection", dir, "http://www.a.cl/copia")

	out, e, code := run(t, "compact", "--collection", dir)
	if code != 0 {
		t.Fatalf("compact: exit %d: %s", code, e)
	}
	t.Logf("compact:\n%s", out)
	for _, want := range []string{"segments  2 merged into seg-000002 (batches 1 to 2", "entries   3 kept of 4: 1 replaced versions dropped", "texts     3 stored"} {
		if !strings.Contains(out, want) {
			t.Errorf("compact output lacks %q:\n%s", want, out)
		}
	}
	if after, _, _ := run(t, "cat", "--collection", dir, "http://www.a.cl/copia"); after != before || after != "Texto de B\nC\n" {
		t.Errorf("cat after compaction: %q, before %q", after, before)
	}
	if out, _, _ := run(t, "cat", "--collection", dir, "http://www.a.cl/b"); out != "Nuevo\nTexto nuevo de B\n" {
		t.Errorf("cat b: %q", out)
	}
	out, _, _ = run(t, "show", "--collection", dir, "http://www.a.cl/b")
	for _, want := range []string{"batch        000002", "compacted: batches 1 to 2", "headings     1", "h1 Nuevo", filepath.Join("000002", "parsed", "docs.jsonl")} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := run(t, "show", "--collection", dir, "11"); !strings.Contains(out, "batch        000001") || !strings.Contains(out, filepath.Join("000001", "parsed", "docs.jsonl")) {
		t.Errorf("show 11 after compaction:\n%s", out)
	}
	if _, e, code := run(t, "compact", "--collection", dir); code != command.ExitNothingToDo {
		t.Errorf("second compact: exit %d: %s", code, e)
	}
	if _, e, code := run(t, "run", "--collection", dir, "--batch", "2", "--force"); code != command.ExitFailure || !strings.Contains(e, textstore.ErrCompacted.Error()) {
		t.Errorf("regathering a compacted batch: exit %d: %s", code, e)
	}
	// Batch 1 can still be gathered again: its new segment is older than
	// the compacted one, which keeps answering.
	if _, e, code := run(t, "run", "--collection", dir, "--batch", "1", "--force", "-q"); code != 0 {
		t.Errorf("regathering batch 1: exit %d: %s", code, e)
	}
	if out, _, _ := run(t, "cat", "--collection", dir, "http://www.a.cl/b"); out != "Nuevo\nTexto nuevo de B\n" {
		t.Errorf("cat b after regathering batch 1: %q", out)
	}
	// Another gatherer holds the lock.
	lock, err := col.Lock("gatherer")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, e, code := run(t, "compact", "--collection", dir); code != command.ExitLocked {
		t.Errorf("compact while locked: exit %d: %s", code, e)
	}
}

// TestVerifyDigests: a record whose body was changed and recompressed
// (its gzip CRC right, its WARC-Block-Digest wrong) is read as it is by
// default; with --verify-digests it is a damaged record: the run stops
// with exit 6 naming the file and the offset, and with --salvage too the
// page is written as unread.
func TestVerifyDigests(t *testing.T) {
	dir := t.TempDir()
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	gathertest.Batch(t, col, 1, pages(t))
	b := col.Batch(1)
	logPath := filepath.Join(b.HarvestPath(), fetchlog.LogFile)
	logData, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Append a forged copy of doc 12's record to its WARC file and point
	// the fetch log at it.
	lines := strings.Split(string(logData), "\n")
	for i, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) < 10 || f[0] != "12" {
			continue
		}
		warcPath := filepath.Join(b.HarvestPath(), f[7])
		data, err := os.ReadFile(warcPath)
		if err != nil {
			t.Fatal(err)
		}
		off, _ := strconv.Atoi(f[8])
		n, _ := strconv.Atoi(f[9])
		zr, err := gzip.NewReader(bytes.NewReader(data[off : off+n]))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		forgedRaw := bytes.Replace(raw, []byte("Texto de B"), []byte("Texto de X"), 1)
		if bytes.Equal(forgedRaw, raw) {
			t.Fatal("record 12 does not hold its text")
		}
		var m bytes.Buffer
		zw := gzip.NewWriter(&m)
		zw.Write(forgedRaw)
		zw.Close()
		f[8], f[9] = strconv.Itoa(len(data)), strconv.Itoa(m.Len())
		if err := os.WriteFile(warcPath, append(data, m.Bytes()...), 0o644); err != nil {
			t.Fatal(err)
		}
		lines[i] = strings.Join(f, "\t")
	}
	if err := os.WriteFile(logPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	var s gatherer.Summary
	out, errOut, code := run(t, "run", "--collection", dir, "--quiet")
	if code != command.ExitOK {
		t.Fatalf("run: exit %d: %s\n%s", code, errOut, out)
	}
	if err := b.Summary(collection.StageGathered, &s); err != nil || s.ReadErrors != 0 {
		t.Errorf("without --verify-digests: %d read errors (%v), want 0", s.ReadErrors, err)
	}
	if out, _, _ := run(t, "cat", "--collection", dir, "12"); !strings.Contains(out, "Texto de X") {
		t.Errorf("without --verify-digests the forged record is not read as it is: %q", out)
	}
	_, errOut, code = run(t, "run", "--collection", dir, "--batch", "1", "--force", "--quiet", "--verify-digests")
	if code != command.ExitDamaged || !strings.Contains(errOut, "wire-00001.warc.gz, record at offset") || !strings.Contains(errOut, "does not match") {
		t.Fatalf("run --verify-digests: exit %d, want %d naming the file, the offset and the mismatch: %s", code, command.ExitDamaged, errOut)
	}
	if b.Done(collection.StageGathered) {
		t.Error("run --verify-digests stopped by a damaged record left the batch gathered")
	}
	out, errOut, code = run(t, "run", "--collection", dir, "--batch", "1", "--quiet", "--verify-digests", "--salvage")
	if code != command.ExitOK {
		t.Fatalf("run --verify-digests --salvage: exit %d: %s", code, errOut)
	}
	s = gatherer.Summary{}
	if err := b.Summary(collection.StageGathered, &s); err != nil {
		t.Fatal(err)
	}
	if s.Unread != 1 || !strings.Contains(out, "salvaged  1 records") {
		t.Errorf("--verify-digests --salvage: %d unread, want 1 (the forged record)\n%s", s.Unread, out)
	}
	if out, _, _ := run(t, "show", "--collection", dir, "12"); !strings.Contains(out, "digest") {
		t.Errorf("show 12 does not name the digest mismatch:\n%s", out)
	}
}

// TestLangLine: the language line of show and cat --lang (issue 37).
func TestLangLine(t *testing.T) {
	tests := []struct {
		declared string
		d        *parsed.Doc
		want     string
	}{
		{"es", nil, "declared es; detected: no record found"},
		{"es", &parsed.Doc{}, "declared es; detected: not recorded (gatherer.language_sample 0, or gathered before detection)"},
		{"", &parsed.Doc{DetectedLang: "ja", LangConf: 100}, "declared none, detected ja (confidence 100)"},
		{"es-CL", &parsed.Doc{DetectedLang: "es", LangConf: 99}, "declared es-CL, detected es (confidence 99): agree"},
		{"en", &parsed.Doc{DetectedLang: "ja", LangConf: 64}, "declared en, detected ja (confidence 64): disagree"},
		{"en", &parsed.Doc{DetectedLang: "unknown"}, "declared en, detected unknown (confidence 0)"},
	}
	for _, tt := range tests {
		if got := langLine(tt.declared, tt.d); got != tt.want {
			t.Errorf("langLine(%q, %+v) = %q, want %q", tt.declared, tt.d, got, tt.want)
		}
	}
}
