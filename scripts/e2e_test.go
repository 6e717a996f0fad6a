// Package scripts_test runs the whole crawl cycle end to end: it builds
// the four binaries, starts the synthetic test web on loopback, runs
// scripts/crawl.sh for three cycles, and checks the result both from the
// server's records (politeness, robots, scope) and from the collection
// (text by URL, the stored link graph against the test web's truth).
package scripts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/testweb/politeaudit"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

const (
	e2eHosts  = 60
	e2eWait   = 100 * time.Millisecond
	e2eCycles = 3
	// e2eAddresses spreads the hosts over 8 loopback addresses (7 or 8
	// host names each, a bare name on its site's address), so that the
	// per-address rules are exercised: e2ePerIP requests in flight at
	// most to one address, starts e2eAddressWait apart. With 7-8 names an
	// address asked at most every 100 ms each, the floor of 25 ms (40
	// starts a second) seldom holds a request back: the crawl takes about
	// as long as before.
	e2eAddresses   = 8
	e2ePerIP       = 3
	e2eAddressWait = 25 * time.Millisecond
)

// e2eWeb is the test web crawled: the heterogeneous one, which behaves
// like a real web in time (slow hosts, Crawl-delays, big sites, bare
// names redirecting to www names), on several addresses, with sitemaps,
// mostly HTTPS (plain HTTP redirecting to it, duplicates across
// schemes, HTTPS-only sites, broken certificates; the harvester trusts
// its CA), and half its sites subdomains of a few registrable domains.
var e2eWeb = testweb.Config{Seed: 7, Hosts: e2eHosts, MaxPages: 120, Heterogeneous: true, Addresses: e2eAddresses, Sitemaps: true, HTTPSShare: e2eHTTPSShare,
	SubdomainShare: e2eSubdomainShare}

// e2eSubdomainShare is the share of the sites of the e2e web renamed as
// subdomains of a few registrable domains (two: uni1.cl and
// hosting1.cl), each on several addresses, some holding several of its
// sites, a Crawl-delay site sharing its address with a sibling: the
// politeness unit (address, registrable domain) of issue 34.
const e2eSubdomainShare = 0.5

