package harvester_test

import (
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata/ (harvest.cdxj, *-gzip-chunked.warc)")

// TestCDXJGolden harvests a small web from a loopback server — robots.txt,
// a page, a gzip-encoded page, a redirect, a 404 and a 304 answer to a
// conditional revisit — and compares the index published beside the WARC
// file with testdata/harvest.cdxj, once the port, the times, the offsets
// and lengths and the file name (which change from run to run) are
// replaced by placeholders. Every line points at a record that reads
// back at its offset and length, with its URL and status.
func TestCDXJGolden(t *testing.T) {
	notModified := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write([]byte("<html>changed</html>"))
	}
	web := ht.Start(t, &ht.Host{Name: "www.a.test", Robots: robotsPage("User-agent: *\nDisallow: /private\n"), Pages: map[string]*ht.Page{
		"/":            html("home a"),
		"/gz?b=2&a=1":  {Body: []byte("<html><body>gzip page</body></html>"), Gzip: true},
		"/moved/":      {Status: 301, Header: http.Header{"Location": {"/"}}},
		"/same":        {Handler: notModified},
		"/plain.txt":   {Body: []byte("text"), Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
		"/private/not": html("never"),
	}})
	u := web.URL
	entries := ht.Entries(u("www.a.test", "/"), u("www.a.test", "/gz?b=2&a=1"), u("www.a.test", "/moved/"), u("www.a.test", "/missing"),
		u("www.a.test", "/plain.txt"), u("www.a.test", "/private/not"))
	entries = append(entries, batch.Entry{DocID: 100, Site: web.Site("www.a.test"), Score: 0.5, Kind: batch.KindRevisit, URL: u("www.a.test", "/same"), ETag: `"v1"`})
	dir := filepath.Join(t.TempDir(), "000003")
	ht.WriteBatch(t, dir, 3, entries)
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: web.Config(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.WARCFiles) != 1 {
		t.Fatalf("WARC files %v, want one", sum.WARCFiles)
	}
	hdir := filepath.Join(dir, collection.HarvestDir)
	warc := sum.WARCFiles[0]
	path := filepath.Join(hdir, cdxj.IndexName(warc))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := cdxj.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		resp, err := warcio.ReadResponse(filepath.Join(hdir, l.Filename), l.Offset, l.Length, 1<<20)
		status := resp.Status
		if resp.Revisit {
			status = 0 // a revisit's line has no status, as pywb writes it
		}
		if err != nil || resp.URL != l.URL || status != l.Status || resp.Revisit != (l.MIME == cdxj.MIMERevisit) {
			t.Errorf("%s: record at %d+%d: %+v, %v", l.URL, l.Offset, l.Length, resp, err)
		}
	}
	checkWARCs(t, hdir)
	recs := readLog(t, hdir)
	if r := recs[u("www.a.test", "/same")]; r.Status != 304 {
		t.Fatalf("the revisit was answered %d, want 304", r.Status)
	}

	normal := regexp.MustCompile(`:`+web.Port+`\b`).ReplaceAll(data, []byte(":PORT"))
	normal = regexp.MustCompile(` \d{14} `).ReplaceAll(normal, []byte(" TIMESTAMP "))
	normal = regexp.MustCompile(`"(length|offset)": "\d+"`).ReplaceAll(normal, []byte(`"$1": "N"`))
	normal = regexp.MustCompile(regexp.QuoteMeta(warc)).ReplaceAll(normal, []byte("WARC"))
	golden := filepath.Join("testdata", "harvest.cdxj")
	if *updateGolden {
		if err := os.WriteFile(golden, normal, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(normal) != string(want) {
		t.Errorf("index (normalised):\n%s\nwant (%s):\n%s", normal, golden, want)
	}
	if got := len(lines); got != 7 {
		t.Errorf("%d index lines, want robots.txt and the six pages asked for", got)
	}
}
