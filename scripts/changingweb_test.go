package scripts_test

// A crawl of the changing test web (pkg/testweb's Config.Change, issue
// 35) through the real binaries and scripts/crawl.sh, twice: the recrawl
// gets 304 Not Modified from honest sites for the pages that did not
// change and the new versions of those that did, and the first crawl
// already took in compressed and chunked answers (issue 37). The
// recrawl writes the pages that did not change as revisit records that
// refer to the first crawl's, and those that did whole (issue 37); the
// seeder stops trusting the dates of lying sites (issue 35).

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// changingWeb is the web crawled: pages changing every 2 s to 400 s on
// average (two decades and more), the default validator policies (60 %
// honest, 20 % none, 20 % lying), half the sites compressing and a third
// chunking. Seed 15 puts about a fifth of the pages on lying sites and a
// fifth on sites without validators, as the shares say (with seed 12,
// only 3 of 207 pages were on lying sites).
var changingWeb = testweb.Config{Seed: 15, Hosts: 20, MaxPages: 30, Change: true,
	ChangeIntervalMin: 2 * time.Second, ChangeIntervalMax: 400 * time.Second, CompressShare: 0.5, ChunkedShare: 0.3}

func TestRecrawlChangingWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("the recrawl of the changing web crawls the test web; skipped in -short mode")
	}
	bin := t.TempDir()
	buildBinaries(t, bin)
	// Versions count from ten minutes ago: the first crawl meets pages
	// at versions above 0 already.
	cfg := changingWeb
	cfg.TimeOrigin = time.Now().Add(-10 * time.Minute)
	e := newCrawlEnv(t, bin, cfg, 8)
	web := e.web
	col := e.newCollection(t)

	// The first crawl, to an empty frontier (min_revisit is a week).
	start := time.Now()
	if r := e.crawl(nil, col, "1000"); r.code != 0 {
		t.Fatalf("first crawl: exit %d\n%s", r.code, r.stderr)
	}
	first := web.Requests()
	t.Logf("first crawl: %d requests in %v", len(first), time.Since(start).Round(time.Millisecond))
	checkCodings(t, bin, col, web, first)

	// The recrawl: one batch, every fetched page a revisit.
	time.Sleep(2 * time.Second)
	if r := e.crawl([]string{"WIRE_MANAGER_MIN_REVISIT=1s"}, col, "1"); r.code != 0 {
		t.Fatalf("recrawl: exit %d\n%s", r.code, r.stderr)
	}
	all := web.Requests()
	second := all[len(first):]
	t.Logf("recrawl: %d requests", len(second))

	// What the crawler last got of each page: its version.
	last := map[string]int{}
	key := func(r testweb.Request) string { return r.Host + " " + r.Path }
	for _, r := range first {
		if r.Status == 200 {
			last[key(r)] = r.Version
		}
	}
	var notModified, changed, conditional, lyingAsked int
	var newVersions, kept []string
	for _, r := range second {
		prev, seen := last[key(r)]
		policy := web.Validators(r.Host)
		pageURL := "http://" + r.Host + ":" + strconv.Itoa(web.Port()) + r.Path
		if r.Conditional {
			conditional++
			if policy == testweb.ValidatorsNone {
				t.Errorf("%s: a conditional request to a site that sends no validators", pageURL)
			}
			if policy == testweb.ValidatorsLying {
				lyingAsked++
			}
		}
		switch {
		case r.Status == 304:
			notModified++
			vStart, _ := web.VersionAt(pageURL, r.Start)
			vEnd, _ := web.VersionAt(pageURL, r.End)
			if policy != testweb.ValidatorsHonest || !seen || vStart != prev && vEnd != prev {
				t.Errorf("%s: 304 from a %v site, live version %d..%d, the crawler's copy %d (known %v)", pageURL, policy, vStart, vEnd, prev, seen)
			}
			if prev > 0 {
				kept = append(kept, pageURL+" "+strconv.Itoa(prev))
			}
		case r.Status == 200 && seen && r.Conditional && policy == testweb.ValidatorsHonest:
			if r.Version == prev {
				t.Errorf("%s: 200 to a conditional request for the live version %d of an honest site", pageURL, prev)
			}
			changed++
			if r.Version > 0 {
				newVersions = append(newVersions, pageURL+" "+strconv.Itoa(r.Version))
			}
		}
	}
	t.Logf("recrawl: %d conditional requests (%d to lying sites), %d answers 304 (%d at a version above 0), %d pages of honest sites changed",
		conditional, lyingAsked, notModified, len(kept), changed)
	if notModified == 0 || changed == 0 || lyingAsked == 0 {
		t.Fatalf("the recrawl saw %d answers 304, %d changed pages of honest sites, %d conditional requests to lying sites: want some of each",
			notModified, changed, lyingAsked)
	}
	// The collection holds the new versions, and keeps the text of a page
	// that answered 304.
	if len(newVersions) == 0 || len(kept) == 0 {
		t.Fatalf("%d new versions above 0, %d pages kept at a version above 0: want some of each", len(newVersions), len(kept))
	}
	for _, list := range [][]string{newVersions[:min(len(newVersions), 8)], kept[:min(len(kept), 4)]} {
		for _, uv := range list {
			u, v, _ := strings.Cut(uv, " ")
			text := run(t, nil, filepath.Join(bin, "gatherer"), "cat", "--collection", col, u)
			if !strings.Contains(text, "Actualización "+v) {
				t.Errorf("gatherer cat %s: the text of version %s is not what is stored:\n%s", u, v, text)
			}
		}
	}

	// The recrawl's WARC records (issue 37): unchanged pages are revisits
	// that refer to the first crawl's records, changed ones are whole.
	revisits, identical, whole := checkRevisits(t, bin, col, web, second, last)
	t.Logf("recrawl: %d server-not-modified and %d identical-payload-digest revisits, %d changed pages written whole", revisits, identical, whole)
	if revisits == 0 || identical == 0 || whole == 0 {
		t.Errorf("the recrawl wrote %d server-not-modified and %d identical-payload-digest revisits and %d changed pages: want some of each", revisits, identical, whole)
	}
	// graph.db holds every capture the WARC files do: the upgrade of old
	// collections finds nothing to record.
	if out := run(t, nil, filepath.Join(bin, "seeder"), "captures", "--collection", col); !strings.HasPrefix(out, "0 stored captures recorded") {
		t.Errorf("seeder captures on a collection crawled with captures: %s", out)
	}

	checkValidatorTrust(t, bin, col, web)
}