// e2eHTTPSShare is the share of the sites of the e2e web served over TLS.
const e2eHTTPSShare = 0.85

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestCrawlCycleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl skipped in -short mode")
	}
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	bin := stageBinaries(t)

	web, err := testweb.New(e2eWeb)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()

	col := filepath.Join(t.TempDir(), "col")
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(web.SeedURLs(15), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, web.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WIRE_BIN=" + bin}
	run(t, env, filepath.Join(bin, "seeder"), "init", "--collection", col,
		"--harvester-allow-private", "--harvester-dns-server", web.DNSAddr(), "--harvester-ca-file", ca,
		"--harvester-wait", e2eWait.String(), "--harvester-connections", "30",
		"--harvester-connections-per-ip", fmt.Sprint(e2ePerIP), "--harvester-address-wait", e2eAddressWait.String(),
		"--harvester-total-timeout", "10s",
		"--manager-batch-size", "400", "--manager-strategy", "backlink", "--scope-domains", "cl")
	run(t, env, filepath.Join(bin, "seeder"), "add", "--collection", col, seeds)
	// The serial start for the three batches: each holds the links of
	// the one before (the sitemap check below needs robots.txt, then
	// the sitemaps, then their pages); the harvester follows the batches
	// as by default.
	run(t, append(env, "WIRE_SERIAL_BATCHES="+fmt.Sprint(e2eCycles)), "bash", "crawl.sh", col, fmt.Sprint(e2eCycles))

	cfg, err := config.Load(config.Sources{File: filepath.Join(col, config.FileName), NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Harvester.Wait.D() != e2eWait || !cfg.Harvester.AllowPrivate || cfg.Harvester.AddressWait.D() != e2eAddressWait {
		t.Fatalf("seeder init did not write the flags into the config: %+v", cfg.Harvester)
	}

	fetched := fetchedPages(t, col)
	if len(fetched) < 100 {
		t.Fatalf("only %d pages fetched in %d cycles", len(fetched), e2eCycles)
	}
	t.Logf("%d pages fetched, %d requests served", len(fetched), len(web.Requests()))

	rep := checkPoliteness(t, web, cfg)
	if !rep.OK() {
		explainGap(t, col, rep)
	}
	if rep.Addresses < 2 || rep.SharedUnits == 0 || rep.SharedAddresses == 0 || rep.DelayGaps == 0 {
		t.Errorf("the audit checked too little: %d addresses, %d units of several names, %d addresses of several units, %d gaps under a Crawl-delay",
			rep.Addresses, rep.SharedUnits, rep.SharedAddresses, rep.DelayGaps)
	}
	checkSubdomains(t, web)
	checkTextByURL(t, bin, col, web, fetched)
	checkTLS(t, bin, col, web, fetched)
	checkSchemes(t, col, fetched)
	checkLinkGraph(t, col, web, cfg, fetched)
	checkSitemaps(t, col, web)
	run(t, env, filepath.Join(bin, "seeder"), "check", "--collection", col)
	if out := run(t, env, filepath.Join(bin, "seeder"), "stats", "--collection", col); !strings.Contains(out, "sitemaps ") {
		t.Errorf("seeder stats says nothing of sitemaps:\n%s", out)
	}
}

// checkSitemaps: every page reachable only through a sitemap (the test
// web's hidden pages) of a site whose text sitemap was fetched in a batch
// seeded before a later batch was written was fetched in a later batch,
// and the crawl got that far
// for a few sites: robots.txt in the first batch, the sitemaps it names in
// the second, their pages in the third.
func checkSitemaps(t *testing.T, col string, web *testweb.Web) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(col, collection.BatchesDir, "*", collection.HarvestDir, fetchlog.LogFile))
	sort.Strings(logs)
	extraIn := map[string]int{} // host → batch (index) its text sitemap was fetched in
	fetchedIn := map[string]int{}
	for i, p := range logs {
		recs, err := fetchlog.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if !r.OK() {
				continue
			}
			fetchedIn[r.URL] = i
			if strings.HasSuffix(r.URL, "/sitemap-extra.txt") && r.Status == 200 {
				extraIn[hostOf(r.URL)] = i
			}
		}
	}
	// planned[b]: a batch after b was written once b was seeded (batches
	// overlap: the one written beside b's harvest cannot hold its links).
	planned := make([]bool, len(logs))
	for b := range logs {
		seeded, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(logs[b])), collection.MarkerFile(collection.StageSeeded)))
		if err != nil {
			continue
		}
		for _, q := range logs[b+1:] {
			if w, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(q)), collection.BatchFile)); err == nil && !w.ModTime().Before(seeded.ModTime()) {
				planned[b] = true
			}
		}
	}
	checked := 0
	for _, u := range web.SitemapOnlyURLs() {
		b, ok := extraIn[hostOf(u)]
		if !ok || !planned[b] {
			continue
		}
		checked++
		if at, ok := fetchedIn[u]; !ok || at <= b {
			t.Errorf("sitemap-only page %s not fetched after its sitemap (batch %d)", u, b+1)
		}
	}
	if checked < 3 {
		t.Errorf("only %d sitemap-only pages checked (text sitemaps fetched: %v)", checked, extraIn)
	}
	t.Logf("%d sitemap-only pages of %d sites crawled through their sitemaps", checked, len(extraIn))
}

// hostOf is the host of a URL, without port.
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Hostname()
}

// fetchedPages returns the fetch log records with a response, from every
// batch's harvest.
func fetchedPages(t *testing.T, col string) []fetchlog.Record {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(col, collection.BatchesDir, "*", collection.HarvestDir, fetchlog.LogFile))
	if len(logs) < e2eCycles {
		t.Fatalf("%d harvests, want %d", len(logs), e2eCycles)
	}
	var out []fetchlog.Record
	for _, p := range logs {
		recs, err := fetchlog.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.OK() {
				out = append(out, r)
			}
		}
	}
	return out
}

