package harvester_test

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// updateFixture rewrites pkg/warcio/testdata/harvest/ (go test
// ./pkg/harvester -run TestWriteWARCFixture -update-fixture): a WARC file
// and its fetch log as this harvester writes them, which
// pkg/warcio's TestHarvesterFixture reads. Only when the WARC writing
// changes on purpose: the files are the frozen sample.
var updateFixture = flag.Bool("update-fixture", false, "rewrite pkg/warcio/testdata/harvest/")

// TestWriteWARCFixture harvests a small web (an HTML page, a gzip-encoded
// page, a 404, a redirect, robots.txt) and, with -update-fixture, keeps
// its WARC file and fetch log as pkg/warcio's fixture.
func TestWriteWARCFixture(t *testing.T) {
	if !*updateFixture {
		t.Skip("writes the WARC fixture only with -update-fixture")
	}
	web := ht.Start(t, &ht.Host{Name: "a.test", Robots: robotsPage("User-agent: *\nDisallow: /private\n"), Pages: map[string]*ht.Page{
		"/":      html("home a"),
		"/gz":    {Body: []byte("<html><body>gzip page</body></html>"), Gzip: true},
		"/moved": {Status: 301, Header: map[string][]string{"Location": {"/"}}},
	}})
	urls := []string{web.URL("a.test", "/"), web.URL("a.test", "/gz"), web.URL("a.test", "/moved"), web.URL("a.test", "/missing")}
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: web.Config(10 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("..", "warcio", "testdata", "harvest")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	harvest := filepath.Join(dir, collection.HarvestDir)
	recs, err := fetchlog.ReadFile(filepath.Join(harvest, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{fetchlog.LogFile: true}
	for _, r := range recs {
		if r.WARC != "" {
			copied[r.WARC] = true
		}
	}
	for name := range copied {
		copyFile(t, filepath.Join(harvest, name), filepath.Join(out, name))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
