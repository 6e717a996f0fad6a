package harvester_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/contentcoding"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

const wait = 60 * time.Millisecond

func html(s string) *ht.Page { return &ht.Page{Body: []byte("<html><body>" + s + "</body></html>")} }

func robotsPage(s string) *ht.Page {
	return &ht.Page{Body: []byte(s), Header: http.Header{"Content-Type": {"text/plain"}}}
}

// testWeb is a small web covering the politeness and failure cases.
func testWeb(t *testing.T) (*ht.Web, []batch.Entry) {
	big := bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 10000) // 190 KB > 64 KiB cap
	web := ht.Start(t,
		&ht.Host{Name: "a.test", Robots: robotsPage("User-agent: *\nDisallow: /private\n"), Pages: map[string]*ht.Page{
			"/":          html("home a"),
			"/1":         html("page 1"),
			"/2?x=1":     html("page 2"),
			"/private/x": html("secret"),
			"/gz":        {Body: []byte("<html>compressed " + strings.Repeat("z", 5000) + "</html>"), Gzip: true},
			"/redir":     {Status: 301, Header: http.Header{"Location": {"/target"}}},
			"/big":       {Body: big},
			"/missing":   {Status: 404, Body: []byte("not here")},
		}},
		&ht.Host{Name: "b.test", Robots: robotsPage("User-agent: wirebot\nCrawl-delay: 0.25\nDisallow: /no\n\nUser-agent: *\nDisallow: /\n"), Pages: map[string]*ht.Page{
			"/": html("home b"), "/1": html("b1"), "/no": html("no"),
		}},
		&ht.Host{Name: "c.test", Robots: &ht.Page{Status: 503}, Pages: map[string]*ht.Page{
			"/": html("home c"), "/1": html("c1"),
		}},
		&ht.Host{Name: "d.test", Pages: map[string]*ht.Page{ // no robots.txt: 404, all allowed
			"/e1": {Status: 500}, "/e2": {Status: 502}, "/e3": {Status: 500}, "/after": html("never"), "/after2": html("never"),
		}},
		&ht.Host{Name: "e.test", Robots: &ht.Page{Status: 302, Header: http.Header{"Location": {"/real-robots.txt"}}}, Pages: map[string]*ht.Page{
			"/real-robots.txt": robotsPage("User-agent: *\nDisallow: /secret\n"),
			"/":                html("home e"), "/secret": html("secret e"),
		}},
	)
	u := web.URL
	entries := ht.Entries(
		u("a.test", "/"), u("b.test", "/"), u("a.test", "/1"), u("c.test", "/"), u("a.test", "/private/x"),
		u("d.test", "/e1"), u("a.test", "/2?x=1"), u("d.test", "/e2"), u("a.test", "/gz"), u("d.test", "/e3"),
		u("a.test", "/redir"), u("d.test", "/after"), u("a.test", "/big"), u("d.test", "/after2"), u("a.test", "/missing"),
		u("b.test", "/1"), u("b.test", "/no"), u("c.test", "/1"), u("e.test", "/"), u("e.test", "/secret"),
		"http://nx.test:"+web.Port+"/",
	)
	return web, entries
}

func readLog(t *testing.T, dir string) map[string]fetchlog.Record {
	t.Helper()
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fetchlog.Record{}
	for _, r := range recs {
		if _, dup := out[r.URL]; dup {
			t.Errorf("%s logged twice", r.URL)
		}
		out[r.URL] = r
	}
	return out
}

