package scripts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/sitegraph"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestPartitions crawls one test web as two partitioned collections on a
// shared file system (crawl.partition 1/2 and 2/2, each the other's
// crawl.partition_peers), each with crawl.sh to an empty frontier and
// seeder exchange between rounds, until neither finds anything new, and
// the same web as one collection. The web has sites under a few
// registrable domains on six servers, shared by several domains each
// (docs/operations.md, "Partitioned collections"). Then:
//   - the two partitions fetched exactly the pages the single collection
//     fetched, none twice: every cross-partition link and every site
//     handed over arrived (manager.max_fetches_per_script 0: with 1, the
//     one query URL a script gets, and the pages only it links to, depend
//     on the order, which differs);
//   - no server was asked by both partitions, as the server saw it (each
//     request's address, attributed by the partition whose fetch log
//     holds its URL);
//   - both did work, and partition 1 (crawl.partition_lookup off: new
//     names go by their registrable domain) handed sites over (the names
//     resolved to the other partition's addresses), while partition 2
//     routed new names by the address it looked up;
//   - seeder exchange once more takes nothing in (each file once), and
//     seeder check passes on both;
//   - each published its site graph for the other, and the other's
//     manager ranked with it (its "global site rank" note); no exchange
//     file is left waiting once the other reported it taken, and manager
//     status shows the partition and what was sent and received.
func TestPartitions(t *testing.T) {
	longtest.Need(t, "two partitioned crawls of the test web (about 2 minutes)")
	bin := stageBinaries(t)
	e := newCrawlEnv(t, bin, testweb.Config{Seed: 7, Hosts: 40, MaxPages: 30, Addresses: 6, SubdomainShare: 0.5}, 6)
	settings := []string{"--manager-batch-size", "200", "--harvester-address-wait", "0s", "--manager-max-fetches-per-script", "0"}

	whole := e.newCollection(t, settings...)
	if r := e.crawl(nil, whole, "1000"); r.code != 0 {
		t.Fatalf("crawl.sh on the whole web: exit %d\n%s", r.code, r.stderr)
	}
	want := fetchedURLs(t, whole)
	if len(want) < 100 {
		t.Fatalf("the whole web's crawl fetched %d pages", len(want))
	}

	dir := t.TempDir()
	cols := []string{filepath.Join(dir, "p1"), filepath.Join(dir, "p2")}
	for i, col := range cols {
		flags := append(settings, "--crawl-partition", fmt.Sprintf("%d/2", i+1), "--crawl-partition-peers", cols[1-i])
		if i == 0 {
			// Partition 1 routes new names by their registrable domain,
			// so that its harvester meets names of partition 2's
			// addresses and sites are handed over; partition 2 looks
			// them up first (the default).
			flags = append(flags, "--crawl-partition-lookup=false")
		}
		e.newCollectionIn(t, col, flags...)
	}
	// Each publishes its (empty) site graph first, as seeder exchange
	// does after init: the rounds run the partitions one after the
	// other, and partition 2, which looks its seeds' names up, may find
	// all its sites and finish in round 1, before partition 1 (whose
	// seeds go by their domains' names) has seeded a batch.
	for _, col := range cols {
		e.wire(t, "seeder", "exchange", "--collection", col)
	}
	handed, located, global := 0, 0, map[string]bool{}
	for round := 1; ; round++ {
		if round > 12 {
			t.Fatal("the partitions still find new pages after 12 rounds")
		}
		news := 0
		for _, col := range cols {
			before := len(batchStates(t, col))
			r := e.crawl(nil, col, "1000")
			if r.code != 0 {
				t.Fatalf("round %d: crawl.sh %s: exit %d\n%s", round, col, r.code, r.stderr)
			}
			handed += len(handedOver.FindAllString(r.stdout, -1))
			if col == cols[1] {
				located += len(routedByAddress.FindAllString(r.stdout, -1))
			}
			if strings.Contains(r.stdout+r.stderr, "global site rank over ") {
				global[col] = true
			}
			news += len(batchStates(t, col)) - before
		}
		for _, col := range cols {
			r := e.wire(t, "seeder", "exchange", "--collection", col)
			if !strings.Contains(r.stdout, "nothing new") {
				news++
			}
		}
		if news == 0 {
			t.Logf("%d rounds", round)
			break
		}
	}
	if handed == 0 {
		t.Error("no site was handed over to the partition of its address")
	}
	if located == 0 {
		t.Error("partition 2 routed no new URL by its name's address (crawl.partition_lookup)")
	}
	auditPartitions(t, e, want, cols)
	auditSiteGraphs(t, e, cols, global)
}

