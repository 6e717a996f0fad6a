package manager

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

func batchURLs(t *testing.T, f *fixture, id int) []string {
	t.Helper()
	_, entries := readBatch(t, f.col, id)
	var urls []string
	for _, e := range entries {
		urls = append(urls, e.URL)
	}
	slices.Sort(urls)
	return urls
}

func fetchedPage(u string, daysOld float64) page {
	return page{url: u, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(daysOld)}
}

// At most max_fetches_per_script query URLs per script (Nakahira et al.:
// once /index.php?id=2 is fetched, no more /index.php?…).
func TestRunScriptLimit(t *testing.T) {
	pages := []page{
		fetchedPage("http://a.cl/index.php?id=2", 30), // holds the one slot of its script; revisited
		{url: "http://a.cl/index.php?id=3"},
		{url: "http://a.cl/index.php?id=4"},
		{url: "http://b.cl/s.php?x=1"}, // two new URLs of a fresh script: the first one only
		{url: "http://b.cl/s.php?x=2"},
		{url: "http://b.cl/t.php?x=1", state: linkgraph.StateScheduled, batch: 7}, // in flight: holds the slot
		{url: "http://b.cl/t.php?x=2"},
		{url: "http://b.cl/s.php"},                                            // no query: not limited
		{url: "http://b.cl/excluded.php?a=1", state: linkgraph.StateExcluded}, // holds nothing
		{url: "http://b.cl/excluded.php?a=2"},
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{1, []string{"http://a.cl/index.php?id=2", "http://b.cl/excluded.php?a=2", "http://b.cl/s.php", "http://b.cl/s.php?x=1"}},
		{2, []string{"http://a.cl/index.php?id=2", "http://a.cl/index.php?id=3", "http://b.cl/excluded.php?a=2", "http://b.cl/s.php", "http://b.cl/s.php?x=1", "http://b.cl/s.php?x=2", "http://b.cl/t.php?x=2"}},
		{0, []string{"http://a.cl/index.php?id=2", "http://a.cl/index.php?id=3", "http://a.cl/index.php?id=4", "http://b.cl/excluded.php?a=2", "http://b.cl/s.php", "http://b.cl/s.php?x=1", "http://b.cl/s.php?x=2", "http://b.cl/t.php?x=2"}},
	}
	for _, tt := range tests {
		f := newFixture(t)
		f.cfg.Manager.Strategy = StrategyBreadthFirst
		f.cfg.Manager.MaxFetchesPerScript = tt.limit
		f.add(pages...)
		res := f.mustRun()
		if got := batchURLs(t, f, 1); !slices.Equal(got, tt.want) {
			t.Errorf("limit %d: batch %v\nwant %v", tt.limit, got, tt.want)
		}
		if capped := len(pages) - 2 - res.URLs; res.Stats.ScriptCapped != capped {
			t.Errorf("limit %d: %d script-capped, want %d", tt.limit, res.Stats.ScriptCapped, capped)
		}
	}
}

// max_site_pages counts the pages of a site fetched, tried or scheduled:
// new pages wait once it is reached, revisits go on.
func TestRunSitePagesLimit(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.Strategy = StrategyBreadthFirst
	f.cfg.Manager.MaxSitePages = 3
	f.add(
		fetchedPage("http://a.cl/", 30),
		page{url: "http://a.cl/1", state: linkgraph.StateFailed, failures: 1}, // tried: holds a slot
		page{url: "http://a.cl/2"},
		page{url: "http://a.cl/3"},
		page{url: "http://a.cl/4"},
		page{url: "http://b.cl/"},
	)
	res := f.mustRun()
	want := []string{"http://a.cl/", "http://a.cl/1", "http://a.cl/2", "http://b.cl/"}
	if got := batchURLs(t, f, 1); !slices.Equal(got, want) || res.Stats.SiteFull != 2 {
		t.Errorf("batch %v (site full %d), want %v", got, res.Stats.SiteFull, want)
	}
	// The scheduled pages hold the slots now: nothing of a.cl is left.
	_, err := f.run()
	if !errors.Is(err, collection.ErrNothingToDo) || !strings.Contains(err.Error(), "max_site_pages (3): 2") {
		t.Errorf("second run: %v", err)
	}
}

func jsonUnmarshalMeta(tx *linkgraph.Tx, key string, v any) error {
	return json.Unmarshal(tx.ScoreMeta(key), v)
}