func TestHarvest(t *testing.T) {
	web, entries := testWeb(t)
	cfg := web.Config(wait)
	dir := t.TempDir()
	col := ht.NewCollection(t, dir, cfg)
	b := col.Batch(1)
	ht.WriteBatch(t, b.Dir, 1, entries)

	sum, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Done(collection.StageHarvested) || exists(filepath.Join(b.Dir, harvester.PartialDir)) {
		t.Fatal("batch not marked harvested, or harvest.partial left behind")
	}
	var marked harvester.Summary
	if err := b.Summary(collection.StageHarvested, &marked); err != nil || marked.URLs != len(entries) {
		t.Fatalf("marker summary %+v, %v", marked, err)
	}
	t.Log(sum)

	// Every batch URL has exactly one fetch log line.
	logged := readLog(t, b.HarvestPath())
	if len(logged) != len(entries) {
		t.Errorf("%d lines for %d URLs", len(logged), len(entries))
	}
	u := web.URL
	wantErr := map[string]string{
		u("a.test", "/private/x"):          "robots",
		u("b.test", "/no"):                 "robots",
		u("c.test", "/"):                   "robots: robots.txt unreachable (status 503)",
		u("c.test", "/1"):                  "robots: robots.txt unreachable (status 503)",
		u("e.test", "/secret"):             "robots",
		u("d.test", "/after"):              "host-gave-up: 3 consecutive failures (last: 500)",
		u("d.test", "/after2"):             "host-gave-up: 3 consecutive failures (last: 500)",
		"http://nx.test:" + web.Port + "/": "dns: no such host nx.test",
	}
	for _, e := range entries {
		r := logged[e.URL]
		if want, ok := wantErr[e.URL]; ok {
			if r.Err != want || r.WARC != "" {
				t.Errorf("%s: err %q warc %q, want %q", e.URL, r.Err, r.WARC, want)
			}
			continue
		}
		if r.Err != "" || r.Status == 0 || r.WARC == "" || r.DocID != e.DocID {
			t.Errorf("%s: %+v", e.URL, r)
		}
	}
	if r := logged[u("a.test", "/redir")]; r.Status != 301 || r.Location != "/target" {
		t.Errorf("redirect logged as %+v", r)
	}
	if r := logged[u("d.test", "/e1")]; r.Status != 500 || !r.OK() {
		t.Errorf("500 logged as %+v", r)
	}
	if sum.URLs != len(entries) || sum.RobotsExcluded != 5 || sum.Errors["host-gave-up"] != 2 || sum.Errors["dns"] != 1 || sum.Hosts != 6 {
		t.Errorf("summary %+v", sum)
	}

	// Server side: robots.txt first, forbidden pages never asked for,
	// redirects not followed, one connection per host at a time, the
	// wait (and the Crawl-delay) between requests to a host.
	for _, host := range []string{"a.test", "b.test", "c.test", "d.test", "e.test"} {
		rs := web.RequestsTo(host)
		if len(rs) == 0 || rs[0].Path != "/robots.txt" {
			t.Errorf("%s: first request %v, want /robots.txt", host, rs)
		}
		for _, r := range rs {
			if r.UserAgent != cfg.Crawl.UserAgent {
				t.Errorf("%s%s: User-Agent %q", host, r.Path, r.UserAgent)
			}
		}
	}
	never := map[string]bool{"a.test /private/x": true, "a.test /target": true, "b.test /no": true, "c.test /": true,
		"c.test /1": true, "e.test /secret": true, "d.test /after": true, "d.test /after2": true}
	for _, r := range web.Requests() {
		if never[r.Host+" "+r.Path] {
			t.Errorf("%s%s was requested", r.Host, r.Path)
		}
	}
	if n := len(web.RequestsTo("e.test")); n != 3 { // robots.txt, its redirect target, /
		t.Errorf("e.test got %d requests, want 3", n)
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	if err := web.CheckWait(wait); err != nil {
		t.Error(err)
	}
	bs := web.RequestsTo("b.test")
	for i := 1; i < len(bs); i++ { // the Crawl-delay counts from robots.txt on
		if gap := bs[i].Start.Sub(bs[i-1].End); gap < 250*time.Millisecond {
			t.Errorf("b.test: %s after %s (Crawl-delay 0.25 s)", bs[i].Path, gap)
		}
	}

	// WARC records read back equal what was served; robots.txt is
	// stored too.
	checkBody := func(path string, want []byte) *warcio.Response {
		t.Helper()
		r := logged[u("a.test", path)]
		resp, err := warcio.ReadResponse(filepath.Join(b.HarvestPath(), r.WARC), r.Offset, r.Length, 1<<30)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// Stored as received (harvester.warc_mode raw, the default):
		// the body decodes to the page, whose size the fetch log gives.
		body := decoded(t, resp)
		if !bytes.Equal(body, want) || resp.URL != u("a.test", path) || int64(len(body)) != r.Bytes {
			t.Errorf("%s: WARC body %d bytes decoded (%q...), want %d", path, len(body), head(body), len(want))
		}
		return resp
	}
	checkBody("/", []byte("<html><body>home a</body></html>"))
	checkBody("/2?x=1", []byte("<html><body>page 2</body></html>"))
	gz := checkBody("/gz", []byte("<html>compressed "+strings.Repeat("z", 5000)+"</html>"))
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get(fetch.DecodedHeader) != "" || gz.Header.Get("Content-Length") != strconv.Itoa(len(gz.Body)) {
		t.Errorf("gzip page stored with header %v, %d bytes", gz.Header, len(gz.Body))
	}
	big := checkBody("/big", bytes.Repeat([]byte("<p>lorem ipsum</p>\n"), 10000)[:cfg.Harvester.MaxBodyBytes])
	if big.Truncated != "length" {
		t.Errorf("big page: WARC-Truncated %q", big.Truncated)
	}
	warcs, _ := filepath.Glob(filepath.Join(b.HarvestPath(), "*.warc.gz"))
	if len(warcs) != 1 {
		t.Fatalf("WARC files %v, want one", warcs)
	}
	if n, ok := warcio.ParseName(filepath.Base(warcs[0])); !ok || n.Prefix != "wire" || n.Batch != 1 || n.ShardN != 1 || n.Serial != 1 || n.Time.After(time.Now()) {
		t.Errorf("WARC file %s: want wire-YYYYMMDDhhmmss-000001-s1of1-00001.warc.gz", filepath.Base(warcs[0]))
	}
	data, _ := os.ReadFile(warcs[0])
	if !bytes.Contains(gunzipAll(t, data), []byte("WARC-Target-URI: "+u("a.test", "/robots.txt"))) {
		t.Error("robots.txt response not in the WARC file")
	}

	// robots.jsonl: one line per site.
	rl, err := fetchlog.ReadRobots(filepath.Join(b.HarvestPath(), fetchlog.RobotsFile))
	if err != nil {
		t.Fatal(err)
	}
	sites := map[string]fetchlog.Robots{}
	for _, r := range rl {
		sites[r.Site] = r
	}
	if len(rl) != 6 || len(sites) != 6 {
		t.Errorf("robots.jsonl has %d lines for %d sites, want 6", len(rl), len(sites))
	}
	if r := sites[web.Site("e.test")]; r.Status != 200 || !strings.Contains(r.Body, "Disallow: /secret") {
		t.Errorf("e.test robots (after redirect): %+v", r)
	}
	if r := sites[web.Site("c.test")]; r.Status != 503 {
		t.Errorf("c.test robots: %+v", r)
	}

	// Refusals: nothing is ready now, and the batch is already harvested.
	if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("second run: %v, want ErrNothingToDo", err)
	}
	if _, err := harvester.RunCollection(context.Background(), col, 1, harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrAlreadyDone) {
		t.Errorf("batch 1 again: %v, want ErrAlreadyDone", err)
	}
	if _, err := harvester.RunCollection(context.Background(), col, 7, harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrNoBatch) {
		t.Errorf("batch 7: %v, want ErrNoBatch", err)
	}
	if exists(col.Batch(7).Dir) {
		t.Error("asking for a missing batch created its directory")
	}
}

