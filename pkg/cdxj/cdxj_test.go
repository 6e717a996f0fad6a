package cdxj

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureDir is pkg/warcio's frozen harvest: an old data-00001.warc.gz
// the harvester wrote from a loopback test server, and its fetch log.
var fixtureDir = filepath.Join("..", "warcio", "testdata", "harvest")

// TestLineText pins the text of a line (pywb's CDXJ: key, timestamp, a
// JSON object of strings in a fixed order, status and digest left out
// when unknown) and reads it back.
func TestLineText(t *testing.T) {
	for _, tt := range []struct {
		line Line
		want string
	}{
		{Line{Key: "cl,uchile)/", Timestamp: "20261122020312", URL: "http://www.uchile.cl/", MIME: "text/html", Status: 200,
			Digest: "2CKOYS3I5ZUQAPJ3NS2JSLWOBOV6DEYG", Length: 2447, Offset: 1240, Filename: "wire-20261122020311-000042-s1of1-00001.warc.gz"},
			`cl,uchile)/ 20261122020312 {"url": "http://www.uchile.cl/", "mime": "text/html", "status": "200", "digest": "2CKOYS3I5ZUQAPJ3NS2JSLWOBOV6DEYG", "length": "2447", "offset": "1240", "filename": "wire-20261122020311-000042-s1of1-00001.warc.gz"}`},
		{Line{Key: "cl,uchile)/", Timestamp: "20261122020329", URL: "http://www.uchile.cl/", MIME: MIMERevisit, Length: 612, Offset: 5078, Filename: "x.warc.gz"},
			`cl,uchile)/ 20261122020329 {"url": "http://www.uchile.cl/", "mime": "warc/revisit", "length": "612", "offset": "5078", "filename": "x.warc.gz"}`},
		{Line{Key: "cl,a)/%c3%b1", Timestamp: "20261122020329", URL: "http://a.cl/\u00f1\"\\\U0001F600", MIME: MIMEUnknown, Length: 1, Offset: 0, Filename: "x.warc.gz"},
			`cl,a)/%c3%b1 20261122020329 {"url": "http://a.cl/\u00f1\"\\\ud83d\ude00", "mime": "unk", "length": "1", "offset": "0", "filename": "x.warc.gz"}`},
	} {
		if got := tt.line.String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
		back, err := Parse([]byte(tt.want + "\n"))
		if err != nil || back != tt.line {
			t.Errorf("Parse(%s) = %+v, %v", tt.want, back, err)
		}
	}
	// Other indexers' numbers and "-" read too.
	l, err := Parse([]byte(`org,a)/ 20200101000000 {"url": "http://a.org/", "length": 10, "offset": 0, "status": "-", "filename": "a.warc.gz", "extra": 1}`))
	if err != nil || l.Length != 10 || l.Status != 0 || l.Filename != "a.warc.gz" {
		t.Errorf("numbers: %+v, %v", l, err)
	}
}

