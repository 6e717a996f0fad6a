package parsed

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.jsonl")

// allFields has a record of each kind the gatherer writes, with every
// field set somewhere.
var allFields = []*Doc{
	{DocID: 1, URL: "http://a.cl/", Status: 200, Fetched: time.Unix(1700000000, 0).UTC(), MIME: "text/html", Charset: "windows-1252", Bytes: 9359,
		Title: "Inicio <b>", Description: "Municipalidad & más", Lang: "es-CL", DetectedLang: "es", LangConf: 97, LastModified: "Sat, 21 Nov 2026 10:00:00 GMT", ETag: `"abc-123"`,
		Hash: "d9bb4b21a94d677c", Simhash: "8f3a00c2e41d9b07", TextBytes: 4192, Canonical: "http://a.cl/index.html",
		RecordID: "<urn:uuid:6f1c9a52-3b7e-4d0a-8c2f-9e4b1a7d5c30>", RecordDate: "2023-11-14T22:13:20Z", PayloadDigest: "sha1:2CKOYS3I5ZUQAPJ3NS2JSLWOBOV6DEYG",
		Links: []Link{{URL: "http://a.cl/x", Anchor: "x & y"}, {URL: "http://b.cl/", NoFollow: true}}},
	{DocID: 2, URL: "http://a.cl/copia", Status: 200, Fetched: time.Unix(1700000001, 0).UTC(), MIME: "text/html", Charset: "utf-8", Bytes: 9359,
		Hash: "d9bb4b21a94d677c", DuplicateOf: "http://a.cl/", TextBytes: 4192, Unchanged: true},
	{DocID: 3, URL: "http://a.cl/privado", Status: 200, Fetched: time.Unix(1700000002, 0).UTC(), MIME: "text/html", Charset: "utf-8", Bytes: 31,
		DetectedLang: "unknown", Hash: "ac67534a3cf52733", TextBytes: 8, NoIndex: true, NoFollow: true, Redirect: "http://a.cl/otro"},
	{DocID: 4, URL: "http://a.cl/igual", Status: 304, Fetched: time.Unix(1700000003, 0).UTC(), ETag: `W/"v2"`, Hash: "ac67534a3cf52733", Unchanged: true, Revisit: true},
	{DocID: 7, URL: "http://a.cl/mismo", Status: 200, Fetched: time.Unix(1700000006, 0).UTC(), MIME: "text/html", Bytes: 31, Hash: "ac67534a3cf52733", Unchanged: true, Revisit: true},
	{DocID: 5, URL: "http://a.cl/old", Status: 301, Fetched: time.Unix(1700000004, 0).UTC(), Redirect: "http://a.cl/new"},
	{DocID: 6, URL: "http://a.cl/down", Err: "timeout: no response in 20s", Fetched: time.Unix(1700000005, 0).UTC()},
}

