package harvester_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// TestShardOf pins the assignment of hosts to shards: it is part of the
// harvest format (every machine must agree), so it must never change.
func TestShardOf(t *testing.T) {
	got := fmt.Sprint(harvester.Of("www.uchile.cl", 4), harvester.Of("WWW.UCHILE.CL", 4), harvester.Of("a.cl", 4),
		harvester.Of("b.cl", 4), harvester.Of("c.cl", 4), harvester.Of("a.cl", 1), harvester.Of("a.cl", 1024))
	if got != "3 3 2 4 1 1 50" {
		t.Errorf("shards %s: the hash changed, which breaks sharded batches", got)
	}
	for _, tt := range []struct {
		in   string
		want string
	}{{"1/4", "1/4"}, {" 2/2 ", "2/2"}, {"1/1", ""}} {
		s, err := harvester.ParseShard(tt.in)
		if err != nil || s.String() != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v", tt.in, s, err)
		}
	}
	for _, bad := range []string{"0/4", "5/4", "1/0", "1", "a/b", "1/2/3", "-1/4", "1/2000"} {
		if _, err := harvester.ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	s := harvester.Shard{I: 2, N: 3}
	start := time.Date(2026, 11, 22, 2, 3, 11, 0, time.UTC)
	warc := s.WARCName("wire", 42, start)
	warc.Serial = 1
	if s.HarvestDir() != "harvest-shard-2-of-3" || s.Marker() != "harvested-shard-2-of-3.done" || warc.String() != "wire-20261122020311-000042-s2of3-00001.warc.gz" || s.PartialDir() != "harvest-shard-2-of-3.partial" {
		t.Errorf("shard names %q %q %q %q", s.HarvestDir(), s.Marker(), warc, s.PartialDir())
	}
	whole := harvester.Shard{}.WARCName("wire", 42, start)
	whole.Serial = 3
	if got := whole.String(); got != "wire-20261122020311-000042-s1of1-00003.warc.gz" {
		t.Errorf("whole batch's WARC name %s", got)
	}
}

// shardWeb is nine hosts of three pages, each on its own loopback
// address (each its own server).
func shardWeb(t *testing.T) (*ht.Web, []string) {
	var hosts []*ht.Host
	for i := 0; i < 9; i++ {
		h := pagesHost(fmt.Sprintf("h%d.test", i), 3, 0)
		h.IP = fmt.Sprintf("127.0.3.%d", 10+i)
		hosts = append(hosts, h)
	}
	web := ht.Start(t, hosts...)
	var urls []string
	for p := 0; p < 3; p++ {
		for i := 0; i < 9; i++ {
			urls = append(urls, web.URL(fmt.Sprintf("h%d.test", i), fmt.Sprintf("/p%d", p)))
		}
	}
	return web, urls
}