// auditSiteGraphs checks the two partitions cols of TestPartitions, each
// the other's peer on a shared file system: each published its site
// graph for the other and its manager ranked with the other's (global:
// the collections whose crawl logged a global site rank), no exchange
// file is left waiting once taken, and manager status shows the
// partition and what was sent and received.
func auditSiteGraphs(t *testing.T, e *opsEnv, cols []string, global map[string]bool) {
	t.Helper()
	for i, col := range cols {
		j := 2 - i // the other partition's number
		if !global[col] {
			t.Errorf("partition %d: its manager never ranked with a global site graph", i+1)
		}
		sg, err := sitegraph.Read(sitegraph.PathFor(col, j))
		if err != nil || sg.From.I != i+1 || len(sg.Sites) == 0 || len(sg.Edges) == 0 {
			t.Errorf("partition %d's site graph for %d: %+v, %v", i+1, j, sg, err)
		}
		waiting, _ := filepath.Glob(filepath.Join(col, "exchange", "out", fmt.Sprintf("to-%d", j), "[0-9]*.sz"))
		if len(waiting) > 0 {
			t.Errorf("partition %d: %d exchange files still waiting after the other took every one: %v", i+1, len(waiting), waiting)
		}
		st := e.wire(t, "manager", "status", "--collection", col).stdout
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(fmt.Sprintf(`(?m)^partition   %d/2; peers %s$`, i+1, regexp.QuoteMeta(cols[1-i]))),
			regexp.MustCompile(fmt.Sprintf(`(?m)^exchange    partition %d: sent [1-9][0-9]* files, [1-9][0-9]* lines .*; received [1-9][0-9]* files, [1-9][0-9]* lines .*; 0 waiting to be taken, [1-9][0-9]* removed once taken; site graph .* old`, j)),
		} {
			if !want.MatchString(st) {
				t.Errorf("partition %d: manager status lacks %s:\n%s", i+1, want, st)
			}
		}
	}
}

// auditPartitions checks the crawl of a web as the partitioned
// collections cols against want, the pages the web's crawl as one
// collection fetched:
//   - the partitions fetched exactly those pages, none twice (by two
//     partitions, or twice by one: a resumed harvest fetches nothing
//     again), each partition some;
//   - no server was asked by two partitions, as the server saw it (each
//     request's address, attributed by the partition whose fetch log
//     holds its URL);
//   - seeder exchange once more takes nothing in (every file was taken
//     in), and seeder check passes on each.
func auditPartitions(t *testing.T, e *opsEnv, want map[string]int, cols []string) {
	t.Helper()
	got := map[string]int{}
	owner := map[string]int{} // URL → partition that fetched it
	for i, col := range cols {
		urls := fetchedURLs(t, col)
		if len(urls) == 0 {
			t.Errorf("partition %d fetched nothing", i+1)
		}
		for u, n := range urls {
			if n > 1 {
				t.Errorf("%s fetched %d times by partition %d", u, n, i+1)
			}
			got[u]++
			owner[u] = i + 1
		}
	}
	for u := range want {
		if got[u] == 0 {
			t.Errorf("%s: fetched by the whole web's crawl, by no partition", u)
		}
	}
	for u, n := range got {
		if n > 1 {
			t.Errorf("%s fetched by both partitions", u)
		}
		if want[u] == 0 {
			t.Errorf("%s fetched by a partition, not by the whole web's crawl", u)
		}
	}
	// As the servers saw it: each address asked by one partition.
	byAddr := map[string]map[int]bool{}
	for _, r := range e.web.Requests() {
		if r.Path == "/robots.txt" {
			continue
		}
		for u, p := range owner {
			if strings.HasSuffix(u, r.Path) && strings.Contains(u, "://"+r.Host+":") {
				if byAddr[r.Addr] == nil {
					byAddr[r.Addr] = map[int]bool{}
				}
				byAddr[r.Addr][p] = true
			}
		}
	}
	for addr, ps := range byAddr {
		if len(ps) > 1 {
			t.Errorf("address %s asked by partitions %v", addr, ps)
		}
	}
	for _, col := range cols {
		if r := e.wire(t, "seeder", "exchange", "--collection", col); !strings.Contains(r.stdout, "nothing new") {
			t.Errorf("%s: seeder exchange took something in again:\n%s", col, r.stdout)
		}
		e.wire(t, "seeder", "check", "--collection", col)
	}

}

// handedOver is the seeder summary's partitions line with sites handed
// over.
var handedOver = regexp.MustCompile(`, [1-9][0-9]* sites handed over`)

// routedByAddress is the seeder summary's partitions line with new URLs
// routed by the address the seeder looked up.
var routedByAddress = regexp.MustCompile(`; [1-9][0-9]* new urls routed by their address`)

// fetchedURLs are the URLs of a collection's harvests with a response,
// each with the number of its responses.
func fetchedURLs(t *testing.T, col string) map[string]int {
	t.Helper()
	out := map[string]int{}
	logs, err := filepath.Glob(filepath.Join(col, "batches", "*", "harvest", "fetch.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		for _, r := range fetchRecords(t, l) {
			if r.OK() {
				out[r.URL]++
			}
		}
	}
	if _, err := os.Stat(col); err != nil {
		t.Fatal(err)
	}
	return out
}