func head(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// countingProgress cancels the run once n URLs are logged, and keeps the
// last statistics.
type countingProgress struct {
	n       atomic.Int64
	after   int64
	cancel  context.CancelFunc
	started atomic.Int64
	last    harvester.Stats
	final   harvester.Stats
}

func (p *countingProgress) Start(total int) { p.started.Store(int64(total)) }
func (p *countingProgress) Update(s harvester.Stats) {
	p.last = s
	p.n.Store(int64(s.Logged))
	if p.after > 0 && int64(s.Logged) >= p.after && p.cancel != nil {
		p.cancel()
	}
}
func (p *countingProgress) Done(s harvester.Stats) { p.final = s; p.n.Store(int64(s.Logged)) }

func slowWeb(t *testing.T, hosts, pages int) (*ht.Web, []batch.Entry) {
	var hs []*ht.Host
	var urls []string
	for h := 0; h < hosts; h++ {
		name := fmt.Sprintf("h%d.test", h)
		host := &ht.Host{Name: name, Robots: robotsPage("User-agent: *\nDisallow: /p0\n"), Pages: map[string]*ht.Page{}}
		for p := 0; p < pages; p++ {
			path := fmt.Sprintf("/p%d", p)
			host.Pages[path] = &ht.Page{Body: []byte(name + path), Delay: 20 * time.Millisecond}
		}
		hs = append(hs, host)
	}
	web := ht.Start(t, hs...)
	for p := 0; p < pages; p++ {
		for h := 0; h < hosts; h++ {
			urls = append(urls, web.URL(fmt.Sprintf("h%d.test", h), fmt.Sprintf("/p%d", p)))
		}
	}
	return web, ht.Entries(urls...)
}

// TestResume cancels a run in the middle (as SIGINT does), then runs
// again: every URL ends with exactly one line, robots.txt is not fetched
// again, politeness holds across the two runs, and the second run's WARC
// file goes on with the serial and keeps the harvest's start in its name.
func TestResume(t *testing.T) {
	web, entries := slowWeb(t, 3, 8)
	cfg := web.Config(wait)
	dir := filepath.Join(t.TempDir(), "000004")
	ht.WriteBatch(t, dir, 4, entries)

	ctx, cancel := context.WithCancel(context.Background())
	prog := &countingProgress{after: 7, cancel: cancel}
	_, err := harvester.RunDir(ctx, dir, harvester.Options{Config: cfg, Progress: prog, ProgressEvery: time.Millisecond})
	if !errors.Is(err, harvester.ErrInterrupted) {
		t.Fatalf("first run: %v, want ErrInterrupted", err)
	}
	partial := filepath.Join(dir, harvester.PartialDir)
	first := readLog(t, partial)
	if len(first) < 7 || len(first) >= len(entries) || exists(filepath.Join(dir, "harvested.done")) {
		t.Fatalf("after cancel: %d lines, marker %v", len(first), exists(filepath.Join(dir, "harvested.done")))
	}
	robotsBefore, _ := fetchlog.ReadRobots(filepath.Join(partial, fetchlog.RobotsFile))
	nreq := len(web.Requests())
	// The second run starts in a later second than the first's file
	// name says, so that keeping the harvest's start is seen.
	if names, _ := filepath.Glob(filepath.Join(partial, "*.warc.gz")); len(names) == 1 {
		if n, ok := warcio.ParseName(filepath.Base(names[0])); ok {
			time.Sleep(time.Until(n.Time.Add(time.Second)))
		}
	}

	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed || sum.URLs != len(entries) || sum.RobotsExcluded != 3 {
		t.Errorf("summary %+v", sum)
	}
	final := readLog(t, filepath.Join(dir, collection.HarvestDir))
	if len(final) != len(entries) {
		t.Fatalf("%d lines for %d URLs", len(final), len(entries))
	}
	for u, r := range first {
		if final[u] != r {
			t.Errorf("%s: line changed by the resume: %+v → %+v", u, r, final[u])
		}
	}
	warcs, _ := filepath.Glob(filepath.Join(dir, collection.HarvestDir, "*.warc.gz"))
	if len(warcs) != 2 {
		t.Fatalf("WARC files %v, want one per run", warcs)
	}
	n1, ok1 := warcio.ParseName(filepath.Base(warcs[0]))
	n2, ok2 := warcio.ParseName(filepath.Base(warcs[1]))
	if !ok1 || !ok2 || n1.Serial != 1 || n2.Serial != 2 || !n1.Time.Equal(n2.Time) || n1.Batch != 4 || n2.Batch != 4 {
		t.Errorf("WARC files %s and %s: want serials 1 and 2 of batch 4 with the harvest's one start time", filepath.Base(warcs[0]), filepath.Base(warcs[1]))
	}
	for u, r := range final {
		if r.WARC == "" {
			continue
		}
		resp, err := warcio.ReadResponse(filepath.Join(dir, collection.HarvestDir, r.WARC), r.Offset, r.Length, 1<<20)
		if err != nil || resp.URL != u || !strings.HasSuffix(u, string(resp.Body)[len("hN.test"):]) {
			t.Errorf("%s: record %v %v", u, resp, err)
		}
	}
	// robots.txt of the sites logged before the cancel was not fetched
	// again.
	for _, rl := range robotsBefore {
		host := strings.TrimPrefix(strings.Split(rl.Site, ":")[1], "//")
		for _, r := range web.Requests()[nreq:] {
			if r.Host == host && r.Path == "/robots.txt" {
				t.Errorf("%s: robots.txt fetched again on resume", host)
			}
		}
	}
	if err := web.CheckWait(wait); err != nil {
		t.Errorf("across the restart: %v", err)
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
}

// TestRunDirRefusesHarvested: a bare batch directory, harvested, then
// refused; --force harvests it again and replaces the output.
// TestWARCNamesUnique harvests the same URLs as two batches, with a
// prefix of the crawl's own: their WARC files have different names
// (issue 37: every batch named its file data-00001.warc.gz, and an
// archive over several batches could not tell them apart), each naming
// its prefix and its batch.
func TestWARCNamesUnique(t *testing.T) {
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{"/": html("x"), "/1": html("y")}})
	cfg := web.Config(wait)
	cfg.Harvester.WARCPrefix = "cl-2026"
	root := t.TempDir()
	seen := map[string]int{}
	for _, id := range []int{1, 2} {
		dir := filepath.Join(root, collection.BatchName(id))
		ht.WriteBatch(t, dir, id, ht.Entries(web.URL("a.test", "/"), web.URL("a.test", "/1")))
		sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.WARCFiles) != 1 {
			t.Fatalf("batch %d: WARC files %v, want one", id, sum.WARCFiles)
		}
		name := sum.WARCFiles[0]
		if n, ok := warcio.ParseName(name); !ok || n.Prefix != "cl-2026" || n.Batch != id {
			t.Errorf("batch %d: WARC file %s, want cl-2026-TIME-%06d-s1of1-00001.warc.gz", id, name, id)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("batches %d and %d both named their WARC file %s", other, id, name)
		}
		seen[name] = id
		for _, r := range readLog(t, filepath.Join(dir, collection.HarvestDir)) {
			if r.WARC != name {
				t.Errorf("batch %d: %s points at %s, not %s", id, r.URL, r.WARC, name)
			}
		}
	}
}