// checkPoliteness reads the server's records: no robots-forbidden URL was
// requested, nothing out of scope, every request with the crawler's
// User-Agent; and the audit by server (package politeaudit, with the
// collection's harvester settings), across every harvest of the crawl:
// never two requests in flight to one politeness unit (the host names of
// one registrable domain on one address: www.x.cl and its alias x.cl),
// never less than the wait nor the Crawl-delay of a unit's names between
// two of its requests, at most connections_per_ip requests in flight to
// an address and their starts address_wait apart, never two connections
// to one host name.
// It returns the audit's report.
func checkPoliteness(t *testing.T, web *testweb.Web, cfg config.Config) politeaudit.Report {
	t.Helper()
	inScope := map[string]bool{}
	for _, h := range web.HostNames() {
		inScope[h] = true
	}
	reqs := web.Requests()
	for _, r := range reqs {
		if !inScope[r.Host] {
			t.Errorf("out-of-scope host requested: %s%s", r.Host, r.Path)
			continue
		}
		u := fmt.Sprintf("http://%s:%d%s", r.Host, web.Port(), r.Path)
		if r.Path != "/robots.txt" && web.Disallowed(u, cfg.Crawl.ProductToken) {
			t.Errorf("robots.txt forbids %s, but it was requested", u)
		}
		if r.UserAgent != cfg.Crawl.UserAgent {
			t.Errorf("request %s with User-Agent %q", u, r.UserAgent)
		}
	}
	rules := politeaudit.FromConfig(cfg.Harvester)
	rep := politeaudit.Audit(web, rules, politeaudit.Log{Requests: reqs, Conns: web.Conns()})
	var table strings.Builder
	if err := rep.WriteTable(&table, "e2e"); err != nil {
		t.Fatal(err)
	}
	t.Logf("politeness audit by server:\n%s", table.String())
	if rep.MaxInFlightUnit > 1 || (rules.ConnectionsPerIP > 0 && rep.MaxInFlightAddress > rules.ConnectionsPerIP) {
		t.Errorf("in flight: %d at once to unit %s, %d at once to address %s (cap %d)", rep.MaxInFlightUnit, rep.MaxInFlightUnitAt,
			rep.MaxInFlightAddress, rep.MaxInFlightAddressAt, rules.ConnectionsPerIP)
	}
	if !rep.OK() {
		t.Errorf("politeness: %d requests to one unit while another was in flight, %d over the per-IP cap, %d gaps under the wait or Crawl-delay (worst %s), "+
			"%d starts under the address floor (worst %s), %d connection overlaps", rep.UnitOverlaps, rep.AddressOverCap, rep.ShortGaps, rep.WorstGap,
			rep.FloorViolations, rep.WorstFloor, rep.ConnOverlaps)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	return rep
}

// checkSubdomains: the crawl reached sites of a registrable domain of
// the subdomain web on several addresses, so that the audit judged the
// politeness unit (address, registrable domain) where it differs from
// the domain alone.
func checkSubdomains(t *testing.T, web *testweb.Web) {
	t.Helper()
	domainOf := map[string]string{}
	for dom, names := range web.Subdomains() {
		for _, n := range names {
			domainOf[n] = dom
		}
	}
	addrs := map[string]map[string]bool{}
	for _, r := range web.Requests() {
		if dom, ok := domainOf[r.Host]; ok && r.Addr != "" {
			if addrs[dom] == nil {
				addrs[dom] = map[string]bool{}
			}
			addrs[dom][r.Addr] = true
		}
	}
	most := 0
	for _, a := range addrs {
		most = max(most, len(a))
	}
	if most < 2 {
		t.Errorf("the crawl reached the subdomain web's domains on at most %d address(es): %v", most, addrs)
	}
}

// explainGap logs, after a politeness failure, what the harvester's own
// files of the collection say of the unit of the worst gap: each batch's
// fetch log lines of its names (when each request was sent and how long
// it took) and its servers.jsonl lines (the pause carried to the next
// batch), so that a failure seen only in CI can be read.
func explainGap(t *testing.T, col string, rep politeaudit.Report) {
	t.Helper()
	unit, _, ok := strings.Cut(rep.WorstGap.Where, "@")
	if !ok || unit == "" {
		return
	}
	ofUnit := func(host string) bool { return host == unit || strings.HasSuffix(host, "."+unit) }
	dirs, _ := filepath.Glob(filepath.Join(col, "batches", "*", "harvest"))
	var b strings.Builder
	for _, d := range dirs {
		batchID := filepath.Base(filepath.Dir(d))
		if f, err := os.Open(filepath.Join(d, fetchlog.LogFile)); err == nil {
			recs, _ := fetchlog.Read(f)
			f.Close()
			for _, r := range recs {
				if u, err := url.Parse(r.URL); err == nil && ofUnit(u.Hostname()) {
					fmt.Fprintf(&b, "  batch %s fetch log: %s %s status %d %d ms %s\n", batchID, r.Fetched.Format("15:04:05.000"), r.URL, r.Status, r.Millis, r.Err)
				}
			}
		}
		servers, _ := fetchlog.ReadServers(filepath.Join(d, fetchlog.ServersFile))
		for _, l := range servers {
			if ofUnit(l.Host) {
				fmt.Fprintf(&b, "  batch %s servers: %s ip %s notBefore %s\n", batchID, l.Host, l.IP, l.NotBefore.Format("15:04:05.000"))
			}
		}
	}
	t.Logf("the harvester's view of unit %s:\n%s", unit, b.String())
}

// checkTextByURL asks `gatherer cat URL` for fetched HTML pages and checks
// the text holds the words of the page's title.
func checkTextByURL(t *testing.T, bin, col string, web *testweb.Web, fetched []fetchlog.Record) {
	t.Helper()
	checked := 0
	for _, r := range fetched {
		if r.Status != 200 || r.MIME != "text/html" || checked >= 25 {
			continue
		}
		info, ok := web.Page(r.URL)
		if !ok || info.Title == "" {
			continue
		}
		text := run(t, nil, filepath.Join(bin, "gatherer"), "cat", "--collection", col, r.URL)
		if strings.TrimSpace(text) == "" {
			t.Errorf("gatherer cat %s: empty text", r.URL)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d pages' text checked", checked)
	}
}

// checkLinkGraph compares the stored out-links of every fetched page with
// the test web's truth: its links, normalised, kept in scope.
func checkLinkGraph(t *testing.T, col string, web *testweb.Web, cfg config.Config, fetched []fetchlog.Record) {
	t.Helper()
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	norm := urlnorm.New(cfg.Scope.MaxURLLength)
	sc := scope.MustNew(cfg.Scope)
	compared := 0
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, r := range fetched {
			info, ok := web.Page(r.URL)
			if !ok {
				// A broken link: the server answered 404 and the page has no links.
				if r.Status != info.Status {
					t.Errorf("fetched %s: status %d, the test web answers %d", r.URL, r.Status, info.Status)
				}
				continue
			}
			var truth []string
			if info.Status >= 300 && info.Status < 400 {
				truth = []string{info.Location}
			} else if info.Status == 200 && strings.HasPrefix(info.MIME, "text/html") {
				truth = info.Links
			} else {
				continue
			}
			want := map[uint64]string{}
			twin := map[uint64]uint64{} // an http link's id -> its https twin's, for an upgraded site
			for _, l := range truth {
				n, err := norm.Normalize(l)
				if err != nil || sc.Check(n) != nil {
					continue
				}
				// A link to an http site the seeder found redirecting to
				// https is taken on https once it knew (Site.Upgrade).
				upID, upOK := uint64(0), false
				if key := urlnorm.SiteKey(n); strings.HasPrefix(key, "http://") {
					if sid, ok := tx.SiteID(key); ok {
						if site, err := tx.Site(sid); err == nil && site.Upgrade != "" {
							upID, upOK = tx.LookupURL(site.Upgrade + n[len(key):])
						}
					}
				}
				id, ok := tx.LookupURL(n)
				switch {
				case ok && upOK:
					twin[id] = upID
				case upOK:
					id = upID
				case !ok:
					// Only the per-site cap may keep an in-scope link out.
					return fmt.Errorf("page %s links to %s, which has no id", r.URL, n)
				}
				want[id] = n
			}
			id, ok := tx.LookupURL(r.URL)
			if !ok {
				return fmt.Errorf("fetched page %s has no id", r.URL)
			}
			got, err := tx.OutLinks(id)
			if err != nil {
				return err
			}
			var missing, extra []string
			for wid, u := range want {
				if tw, ok := twin[wid]; ok && !got.Contains(uint32(wid)) && got.Contains(uint32(tw)) {
					// Taken on https: the http id is not linked.
					want[tw] = u
					continue
				}
				if !got.Contains(uint32(wid)) {
					missing = append(missing, u)
				}
			}
			for _, gid := range got.ToArray() {
				if _, ok := want[uint64(gid)]; !ok {
					d, _ := tx.Doc(uint64(gid))
					extra = append(extra, fmt.Sprint(d.URL))
				}
			}
			if len(missing) > 0 || len(extra) > 0 {
				t.Errorf("out-links of %s: missing %v, extra %v", r.URL, missing, extra)
			}
			compared++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if compared < 50 {
		t.Errorf("only %d pages' links compared", compared)
	}
}

// checkTLS asks `gatherer show` for https pages of a site with a good
// certificate and of one with a broken one: the TLS facts the harvester
// recorded are printed, and the verdict is the test web's truth.
func checkTLS(t *testing.T, bin, col string, web *testweb.Web, fetched []fetchlog.Record) {
	t.Helper()
	seen := map[bool]bool{}
	for _, r := range fetched {
		if r.Status != 200 || r.MIME != "text/html" || !strings.HasPrefix(r.URL, "https:") {
			continue
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			continue
		}
		truth, _ := web.TLS(u.Hostname())
		broken := truth.Trouble == testweb.TroubleExpired || truth.Trouble == testweb.TroubleWrongName || truth.Trouble == testweb.TroubleSelfSigned
		if seen[broken] {
			continue
		}
		seen[broken] = true
		out := run(t, nil, filepath.Join(bin, "gatherer"), "show", "--collection", col, r.URL)
		want := "cert       valid for the name"
		if broken {
			want = "cert       NOT valid: " + map[testweb.TLSTrouble]string{testweb.TroubleExpired: "expired",
				testweb.TroubleWrongName: "wrong-name", testweb.TroubleSelfSigned: "self-signed"}[truth.Trouble]
		}
		if !strings.Contains(out, "tls        TLS 1.") || !strings.Contains(out, want) {
			t.Errorf("gatherer show %s (%s): want %q in\n%s", r.URL, truth.Trouble, want, out)
		}
	}
	if !seen[true] || !seen[false] {
		t.Errorf("https pages with good and broken certificates fetched: %v", seen)
	}
}

// checkSchemes reads graph.db and the gathered records: the seeder marked
// http sites that redirect to https (Site.Upgrade), and of every page
// fetched on both schemes (a site serving the same pages on both) one
// copy is a duplicate of the other: its text is stored once.
func checkSchemes(t *testing.T, col string, fetched []fetchlog.Record) {
	t.Helper()
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	upgraded := 0
	err = g.View(func(tx *linkgraph.Tx) error {
		return tx.ForEachSite(func(s *linkgraph.Site) error {
			if s.Upgrade == "" {
				return nil
			}
			upgraded++
			from, err1 := url.Parse(s.Key)
			to, err2 := url.Parse(s.Upgrade)
			if err1 != nil || err2 != nil || from.Scheme != "http" || to.Scheme != "https" || from.Hostname() != to.Hostname() {
				t.Errorf("site %s upgraded to %s", s.Key, s.Upgrade)
			}
			return nil
		})
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	if upgraded == 0 {
		t.Error("no http site found redirecting to https")
	}
	// Pages fetched with a body on both schemes, by host and path.
	key := func(raw string) (string, string) {
		u, err := url.Parse(raw)
		if err != nil {
			return "", ""
		}
		return u.Scheme, u.Hostname() + u.RequestURI()
	}
	schemes := map[string]map[string]bool{}
	for _, r := range fetched {
		if r.Status != 200 || r.MIME != "text/html" {
			continue
		}
		sc, k := key(r.URL)
		if schemes[k] == nil {
			schemes[k] = map[string]bool{}
		}
		schemes[k][sc] = true
	}
	dup := map[string]bool{}
	docs, _ := filepath.Glob(filepath.Join(col, collection.BatchesDir, "*", "parsed", "docs.jsonl"))
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			var d struct {
				URL         string `json:"url"`
				DuplicateOf string `json:"duplicateOf"`
			}
			if line == "" || json.Unmarshal([]byte(line), &d) != nil || d.DuplicateOf == "" {
				continue
			}
			_, k := key(d.URL)
			if _, ko := key(d.DuplicateOf); k == ko {
				dup[k] = true
			}
		}
	}
	pairs := 0
	for k, sc := range schemes {
		if sc["http"] && sc["https"] {
			pairs++
			if !dup[k] {
				t.Errorf("%s fetched on both schemes, neither copy a duplicate of the other", k)
			}
		}
	}
	t.Logf("%d http sites found redirecting to https; %d pages fetched on both schemes, stored once", upgraded, pairs)
}
