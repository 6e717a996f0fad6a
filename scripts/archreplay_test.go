package scripts_test

// The crawl TestArchiveTools archives, what it must replay, and the replay
// itself in ReplayWeb.page (archtools_test.go has the test and the tools).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// archiveWeb is the web archived: the changing web of
// TestRecrawlChangingWeb, smaller — pages changing every 2 s to 400 s,
// validators (honest sites answer 304), half the sites compressing, a
// third chunking; its 15 sites include ISO-8859-1 ones and redirects.
var archiveWeb = testweb.Config{Seed: 15, Hosts: 15, MaxPages: 30, Change: true,
	ChangeIntervalMin: 2 * time.Second, ChangeIntervalMax: 400 * time.Second, CompressShare: 0.5, ChunkedShare: 0.3}

// Replay checks: how many pages, and what each waits for at most.
const (
	replayPages   = 30
	replayGaps    = 2 // pages of each known gap replayed beyond them (knownGap)
	replayTimeout = 10 * time.Second
)

// archivedCrawl is a crawl and what the test web and the collection say
// of each capture.
type archivedCrawl struct {
	env      *opsEnv
	col      string
	batches  []string             // batch directory names, in order
	captures map[string][]capture // by URL, in time order
}

// capture is one stored response or revisit, as the fetch log and the
// index give it, with the test web's record of the request.
type capture struct {
	batch    string
	url      string
	ts       string // the index line's timestamp: what a replay asks for
	at       time.Time
	status   int
	revisit  bool // a revisit record (the index's warc/revisit)
	warc     string
	offset   int64
	location string // absolute target of a redirect
	req      testweb.Request
}

// crawlForArchive crawls archiveWeb to an empty frontier in batches of
// 60 (several batches), then twice more as recrawls of every page
// (min_revisit 1 s): unchanged pages of honest sites answer 304 (revisit
// records), changed ones their new version, some twice.
func crawlForArchive(t *testing.T, bin string) *archivedCrawl {
	t.Helper()
	cfg := archiveWeb
	cfg.TimeOrigin = time.Now().Add(-10 * time.Minute)
	e := newCrawlEnv(t, bin, cfg, 8)
	col := e.newCollection(t, "--manager-batch-size", "60")
	if r := e.crawl(nil, col, "1000"); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	for range 2 {
		time.Sleep(2 * time.Second) // a new second: captures of a URL never share one
		if r := e.crawl([]string{"WIRE_MANAGER_MIN_REVISIT=1s", "WIRE_MANAGER_BATCH_SIZE=1000"}, col, "1"); r.code != 0 {
			t.Fatalf("recrawl: exit %d\n%s", r.code, r.stderr)
		}
	}
	a := &archivedCrawl{env: e, col: col, captures: map[string][]capture{}}
	a.readCaptures(t)
	return a
}

// readCaptures reads every batch's fetch log and indexes, and matches
// each stored page with the request the test web recorded.
func (a *archivedCrawl) readCaptures(t *testing.T) {
	t.Helper()
	byPath := map[string][]testweb.Request{}
	for _, r := range a.env.web.Requests() {
		byPath[r.Host+" "+r.Path] = append(byPath[r.Host+" "+r.Path], r)
	}
	dirs, _ := filepath.Glob(filepath.Join(a.col, collection.BatchesDir, "*", collection.HarvestDir))
	sort.Strings(dirs)
	for _, dir := range dirs {
		batch := filepath.Base(filepath.Dir(dir))
		a.batches = append(a.batches, batch)
		recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
		if err != nil {
			t.Fatal(err)
		}
		index := map[string]map[int64]cdxj.Line{}
		for _, r := range recs {
			if !r.OK() || r.WARC == "" {
				continue
			}
			if index[r.WARC] == nil {
				lines, err := cdxj.ReadFile(filepath.Join(dir, cdxj.IndexName(r.WARC)))
				if err != nil {
					t.Fatal(err)
				}
				index[r.WARC] = map[int64]cdxj.Line{}
				for _, l := range lines {
					index[r.WARC][l.Offset] = l
				}
			}
			l, ok := index[r.WARC][r.Offset]
			if !ok {
				t.Errorf("%s: the fetch log's record %s@%d has no index line", r.URL, r.WARC, r.Offset)
				continue
			}
			at, err := time.Parse("20060102150405", l.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			c := capture{batch: batch, url: r.URL, ts: l.Timestamp, at: at, status: r.Status, revisit: l.MIME == cdxj.MIMERevisit,
				warc: r.WARC, offset: r.Offset}
			if r.Location != "" {
				c.location = resolveRef(t, r.URL, r.Location)
			}
			if c.req, ok = matchRequest(byPath, r); !ok {
				t.Errorf("%s: the test web recorded no request for the capture fetched at %v (status %d)", r.URL, r.Fetched, r.Status)
				continue
			}
			a.captures[r.URL] = append(a.captures[r.URL], c)
		}
	}
	for _, cs := range a.captures {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.Before(cs[j].at) })
	}
}