// writeAddresses writes the batch's servers.jsonl as the manager does
// when graph.db knows each site's address: a line per host of the web
// with its address.
func writeAddresses(t *testing.T, dir string, web *ht.Web) {
	t.Helper()
	var lines []fetchlog.Server
	for name, h := range web.Hosts() {
		ip := h.IP
		if ip == "" {
			ip = "127.0.0.1"
		}
		lines = append(lines, fetchlog.Server{Host: name, IP: ip})
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].Host < lines[j].Host })
	err := collection.WriteAtomic(filepath.Join(dir, fetchlog.ServersFile), func(w io.Writer) error {
		return fetchlog.WriteLines(w, lines, fetchlog.FormatServer)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shardOfWARC is the shard I of a WARC file name ("-sIofN-").
func shardOfWARC(name string) string {
	i := strings.Index(name, "-s")
	if i < 0 {
		return ""
	}
	rest := name[i+2:]
	return rest[:strings.Index(rest, "of")]
}

// auditShards checks, as the servers saw it, that no address was asked
// by two shards: each page request's address, and the shard whose WARC
// file holds the URL's record (the merged harvest in dir). It returns
// the number of addresses each shard asked.
func auditShards(t *testing.T, web *ht.Web, dir string) map[string]int {
	t.Helper()
	logged := readLog(t, dir)
	byAddr := map[string]map[string]bool{}
	for _, r := range web.Requests() {
		if r.Path == "/robots.txt" {
			continue
		}
		rec, ok := logged[web.URL(r.Host, r.Path)]
		if !ok || rec.WARC == "" {
			t.Errorf("request %s%s (address %s) has no record in the merged harvest", r.Host, r.Path, r.Local)
			continue
		}
		if byAddr[r.Local] == nil {
			byAddr[r.Local] = map[string]bool{}
		}
		byAddr[r.Local][shardOfWARC(rec.WARC)] = true
	}
	per := map[string]int{}
	for addr, shards := range byAddr {
		if len(shards) > 1 {
			t.Errorf("address %s asked by shards %v", addr, shards)
		}
		for s := range shards {
			per[s]++
		}
	}
	return per
}

// TestShardsSharedDirectory: three harvesters share a batch directory,
// each fetching its shard; the last one to finish merges the shards into
// harvest/ and marks the batch, which then reads like any harvest.
func TestShardsSharedDirectory(t *testing.T) {
	web, urls := shardWeb(t)
	cfg := web.Config(10 * time.Millisecond)
	// The batch directory is a collection's (as on a shared file system).
	col, err := collection.Create(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := col.Batch(5).Dir
	ht.WriteBatch(t, dir, 5, ht.Entries(urls...))
	writeAddresses(t, dir, web)
	var wg sync.WaitGroup
	sums := make([]*harvester.Summary, 3)
	errs := make([]error, 3)
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i-1], errs[i-1] = harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg, Shard: harvester.Shard{I: i, N: 3}})
		}()
	}
	wg.Wait()
	merged, total := 0, 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i+1, err)
		}
		if sums[i].Merged {
			merged++
		}
		if sums[i].Shard != fmt.Sprintf("%d/3", i+1) {
			t.Errorf("shard %d summary says %q", i+1, sums[i].Shard)
		}
		total += sums[i].URLs
	}
	if merged != 1 || total != len(urls) {
		t.Errorf("%d runs merged (want 1); the shards logged %d URLs of %d", merged, total, len(urls))
	}
	b := &collection.Batch{ID: 5, Dir: dir}
	var sum harvester.Summary
	if err := b.Summary(collection.StageHarvested, &sum); err != nil || sum.Shards != 3 || sum.URLs != len(urls) || sum.Fetched != len(urls) {
		t.Fatalf("batch marker %+v, %v", sum, err)
	}
	// Each shard's time, expected by the split (3 hosts × 3 URLs × the
	// default response time of 500 ms, above the wait) and measured.
	if len(sum.ShardTimes) != 3 {
		t.Fatalf("shard times %+v", sum.ShardTimes)
	}
	for i, st := range sum.ShardTimes {
		if st.Shard != fmt.Sprintf("%d/3", i+1) || st.ExpectedSeconds != 4.5 || st.ElapsedSeconds <= 0 || st.URLs != 9 || st.Fetched != 9 {
			t.Errorf("shard time %+v", st)
		}
	}
	if text := sum.String(); !strings.Contains(text, "merged from 3 shards (1/3: 9 URLs, 0 deferred, expected 4.5 s, took ") {
		t.Errorf("summary %q", text)
	}
	logged := readLog(t, b.HarvestPath())
	if len(logged) != len(urls) {
		t.Errorf("%d lines for %d URLs", len(logged), len(urls))
	}
	for url, r := range logged {
		if !strings.HasPrefix(r.WARC, "wire-") || !strings.Contains(r.WARC, "-000005-s") || r.Err != "" {
			t.Errorf("%s: record %+v", url, r)
		}
	}
	// Nine servers of equal work over three shards: three each, and no
	// server asked by two.
	if per := auditShards(t, web, b.HarvestPath()); per["1"] != 3 || per["2"] != 3 || per["3"] != 3 {
		t.Errorf("servers per shard %v, want 3 each", per)
	}
	checkWARCs(t, b.HarvestPath())
	if servers := readServers(t, b.HarvestPath()); len(servers) != 9 {
		t.Errorf("servers.jsonl has %d hosts, want 9", len(servers))
	}
	for i := 1; i <= 3; i++ {
		s := harvester.Shard{I: i, N: 3}
		// A bare batch directory keeps the shard directories (they may
		// be a scratch copy's output still to be copied back).
		if !exists(filepath.Join(dir, s.HarvestDir())) || !exists(filepath.Join(dir, s.Marker())) {
			t.Errorf("shard %d: directory or marker gone after a merge in a bare batch directory", i)
		}
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	// Every request went to a host once per URL (no host fetched twice).
	if n := len(web.Requests()); n != len(urls)+9 {
		t.Errorf("%d requests for %d URLs on 9 hosts", n, len(urls))
	}
	// Done: a shard run now is refused.
	if _, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg, Shard: harvester.Shard{I: 1, N: 3}}); !errors.Is(err, collection.ErrAlreadyDone) {
		t.Errorf("shard run on a harvested batch: %v", err)
	}
	// The collection's run on the batch removes the shard directories
	// the bare-directory merge kept, and keeps the markers.
	if _, err := harvester.RunCollection(context.Background(), col, 5, harvester.Options{Config: cfg}); !errors.Is(err, collection.ErrAlreadyDone) {
		t.Errorf("collection run on a harvested batch: %v", err)
	}
	for i := 1; i <= 3; i++ {
		s := harvester.Shard{I: i, N: 3}
		if exists(filepath.Join(dir, s.HarvestDir())) || !exists(filepath.Join(dir, s.Marker())) {
			t.Errorf("shard %d: directory left by the collection run, or marker gone", i)
		}
	}
	if got := readLog(t, b.HarvestPath()); len(got) != len(urls) {
		t.Errorf("after tidying, harvest/ logs %d URLs of %d", len(got), len(urls))
	}
	checkWARCs(t, b.HarvestPath())
}

