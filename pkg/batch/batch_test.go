package batch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
)

// testdata/v1.tsv is a frozen version 1 file written by the manager: it
// must keep reading as long as version 1 is supported.
func TestReadV1Fixture(t *testing.T) {
	h, entries, err := ReadFile(filepath.Join("testdata", "v1.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Batch != 1 || !h.Created.Equal(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) || h.Strategy != "pagerank" {
		t.Errorf("header %+v", h)
	}
	if h.Params["alpha"] != "1" || h.Params["max_pages_per_site"] != "3" || h.Counts["urls"] != 6 || h.Counts["revisits"] != 1 {
		t.Errorf("params %v counts %v", h.Params, h.Counts)
	}
	want := Entry{DocID: 7, Site: "http://b.cl", Score: 0.211697, Depth: 0, Kind: KindRevisit, URL: "http://b.cl/"}
	if len(entries) != 6 || entries[5] != want {
		t.Errorf("entries %+v", entries)
	}
}

// testdata/v2.tsv is a frozen version 2 file written by the manager, with
// validators on a revisit and the header keys added within version 2.
func TestReadV2Fixture(t *testing.T) {
	h, entries, err := ReadFile(filepath.Join("testdata", "v2.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Batch != 1 || h.Strategy != "pagerank" || h.Params["max_fetches_per_script"] != "1" || h.Params["robots_max_age"] != "24h0m0s" || h.Counts["robots"] != 0 || h.Counts["urls"] != 6 {
		t.Errorf("header %+v", h)
	}
	want := Entry{DocID: 7, Site: "http://b.cl", Score: 0.211697, Depth: 0, Kind: KindRevisit, URL: "http://b.cl/", LastModified: "Mon, 02 Nov 2026 15:04:05 GMT", ETag: `"5f2a"`}
	if len(entries) != 6 || entries[5] != want {
		t.Errorf("entries %+v", entries)
	}
}

// testdata/v3.tsv is a frozen version 3 file: an entry of kind sitemap.
// The same entry in a version 2 file is damage; a batch without sitemap
// entries is still written as version 2.
func TestReadV3Fixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v3.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	h, entries, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 || entries[2].Kind != KindSitemap || entries[2].URL != "https://c.cl/sitemap.xml" || h.Counts["sitemaps"] != 1 {
		t.Errorf("entries %+v", entries)
	}
	var b bytes.Buffer
	if err := Write(&b, h, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), data) {
		t.Errorf("written back:\n%s", b.Bytes())
	}
	v2 := bytes.Replace(data, []byte(Magic+" 3"), []byte(Magic+" 2"), 1)
	if _, _, err := Read(bytes.NewReader(v2)); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "kind") {
		t.Errorf("kind sitemap in version 2: %v", err)
	}
	b.Reset()
	entries[2].Kind = KindNew
	if err := Write(&b, h, entries); err != nil || !strings.HasPrefix(b.String(), Magic+" 2\n") {
		t.Errorf("no sitemap entries: %v\n%.20s", err, b.String())
	}
}