// matchRequest finds the test web's record of the request a fetch log
// line stands for: the same host and path and status, started closest to
// the line's time (within 5 s).
func matchRequest(byPath map[string][]testweb.Request, r fetchlog.Record) (testweb.Request, bool) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return testweb.Request{}, false
	}
	var best testweb.Request
	found := false
	for _, q := range byPath[strings.ToLower(u.Hostname())+" "+u.RequestURI()] {
		d := q.Start.Sub(r.Fetched).Abs()
		if q.Status == r.Status && d < 5*time.Second && (!found || d < best.Start.Sub(r.Fetched).Abs()) {
			best, found = q, true
		}
	}
	return best, found
}

// resolveRef is ref resolved against base.
func resolveRef(t *testing.T, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r.String()
}

// expected is what a replay must show: the test web's answer (an HTML
// page) at the time of the capture that the replay of a URL at a
// timestamp picks.
type expected struct {
	capture capture // the capture replayed
	ctype   string
	body    []byte
	version int
}

// expect is what ReplayWeb.page must show for rawURL asked at timestamp
// at: the capture wabac.js (its replay engine) looks up — the first at
// or after at, else the last before (ArchiveDB.lookupUrl; a revisit
// stands for the page it says did not change) — in the version the test
// web served then. why says why there is no sure answer: no capture, two
// in one second, a change during the fetch, not a whole HTML page.
func (a *archivedCrawl) expect(t *testing.T, rawURL string, at time.Time) (x expected, why string) {
	t.Helper()
	cs := a.captures[rawURL]
	if len(cs) == 0 {
		return x, "not captured"
	}
	best := len(cs) - 1
	for i, c := range cs {
		if !c.at.Before(at) {
			best = i
			break
		}
	}
	if best+1 < len(cs) && cs[best+1].at.Equal(cs[best].at) {
		return x, "two captures in one second"
	}
	c := cs[best]
	web := a.env.web
	v, _ := web.VersionAt(rawURL, c.req.Start)
	if vEnd, _ := web.VersionAt(rawURL, c.req.End); vEnd != v {
		return x, "changed during the fetch"
	}
	if c.status == 200 && c.req.Version != v {
		t.Errorf("%s: the test web recorded version %d served at %v, VersionAt says %d", rawURL, c.req.Version, c.req.Start, v)
	}
	status, ctype, body, ok := web.ResponseAt(rawURL, c.req.Start)
	switch {
	case !ok || status != 200 || c.status != 200 && c.status != 304:
		return x, fmt.Sprintf("answered %d (capture %d)", status, c.status)
	case !strings.HasPrefix(ctype, "text/html") || bytes.Contains(body, []byte("<frameset")):
		return x, "not an HTML page with a body"
	}
	return expected{capture: c, ctype: ctype, body: body, version: v}, ""
}

// replayPage is one page to open in ReplayWeb.page.
type replayPage struct {
	ID     int    `json:"id"`
	Replay string `json:"replay"` // set when served
	Ref    string `json:"ref"`
	Want   string `json:"want"` // the URL the replay ends at

	from  capture // the capture whose URL and timestamp are asked for
	x     expected
	kinds []string
	gap   string // not "": a known gap, logged and not failed
}