func TestRunDirRefusesHarvested(t *testing.T) {
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{"/": html("x")}})
	cfg := web.Config(wait)
	dir := filepath.Join(t.TempDir(), "batch")
	ht.WriteBatch(t, dir, 9, ht.Entries(web.URL("a.test", "/")))
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil || sum.Batch != 9 || sum.Fetched != 1 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if !exists(filepath.Join(dir, harvester.LockFile)) || !exists(filepath.Join(dir, "harvest", fetchlog.LogFile)) {
		t.Error("no lock file or no harvest directory")
	}
	_, err = harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if !errors.Is(err, collection.ErrAlreadyDone) {
		t.Fatalf("second run: %v, want ErrAlreadyDone", err)
	}
	n := len(web.Requests())
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg, Force: true}); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if len(web.Requests()) != n+2 {
		t.Errorf("forced run made %d requests, want 2", len(web.Requests())-n)
	}
	if exists(filepath.Join(dir, "harvest.old")) || exists(filepath.Join(dir, harvester.PartialDir)) {
		t.Error("leftovers after a forced run")
	}
	if len(readLog(t, filepath.Join(dir, "harvest"))) != 1 {
		t.Error("forced run's log does not have one line")
	}

	// Locked by another harvester.
	dir2 := filepath.Join(t.TempDir(), "batch2")
	ht.WriteBatch(t, dir2, 10, ht.Entries(web.URL("a.test", "/")))
	lock, err := collection.LockPath(filepath.Join(dir2, harvester.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := harvester.RunDir(context.Background(), dir2, harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	// No batch file at all.
	if _, err := harvester.RunDir(context.Background(), t.TempDir(), harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrNoBatch) {
		t.Errorf("empty dir: %v", err)
	}
}

// TestBlockedAddresses: without allow_private, names resolving to
// loopback and IP literals on loopback are never dialled.
func TestBlockedAddresses(t *testing.T) {
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{"/": html("x"), "/1": html("y")}})
	cfg := web.Config(wait)
	cfg.Harvester.AllowPrivate = false
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(web.URL("a.test", "/"), web.URL("a.test", "/1"), "http://127.0.0.1:"+web.Port+"/"))
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for u, r := range readLog(t, filepath.Join(dir, "harvest")) {
		if r.Err != "blocked-address 127.0.0.1" {
			t.Errorf("%s: %q", u, r.Err)
		}
	}
	if n := len(web.Requests()); n != 0 || len(web.Conns()) != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if sum.Errors["blocked-address"] != 3 {
		t.Errorf("summary %+v", sum)
	}
}

