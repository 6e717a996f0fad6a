package harvester_test

import (
	"context"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestRevisitRecords: two harvests of the same pages, the second with the
// first's captures in its batch (version 4), as the manager writes them.
// A 304 is a server-not-modified revisit and a 200 with the stored
// payload (a server without validators, a gzip-encoded one) an
// identical-payload-digest revisit, both referring to the first
// harvest's response record (WARC-Refers-To, -Refers-To-Date,
// -Payload-Digest: WARC 1.1 §6.7); a page that changed, and one whose
// capture the batch does not carry, are stored whole. The fetch log keeps
// the status the server sent; the index marks the revisits.
func TestRevisitRecords(t *testing.T) {
	var version atomic.Int32 // the version of /changed
	etagged := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Write([]byte("<html><title>etag</title>same</html>"))
	}
	changing := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html><title>changed</title>version " + string(rune('0'+version.Load())) + "</html>"))
	}
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{
		"/not-modified": {Handler: etagged},
		"/same":         {Body: []byte("<html><title>same</title>no validators</html>")},
		"/gzip":         {Body: []byte("<html><title>gzip</title>compressed, the same</html>"), Gzip: true},
		"/changed":      {Handler: changing},
		"/unknown":      {Body: []byte("<html><title>unknown</title>no capture in the batch</html>")},
	}})
	u := web.URL
	paths := []string{"/not-modified", "/same", "/gzip", "/changed", "/unknown"}
	var urls []string
	for _, p := range paths {
		urls = append(urls, u("a.test", p))
	}
	cfg := web.Config(0)
	root := t.TempDir()

	first := filepath.Join(root, "000001")
	ht.WriteBatch(t, first, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), first, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	firstOut := filepath.Join(first, "harvest")
	stored := map[string]*warcio.Response{}
	for url, r := range readLog(t, firstOut) {
		resp, err := warcio.ReadResponse(filepath.Join(firstOut, r.WARC), r.Offset, r.Length, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Revisit || resp.Capture().IsZero() {
			t.Fatalf("%s: first harvest stored %+v", url, resp)
		}
		stored[url] = resp
	}

	version.Store(1)
	entries := ht.Entries(urls...)
	for i := range entries {
		e := &entries[i]
		e.Kind = batch.KindRevisit
		if paths[i] == "/not-modified" {
			e.ETag = `"v1"`
		}
		if paths[i] != "/unknown" {
			e.Capture = stored[e.URL].Capture()
		}
	}
	second := filepath.Join(root, "000002")
	ht.WriteBatch(t, second, 2, entries)
	if _, err := harvester.RunDir(context.Background(), second, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(second, "harvest")
	checkWARCs(t, out)
	logged := readLog(t, out)
	index := map[int64]cdxj.Line{}
	for _, r := range logged {
		lines, err := cdxj.ReadFile(filepath.Join(out, cdxj.IndexName(r.WARC)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			index[l.Offset] = l
		}
		break // one WARC file
	}
	for _, c := range []struct {
		path    string
		status  int
		profile string // "" for a response record
	}{
		{"/not-modified", 304, warcio.ProfileServerNotModified},
		{"/same", 200, warcio.ProfileIdenticalPayloadDigest},
		{"/gzip", 200, warcio.ProfileIdenticalPayloadDigest},
		{"/changed", 200, ""},
		{"/unknown", 200, ""},
	} {
		url := u("a.test", c.path)
		r := logged[url]
		resp, err := warcio.ReadResponse(filepath.Join(out, r.WARC), r.Offset, r.Length, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		prev := stored[url].Capture()
		if r.Status != c.status || !r.OK() || resp.Status != c.status || resp.Profile != c.profile || resp.Revisit != (c.profile != "") {
			t.Errorf("%s: logged %d (%s), stored status %d profile %q; want %d, %q", c.path, r.Status, r.Err, resp.Status, resp.Profile, c.status, c.profile)
		}
		line := index[r.Offset]
		if c.profile != "" {
			if resp.RefersTo != prev.ID || resp.PayloadDigest != prev.Digest || len(resp.Body) != 0 {
				t.Errorf("%s: refers to %s with digest %s and %d body bytes; want %s, %s and none", c.path, resp.RefersTo, resp.PayloadDigest, len(resp.Body), prev.ID, prev.Digest)
			}
			if line.MIME != cdxj.MIMERevisit || line.Status != 0 || "sha1:"+line.Digest != prev.Digest {
				t.Errorf("%s: index line %s", c.path, line.String())
			}
			continue
		}
		if resp.RefersTo != "" || len(resp.Body) == 0 || resp.Capture().IsZero() || resp.Capture().ID == prev.ID {
			t.Errorf("%s: stored as %+v, want a response record of its own", c.path, resp)
		}
		if c.path == "/changed" && resp.PayloadDigest == prev.Digest {
			t.Errorf("%s: the new version has the old payload digest", c.path)
		}
		if line.MIME != "text/html" {
			t.Errorf("%s: index line %s", c.path, line.String())
		}
	}
	// The fetch log counts the body bytes received, revisits included.
	if r := logged[u("a.test", "/same")]; r.Bytes == 0 {
		t.Errorf("/same: %+v, want the bytes received", r)
	}
}