// pickReplays chooses the pages to replay: replayPages of them whose
// replay must match, among them each kind the issue names (compressed,
// chunked, ISO-8859-1, redirected, revisited: 304s, and 200s stored as
// identical-payload-digest revisits) and changed pages, from as
// many batches as the crawl has; and up to replayGaps pages of each
// known gap (knownGap), whose replays are logged, not checked.
func (a *archivedCrawl) pickReplays(t *testing.T, revisits []warcioRevisit) []*replayPage {
	t.Helper()
	refersTo := map[string]bool{}
	for _, r := range revisits {
		refersTo[r.File+"@"+strconv.FormatInt(r.Offset, 10)] = r.RefersToDate != ""
	}
	var cands []*replayPage
	for _, cs := range a.captures {
		for _, c := range cs {
			p := &replayPage{from: c, Want: c.url}
			var why string
			switch {
			case c.status/100 == 3 && c.location != "":
				p.Want = c.location
				p.kinds = append(p.kinds, "redirected")
			case c.status == 304:
				p.kinds = append(p.kinds, "revisited")
			case c.status != 200:
				continue
			}
			if p.x, why = a.expect(t, p.Want, c.at); why != "" {
				continue
			}
			p.gap = a.knownGap(p.x, p.Want != c.url, refersTo)
			if c.status == 200 {
				if c.revisit {
					p.kinds = append(p.kinds, "identical-payload")
				}
				if c.req.Encoding != "" {
					p.kinds = append(p.kinds, "compressed")
				}
				if c.req.Chunked {
					p.kinds = append(p.kinds, "chunked")
				}
				if p.x.version > 0 && len(cs) > 1 {
					p.kinds = append(p.kinds, "changed")
				}
			}
			if strings.Contains(strings.ToLower(p.x.ctype), "iso-8859-1") {
				p.kinds = append(p.kinds, "iso-8859-1")
			}
			cands = append(cands, p)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].from.batch != cands[j].from.batch {
			return cands[i].from.batch < cands[j].from.batch
		}
		return cands[i].from.url < cands[j].from.url
	})
	var picked []*replayPage
	taken := map[*replayPage]bool{}
	take := func(p *replayPage) {
		p.ID = len(picked)
		picked = append(picked, p)
		taken[p] = true
	}
	// Each kind a few times, from different batches where it can.
	for _, kind := range []string{"revisited", "identical-payload", "redirected", "iso-8859-1", "compressed", "chunked", "changed"} {
		usedBatch := map[string]bool{}
		n := 0
		for round := 0; round < 2; round++ {
			for _, p := range cands {
				if n < 3 && !taken[p] && p.gap == "" && slices.Contains(p.kinds, kind) && (round == 1 || !usedBatch[p.from.batch]) {
					usedBatch[p.from.batch] = true
					take(p)
					n++
				}
			}
		}
	}
	// Then the rest, batch by batch in turn.
	for added := true; added && len(picked) < replayPages; {
		added = false
		for _, b := range a.batches {
			for _, p := range cands {
				if !taken[p] && p.gap == "" && p.from.batch == b && len(picked) < replayPages {
					take(p)
					added = true
					break
				}
			}
		}
	}
	gaps := map[string]int{}
	for _, p := range cands {
		if p.gap != "" && gaps[p.gap] < replayGaps {
			take(p)
			gaps[p.gap]++
		}
	}
	return picked
}

// The known gaps: replays that cannot show the page, for a reason the
// test names; they are replayed and logged, not failed.
const (
	// gapNoRefersTo: a revisit record (a 304) that does not say which
	// capture it stands for, of a page captured more than once:
	// ReplayWeb.page takes the latest (lookupUrl at time 0). Until
	// revisit records carry WARC-Refers-To and WARC-Refers-To-Date
	// (issue 37, revisits).
	gapNoRefersTo = "a revisit without WARC-Refers-To-Date of a page captured more than once: ReplayWeb.page takes the latest capture"
	// gapRevisitCharset: reached through a redirect, at another time
	// than its own, a revisit is served by wabac.js (ReplayWeb.page
	// 2.5.3) with the revisit's own HTTP headers, the 304's, which have
	// no Content-Type: a page whose charset only the Content-Type of its
	// capture declares (no <meta>) is decoded as UTF-8, the replay
	// frame's. (Asked at its own time, the replay moves to the capture it
	// refers to, with that capture's headers.) pywb too takes a revisit's
	// headers from the revisit record; the 304 is stored as it came. A
	// replay tool's gap, not the archive's.
	gapRevisitCharset = "a revisit (304), reached through a redirect, of a page whose non-UTF-8 charset only the Content-Type header declares: ReplayWeb.page serves the 304's headers, without it"
)

// knownGap says why the replay of x (through a redirect or not) cannot
// show it (a known gap), or "".
// refersTo tells, by FILE@OFFSET, which revisit records say what they
// refer to (WARC-Refers-To-Date: wabac.js looks the capture up by URL
// and date).
func (a *archivedCrawl) knownGap(x expected, redirected bool, refersTo map[string]bool) string {
	c := x.capture
	if !c.revisit || c.status != 304 {
		return "" // a 2xx revisit has the 2xx's headers
	}
	responses := 0
	for _, o := range a.captures[c.url] {
		if !o.revisit {
			responses++
		}
	}
	if responses > 1 && !refersTo[c.warc+"@"+strconv.FormatInt(c.offset, 10)] {
		return gapNoRefersTo
	}
	_, params, _ := mime.ParseMediaType(x.ctype)
	if cs := strings.ToLower(params["charset"]); redirected && cs != "" && cs != "utf-8" && !metaCharset.Match(x.body) {
		return gapRevisitCharset
	}
	return ""
}

// metaCharset finds a charset declared in a page's <meta>.
var metaCharset = regexp.MustCompile(`(?i)<meta[^>]+charset`)

// replayResult is what replay.mjs read of one page.
type replayResult struct {
	ID    int
	Frame string
	Text  string
	Ref   string
	MS    int
	Error string
}