// TestGolden: the writer's output for allFields is testdata/golden.jsonl
// (go test -update rewrites it), and it reads back the same.
func TestGolden(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, d := range allFields {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	path := "testdata/golden.jsonl"
	if *update {
		os.WriteFile(path, b.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output differs from %s:\n%s", path, b.String())
	}
	docs, err := ReadFile(path)
	if err != nil || !reflect.DeepEqual(docs, allFields) {
		t.Errorf("read back: %v\n%+v", err, docs)
	}
	// The older file, written before description, lang, validators and
	// duplicateOf existed, still reads.
	if docs, err := ReadFile("testdata/docs.jsonl"); err != nil || len(docs) == 0 {
		t.Errorf("testdata/docs.jsonl: %d docs, %v", len(docs), err)
	}
	// Version 1, written before detectedLang, langConfidence and simhash,
	// reads as it did.
	if docs, err := ReadFile("testdata/golden-v1.jsonl"); err != nil || len(docs) != 6 || docs[0].V != 1 || docs[0].Lang != "es-CL" || docs[0].DetectedLang != "" {
		t.Errorf("testdata/golden-v1.jsonl: %d docs, %v", len(docs), err)
	}
	// Version 3, written before revisit and the capture fields, reads
	// without them.
	if docs, err := ReadFile("testdata/golden-v3.jsonl"); err != nil || len(docs) != 6 || docs[0].V != 3 || docs[0].RecordID != "" || docs[3].NotModified() != true || docs[3].Revisit {
		t.Errorf("testdata/golden-v3.jsonl: %d docs, %v", len(docs), err)
	}
	// Version 2, whose simhash is of the first fingerprint scheme, reads
	// with it, and tells its version.
	if docs, err := ReadFile("testdata/golden-v2.jsonl"); err != nil || len(docs) != 6 || docs[0].V != 2 || docs[0].Simhash != allFields[0].Simhash || docs[0].SimhashVersion() != 1 {
		t.Errorf("testdata/golden-v2.jsonl: %d docs, %v", len(docs), err)
	}
}

// TestNotModifiedAndCapture: a 304 and a revisit brought nothing new; a
// record's capture fields read as a capture, all three or none.
func TestNotModifiedAndCapture(t *testing.T) {
	for _, d := range allFields {
		if want := d.DocID == 4 || d.DocID == 7; d.NotModified() != want {
			t.Errorf("doc %d: NotModified %v", d.DocID, d.NotModified())
		}
		c, err := d.Capture()
		if err != nil || c.IsZero() != (d.DocID != 1) {
			t.Errorf("doc %d: capture %+v, %v", d.DocID, c, err)
		}
	}
	bad := Doc{RecordID: "<urn:uuid:x>", RecordDate: "2023-11-14T22:13:20Z"}
	if _, err := bad.Capture(); !errors.Is(err, capture.ErrFormat) {
		t.Errorf("capture without a digest: %v", err)
	}
}

func TestSimhashVersion(t *testing.T) {
	for _, tt := range []struct {
		v       int
		simhash string
		want    int
	}{{1, "", 0}, {2, "", 0}, {2, "8f3a00c2e41d9b07", 1}, {3, "8f3a00c2e41d9b07", 2}, {3, "", 0}} {
		d := Doc{V: tt.v, Simhash: tt.simhash}
		if got := d.SimhashVersion(); got != tt.want {
			t.Errorf("version %d, simhash %q: SimhashVersion %d, want %d", tt.v, tt.simhash, got, tt.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	docs := []*Doc{
		{DocID: 1, URL: "http://a.cl/", Status: 200, Fetched: time.Unix(1700000000, 0).UTC(), MIME: "text/html", Charset: "utf-8", Bytes: 10, Title: "Inicio <b>", Hash: "00ff",
			Links: []Link{{URL: "http://a.cl/x", Anchor: "x & y"}, {URL: "http://b.cl/", NoFollow: true}}},
		{DocID: 2, URL: "http://a.cl/old", Status: 301, Fetched: time.Unix(1700000001, 0).UTC(), Redirect: "http://a.cl/new"},
		{DocID: 3, URL: "http://a.cl/down", Err: "timeout", Fetched: time.Unix(1700000002, 0).UTC()},
	}
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, d := range docs {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if !strings.Contains(b.String(), "Inicio <b>") {
		t.Error("HTML in titles should not be escaped in the file")
	}
	r := NewReader(&b, "test")
	for i := range docs {
		got, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, docs[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, docs[i])
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after last: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	for name, data := range map[string]string{
		"not json": "hello\n",
		"torn":     `{"v":1,"docid":1,"url":"http://a.cl/"` + "\n",
	} {
		_, err := NewReader(strings.NewReader(data), "x.jsonl").Next()
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "x.jsonl record 1") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A newer version is ErrVersion, not damage.
	_, err := NewReader(strings.NewReader(`{"v":5,"docid":1}`+"\n"), "x.jsonl").Next()
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "version 5") {
		t.Errorf("future version: %v, want ErrVersion", err)
	}
}

// FuzzReader: damaged parsed output never panics the reader.
func FuzzReader(f *testing.F) {
	seed, _ := os.ReadFile("testdata/docs.jsonl")
	f.Add(seed)
	golden, _ := os.ReadFile("testdata/golden.jsonl")
	f.Add(golden)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		for i := 0; i < 1000; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

// TestFastDecode: every record the Writer writes takes the hand-written
// path, and decodes as encoding/json decodes it; records it does not
// handle fall back to encoding/json with the same result.
func TestFastDecode(t *testing.T) {
	for _, path := range []string{"testdata/golden.jsonl", "testdata/docs.jsonl"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var fast, ref Doc
			if !fastDecode(string(line), &fast) {
				t.Errorf("%s line %d: not decoded by the fast path", path, i+1)
			}
			if err := json.Unmarshal(line, &ref); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fast, ref) {
				t.Errorf("%s line %d:\n fast %+v\n json %+v", path, i+1, fast, ref)
			}
		}
	}
	for _, line := range []string{
		`{"v":1,"docid":7,"url":"http://a.cl/\u00e9\n\"x\"\/","status":200,"fetched":"2026-11-22T03:04:05Z","bytes":0,"links":[]}`,
		`{"v":1,"docid":7,"url":"http://a.cl/\ud83d\ude00","status":200,"fetched":"2026-11-22T03:04:05Z","bytes":0}`,
		`{"v":1,"URL":"http://a.cl/","extra":[1,{"a":null}],"status":2.0e2}`,
		`{"v":1,"title":"a","title":"b","links":[{"url":"x"}],"links":[{"anchor":"y"}]}`,
		"{\"v\":1,\"title\":\"caf\xe9\"}",
		` { "v" : 1 , "docid" : 3 , "links" : [ { "url" : "http://a.cl/" , "nofollow" : true } ] } `,
		`{"v":1,"docid":-1}`,
		`{"v":1,"nofollow":null,"status":007}`,
		`{"v":1} x`,
	} {
		var got, ref Doc
		gerr := Unmarshal([]byte(line), &got)
		rerr := json.Unmarshal([]byte(line), &ref)
		if (gerr == nil) != (rerr == nil) || !reflect.DeepEqual(got, ref) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v, %v", line, got, gerr, ref, rerr)
		}
	}
}

// FuzzUnmarshal: Unmarshal decodes any line as encoding/json does.
func FuzzUnmarshal(f *testing.F) {
	for _, path := range []string{"testdata/golden.jsonl", "testdata/docs.jsonl"} {
		data, _ := os.ReadFile(path)
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got, ref Doc
		gerr := Unmarshal(line, &got)
		rerr := json.Unmarshal(line, &ref)
		if (gerr == nil) != (rerr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", line, gerr, rerr)
		}
		if gerr == nil && !reflect.DeepEqual(got, ref) {
			t.Fatalf("%q:\n got %+v\nwant %+v", line, got, ref)
		}
	})
}

// A sitemap record (issue 19) carries fields the fast encoder and decoder
// do not know: it goes through encoding/json both ways and reads back the
// same.
func TestSitemapRecord(t *testing.T) {
	p := 0.8
	d := &Doc{DocID: 3, URL: "http://a.cl/sitemap.xml", Status: 200, Fetched: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), MIME: "application/xml", Bytes: 300,
		Links:   []Link{{URL: "http://a.cl/p", LastMod: "2026-11-01T00:00:00Z", ChangeFreq: "daily", Priority: &p}, {URL: "http://a.cl/s2.xml", Sitemap: true}, {URL: "http://b.cl/x", Cross: true}},
		Sitemap: &Sitemap{Kind: "urlset", Entries: 3, Invalid: 1, Reason: "xml: line 9: unexpected EOF"}}
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.Write(d); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if !strings.HasSuffix(b.String(), "}\n") || strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("not one line: %q", b.String())
	}
	got, err := NewReader(&b, "docs.jsonl").Next()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, d)
	}
}
