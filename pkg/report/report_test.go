package report

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
	"github.com/wirecrawl/wire/pkg/timescale"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.html")

var t0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

// newCollection builds a crawl of two sites whose PageRank is known by
// hand (damping 0.85):
//
//	1 http://a.cl/   → 2, 3, 4   fetched first
//	2 http://a.cl/x  → 1         fetched third
//	3 http://b.cl/   → 1         fetched second
//	4 http://a.cl/y              pending (dangling)
//
// By symmetry PR(2) = PR(3) = PR(4) = q and PR(1) = p = 1 − 3q, with
// q = (1−d)/4 + d·q/4 + d·p/3, so q = 0.3208333/1.6375 = 0.195929 and
// p = 0.412214.
func newCollection(t *testing.T) *collection.Collection {
	t.Helper()
	col, err := collection.Create(t.TempDir(), []byte("\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	type page struct {
		url   string
		depth int
		first time.Duration // 0: not fetched
		links []uint32
		title string
	}
	pages := []page{
		{"http://a.cl/", 0, time.Nanosecond, []uint32{2, 3, 4}, "Home of A"},
		{"http://a.cl/x", 1, 2 * time.Second, []uint32{1, 2}, "X"}, // a self-link: stored, not in PageRank's graph
		{"http://b.cl/", 0, time.Second, []uint32{1}, "B"},
		{"http://a.cl/y", 1, 0, nil, ""},
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		for _, p := range pages {
			site, _, err := tx.AddSite(p.url[:strings.LastIndex(p.url, "/")])
			if err != nil {
				return err
			}
			id, _, err := tx.AddURL(p.url, site, p.depth, 0)
			if err != nil {
				return err
			}
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if p.first > 0 {
				d.State, d.Status, d.Title = linkgraph.StateFetched, 200, p.title
				d.FirstFetched = t0.Add(p.first)
				d.Fetched = d.FirstFetched
			}
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		for i, p := range pages {
			if len(p.links) > 0 {
				if err := tx.SetOutLinks(uint64(i+1), roaring.BitmapOf(p.links...)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	harvest(t, col, 1, t0.Add(1500*time.Millisecond), 2.5, []fetchlog.Record{
		{DocID: 1, URL: "http://a.cl/", Status: 200, Bytes: 1000, MIME: "text/html", Fetched: t0},
		{DocID: 3, URL: "http://b.cl/", Status: 200, Bytes: 2000, MIME: "text/html", Fetched: t0.Add(time.Second)},
		{DocID: 9, URL: "http://b.cl/private", Err: "robots", Fetched: t0},
		{DocID: 10, URL: "http://c.cl/", Err: "dns: no such host c.cl", Fetched: t0},
	})
	harvest(t, col, 2, t0.Add(10*time.Second), 1, []fetchlog.Record{
		{DocID: 2, URL: "http://a.cl/x", Status: 200, Bytes: 500, MIME: "text/html", Fetched: t0.Add(2 * time.Second)},
		{DocID: 11, URL: "http://a.cl/gone", Status: 404, Bytes: 100, MIME: "text/html", Fetched: t0.Add(3 * time.Second)},
		{DocID: 12, URL: "http://a.cl/f.pdf", Status: 200, Bytes: 3000, MIME: "application/pdf", Fetched: t0.Add(4 * time.Second)},
	})
	fp := func(x uint64) string { return fmt.Sprintf("%016x", x) }
	gather(t, col, 1, []*parsed.Doc{
		{DocID: 1, URL: "http://a.cl/", Status: 200, Fetched: t0, Bytes: 1000, MIME: "text/html", Charset: "windows-1252", Lang: "es-CL", DetectedLang: "es", LangConf: 90,
			LastModified: "Mon, 01 Jan 2024 00:00:00 GMT", Hash: "01", Simhash: fp(0xf0f0), TextBytes: 10,
			Links: []parsed.Link{{URL: "http://b.cl/"}, {URL: "http://www.gob.ar/"}, {URL: "https://x.com/a"}, {URL: "http://a.cl/x"}}},
		{DocID: 3, URL: "http://b.cl/", Status: 200, Fetched: t0.Add(time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "en", LangConf: 80, Hash: "02", Simhash: fp(0xff00ff), TextBytes: 10},
		{DocID: 20, URL: "http://m.cl/", Status: 200, Fetched: t0.Add(time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "03", Simhash: fp(0x1111), TextBytes: 10},
		{DocID: 21, URL: "http://m.cl/1", Status: 200, Fetched: t0.Add(time.Second), Bytes: 90000, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "04", Simhash: fp(0x2222), TextBytes: 10},
		{DocID: 22, URL: "http://m.cl/2", Status: 200, Fetched: t0.Add(time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "unknown", Hash: "05", Simhash: fp(0x4444), TextBytes: 10},
		{DocID: 9, URL: "http://b.cl/private", Err: "robots", Fetched: t0},
	})
	gather(t, col, 2, []*parsed.Doc{
		{DocID: 2, URL: "http://a.cl/x", Status: 200, Fetched: t0.Add(2 * time.Second), Bytes: 500, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "01", DuplicateOf: "http://a.cl/", Simhash: fp(0xf0f0), TextBytes: 10,
			Links: []parsed.Link{{URL: "http://www.gob.ar/otra"}}},
		{DocID: 30, URL: "http://espejo.cl/", Status: 200, Fetched: t0.Add(2 * time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "13", Simhash: fp(0x1113), TextBytes: 10},
		{DocID: 31, URL: "http://espejo.cl/1", Status: 200, Fetched: t0.Add(2 * time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "14", Simhash: fp(0x2223), TextBytes: 10},
		{DocID: 32, URL: "http://espejo.cl/2", Status: 200, Fetched: t0.Add(2 * time.Second), Bytes: 2000, MIME: "text/html", Charset: "utf-8", DetectedLang: "es", Hash: "15", Simhash: fp(0x4445), TextBytes: 10, LastModified: "Fri, 27 Nov 2026 00:00:00 GMT"},
		{DocID: 12, URL: "http://a.cl/f.pdf", Status: 200, Bytes: 3000, MIME: "application/pdf", Fetched: t0.Add(4 * time.Second)},
	})
	// A batch not harvested yet.
	if err := os.MkdirAll(col.Batch(3).Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(col.Batch(3).File(), []byte("# wire-batch 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return col
}

// gather writes a gathered batch's document records and marker.
func gather(t *testing.T, col *collection.Collection, id int, docs []*parsed.Doc) {
	t.Helper()
	b := col.Batch(id)
	if err := os.MkdirAll(b.ParsedPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := parsed.NewWriter(&out)
	for _, d := range docs {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(b.ParsedPath(), parsed.DocsFile), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.MarkDone(collection.StageGathered, map[string]any{"batch": id}); err != nil {
		t.Fatal(err)
	}
}

// harvest writes a harvested batch: batch file, fetch log and marker.
func harvest(t *testing.T, col *collection.Collection, id int, finished time.Time, rate float64, recs []fetchlog.Record) {
	t.Helper()
	b := col.Batch(id)
	if err := os.MkdirAll(b.HarvestPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.File(), []byte("# wire-batch 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	log.WriteString(fetchlog.Header())
	for _, r := range recs {
		log.WriteString(r.Format())
	}
	if err := os.WriteFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := map[string]any{"version": 1, "batch": id, "elapsed_seconds": 2, "pages_per_second": rate, "finished": finished}
	if err := b.MarkDone(collection.StageHarvested, marker); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

func TestCollect(t *testing.T) {
	col := newCollection(t)
	d, err := Collect(context.Background(), col, Options{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	const p, q = 0.412214, 0.195929
	if want := (Totals{Batches: 3, Known: 4, Fetched: 3, Pending: 1, Sites: 2, Links: 6, Bytes: 6600, Lines: 7, Seconds: 4}); d.Totals != want {
		t.Errorf("totals %+v, want %+v", d.Totals, want)
	}
	// The links tile and `seeder stats` count the same thing (issue 18:
	// they said 11,804 and 12,778, the report leaving self-links out).
	g, err := linkgraph.Open(col.GraphPath(), true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var st linkgraph.Stats
	err = g.View(func(tx *linkgraph.Tx) (err error) { st, err = tx.Stats(); return err })
	g.Close()
	if err != nil || int(st.Links) != d.Totals.Links || d.PageRank.Edges != 5 {
		t.Errorf("links: report %d, graph.db stats %d (%v); PageRank edges %d, want 5", d.Totals.Links, st.Links, err, d.PageRank.Edges)
	}
	if d.Unharvested != 1 || len(d.Batches) != 2 {
		t.Errorf("%d unharvested, batches %+v", d.Unharvested, d.Batches)
	}
	if b := d.Batches[0]; b.URLs != 4 || b.Fetched != 2 || b.Bytes != 3000 || b.PagesPerSecond != 2.5 {
		t.Errorf("batch 1 %+v", b)
	}
	checkXY(t, "site sizes (known)", d.SiteSizesKnown, []XY{{1, 1}, {3, 1}})
	checkXY(t, "site sizes (fetched)", d.SiteSizesFetched, []XY{{1, 1}, {2, 1}})
	checkXY(t, "in-degree", d.InDegree, []XY{{1, 3}, {2, 1}})
	checkXY(t, "out-degree", d.OutDegree, []XY{{1, 2}, {3, 1}})
	if d.ZeroIn != 0 || d.ZeroOut != 0 {
		t.Errorf("zero in %d, zero out %d", d.ZeroIn, d.ZeroOut)
	}
	if !equalInts(d.DepthKnown, []int{2, 2}) || !equalInts(d.DepthFetched, []int{2, 1}) {
		t.Errorf("depth known %v fetched %v", d.DepthKnown, d.DepthFetched)
	}
	wantStatus := []Count{{"200", 4}, {"404", 1}, {"no response: dns", 1}, {"robots.txt", 1}}
	if len(d.Statuses) != len(wantStatus) {
		t.Fatalf("statuses %v", d.Statuses)
	}
	for i, c := range wantStatus {
		if d.Statuses[i] != c {
			t.Errorf("status %d: %v, want %v", i, d.Statuses[i], c)
		}
	}
	if len(d.MIMEs) != 2 || d.MIMEs[0] != (Count{"text/html", 3}) || d.MIMEs[1] != (Count{"application/pdf", 1}) {
		t.Errorf("MIME types %v", d.MIMEs)
	}
	checkXY(t, "cumulative PageRank", d.Cumulative, []XY{{0, 0}, {1, p}, {2, p + q}, {3, p + 2*q}})
	if !near(d.PageRank.FetchedShare, p+2*q) || !d.PageRank.Converged || d.PageRank.Nodes != 4 || d.PageRank.Edges != 5 {
		t.Errorf("pagerank %+v", d.PageRank)
	}
	if len(d.BatchEnds) != 2 || d.BatchEnds[0] != 2 || d.BatchEnds[1] != 3 {
		t.Errorf("batch ends %v, want [2 3]", d.BatchEnds)
	}
	if len(d.TopPages) != 4 || d.TopPages[0].URL != "http://a.cl/" || !near(d.TopPages[0].Rank, p) || d.TopPages[0].Title != "Home of A" ||
		d.TopPages[0].Position != 1 || d.TopPages[0].InLinks != 2 || d.TopPages[1].URL != "http://a.cl/x" || d.TopPages[1].Position != 3 || d.TopPages[3].Position != 0 {
		t.Errorf("top pages %+v", d.TopPages)
	}
	if len(d.TopSites) != 2 || d.TopSites[0] != (SiteRow{"http://a.cl", d.TopSites[0].Rank, 3, 2}) || !near(d.TopSites[0].Rank, p+2*q) || !near(d.TopSites[1].Rank, q) {
		t.Errorf("top sites %+v", d.TopSites)
	}
	if d, err := Collect(context.Background(), col, Options{Top: 1}); err != nil || len(d.TopPages) != 1 || len(d.TopSites) != 1 {
		t.Errorf("Top 1: %v, %+v", err, d)
	}
}

// TestWeb: the national web's sections from the batches' records.
func TestWeb(t *testing.T) {
	d, err := Collect(context.Background(), newCollection(t), Options{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	w := d.Web
	if w.Pages != 9 || w.WithText != 9 || w.ExactDuplicates != 1 || w.NearDuplicates != 3 || w.NearGroups != 4 {
		t.Errorf("pages %d, with text %d, exact %d, near %d in %d groups", w.Pages, w.WithText, w.ExactDuplicates, w.NearDuplicates, w.NearGroups)
	}
	if len(w.Mirrors) != 1 || w.Mirrors[0] != (simhash.Mirror{Site: "espejo.cl", Of: "m.cl", Pages: 3, Shared: 3}) {
		t.Errorf("mirrors %+v", w.Mirrors)
	}
	if fmt.Sprint(w.Languages) != "[{es 7 3} {en 1 1} {unknown 1 0}]" {
		t.Errorf("languages %v", w.Languages)
	}
	if fmt.Sprint(w.Declared) != "[{(none) 8} {es 1}]" || fmt.Sprint(w.Charsets) != "[{utf-8 8} {windows-1252 1}]" {
		t.Errorf("declared %v, charsets %v", w.Declared, w.Charsets)
	}
	if fmt.Sprint(w.Sizes) != "[{< 1 KB 2} {1–4 KB 7} {64–256 KB 1}]" {
		t.Errorf("sizes %v", w.Sizes)
	}
	if fmt.Sprint(w.Ages) != "[{1–3 years 1} {unknown 8}]" {
		t.Errorf("ages %v", w.Ages) // the page modified after its fetch counts as unknown
	}
	if fmt.Sprint(w.LinkTLDs) != "[{ar 2} {cl 1} {com 1}]" || w.LinksOut != 4 {
		t.Errorf("link TLDs %v (%d)", w.LinkTLDs, w.LinksOut)
	}
}

func checkXY(t *testing.T, name string, got, want []XY) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %v, want %v", name, got, want)
		return
	}
	for i := range want {
		if !near(got[i].X, want[i].X) || !near(got[i].Y, want[i].Y) {
			t.Errorf("%s: %v, want %v", name, got, want)
			return
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCollectBusy(t *testing.T) {
	col := newCollection(t)
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := Collect(context.Background(), col, Options{GraphTimeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "graph.db is in use") {
		t.Errorf("Collect while graph.db is written: %v", err)
	}
}

// TestRenderGolden renders the hand-built crawl and compares the page
// with testdata/report.golden.html (go test ./pkg/report -update
// rewrites it): the same data gives the same bytes.
func TestRenderGolden(t *testing.T) {
	d, err := Collect(context.Background(), newCollection(t), Options{Now: t0, Changes: fixedChanges})
	if err != nil {
		t.Fatal(err)
	}
	d.Collection = "/data/cl"
	var out bytes.Buffer
	if err := d.Render(&out); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.html")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the report differs from %s (run go test ./pkg/report -update and review the diff)", golden)
	}
	html := out.String()
	for _, id := range PlotIDs() {
		m := regexp.MustCompile(`<svg class="plot" id="` + id + `"[^>]*>(.*?)</svg>`).FindStringSubmatch(html)
		if m == nil || !strings.Contains(m[1], `class="mark`) {
			t.Errorf("plot %s is missing or empty", id)
		}
	}
	if regexp.MustCompile(`(?i)\s(src|href)=|url\(|<script`).MatchString(html) {
		t.Errorf("the report refers to outside resources or has a script")
	}
}

func TestRenderEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := (&Data{Collection: "/c", Generated: t0}).Render(&out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), `class="nodata"`); n != len(PlotIDs()) {
		t.Errorf("%d of %d plots say they have no data", n, len(PlotIDs()))
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ raw, want float64 }{
		{0, 1}, {0.3, 0.5}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {160, 200}, {4100, 5000},
	} {
		if got := niceStep(c.raw); !near(got, c.want) {
			t.Errorf("niceStep(%g) = %g, want %g", c.raw, got, c.want)
		}
	}
}

func TestAxis(t *testing.T) {
	a := newAxis(3, 4200, true, 0, 100)
	if a.lo != 0 || a.hi != 4 || strings.Join(a.tickLabels, " ") != "1 10 100 1k 10k" {
		t.Errorf("log axis 3..4200: %g..%g %v", a.lo, a.hi, a.tickLabels)
	}
	if !near(a.pos(100), 50) || !near(a.pos(1), 0) {
		t.Errorf("log positions: 100 → %g, 1 → %g", a.pos(100), a.pos(1))
	}
	a = newAxis(0, 730, false, 300, 0)
	if strings.Join(a.tickLabels, " ") != "0 200 400 600 800" || !near(a.pos(400), 150) {
		t.Errorf("linear axis 0..730: %v, 400 → %g", a.tickLabels, a.pos(400))
	}
	if a := newAxis(5, 5, false, 0, 1); a.hi <= a.lo {
		t.Errorf("a flat axis has no extent: %+v", a)
	}
}

func TestLogPlotSkipsZero(t *testing.T) {
	svg := (&XYPlot{ID: "p", LogX: true, LogY: true, Series: []Series{{Points: []XY{{0, 5}, {1, 0}, {2, 3}, {math.NaN(), 1}}}}}).SVG()
	if n := strings.Count(svg, `class="mark"`); n != 1 {
		t.Errorf("%d points drawn, want 1 (the others cannot be on log axes):\n%s", n, svg)
	}
	svg = (&XYPlot{ID: "p<&>", Title: `"x" & <y>`}).SVG()
	if strings.Contains(svg, "<y>") || !strings.Contains(svg, "&lt;y&gt;") || !strings.Contains(svg, `id="p&lt;&amp;&gt;"`) {
		t.Errorf("text is not escaped: %s", svg)
	}
}

// TestGroupByVersion: fingerprints of two versions of the simhash scheme
// are never grouped together, even when equal; each version's pages are
// grouped among themselves.
func TestGroupByVersion(t *testing.T) {
	pages := []webPage{{simhash: 0xff, simV: 1}, {simhash: 0xff, simV: 2}, {simhash: 0xfe, simV: 1}, {simhash: 0xfe, simV: 2}, {}, {simhash: 0xf0f0f0f0f0, simV: 2}}
	fps := make([]uint64, len(pages))
	for i, p := range pages {
		fps[i] = p.simhash
	}
	if got, want := fmt.Sprint(groupByVersion(pages, fps)), "[0 1 0 1 4 5]"; got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
	for i := range pages {
		pages[i].simV = 2
	}
	if got, want := fmt.Sprint(groupByVersion(pages, fps)), "[0 0 0 0 4 5]"; got != want {
		t.Errorf("one version: groups %s, want %s", got, want)
	}
}

// TestAgeClassScaled: the page age classes and their hour of tolerance
// for a Last-Modified after the fetch at manager.time_scale (issue 35): at
// s = 1/1440 a day lasts a minute, a year 365 minutes; at s = 1 (and the
// zero value) they are as they were.
func TestAgeClassScaled(t *testing.T) {
	const minute = timescale.Scale(0.000694444444444444)
	at := func(ago time.Duration) string { return t0.Add(-ago).Format(http.TimeFormat) }
	for _, tt := range []struct {
		s    timescale.Scale
		ago  time.Duration // Last-Modified this long before the fetch
		want string
	}{
		{timescale.Real, 30 * time.Second, "< 1 day"},
		{0, 2 * time.Minute, "< 1 day"},
		{timescale.Real, 10 * 24 * time.Hour, "1 week–1 month"},
		{timescale.Real, -30 * time.Minute, "< 1 day"}, // within the hour of tolerance
		{timescale.Real, -2 * time.Hour, "unknown"},
		{minute, 30 * time.Second, "< 1 day"},
		{minute, 2 * time.Minute, "1 day–1 week"},
		{minute, 10 * time.Minute, "1 week–1 month"},
		{minute, 2 * time.Hour, "1 month–1 year"},
		{minute, 10 * time.Hour, "1–3 years"},
		{minute, 10 * 24 * time.Hour, "≥ 3 years"},
		{minute, -2 * time.Second, "< 1 day"}, // within 2.5 s
		{minute, -30 * time.Minute, "unknown"},
	} {
		if got := ageClass(at(tt.ago), t0, tt.s); got != tt.want {
			t.Errorf("s = %g, Last-Modified %s before the fetch: %q, want %q", tt.s.Factor(), tt.ago, got, tt.want)
		}
	}
	// Through Collect and the page: the one dated page (1–3 years at
	// s = 1, TestWeb) is over 3 scaled years old, and the plot says the
	// ages are scaled.
	d, err := Collect(context.Background(), newCollection(t), Options{Now: t0, TimeScale: minute})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Web.Ages) != "[{≥ 3 years 1} {unknown 8}]" || d.Web.TimeScale != float64(minute) {
		t.Errorf("ages %v, time scale %g", d.Web.Ages, d.Web.TimeScale)
	}
	var out bytes.Buffer
	if err := d.Render(&out); err != nil || !strings.Contains(out.String(), "Ages are in scaled time: manager.time_scale 0.000694444 (a day lasts 1m0s).") {
		t.Errorf("render: %v; the page does not say the ages are scaled", err)
	}
}