// testdata/v4.tsv is a frozen version 4 file: revisits carry the
// stored capture they refer to (issue 37). It writes back byte for byte;
// a batch without captures is still written as version 2 or 3; the
// capture columns are checked, all three "-" or all three set.
func TestReadV4Fixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v4.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	h, entries, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := capture.Capture{ID: "<urn:uuid:0b2d4e6f-8a1c-4e3b-9d5f-7a2c4e6b8d01>", Date: time.Date(2026, 11, 22, 2, 3, 29, 0, time.UTC), Digest: "sha1:S4TIOXVXXYAPNJWQ3I7J2UZHJZFGMWRS"}
	if len(entries) != 6 || entries[5].Capture != want || entries[5].ETag != `"5f2a"` || !entries[0].Capture.IsZero() || entries[2].Kind != KindSitemap {
		t.Errorf("entries %+v", entries)
	}
	var b bytes.Buffer
	if err := Write(&b, h, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), data) {
		t.Errorf("written back:\n%s", b.Bytes())
	}
	for i := range entries {
		entries[i].Capture = capture.Capture{}
	}
	b.Reset()
	if err := Write(&b, h, entries); err != nil || !strings.HasPrefix(b.String(), Magic+" 3\n") || strings.Contains(b.String(), "refers_to") {
		t.Errorf("no captures: %v\n%.20s", err, b.String())
	}

	line := "1\thttp://a.cl\t0.5\t0\trevisit\thttp://a.cl/\t-\t-\t"
	head := string(data[:bytes.Index(data, []byte("\n5\t"))+1])
	head = strings.Replace(head, "urls=6", "urls=1", 1)
	for _, c := range []struct{ fields, bad string }{
		{"-\t-\t-", ""},
		{"<urn:uuid:x>\t2026-11-22T02:03:29Z\tsha1:AB", ""},
		{"<urn:uuid:x>\t-\t-", "date"},
		{"-\t2026-11-22T02:03:29Z\tsha1:AB", "record id"},
		{"<urn:uuid:x>\t2026-11-22T02:03:29Z\t-", "payload digest"},
		{"<urn:uuid:x>\t2026-11-22T02:03:29+01:00\tsha1:AB", "WARC-Date"},
		{"urn:uuid:x\t2026-11-22T02:03:29Z\tsha1:AB", "angle brackets"},
		{"\t\t", "for none"},
		{"-\t-", "fields"},
	} {
		_, got, err := Read(strings.NewReader(head + line + c.fields + "\n"))
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%q: %v", c.fields, err)
		case c.bad != "" && (!errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), "line 8")):
			t.Errorf("%q: error %v, want ErrFormat at line 8 about %q", c.fields, err, c.bad)
		case c.bad == "" && len(got) != 1:
			t.Errorf("%q: %d entries", c.fields, len(got))
		}
	}
	// A version 3 file with the capture columns is damage.
	v3 := bytes.Replace(data, []byte(Magic+" 4"), []byte(Magic+" 3"), 1)
	if _, _, err := Read(bytes.NewReader(v3)); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "columns") {
		t.Errorf("capture columns in version 3: %v", err)
	}
}

// FuzzBatchRead checks that Read never panics, reports every failure as
// ErrFormat (or ErrVersion), and that what it accepts writes back to a
// file it reads the same way.
func FuzzBatchRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.tsv"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("# wire-batch 1\n# columns: docid site score depth kind url\n"))
	f.Add([]byte("# wire-batch 2\n"))
	f.Add([]byte("# wire-batch 4\n# batch: 1\n# columns: docid site score depth kind url last_modified etag refers_to refers_to_date payload_digest\n1\thttp://a.cl\t1\t0\trevisit\thttp://a.cl/\t-\t-\t<urn:uuid:x>\t2026-11-22T02:03:12.5Z\tsha1:AB\n"))
	// Found by this fuzzer: Read took a URL with a carriage return inside,
	// which Write refuses to write.
	f.Add([]byte("# wire-batch 1\n# batch: 1\n# columns: docid site score depth kind url\n1\thttp://a.cl\t1\t0\tnew\thttp://a.cl/\rx\n"))
	// CRLF line ends are read as LF.
	f.Add([]byte("# wire-batch 1\r\n# batch: 1\r\n# columns: docid site score depth kind url\r\n1\thttp://a.cl\t1\t0\tnew\thttp://a.cl/\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, entries, err := Read(bytes.NewReader(data))
		if err != nil {
			// Found by this fuzzer (testdata/fuzz/FuzzBatchRead): a
			// newer version is ErrVersion, the one error that is not
			// damage.
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrVersion", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, h, entries); err != nil {
			t.Fatalf("write back what was read: %v", err)
		}
		h2, entries2, err := Read(&buf)
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, buf.Bytes())
		}
		if h2.Batch != h.Batch || h2.Strategy != h.Strategy || len(entries2) != len(entries) {
			t.Fatalf("header %+v read back as %+v", h, h2)
		}
		for i, e := range entries {
			e.Score, _ = strconv.ParseFloat(strconv.FormatFloat(e.Score, 'g', 6, 64), 64)
			if e2 := entries2[i]; e2 != e && !(e.Score != e.Score && e2.Score != e2.Score) {
				t.Fatalf("entry %d: %+v read back as %+v", i, e, e2)
			}
		}
	})
}