// TestRetryAfter: 503 with Retry-After: 1 holds the host back a second;
// Retry-After beyond the cap gives the host up.
func TestRetryAfter(t *testing.T) {
	web := ht.Start(t,
		&ht.Host{Name: "slow.test", Pages: map[string]*ht.Page{
			"/busy": {Status: 503, Header: http.Header{"Retry-After": {"1"}}},
			"/next": html("ok"),
		}},
		&ht.Host{Name: "gone.test", Pages: map[string]*ht.Page{
			"/busy": {Status: 429, Header: http.Header{"Retry-After": {"3600"}}},
			"/next": html("never"),
		}},
	)
	cfg := web.Config(wait)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(web.URL("slow.test", "/busy"), web.URL("gone.test", "/busy"), web.URL("slow.test", "/next"), web.URL("gone.test", "/next")))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	rs := web.RequestsTo("slow.test")
	if len(rs) != 3 || rs[2].Path != "/next" || rs[2].Start.Sub(rs[1].End) < time.Second {
		t.Errorf("slow.test requests %+v: /next should wait for Retry-After", rs)
	}
	logged := readLog(t, filepath.Join(dir, "harvest"))
	if r := logged[web.URL("gone.test", "/next")]; !strings.HasPrefix(r.Err, "host-gave-up: Retry-After 1h0m0s exceeds 10m0s") {
		t.Errorf("gone.test /next: %q", r.Err)
	}
	if r := logged[web.URL("gone.test", "/busy")]; r.Status != 429 || !r.OK() {
		t.Errorf("gone.test /busy: %+v", r)
	}
}

