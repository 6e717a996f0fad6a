package scripts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/longtest"
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
//   - both did work, and handed sites over (the names resolved to the
//     other partition's addresses);
//   - seeder exchange once more takes nothing in (each file once), and
//     seeder check passes on both.
func TestPartitions(t *testing.T) {
	longtest.Need(t, "two partitioned crawls of the test web (about 2 minutes)")
	bin := t.TempDir()
	buildBinaries(t, bin)
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
		e.newCollectionIn(t, col, append(settings, "--crawl-partition", fmt.Sprintf("%d/2", i+1), "--crawl-partition-peers", cols[1-i])...)
	}
	handed := 0
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
	got := map[string]int{}
	owner := map[string]int{} // URL → partition that fetched it
	for i, col := range cols {
		urls := fetchedURLs(t, col)
		if len(urls) == 0 {
			t.Errorf("partition %d fetched nothing", i+1)
		}
		for u := range urls {
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
		if !want[u] {
			t.Errorf("%s fetched by a partition, not by the whole web's crawl", u)
		}
	}
	if handed == 0 {
		t.Error("no site was handed over to the partition of its address")
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

// fetchedURLs are the URLs of a collection's harvests with a response.
func fetchedURLs(t *testing.T, col string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	logs, err := filepath.Glob(filepath.Join(col, "batches", "*", "harvest", "fetch.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		for _, r := range fetchRecords(t, l) {
			if r.OK() {
				out[r.URL] = true
			}
		}
	}
	if _, err := os.Stat(col); err != nil {
		t.Fatal(err)
	}
	return out
}
