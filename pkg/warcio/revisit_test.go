package warcio

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
)

var update = flag.Bool("update", false, "rewrite testdata/revisits.golden")

// revisitCases are the exchanges of a recrawl of one URL whose stored
// capture is known (or not): the four ways its response record is
// written.
func revisitCases(prev capture.Capture) []struct {
	name string
	x    *Exchange
} {
	same := exchange("http://a.cl/", []byte("<html><title>x</title>hola</html>"))
	same.Previous = prev
	changed := exchange("http://a.cl/", []byte("<html><title>x</title>hola de nuevo</html>"))
	changed.Previous = prev
	notModified := exchange("http://a.cl/", nil)
	notModified.StatusLine = "HTTP/1.1 304 Not Modified"
	notModified.Header = http.Header{"Etag": {`"abc"`}, "Last-Modified": {"Mon, 02 Nov 2026 15:04:05 GMT"}}
	notModified.Previous = prev
	oldBatch := exchange("http://a.cl/", nil)
	oldBatch.StatusLine, oldBatch.Header = notModified.StatusLine, notModified.Header
	truncated := exchange("http://a.cl/", same.Body)
	truncated.Previous, truncated.Truncated = prev, "length"
	notFound := exchange("http://a.cl/", same.Body)
	notFound.Previous, notFound.StatusLine = prev, "HTTP/1.1 404 Not Found"
	return []struct {
		name string
		x    *Exchange
	}{
		{"identical-payload-digest", same},
		{"server-not-modified", notModified},
		{"changed", changed},
		{"server-not-modified, no capture known", oldBatch},
		{"same payload, truncated", truncated},
		{"same payload, 404", notFound},
	}
}

var uuidRE = regexp.MustCompile(`<urn:uuid:[0-9a-f-]{36}>`)

// TestRevisitGolden: the WARC headers of both revisit kinds (WARC 1.1
// §6.7.1, §6.7.2) and of the responses that are not revisits, against
// testdata/revisits.golden (record ids replaced by their order of
// appearance); every record validates with gowarc in strict mode,
// digests included, and reads back as a revisit or a response.
func TestRevisitGolden(t *testing.T) {
	dir := t.TempDir()
	// The stored capture: the response record of the first crawl.
	first := exchange("http://a.cl/", []byte("<html><title>x</title>hola</html>"))
	enc, err := Encode(first)
	if err != nil {
		t.Fatal(err)
	}
	firstPath := filepath.Join(dir, "first.warc.gz")
	if err := os.WriteFile(firstPath, enc.buf.Bytes()[enc.respOff:enc.respOff+enc.respLen], 0o644); err != nil {
		t.Fatal(err)
	}
	enc.Release()
	stored, err := ReadResponse(firstPath, 0, int64(len(mustRead(t, firstPath))), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	prev := stored.Capture()
	if prev.IsZero() || prev.Check() != nil || !prev.Date.Equal(first.Date) {
		t.Fatalf("capture of the first response: %+v (%v)", prev, prev.Check())
	}

	var golden bytes.Buffer
	path := filepath.Join(dir, "recrawl.warc.gz")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	wantProfile := []string{ProfileIdenticalPayloadDigest, ProfileServerNotModified, "", ProfileServerNotModified, "", ""}
	for i, c := range revisitCases(prev) {
		c.x.Date = time.Unix(1700086400, 0)
		enc, err := Encode(c.x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if enc.Revisit() != wantProfile[i] {
			t.Errorf("%s: stored with profile %q, want %q", c.name, enc.Revisit(), wantProfile[i])
		}
		off, n, err := w.Append(enc)
		if err != nil {
			t.Fatal(err)
		}
		rec := gunzip(t, enc.buf.Bytes()[enc.respOff:enc.respOff+enc.respLen])
		head, _, _ := bytes.Cut(rec, []byte("\r\n\r\n"))
		fmt.Fprintf(&golden, "# %s\n%s\n\n", c.name, head)
		enc.Release()
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		r, err := ReadResponse(path, off, n, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Revisit != (wantProfile[i] != "") || r.Profile != wantProfile[i] {
			t.Errorf("%s: read back as revisit %v, profile %q", c.name, r.Revisit, r.Profile)
		}
		if r.Revisit && len(r.Body) != 0 {
			t.Errorf("%s: a revisit with a body of %d bytes", c.name, len(r.Body))
		}
		if wantProfile[i] != "" && c.name != "server-not-modified, no capture known" {
			if r.RefersTo != prev.ID || r.PayloadDigest != prev.Digest || !r.Capture().IsZero() {
				t.Errorf("%s: refers to %s, payload digest %s, capture %+v; want %s, %s and none", c.name, r.RefersTo, r.PayloadDigest, r.Capture(), prev.ID, prev.Digest)
			}
		}
		if wantProfile[i] == "" && (r.Capture().IsZero() || r.Capture().ID == prev.ID) {
			t.Errorf("%s: a response record whose capture is %+v", c.name, r.Capture())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	infos, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2*6 { // a request and a response (or revisit) each
		t.Errorf("%d records, want 12", len(infos))
	}

	got := []byte(replaceIDs(golden.String(), prev.ID))
	file := filepath.Join("testdata", "revisits.golden")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("revisit headers differ from %s (go test -update rewrites it):\n%s", file, got)
	}
}

// replaceIDs replaces record ids by <urn:uuid:ID-n> in order of
// appearance, the stored capture's by <urn:uuid:FIRST-CRAWL>.
func replaceIDs(s, first string) string {
	s = strings.ReplaceAll(s, first, "<urn:uuid:FIRST-CRAWL>")
	ids := map[string]string{}
	return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("<urn:uuid:ID-%d>", len(ids)+1)
		}
		return ids[id]
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeRefusesBadCapture: a previous capture that WARC headers
// cannot carry is a BuildError naming it, not a record.
func TestEncodeRefusesBadCapture(t *testing.T) {
	x := exchange("http://a.cl/", []byte("x"))
	x.Previous = capture.Capture{ID: "<urn:uuid:a b>", Date: time.Unix(1, 0), Digest: "sha1:AA"}
	_, err := Encode(x)
	if be, ok := err.(*BuildError); !ok || !strings.Contains(be.Reason, "previous capture") {
		t.Errorf("Encode with a bad capture: %v", err)
	}
}