// TestConcurrency: many hosts are served at once, up to the configured
// number of connections.
func TestConcurrency(t *testing.T) {
	var hs []*ht.Host
	var urls []string
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("h%d.test", i)
		hs = append(hs, &ht.Host{Name: name, Pages: map[string]*ht.Page{"/": {Body: []byte("x"), Delay: 150 * time.Millisecond}}})
	}
	web := ht.Start(t, hs...)
	for i := 0; i < 8; i++ {
		urls = append(urls, web.URL(fmt.Sprintf("h%d.test", i), "/"))
	}
	cfg := web.Config(wait)
	cfg.Harvester.Connections = 4
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	// Count the largest number of page requests in flight at once.
	type ev struct {
		t     time.Time
		delta int
	}
	var evs []ev
	for _, r := range web.Requests() {
		if r.Path == "/" {
			evs = append(evs, ev{r.Start, 1}, ev{r.End, -1})
		}
	}
	sortEvents := func() {
		for i := 1; i < len(evs); i++ {
			for j := i; j > 0 && (evs[j].t.Before(evs[j-1].t) || evs[j].t.Equal(evs[j-1].t) && evs[j].delta < evs[j-1].delta); j-- {
				evs[j], evs[j-1] = evs[j-1], evs[j]
			}
		}
	}
	sortEvents()
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.delta
		peak = max(peak, cur)
	}
	if peak < 2 || peak > 4 {
		t.Errorf("peak of %d hosts served at once, want 2..4", peak)
	}
}