// replayInReplayWebPage serves ReplayWeb.page, the WACZ and each page's
// reference (the test web's answer at capture time) from a loopback
// server, opens every page in headless Chromium (replay.mjs) and checks
// that each replay shows the reference's visible text: at least 20
// pages, from at least three batches, of every kind.
func replayInReplayWebPage(t *testing.T, a *archTools, chromium, wacz string, pages []*replayPage) {
	t.Helper()
	byID := map[int]*replayPage{}
	for _, p := range pages {
		byID[p.ID] = p
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /crawl.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, wacz) })
	mux.HandleFunc("GET /ui.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, a.uiJS) })
	mux.HandleFunc("GET /replay/ui.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, a.uiJS) })
	mux.HandleFunc("GET /replay/sw.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, a.swJS) })
	mux.HandleFunc("GET /embed/{id}", func(w http.ResponseWriter, r *http.Request) {
		p := pageOf(byID, r)
		if p == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><script src=\"/ui.js\"></script></head><body>\n"+
			"<replay-web-page source=\"/crawl.wacz\" url=\"%s\" ts=\"%s\" embed=\"replayonly\" replaybase=\"/replay/\"></replay-web-page>\n</body></html>\n",
			html.EscapeString(p.from.url), p.from.ts)
	})
	mux.HandleFunc("GET /ref/{id}", func(w http.ResponseWriter, r *http.Request) {
		p := pageOf(byID, r)
		if p == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", p.x.ctype)
		w.Write(p.x.body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	for _, p := range pages {
		p.Replay = base + "/embed/" + strconv.Itoa(p.ID)
		p.Ref = base + "/ref/" + strconv.Itoa(p.ID)
	}
	job, err := json.Marshal(map[string]any{"chromium": chromium, "args": chromiumFlags(t.TempDir()),
		"timeoutMs": replayTimeout.Milliseconds(), "pages": pages})
	if err != nil {
		t.Fatal(err)
	}
	jobFile := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(jobFile, job, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Every page may take the whole timeout (two loads: the replay and
	// the reference), and the browser a while to start.
	out := a.nodeRun(t, "", time.Minute+2*time.Duration(len(pages))*replayTimeout, "replay.mjs", jobFile)
	elapsed := time.Since(start)

	matched, gapsSeen := 0, 0
	batches, kinds := map[string]int{}, map[string]int{}
	for line := range strings.Lines(string(out)) {
		var r replayResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("replay.mjs: %v: %q", err, line)
		}
		p := byID[r.ID]
		if p == nil {
			t.Fatalf("replay.mjs answered for page %d, not asked", r.ID)
		}
		what := fmt.Sprintf("%s at %s (batch %s, %v, version %d)", p.from.url, p.from.ts, p.from.batch, p.kinds, p.x.version)
		same := r.Error == "" && r.Text == r.Ref && strings.TrimSpace(r.Ref) != ""
		switch {
		case p.gap != "":
			gapsSeen++
			t.Logf("known gap, not failed: %s: %s; replay shows the reference: %v (%s)", what, p.gap, same, firstDifference(r.Text, r.Ref))
		case r.Error != "":
			t.Errorf("%s: %s", what, r.Error)
		case !same:
			t.Errorf("%s: ReplayWeb.page shows a text unlike the test web's at capture time (%s)\nreplay (%s):\n%s\ntest web:\n%s",
				what, firstDifference(r.Text, r.Ref), r.Frame, excerptText(r.Text), excerptText(r.Ref))
		default:
			matched++
			batches[p.from.batch]++
			for _, k := range p.kinds {
				kinds[k]++
			}
		}
	}
	t.Logf("ReplayWeb.page (%s) in %s: %d of %d pages replayed with the test web's text at capture time, from %d batches %v, kinds %v; %d known gaps; %v",
		replayWebPage, filepath.Base(chromium), matched, len(pages)-gapsSeen, len(batches), batches, kinds, gapsSeen, elapsed.Round(time.Millisecond))
	if matched < 20 || len(batches) < 3 {
		t.Errorf("%d pages replayed right from %d batches: want at least 20 from at least 3", matched, len(batches))
	}
	for _, k := range []string{"revisited", "identical-payload", "redirected", "iso-8859-1", "compressed", "chunked"} {
		if kinds[k] == 0 {
			t.Errorf("no %s page among those replayed right", k)
		}
	}
}

// pageOf is the page a request's {id} names.
func pageOf(byID map[int]*replayPage, r *http.Request) *replayPage {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return nil
	}
	return byID[id]
}

// firstDifference says where two texts first differ.
func firstDifference(a, b string) string {
	if a == b {
		return "the same"
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("differ at byte %d: %q vs %q", i, excerpt(a, i), excerpt(b, i))
}

// excerpt is s around byte i.
func excerpt(s string, i int) string {
	return s[max(0, i-20):min(len(s), i+40)]
}

// excerptText is the start of a page's text, for messages.
func excerptText(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
