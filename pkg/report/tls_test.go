package report

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestTLSSites: the https sites are counted by the certificate verdict
// of their latest harvest, read from the pages' WARC metadata records.
func TestTLSSites(t *testing.T) {
	col := newCollection(t)
	write := func(id int, pages map[string][]warcio.Field) {
		dir := col.Batch(id).HarvestPath()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var recs []fetchlog.Record
		for k, u := range []string{"https://a.cl/", "https://a.cl/x", "https://b.cl/", "https://c.cl/", "http://d.cl/"} {
			meta, ok := pages[u]
			if !ok {
				continue
			}
			name := fmt.Sprintf("data-%05d.warc.gz", k)
			w, err := warcio.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			off, n, err := w.Write(&warcio.Exchange{URL: u, Date: t0, Request: []byte("GET / HTTP/1.1\r\n\r\n"), StatusLine: "HTTP/1.1 200 OK",
				Header: http.Header{}, Body: []byte("x"), Metadata: meta})
			if err != nil || w.Close() != nil {
				t.Fatal(err)
			}
			recs = append(recs, fetchlog.Record{URL: u, Status: 200, MIME: "text/html", Fetched: t0, WARC: name, Offset: off, Length: n})
		}
		harvest(t, col, id, t0.Add(time.Duration(id)*time.Hour), 1, recs)
	}
	valid := []warcio.Field{{Name: warcio.MetaTLSProtocol, Value: "TLS 1.3"}, {Name: warcio.MetaTLSCertValid, Value: "true"}}
	broken := func(p string) []warcio.Field {
		return []warcio.Field{{Name: warcio.MetaTLSCertValid, Value: "false"}, {Name: warcio.MetaTLSCertProblem, Value: p}}
	}
	write(4, map[string][]warcio.Field{
		"https://a.cl/": broken("expired: not after 2025-01-01T00:00:00Z"), "https://b.cl/": broken("self-signed"),
		"https://c.cl/": valid, "http://d.cl/": {{Name: "fetchTimeMs", Value: "1"}},
	})
	// Later: a.cl's certificate was renewed.
	write(5, map[string][]warcio.Field{"https://a.cl/x": valid})
	d, err := Collect(context.Background(), col, Options{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := TLSSites{Sites: 3, Broken: 1, Problems: []Count{{Label: "self-signed", N: 1}}}
	if !reflect.DeepEqual(d.TLS, want) {
		t.Errorf("TLS %+v, want %+v", d.TLS, want)
	}
	var out strings.Builder
	if err := d.Render(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "<b>1</b>of 3 https sites with a broken certificate · self-signed 1") {
		t.Error("the report has no TLS tile")
	}
}