// checkValidatorTrust checks what the seeder made of each site's dates
// after the recrawl (issue 35): a lying site (Last-Modified: the time of
// the request) whose unchanged pages the recrawl fetched three times or
// more is no longer trusted, no honest site loses the trust, a site that
// sends no dates has nothing checked; manager explain says so.
func checkValidatorTrust(t *testing.T, bin, col string, web *testweb.Web) {
	t.Helper()
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var lyingPage, honestPage string
	untrusted := map[testweb.ValidatorPolicy]int{}
	err = g.View(func(tx *linkgraph.Tx) error {
		return tx.ForEachSite(func(s *linkgraph.Site) error {
			host := s.Key[strings.Index(s.Key, "://")+3:]
			host = host[:strings.LastIndexByte(host, ':')]
			policy := web.Validators(host)
			v := s.Validators
			switch {
			case !v.Trusted():
				untrusted[policy]++
				if policy == testweb.ValidatorsLying && lyingPage == "" {
					lyingPage = s.Key + "/"
				}
			case policy == testweb.ValidatorsHonest && v != nil && v.Agree > 0 && honestPage == "":
				honestPage = s.Key + "/"
			}
			if policy == testweb.ValidatorsNone && v != nil {
				t.Errorf("%s sends no dates, but has %+v checked", s.Key, v)
			}
			if policy == testweb.ValidatorsLying && v != nil && v.Disagree >= linkgraph.UntrustedMin && v.Trusted() {
				t.Errorf("%s lies and disagreed %d times of %d, but is trusted", s.Key, v.Disagree, v.Agree+v.Disagree)
			}
			return nil
		})
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sites whose dates are not trusted, by policy: %v", untrusted)
	if untrusted[testweb.ValidatorsLying] == 0 || untrusted[testweb.ValidatorsHonest] != 0 {
		t.Errorf("untrusted sites by policy %v: want some lying ones and no honest one", untrusted)
	}
	for page, want := range map[string]string{lyingPage: "not trusted:", honestPage: "trusted:"} {
		if page == "" {
			continue
		}
		out := run(t, nil, filepath.Join(bin, "manager"), "explain", "--collection", col, page)
		if !strings.Contains(out, "validators") || !strings.Contains(out, want) {
			t.Errorf("manager explain %s: want a validators line saying %q:\n%s", page, want, out)
		}
	}
}

// checkCodings checks that the first crawl got compressed and chunked
// answers and stored their pages' text.
func checkCodings(t *testing.T, bin, col string, web *testweb.Web, reqs []testweb.Request) {
	t.Helper()
	seen := map[string]int{}
	checked := 0
	for _, r := range reqs {
		if r.Status != 200 {
			continue
		}
		if r.Chunked {
			seen["chunked"]++
		}
		if r.Encoding == "" && !r.Chunked {
			continue
		}
		seen[r.Encoding]++
		pageURL := "http://" + r.Host + ":" + strconv.Itoa(web.Port()) + r.Path
		info, ok := web.PageAt(pageURL, r.Start)
		if !ok || info.Title == "" || checked >= 12 {
			continue
		}
		checked++
		text := run(t, nil, filepath.Join(bin, "gatherer"), "cat", "--collection", col, pageURL)
		if !strings.Contains(text, strings.Fields(info.Title)[0]) {
			t.Errorf("gatherer cat %s (%q, chunked %v): the text does not hold the title %q:\n%s", pageURL, r.Encoding, r.Chunked, info.Title, text)
		}
	}
	t.Logf("first crawl: answers with a body: %v; %d pages' text checked", seen, checked)
	if seen["gzip"] == 0 || seen["br"] == 0 || seen["chunked"] == 0 || checked < 5 {
		t.Errorf("the crawl got %v answers (%d checked): want gzip, br and chunked ones", seen, checked)
	}
}