// TestLoggerAndProgress: the run logs through the given logger and
// reports progress for every URL.
func TestLoggerAndProgress(t *testing.T) {
	web := ht.Start(t, &ht.Host{Name: "a.test", Pages: map[string]*ht.Page{"/": html("x"), "/1": html("y")}})
	cfg := web.Config(wait)
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(web.URL("a.test", "/"), web.URL("a.test", "/1")))
	var buf syncBuffer
	prog := &countingProgress{after: -1}
	_, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg, Logger: slogTo(&buf), Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	if f := prog.final; f.Logged != 2 || f.Total != 2 || f.Pages != 2 || f.HostsDone != 1 || f.HostsActive != 0 || f.Requests != 3 || f.Bytes == 0 || !strings.Contains(buf.String(), "harvested") {
		t.Errorf("progress %+v, log %q", prog.final, buf.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// gunzipAll decodes every gzip member of a .warc.gz file.
func gunzipAll(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkWARCs reads every WARC file of a harvest directory with gowarc's
// reader in strict mode (warcio.Verify: syntax, lengths, digests), checks
// that each file starts with a warcinfo record and that every fetch log
// pointer is a response or revisit record of its URL.
func checkWARCs(t *testing.T, dir string) {
	t.Helper()
	byFile := map[string]map[int64]warcio.RecordInfo{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file in %s", dir)
	}
	for _, f := range files {
		infos, err := warcio.Verify(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(infos) == 0 || infos[0].Type != "warcinfo" {
			t.Errorf("%s: does not start with a warcinfo record", f)
		}
		m := map[int64]warcio.RecordInfo{}
		for _, in := range infos {
			m[in.Offset] = in
		}
		byFile[filepath.Base(f)] = m
	}
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.WARC == "" {
			continue
		}
		in, ok := byFile[r.WARC][r.Offset]
		if !ok || (in.Type != "response" && in.Type != "revisit") || in.TargetURI != r.URL {
			t.Errorf("%s: log points at %s@%d, which holds %+v", r.URL, r.WARC, r.Offset, in)
		}
	}
	checkIndexes(t, dir, byFile, recs)
}

// checkIndexes checks the CDXJ index beside each WARC file: one line per
// response and revisit record of the file, at the record's offset, for
// its URL, and the line of every fetch log pointer with its length and
// status (a revisit record, a 304 among them, marked warc/revisit, without
// a status).
func checkIndexes(t *testing.T, dir string, byFile map[string]map[int64]warcio.RecordInfo, recs []fetchlog.Record) {
	t.Helper()
	lines := map[string]map[int64]cdxj.Line{}
	for name, records := range byFile {
		idx, err := cdxj.ReadFile(filepath.Join(dir, cdxj.IndexName(name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		m := map[int64]cdxj.Line{}
		for _, l := range idx {
			in, ok := records[l.Offset]
			if !ok || (in.Type != "response" && in.Type != "revisit") || in.TargetURI != l.URL || l.Filename != name {
				t.Errorf("%s: index line %s points at %+v", name, l.String(), in)
			}
			m[l.Offset] = l
		}
		captures := 0
		for _, in := range records {
			if in.Type == "response" || in.Type == "revisit" {
				captures++
			}
		}
		if len(m) != len(idx) || len(idx) != captures {
			t.Errorf("%s: %d index lines for %d responses and revisits", name, len(idx), captures)
		}
		lines[name] = m
	}
	for _, r := range recs {
		if r.WARC == "" {
			continue
		}
		l, ok := lines[r.WARC][r.Offset]
		revisit := byFile[r.WARC][r.Offset].Type == "revisit" // a 304, or a 200 with the stored payload
		status := r.Status
		if revisit {
			status = 0 // a revisit's line has no status, as pywb writes it
		}
		if !ok || l.Length != r.Length || l.Status != status || (l.MIME == cdxj.MIMERevisit) != revisit || r.Status == 304 && !revisit {
			t.Errorf("%s: fetch log %s@%d+%d %d, index line %+v", r.URL, r.WARC, r.Offset, r.Length, r.Status, l)
		}
	}
}

// readRecord reads the response record a fetch log line points at.
// decoded is the body of a stored response decoded from the content
// coding it was stored in (a raw record's; none for a decoded one).
func decoded(t *testing.T, resp *warcio.Response) []byte {
	t.Helper()
	c, ok := contentcoding.Parse(resp.Header.Get("Content-Encoding"))
	if !ok {
		t.Fatalf("%s: stored with content coding %q", resp.URL, resp.Header.Get("Content-Encoding"))
	}
	var d contentcoding.Decoder
	body, _, err := d.Append(nil, c, resp.Body, 1<<30)
	if err != nil && resp.Truncated == "" {
		t.Fatalf("%s: %v", resp.URL, err)
	}
	return body
}

func readRecord(t *testing.T, dir string, r fetchlog.Record) *warcio.Response {
	t.Helper()
	if r.WARC == "" {
		t.Fatalf("%s: no WARC record", r.URL)
	}
	resp, err := warcio.ReadResponse(filepath.Join(dir, r.WARC), r.Offset, r.Length, 1<<30)
	if err != nil {
		t.Fatalf("%s: %v", r.URL, err)
	}
	return resp
}
