package warcio_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestHarvesterFixture reads testdata/harvest/, a WARC file and its fetch
// log as the harvester wrote them (pkg/harvester TestWriteWARCFixture,
// -update-fixture): every record the log points at must keep reading,
// with its status, its body (a gzip-encoded page decoded) and its
// redirect; the file must be a valid series of gzip members (one per
// record, WARC/1.1).
func TestHarvesterFixture(t *testing.T) {
	dir := filepath.Join("testdata", "harvest")
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d fetch log lines, want 4", len(recs))
	}
	want := map[string]struct {
		status int
		body   string
	}{
		"/":        {200, "<html><body>home a</body></html>"},
		"/gz":      {200, "<html><body>gzip page</body></html>"},
		"/moved":   {301, ""},
		"/missing": {404, "404 page not found\n"},
	}
	r := warcio.NewReader()
	defer r.Close()
	for _, rec := range recs {
		path := rec.URL[strings.Index(rec.URL[len("http://"):], "/")+len("http://"):]
		w, ok := want[path]
		if !ok {
			t.Fatalf("unexpected URL %s", rec.URL)
		}
		resp, err := r.ReadResponse(filepath.Join(dir, rec.WARC), rec.Offset, rec.Length, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", rec.URL, err)
		}
		if resp.URL != rec.URL || resp.Status != w.status || string(resp.Body) != w.body || resp.Status != rec.Status {
			t.Errorf("%s: %s %d %q, want %d %q", rec.URL, resp.URL, resp.Status, resp.Body, w.status, w.body)
		}
		if path == "/moved" && rec.Location != "/" {
			t.Errorf("redirect logged to %q", rec.Location)
		}
	}
	// The file is a series of gzip members of WARC/1.1 records.
	data, err := os.ReadFile(filepath.Join(dir, recs[0].WARC))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(plain), "WARC/1.1\r\n"); n < 5 {
		t.Errorf("%d WARC/1.1 records, want the robots.txt and the four URLs' at least", n)
	}
}