// TestValidatorsRoundTrip: version 2 carries the validators of the last
// visit for a conditional GET.
func TestValidatorsRoundTrip(t *testing.T) {
	e := []Entry{
		{DocID: 1, Site: "http://a.cl", Score: 1, Kind: KindRevisit, URL: "http://a.cl/", LastModified: "Mon, 02 Jan 2026 15:04:05 GMT", ETag: `W/"abc 1"`},
		{DocID: 2, Site: "http://a.cl", Score: 0.5, Depth: 1, Kind: KindNew, URL: "http://a.cl/x", ETag: "bad\ttab"},
	}
	var b bytes.Buffer
	if err := Write(&b, Header{Batch: 3, Created: time.Unix(0, 0), Counts: map[string]int{"urls": 2}}, e); err != nil {
		t.Fatal(err)
	}
	_, got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].LastModified != e[0].LastModified || got[0].ETag != e[0].ETag || got[1].LastModified != "" || got[1].ETag != "badtab" {
		t.Errorf("validators: %+v", got)
	}
}

// BenchmarkRead reads a batch of 20,000 entries (the harvester's start).
func BenchmarkRead(b *testing.B) {
	var entries []Entry
	for i := 1; i <= 20000; i++ {
		site := fmt.Sprintf("http://www.site%d.cl", i%1500)
		entries = append(entries, Entry{DocID: uint64(i), Site: site, Score: float64(i) / 7, Depth: i % 5, Kind: KindNew, URL: fmt.Sprintf("%s/page/%d.html", site, i)})
	}
	var buf bytes.Buffer
	if err := Write(&buf, Header{Batch: 1, Created: time.Now(), Counts: map[string]int{"urls": len(entries)}}, entries); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, got, err := Read(bytes.NewReader(buf.Bytes())); err != nil || len(got) != len(entries) {
			b.Fatalf("%d entries, %v", len(got), err)
		}
	}
}

// TestCountMismatch: a file with lines missing is reported as truncated,
// one with a line too many as such (it used to say "truncated?" too),
// and a long bad line is echoed cut.
func TestCountMismatch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v2.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	last := lines[len(lines)-2]
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"missing", bytes.Join(lines[:len(lines)-2], nil), "header says 6 urls, file has 5 (1 lines missing: truncated?)"},
		{"extra", append(append([]byte{}, data...), last...), "header says 6 urls, file has 7 (1 lines more than the header counts: lines added or the header edited)"},
		{"long line", append(append([]byte{}, data...), bytes.Repeat([]byte("x\x1b"), 30000)...), `"x\x1bx\x1b`},
	} {
		path := filepath.Join(dir, tc.name+".tsv")
		os.WriteFile(path, tc.data, 0o644)
		_, _, err := ReadFile(path)
		if err == nil || !errors.Is(err, ErrFormat) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) || len(err.Error()) > 500 {
			t.Errorf("%s: %.600v, want %q", tc.name, err, tc.want)
		}
	}
}

// A newer version is ErrVersion, not damage; a version that is no number
// is damage.
func TestVersionError(t *testing.T) {
	_, _, err := Read(strings.NewReader(Magic + " 5\n"))
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "version 5") {
		t.Errorf("version 5: %v, want ErrVersion", err)
	}
	_, _, err = Read(strings.NewReader(Magic + " x\n"))
	if !errors.Is(err, ErrFormat) {
		t.Errorf("version x: %v, want ErrFormat", err)
	}
}
