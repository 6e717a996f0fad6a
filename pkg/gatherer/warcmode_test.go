package gatherer

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// harvestIn harvests urls as batch 1 of a new collection with cfg and
// returns the batch.
func harvestIn(t *testing.T, cfg config.Config, urls []string) (*collection.Collection, *collection.Batch) {
	t.Helper()
	col := newCollection(t)
	b := col.Batch(1)
	ht.WriteBatch(t, b.Dir, 1, ht.Entries(urls...))
	sum, err := harvester.RunDir(context.Background(), b.Dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", cfg.Harvester.WARCMode, sum)
	return col, b
}

// TestWARCModesGatherAlike harvests the same pages of the test web — a
// share of its sites compressing (gzip, br), a share chunking, some in
// ISO-8859-1 — once in each harvester.warc_mode, and gathers both: the
// documents are the same but for their fetch time and their response
// record's capture (id, date, payload digest), the raw harvest holding
// bodies the gatherer decoded itself.
func TestWARCModesGatherAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("harvests the test web twice")
	}
	web, err := testweb.New(testweb.Config{Seed: 4, Hosts: 8, MaxPages: 15, OutOfScope: -1, CompressShare: 0.6, ChunkedShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	inScope := map[string]bool{}
	for _, h := range web.HostNames() {
		inScope[h] = true
	}
	var urls []string
	for _, u := range web.URLs() {
		if p, err := url.Parse(u); err == nil && inScope[p.Hostname()] {
			urls = append(urls, u)
		}
	}
	sort.Strings(urls)

	docs := map[string]map[uint64]*parsed.Doc{}
	for _, mode := range config.WARCModes() {
		cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(5 * time.Millisecond)
		cfg.Harvester.Connections = 16
		cfg.Harvester.MaxCrawlDelay = config.Duration(10 * time.Millisecond) // some sites ask for a second
		cfg.Harvester.WARCMode = mode
		col, b := harvestIn(t, cfg, urls)
		encoded, chunked := codings(t, b)
		var size int64
		warcs, _ := filepath.Glob(filepath.Join(b.HarvestPath(), "*.warc.gz"))
		for _, w := range warcs {
			if st, err := os.Stat(w); err == nil {
				size += st.Size()
			}
		}
		t.Logf("%s: %d responses stored with a content coding, %d sent chunked; WARC files of %d bytes", mode, encoded, chunked, size)
		if mode == config.WARCModeRaw && (encoded == 0 || chunked == 0) || mode == config.WARCModeDecoded && encoded != 0 {
			t.Fatalf("%s harvest: %d encoded bodies, %d chunked answers", mode, encoded, chunked)
		}
		o := options(t, col, b, 2)
		o.Salvage = false
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		docs[mode] = map[uint64]*parsed.Doc{}
		for _, d := range readDocs(t, b) {
			// The fields that must differ: when the page was fetched, and
			// the capture of its response record — a random record id,
			// the record's date, and its payload digest, the encoded
			// entity's in a raw record of a compressed page.
			if d.Status == 200 && d.Err == "" && d.PayloadDigest == "" {
				t.Errorf("%s: %s has no payload digest", mode, d.URL)
			}
			d.Fetched, d.RecordID, d.RecordDate, d.PayloadDigest = time.Time{}, "", "", ""
			docs[mode][d.DocID] = d
		}
	}
	raw, dec := docs[config.WARCModeRaw], docs[config.WARCModeDecoded]
	if len(raw) != len(urls) || len(dec) != len(urls) {
		t.Fatalf("%d and %d documents, want %d", len(raw), len(dec), len(urls))
	}
	html, legacy := 0, 0
	for id, d := range dec {
		if !reflect.DeepEqual(raw[id], d) {
			t.Errorf("document %d differs:\nraw     %+v\ndecoded %+v", id, raw[id], d)
		}
		if d.Hash != "" {
			html++
		}
		if d.Charset != "" && d.Charset != "utf-8" {
			legacy++
		}
	}
	if html < len(urls)/2 || legacy == 0 {
		t.Errorf("%d of %d documents are HTML with text, %d not in UTF-8: want most, and some", html, len(urls), legacy)
	}
}

// codings counts the page responses of a harvest stored with a
// Content-Encoding, and those that came chunked (metadata
// transferEncoding).
func codings(t *testing.T, b *collection.Batch) (encoded, chunked int) {
	t.Helper()
	dir := b.HarvestPath()
	f, err := os.Open(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := fetchlog.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	rd := warcio.NewReader()
	defer rd.Close()
	for _, r := range recs {
		if r.WARC == "" || r.Status != 200 {
			continue
		}
		resp, err := rd.ReadResponse(filepath.Join(dir, r.WARC), r.Offset, r.Length, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Encoding") != "" {
			encoded++
		}
		meta, err := warcio.ReadMetadata(filepath.Join(dir, r.WARC), r.Offset+r.Length)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range meta {
			if f.Name == "transferEncoding" && f.Value == "chunked" {
				chunked++
			}
		}
	}
	return encoded, chunked
}

// TestGzipBombGathered: a gzip bomb (100 MB of zeros in about 100 KB)
// and a brotli bomb (100 MB in a few hundred bytes) harvested in each
// harvester.warc_mode are gathered as max_body_bytes of decoded bytes:
// stored decoded and cut by the harvester in decoded mode, stored as
// their first compressed bytes in raw mode and cut by the gatherer as it
// decodes them, with the heap bounded either way.
func TestGzipBombGathered(t *testing.T) {
	web := ht.Start(t,
		&ht.Host{Name: "bomb.test", Pages: map[string]*ht.Page{"/gzip": ht.GzipBomb(100 << 20), "/br": ht.BrotliBomb(100 << 20)}},
		&ht.Host{Name: "ok.test", Pages: map[string]*ht.Page{"/": {Body: []byte("<title>ok</title><p>fine</p>"), Header: http.Header{"Content-Type": {"text/html"}}, Gzip: true}}},
	)
	for _, coding := range []string{"gzip", "br"} {
		for _, mode := range config.WARCModes() {
			t.Run(coding+"/"+mode, func(t *testing.T) {
				cfg := web.Config(5 * time.Millisecond)
				cfg.Harvester.WARCMode = mode
				cfg.Harvester.MaxBodyBytes = 64 << 10
				bomb, ok := web.URL("bomb.test", "/"+coding), web.URL("ok.test", "/")
				col, b := harvestIn(t, cfg, []string{bomb, ok})
				o := options(t, col, b, 2)
				o.MaxBodyBytes = cfg.Harvester.MaxBodyBytes
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				s, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				byURL := map[string]*parsed.Doc{}
				for _, d := range readDocs(t, b) {
					byURL[d.URL] = d
				}
				if d := byURL[bomb]; d.Err != "" || d.Bytes != o.MaxBodyBytes || d.Status != 200 {
					t.Errorf("bomb: %+v", d)
				}
				if d := byURL[ok]; d.Title != "ok" || d.Err != "" {
					t.Errorf("ok page: %+v", d)
				}
				if s.BytesIn > o.MaxBodyBytes+100 {
					t.Errorf("the gatherer took in %d bytes, cap %d", s.BytesIn, o.MaxBodyBytes)
				}
				if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
					t.Errorf("the gathering allocated %d MiB", grown>>20)
				}
			})
		}
	}
}