// TestShardsCopiedBack: two machines harvest one shard each in their own
// copy of the batch directory; once the second shard's directory and
// marker are copied back, the unsharded run merges them without fetching.
func TestShardsCopiedBack(t *testing.T) {
	web, urls := shardWeb(t)
	cfg := web.Config(10 * time.Millisecond)
	a := filepath.Join(t.TempDir(), "000006")
	b := filepath.Join(t.TempDir(), "000006")
	ht.WriteBatch(t, a, 6, ht.Entries(urls...))
	ht.WriteBatch(t, b, 6, ht.Entries(urls...))
	writeAddresses(t, a, web)
	writeAddresses(t, b, web)
	s1, s2 := harvester.Shard{I: 1, N: 2}, harvester.Shard{I: 2, N: 2}
	if _, err := harvester.RunDir(context.Background(), a, harvester.Options{Config: cfg, Shard: s1}); err != nil {
		t.Fatal(err)
	}
	if _, err := harvester.RunDir(context.Background(), b, harvester.Options{Config: cfg, Shard: s2}); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(a, "harvested.done")) {
		t.Fatal("batch marked with one shard of two")
	}
	// Refusals while shard 2 is missing in a.
	_, err := harvester.RunDir(context.Background(), a, harvester.Options{Config: cfg})
	if !errors.Is(err, harvester.ErrShards) || !strings.Contains(err.Error(), "shards 2 not done") {
		t.Errorf("unsharded run with a shard missing: %v", err)
	}
	if _, err := harvester.RunDir(context.Background(), a, harvester.Options{Config: cfg, Shard: harvester.Shard{I: 1, N: 3}}); !errors.Is(err, harvester.ErrShards) {
		t.Errorf("shard 1/3 beside shard 1/2: %v", err)
	}
	if _, err := harvester.RunDir(context.Background(), a, harvester.Options{Config: cfg, Shard: s1}); !errors.Is(err, collection.ErrAlreadyDone) {
		t.Errorf("shard 1/2 again: %v", err)
	}
	// Copy shard 2 back (as rsync would) and finish. Its indexes are
	// left behind, as a harvester from before them left none: the merge
	// writes them (checkWARCs checks every file's).
	copyDir(t, filepath.Join(b, s2.HarvestDir()), filepath.Join(a, s2.HarvestDir()))
	indexes, _ := filepath.Glob(filepath.Join(a, s2.HarvestDir(), "*"+cdxj.Suffix))
	if len(indexes) == 0 {
		t.Fatal("shard 2 published no index")
	}
	for _, f := range indexes {
		os.Remove(f)
	}
	data, _ := os.ReadFile(filepath.Join(b, s2.Marker()))
	os.WriteFile(filepath.Join(a, s2.Marker()), data, 0o644)
	n := len(web.Requests())
	sum, err := harvester.RunDir(context.Background(), a, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Merged || sum.Shards != 2 || sum.URLs != len(urls) || len(web.Requests()) != n {
		t.Errorf("merge: %+v, %d new requests", sum, len(web.Requests())-n)
	}
	if len(readLog(t, filepath.Join(a, "harvest"))) != len(urls) {
		t.Error("merged log incomplete")
	}
	checkWARCs(t, filepath.Join(a, "harvest"))

	// An unsharded harvest in progress keeps shards out.
	c := filepath.Join(t.TempDir(), "000007")
	ht.WriteBatch(t, c, 7, ht.Entries(urls...))
	os.MkdirAll(filepath.Join(c, harvester.PartialDir), 0o755)
	if _, err := harvester.RunDir(context.Background(), c, harvester.Options{Config: cfg, Shard: s1}); !errors.Is(err, harvester.ErrShards) {
		t.Errorf("shard beside an unsharded harvest: %v", err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShardsSplitByServer: two shards share batches of a web shaped as
// national webs are: six subdomains of one registrable domain on three
// servers, five registrable domains on one shared-hosting server, and
// www and bare aliases on one server. Batch 1 knows no address: each
// name goes with its registrable domain, and a name that resolves to an
// address the other shard owns is deferred ("deferred: shard"), never
// asked; the harvest records every address. Batch 2 carries those
// addresses (as the seeder and the manager pass them on): every URL is
// fetched, both shards work, and no address is asked by two shards in
// either batch, as the servers saw it.
func TestShardsSplitByServer(t *testing.T) {
	var hosts []*ht.Host
	add := func(name, ip string) {
		h := pagesHost(name, 4, 0)
		h.IP = ip
		hosts = append(hosts, h)
	}
	for i, sub := range []string{"a", "b", "c", "d", "e", "f"} {
		add(sub+".uni.test", fmt.Sprintf("127.0.4.%d", 10+i%3))
	}
	for _, d := range []string{"q.test", "v.test", "x.test", "y.test", "z.test"} {
		add(d, "127.0.4.20")
	}
	add("www.w.test", "127.0.4.30")
	add("w.test", "127.0.4.30")
	web := ht.Start(t, hosts...)
	var urls []string
	for _, h := range hosts {
		for p := 0; p < 4; p++ {
			urls = append(urls, web.URL(h.Name, fmt.Sprintf("/p%d", p)))
		}
	}
	cfg := web.Config(10 * time.Millisecond)
	shards := func(dir string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := 1; i <= 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i-1] = harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg, Shard: harvester.Shard{I: i, N: 2}})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("shard %d: %v", i+1, err)
			}
		}
	}

	one := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, one, 1, ht.Entries(urls...))
	shards(one)
	auditShards(t, web, filepath.Join(one, "harvest"))
	var again []string
	for url, r := range readLog(t, filepath.Join(one, "harvest")) {
		switch {
		case r.Err == harvester.ErrDeferred+": "+harvester.ErrShardDeferred:
			again = append(again, url)
		case r.Err != "" || r.Status != 200:
			t.Errorf("batch 1: %s: %+v", url, r)
		}
	}
	if len(again) == 0 {
		t.Error("batch 1: no name resolved to the other shard's address (the web should make some)")
	}
	servers := readServers(t, filepath.Join(one, "harvest"))
	for _, h := range hosts {
		if servers[h.Name].IP != h.IP {
			t.Errorf("batch 1's servers.jsonl: %s at %q, want %s", h.Name, servers[h.Name].IP, h.IP)
		}
	}

	// Batch 2: the deferred URLs, with the addresses batch 1 found.
	web.Reset()
	sort.Strings(again)
	two := filepath.Join(t.TempDir(), "000002")
	ht.WriteBatch(t, two, 2, ht.Entries(again...))
	writeAddresses(t, two, web)
	shards(two)
	for url, r := range readLog(t, filepath.Join(two, "harvest")) {
		if r.Err != "" || r.Status != 200 {
			t.Errorf("batch 2: %s: %+v", url, r)
		}
	}
	auditShards(t, web, filepath.Join(two, "harvest"))

	// The whole web with its addresses known: both shards work.
	web.Reset()
	three := filepath.Join(t.TempDir(), "000003")
	ht.WriteBatch(t, three, 3, ht.Entries(urls...))
	writeAddresses(t, three, web)
	shards(three)
	if per := auditShards(t, web, filepath.Join(three, "harvest")); per["1"] == 0 || per["2"] == 0 || per["1"]+per["2"] != 5 {
		t.Errorf("batch 3: servers per shard %v, want the 5 servers over both", per)
	}
}