// robots.jsonl carries the stored robots.txt of the batch's sites that
// is younger than robots_max_age and a definite answer; servers.jsonl the
// server estimates and the known addresses. Both are written before
// batch.tsv.
func TestRunSidecars(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.Strategy = StrategyBreadthFirst
	f.add(page{url: "http://fresh.cl/"}, page{url: "http://old.cl/"}, page{url: "http://err.cl/"},
		page{url: "http://none.cl/"}, page{url: "http://gone.cl/"}, page{url: "http://unreach.cl/"},
		page{url: "http://fresh.cl:8080/"}, page{url: "http://notinbatch.cl/", state: linkgraph.StateExcluded})
	robots := func(status int, age time.Duration, body, errText string) func(*linkgraph.Site) {
		return func(s *linkgraph.Site) {
			s.RobotsStatus, s.RobotsFetched, s.RobotsBody, s.RobotsErr = status, testNow.Add(-age), body, errText
		}
	}
	f.site("http://fresh.cl", robots(200, time.Hour, "User-agent: *\nDisallow: /x\n", ""))
	f.site("http://old.cl", robots(200, 25*time.Hour, "User-agent: *\n", ""))
	f.site("http://err.cl", robots(503, time.Hour, "", ""))
	f.site("http://gone.cl", robots(404, time.Hour, "", ""))
	f.site("http://unreach.cl", robots(0, time.Hour, "", "dial tcp: refused"))
	f.site("http://notinbatch.cl", robots(200, time.Hour, "", ""))
	est := func(connect, response float64, at time.Time) func(*linkgraph.Site) {
		return func(s *linkgraph.Site) {
			s.ConnectMs, s.ResponseMs, s.RequestsPerConn, s.EstimatesAt = connect, response, 12, at
		}
	}
	f.site("http://fresh.cl", est(10, 100, testNow.Add(-2*time.Hour)))
	f.site("http://fresh.cl:8080", est(30, 300, testNow.Add(-time.Hour))) // same host, newer: wins
	f.site("http://old.cl", est(5, 50, testNow.Add(-48*time.Hour)))
	f.site("http://none.cl", func(s *linkgraph.Site) { s.IP = "10.0.0.7" }) // an address alone (a shard deferred it)
	res := f.mustRun()
	b := f.col.Batch(1)
	rs, err := fetchlog.ReadRobots(b.RobotsPath())
	if err != nil {
		t.Fatal(err)
	}
	var sites []string
	for _, r := range rs {
		sites = append(sites, r.Site)
	}
	if want := []string{"http://fresh.cl", "http://gone.cl"}; !slices.Equal(sites, want) || res.Robots != 2 {
		t.Errorf("robots.jsonl sites %v (result %d), want %v", sites, res.Robots, want)
	}
	if rs[0].Body != "User-agent: *\nDisallow: /x\n" || rs[0].Status != 200 || !rs[0].Fetched.Equal(testNow.Add(-time.Hour)) {
		t.Errorf("robots line %+v", rs[0])
	}
	ss, err := fetchlog.ReadServers(b.ServersPath())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 || ss[0].Host != "fresh.cl" || ss[0].ConnectMs != 30 || ss[1].Host != "none.cl" || ss[1].IP != "10.0.0.7" || ss[2].Host != "old.cl" || ss[2].RequestsPerConn != 12 {
		t.Errorf("servers.jsonl %+v", ss)
	}
	h, _ := readBatch(t, f.col, 1)
	if h.Counts["robots"] != 2 || h.Counts["servers"] != 3 || h.Params["robots_max_age"] != "24h0m0s" {
		t.Errorf("header %+v", h)
	}

	// robots_max_age 0 sends none.
	f2 := newFixture(t)
	f2.cfg.Manager.RobotsMaxAge = 0
	f2.add(page{url: "http://fresh.cl/"})
	f2.site("http://fresh.cl", robots(200, time.Minute, "", ""))
	if res := f2.mustRun(); res.Robots != 0 {
		t.Errorf("robots_max_age 0: %d robots lines", res.Robots)
	}
}

// A manager killed after the side files but before batch.tsv leaves a
// directory the next run removes and reuses.
func TestRunRemovesSidecarsWithoutBatch(t *testing.T) {
	f := smallWebFixture(t, StrategyBacklink)
	dir := f.col.Batch(1).Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{collection.BatchRobotsFile, collection.BatchServersFile, ".batch.tsv.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res := f.mustRun(); res.Batch != 1 {
		t.Errorf("batch %d, want 1", res.Batch)
	}
	if _, err := os.Stat(filepath.Join(dir, ".batch.tsv.tmp-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
}

// The OPIC cash moves with the batch: a run stores it, a cancelled batch
// keeps it (it records fetches, not the batch), and a run on the same
// graph moves nothing more.
func TestRunKeepsOPICState(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.Strategy = StrategyOPIC
	f.add(page{url: pA, state: linkgraph.StateFetched, visits: 1, fetched: daysAgo(30), links: []string{pB, pC}}, page{url: pB}, page{url: pC})
	first := f.mustRun()
	if _, err := f.cancel(false); err != nil {
		t.Fatal(err)
	}
	second := f.mustRun()
	a, _ := os.ReadFile(first.File)
	b, _ := os.ReadFile(second.File)
	if string(a) != string(b) {
		t.Errorf("the batch after a cancel differs:\n%s\n%s", a, b)
	}
	var st opicState
	f.view(func(tx *linkgraph.Tx) error { return jsonUnmarshalMeta(tx, opicMeta, &st) })
	if st.Runs != 2 || st.Distributed != 0 {
		t.Errorf("opic state %+v, want 2 runs, nothing distributed in the second", st)
	}
	_, entries := readBatch(t, f.col, 1)
	for _, e := range entries {
		if e.URL == pB && e.Kind != batch.KindNew {
			t.Errorf("entry %+v", e)
		}
	}
}
