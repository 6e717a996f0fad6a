// Package gathertest builds harvested batches for the gatherer's tests:
// real WARC files written with pkg/warcio and a fetch log written with
// pkg/fetchlog, as the harvester leaves them.
package gathertest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Page is one URL of a batch and what the harvester got for it.
type Page struct {
	DocID    uint64
	URL      string
	Status   int         // 0 with Err: no response
	Header   http.Header // response headers as stored
	Body     []byte      // response body as stored
	Err      string      // fetch error: no WARC record is written
	Location string      // fetch log location column (3xx)
	Damage   bool        // point the fetch log a few bytes into the record
	Kind     string      // batch entry kind; "" is batch.KindNew
	// Previous is the URL's stored capture, as the batch gives it to the
	// harvester: a 2xx whose body has its payload digest is written as
	// an identical-payload-digest revisit record.
	Previous capture.Capture
	// At is when the page was fetched; zero is Fetched plus a second per
	// page before it in the batch.
	At time.Time
}

// Fetched is the fetch time every page gets.
var Fetched = time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)

// Harvest writes dir/harvest/ (one WARC file and fetch.log) for pages, in
// their order.
func Harvest(t testing.TB, dir string, pages []Page) {
	t.Helper()
	hdir := filepath.Join(dir, collection.HarvestDir)
	if err := os.MkdirAll(hdir, 0o755); err != nil {
		t.Fatal(err)
	}
	const warcName = "wire-00001.warc.gz"
	w, err := warcio.Create(filepath.Join(hdir, warcName))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	log.WriteString(fetchlog.Header())
	for i, p := range pages {
		rec := fetchlog.Record{DocID: p.DocID, URL: p.URL, Status: p.Status, Bytes: int64(len(p.Body)), Fetched: Fetched.Add(time.Duration(i) * time.Second),
			Millis: 12, Location: p.Location, Err: p.Err}
		if !p.At.IsZero() {
			rec.Fetched = p.At
		}
		if p.Header != nil {
			rec.MIME = strings.ToLower(strings.TrimSpace(strings.Split(p.Header.Get("Content-Type"), ";")[0]))
		}
		if p.Err == "" {
			h := p.Header
			if h == nil {
				h = http.Header{}
			}
			off, n, err := w.Write(&warcio.Exchange{URL: p.URL, Date: rec.Fetched, IP: "127.0.0.1",
				Request:    []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
				StatusLine: fmt.Sprintf("HTTP/1.1 %d %s", p.Status, http.StatusText(p.Status)), Header: h, Body: p.Body, Previous: p.Previous})
			if err != nil {
				t.Fatal(err)
			}
			rec.WARC, rec.Offset, rec.Length = warcName, off, n
			if p.Damage {
				rec.Offset += 7
				rec.Length -= 7
			}
		}
		log.WriteString(rec.Format())
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.WriteFile(filepath.Join(hdir, fetchlog.LogFile), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Batch makes batch id of col with pages: its batch file, its harvest
// output and its harvested.done marker.
func Batch(t testing.TB, col *collection.Collection, id int, pages []Page) *collection.Batch {
	t.Helper()
	b := col.Batch(id)
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries := make([]batch.Entry, len(pages))
	for i, p := range pages {
		kind := p.Kind
		if kind == "" {
			kind = batch.KindNew
		}
		entries[i] = batch.Entry{DocID: p.DocID, Site: urlnorm.SiteKey(p.URL), Score: 1, Depth: 0, Kind: kind, URL: p.URL, Capture: p.Previous}
	}
	f, err := os.Create(b.File())
	if err != nil {
		t.Fatal(err)
	}
	h := batch.Header{Batch: id, Created: Fetched, Strategy: "breadth-first", Params: map[string]string{}, Counts: map[string]int{"urls": len(pages)}}
	if err := batch.Write(f, h, entries); err != nil {
		t.Fatal(err)
	}
	f.Close()
	Harvest(t, b.Dir, pages)
	if err := b.MarkDone(collection.StageHarvested, map[string]int{"pages": len(pages)}); err != nil {
		t.Fatal(err)
	}
	return b
}
