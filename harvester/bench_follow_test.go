package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestBenchFollow measures what following the batches costs per request:
// two batches of the test web whose hosts overlap (its URLs dealt
// alternately), harvested by one `harvester run` per batch (A) and by one
// `harvester run --follow` (B, both batches ready at its start, so it
// takes the second 50 ms in), in alternated rounds on fresh collections;
// it prints each round's CPU per 1000 requests (the process's user and
// system time: the test web's share is in both) and wall time, with the
// load average, and the medians. WIRE_BENCH=1 go test ./harvester -run
// '^TestBenchFollow$' -v (BENCH_HOSTS [200], BENCH_MAX_PAGES [300],
// BENCH_CONNECTIONS [32], BENCH_ROUNDS [5]).
func TestBenchFollow(t *testing.T) {
	if os.Getenv("WIRE_BENCH") == "" {
		t.Skip("set WIRE_BENCH=1")
	}
	hosts := envInt(t, "BENCH_HOSTS", 200)
	maxPages := envInt(t, "BENCH_MAX_PAGES", 300)
	conns := envInt(t, "BENCH_CONNECTIONS", 32)
	rounds := envInt(t, "BENCH_ROUNDS", 5)
	web := startWeb(t, testweb.Config{Seed: 1, Hosts: hosts, MaxPages: maxPages, OutOfScope: -1})
	urls := inScopeURLs(web)
	var u1, u2 []string
	for i, u := range urls {
		if i%2 == 0 {
			u1 = append(u1, u)
		} else {
			u2 = append(u2, u)
		}
	}
	e1, e2 := ht.Entries(u1...), ht.Entries(u2...)
	for i := range e2 {
		e2[i].DocID += uint64(len(e1))
	}
	cfg := config.Defaults()
	cfg.Harvester.Connections = conns
	cfg.Harvester.ConnectionsPerIP = 0
	cfg.Harvester.AddressWait = 0
	cfg.Harvester.Wait = 0
	cfg.Harvester.MaxCrawlDelay = 0
	cfg.Harvester.Ranking = "crawl-ability"
	cfg.Harvester.AllowPrivate = true
	cfg.Harvester.DNSServer = web.DNSAddr()
	fmt.Printf("bench: follow: test web of %d hosts, %d URLs in two batches (%d + %d, hosts shared); %d connections, wait 0; %d alternated rounds\n",
		hosts, len(urls), len(e1), len(e2), conns, rounds)

	run := func(follow bool) (cpuPer1000, wall time.Duration) {
		dir := t.TempDir()
		col := ht.NewCollection(t, dir, cfg)
		ht.WriteBatch(t, col.Batch(1).Dir, 1, e1)
		ht.WriteBatch(t, col.Batch(2).Dir, 2, e2)
		cpu0, start := cpuTime(), time.Now()
		runs := [][]string{{"run", "-c", dir, "-q"}, {"run", "-c", dir, "-q"}}
		if follow {
			runs = [][]string{{"run", "-c", dir, "--follow", "-q"}}
		}
		for _, args := range runs {
			if out, errs, code := runCLI(t, args...); code != command.ExitOK {
				t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
			}
		}
		cpu, took := cpuTime()-cpu0, time.Since(start)
		requests := 0
		for _, id := range []int{1, 2} {
			var sum harvester.Summary
			if err := col.Batch(id).Summary(collection.StageHarvested, &sum); err != nil {
				t.Fatal(err)
			}
			if want := []int{len(e1), len(e2)}[id-1]; sum.URLs != want {
				t.Fatalf("batch %d: %d URLs, want %d", id, sum.URLs, want)
			}
			if sum.Deferred > 0 {
				fmt.Printf("bench: (follow %v: batch %d: %d URLs deferred, ended by %s, %d hosts)\n", follow, id, sum.Deferred, sum.Ended, sum.Hosts)
			}
			if follow && id == 2 && !sum.Followed {
				t.Fatalf("batch 2 not followed")
			}
			requests += sum.Requests
		}
		os.RemoveAll(filepath.Join(dir, collection.BatchesDir))
		return cpu * 1000 / time.Duration(requests), took
	}
	var cpuA, cpuB, wallA, wallB []time.Duration
	for r := 0; r < rounds; r++ {
		for _, follow := range []bool{r%2 == 1, r%2 == 0} {
			cpu, wall := run(follow)
			name := "A one run per batch"
			if follow {
				name = "B --follow"
				cpuB, wallB = append(cpuB, cpu), append(wallB, wall)
			} else {
				cpuA, wallA = append(cpuA, cpu), append(wallA, wall)
			}
			fmt.Printf("bench: round %d %-20s CPU %v per 1000 requests, wall %v (load %s)\n", r+1, name, cpu.Round(time.Millisecond), wall.Round(time.Millisecond), loadAverage())
		}
	}
	ma, mb := median(cpuA), median(cpuB)
	fmt.Printf("bench: RESULT follow: CPU per 1000 requests, median of %d rounds: one run per batch %v, --follow %v (ratio %.2f); wall %v and %v\n",
		rounds, ma.Round(time.Millisecond), mb.Round(time.Millisecond), float64(mb)/float64(ma), median(wallA).Round(time.Millisecond), median(wallB).Round(time.Millisecond))
}