// TestParseRejects: what is not an index line is an error, never a
// guess.
func TestParseRejects(t *testing.T) {
	const ok = `{"url": "u", "length": "1", "offset": "0", "filename": "f"}`
	for _, bad := range []string{
		"",
		"key",
		"key 2026",
		"key 2026112202031 " + ok,     // 13 digits
		"key 20261322020312 " + ok,    // month 13
		" 20261122020312 " + ok,       // no key
		"k\x01y 20261122020312 " + ok, // control character
		"key 20261122020312 [1]",
		"key 20261122020312 {",
		`key 20261122020312 {"length": "1", "offset": "0", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "offset": "0", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "length": "0", "offset": "0", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "length": "1", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "length": "1", "offset": "-5", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "length": "1", "offset": "0"}`,
		`key 20261122020312 {"url": "u", "length": "x", "offset": "0", "filename": "f"}`,
		`key 20261122020312 {"url": "u", "length": "1", "offset": "0", "filename": "f", "status": "1000"}`,
		"key 20261122020312 {\"url\": \"\xff\", \"length\": \"1\", \"offset\": \"0\", \"filename\": \"f\"}",
	} {
		if l, err := Parse([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrFormat", bad, l, err)
		}
	}
}

// TestFixtureGolden indexes the frozen harvest (records the harvester
// fetched from a loopback test server) and compares the index with
// testdata/fixture.cdxj; every line points at a record that reads back
// at its offset and length, as the fetch log says.
func TestFixtureGolden(t *testing.T) {
	const warc = "data-00001.warc.gz"
	lines, torn, err := FromWARC(filepath.Join(fixtureDir, warc), warc)
	if err != nil || torn != -1 {
		t.Fatalf("index: torn %d, %v", torn, err)
	}
	var got bytes.Buffer
	if err := Write(&got, lines); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "fixture.cdxj")
	if *update {
		os.WriteFile(golden, got.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("index of %s:\n%s\nwant (%s):\n%s", warc, got.String(), golden, want)
	}
	recs, err := fetchlog.ReadFile(filepath.Join(fixtureDir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	at := map[[2]int64]Line{}
	for _, l := range lines {
		resp, err := warcio.ReadResponse(filepath.Join(fixtureDir, l.Filename), l.Offset, l.Length, 1<<20)
		if err != nil || resp.URL != l.URL || resp.Status != l.Status {
			t.Errorf("%s: record at %d+%d: %v, %v", l.URL, l.Offset, l.Length, resp, err)
		}
		at[[2]int64{l.Offset, l.Length}] = l
	}
	for _, r := range recs {
		if l, ok := at[[2]int64{r.Offset, r.Length}]; !ok || l.URL != r.URL || l.MIME != r.MIME || l.Status != r.Status {
			t.Errorf("fetch log %s at %d+%d: index line %+v", r.URL, r.Offset, r.Length, l)
		}
	}
	if len(lines) != len(recs)+1 {
		t.Errorf("%d lines, want the %d pages and robots.txt", len(lines), len(recs))
	}
}

// TestRevisitLine: a 304 Not Modified, stored as a revisit record, is
// indexed as pywb does it: mime warc/revisit and no status (a status only
// for response records, by convention). ReplayWeb.page replays a
// revisit line with a 3xx status as a revisit of a redirect: the 304
// itself, an empty page, instead of the capture it refers to (found by
// scripts/archtools_test.go, issue 37).
func TestRevisitLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.warc.gz")
	w, err := warcio.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 7, 17, 2, 47, 0, time.UTC)
	for i, status := range []string{"HTTP/1.1 200 OK", "HTTP/1.1 304 Not Modified"} {
		h := http.Header{"Etag": {`"ced454ee74e1d5be"`}}
		var body []byte
		if i == 0 {
			h.Set("Content-Type", "text/html; charset=utf-8")
			body = []byte("<title>Cafe</title>")
		}
		if _, _, err := w.Write(&warcio.Exchange{URL: "http://www.cafe995.cl/", Date: t0.Add(time.Duration(i) * time.Minute),
			Request: []byte("GET / HTTP/1.1\r\n\r\n"), StatusLine: status, Header: h, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines, _, err := FromWARC(path, "a.warc.gz")
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	if l := &lines[0]; l.MIME != "text/html" || l.Status != 200 || l.Digest == "" {
		t.Errorf("response line %s", l.String())
	}
	if l := &lines[1]; l.MIME != MIMERevisit || l.Status != 0 || strings.Contains(l.String(), `"status"`) {
		t.Errorf("revisit line %s: want mime %s and no status", l.String(), MIMERevisit)
	}
}

// TestIndexDir writes the missing indexes of a directory, and again
// everything with force; a torn last record is left out.
func TestIndexDir(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "data-00001.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "data-00001.warc.gz"), data, 0o644)
	// Torn in the middle of the last page's response record (offset
	// 7225, 665 bytes: the fixture's fetch log).
	os.WriteFile(filepath.Join(dir, "data-00002.warc.gz"), data[:7225+300], 0o644)
	st, err := IndexDir(dir, false, nil)
	if err != nil || st.Files != 2 || st.Indexed != 2 {
		t.Fatalf("%+v, %v", st, err)
	}
	whole, err := ReadFile(filepath.Join(dir, "data-00001.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	torn, err := ReadFile(filepath.Join(dir, "data-00002.cdxj"))
	if err != nil || len(torn) != len(whole)-1 || torn[0].Filename != "data-00002.warc.gz" {
		t.Errorf("torn file's index: %d lines (whole: %d), %v", len(torn), len(whole), err)
	}
	if st, err := IndexDir(dir, false, nil); err != nil || st.Indexed != 0 {
		t.Errorf("second run wrote %d indexes, %v", st.Indexed, err)
	}
	os.WriteFile(filepath.Join(dir, "data-00001.cdxj"), []byte("garbage\n"), 0o644)
	if st, err := IndexDir(dir, true, nil); err != nil || st.Indexed != 2 {
		t.Errorf("forced run: %+v, %v", st, err)
	}
	if again, err := ReadFile(filepath.Join(dir, "data-00001.cdxj")); err != nil || len(again) != len(whole) {
		t.Errorf("forced rebuild: %d lines, %v", len(again), err)
	}
	// A damaged file is an error naming it.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0xff
	os.WriteFile(filepath.Join(dir, "data-00003.warc.gz"), bad, 0o644)
	if _, err := IndexDir(dir, false, nil); !errors.Is(err, warcio.ErrRecord) || !strings.Contains(err.Error(), "data-00003.warc.gz") {
		t.Errorf("damaged WARC file: %v", err)
	}
}

// TestReadFileRejects: an index cut short or out of order is refused.
func TestReadFileRejects(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "fixture.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(golden), "\n")
	dir := t.TempDir()
	for name, content := range map[string]string{
		"cut":      string(golden[:len(golden)-10]),
		"unsorted": lines[1] + lines[0],
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadFile(path); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMerge merges indexes into one in index order, and refuses a
// source out of order.
func TestMerge(t *testing.T) {
	mk := func(key, ts, file string) Line {
		return Line{Key: key, Timestamp: ts, URL: "http://" + key, MIME: "text/html", Status: 200, Length: 10, Offset: 0, Filename: file}
	}
	a := []Line{mk("cl,a)/", "20260101000000", "a"), mk("cl,c)/", "20260101000000", "a")}
	b := []Line{mk("cl,a)/", "20250101000000", "b"), mk("cl,b)/", "20260101000000", "b"), mk("cl,c)/", "20260101000000", "b")}
	var out bytes.Buffer
	n, err := Merge(&out, []Source{Lines("a", a), Lines("b", b), Lines("empty", nil)})
	if err != nil || n != 5 {
		t.Fatalf("%d lines, %v", n, err)
	}
	var got []string
	r := NewReader(&out, "merged")
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Key+" "+l.Timestamp+" "+l.Filename)
	}
	want := "cl,a)/ 20250101000000 b|cl,a)/ 20260101000000 a|cl,b)/ 20260101000000 b|cl,c)/ 20260101000000 a|cl,c)/ 20260101000000 b"
	if strings.Join(got, "|") != want {
		t.Errorf("merged\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if _, err := Merge(io.Discard, []Source{Lines("backwards", []Line{b[1], b[0]})}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "backwards") {
		t.Errorf("unsorted source: %v", err)
	}
}

// FuzzParse: no line panics the parser, and a line it reads is written
// back to a line that reads the same.
func FuzzParse(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "fixture.cdxj"))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(golden), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`org,a)/ 20200101000000 {"url": "http://a.org/", "length": 10, "offset": 0, "filename": "a"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		back, err := Parse(l.Append(nil))
		if err != nil || back != l {
			t.Fatalf("%q read as %+v, written as %q, read back as %+v, %v", data, l, l.Append(nil), back, err)
		}
	})
}
