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
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// followWeb is a web whose hosts two batches share: www.a.test and
// a.test, one unit on 127.0.0.1 whose bare name asks a Crawl-delay;
// b.test, another domain on the same address (the address floor and
// connections_per_ip); m.a.test and c.test on 127.0.0.2. Each host has
// 2n pages: /p0 … /p(2n-1).
func followWeb(t *testing.T, n int) (*ht.Web, []*ht.Host) {
	www := pagesHost("www.a.test", 2*n, 5*time.Millisecond)
	bare := pagesHost("a.test", 2*n, 5*time.Millisecond)
	bare.Robots = robotsPage("User-agent: *\nCrawl-delay: 0.15\n")
	other := pagesHost("b.test", 2*n, 5*time.Millisecond)
	mobile := pagesHost("m.a.test", 2*n, 5*time.Millisecond)
	mobile.IP = "127.0.0.2"
	third := pagesHost("c.test", 2*n, 5*time.Millisecond)
	third.IP = "127.0.0.2"
	hosts := []*ht.Host{www, bare, other, mobile, third}
	return ht.Start(t, hosts...), hosts
}

// followBatch is the entries of pages [from, to) of every host, doc ids
// from firstID.
func followBatch(web *ht.Web, hosts []*ht.Host, from, to int, firstID uint64) []batch.Entry {
	var urls []string
	for i := from; i < to; i++ {
		for _, h := range hosts {
			urls = append(urls, web.URL(h.Name, fmt.Sprintf("/p%d", i)))
		}
	}
	es := ht.Entries(urls...)
	for i := range es {
		es[i].DocID += firstID - 1
	}
	return es
}

// TestFollowPoliteness: a following harvester takes batch 2, written
// while batch 1 runs, beside it, over one politeness state: from the
// server's records, no unit has two requests at once or a gap under its
// wait or Crawl-delay, no address is over connections_per_ip or under
// address_wait between two starts, across both batches; every
// robots.txt is asked once in the process; both batches are published
// whole, each with its own fetch log and summary, the second marked
// followed.
//
// Two settings: with the address's rules (connections_per_ip 1,
// address_wait 20 ms), and without them, where only the unit keeps
// www.a.test and a.test from being asked at once by the two batches.
func TestFollowPoliteness(t *testing.T) {
	for _, tc := range []struct {
		name  string
		perIP int
		floor time.Duration
	}{
		{"address rules", 1, 20 * time.Millisecond},
		{"units alone", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) { testFollowPoliteness(t, tc.perIP, tc.floor) })
	}
}

func testFollowPoliteness(t *testing.T, perIP int, floor time.Duration) {
	const n = 6
	web, hosts := followWeb(t, n)
	const wait = 30 * time.Millisecond
	cfg := web.Config(wait)
	cfg.Harvester.Connections = 8
	cfg.Harvester.ConnectionsPerIP = perIP
	cfg.Harvester.AddressWait = config.Duration(floor)
	col := ht.NewCollection(t, filepath.Join(t.TempDir(), "col"), cfg)
	b1 := followBatch(web, hosts, 0, n, 1)
	b2 := followBatch(web, hosts, n, 2*n, 1000)
	ht.WriteBatch(t, col.Batch(1).Dir, 1, b1)

	type result struct {
		sums []*harvester.Summary
		err  error
	}
	var published []int
	res := make(chan result, 1)
	go func() {
		sums, err := harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg}, func(s *harvester.Summary) {
			published = append(published, s.Batch)
		})
		res <- result{sums, err}
	}()
	// Batch 2 is written once batch 1's first pages were asked.
	deadline := time.Now().Add(10 * time.Second)
	for pages := 0; pages < 3; {
		if time.Now().After(deadline) {
			t.Fatal("batch 1 never started")
		}
		time.Sleep(5 * time.Millisecond)
		pages = 0
		for _, r := range web.Requests() {
			if r.Path != "/robots.txt" {
				pages++
			}
		}
	}
	ht.WriteBatch(t, col.Batch(2).Dir, 2, b2)
	var r result
	select {
	case r = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("the following harvester did not end")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.sums) != 2 || r.sums[0].Batch != 1 || r.sums[1].Batch != 2 {
		t.Fatalf("summaries %+v, want batches 1 and 2", r.sums)
	}
	if len(published) != 2 {
		t.Errorf("done called for %v, want both batches", published)
	}
	s1, s2 := r.sums[0], r.sums[1]
	for i, want := range [][]batch.Entry{b1, b2} {
		s := r.sums[i]
		if s.URLs != len(want) || s.Fetched != len(want) {
			t.Errorf("batch %d: %d URLs, %d fetched, want %d", s.Batch, s.URLs, s.Fetched, len(want))
		}
		b := col.Batch(s.Batch)
		if !b.Done(collection.StageHarvested) {
			t.Errorf("batch %d not marked harvested", s.Batch)
		}
		recs, err := fetchlog.ReadFile(filepath.Join(b.HarvestPath(), fetchlog.LogFile))
		if err != nil || len(recs) != len(want) {
			t.Errorf("batch %d: fetch log of %d lines (%v), want %d", s.Batch, len(recs), err, len(want))
		}
		robots, err := fetchlog.ReadRobots(filepath.Join(b.HarvestPath(), fetchlog.RobotsFile))
		if err != nil || len(robots) != len(hosts) {
			t.Errorf("batch %d: robots.jsonl of %d lines (%v), want one per site (%d)", s.Batch, len(robots), err, len(hosts))
		}
	}
	if !s2.Followed || s1.Followed {
		t.Errorf("followed: batch 1 %v, batch 2 %v; want false, true", s1.Followed, s2.Followed)
	}
	if !s2.Started.Before(s1.Finished) {
		t.Errorf("batch 2 started at %v, after batch 1 ended at %v: not taken beside it", s2.Started, s1.Finished)
	}

	reqs := web.Requests()
	for _, h := range hosts {
		asked := 0
		for _, rq := range web.RequestsTo(h.Name) {
			if rq.Path == "/robots.txt" {
				asked++
			}
		}
		if asked != 1 {
			t.Errorf("%s/robots.txt asked %d times, want once in the process", h.Name, asked)
		}
	}
	var delayKnown time.Time
	for _, rq := range reqs {
		if rq.Host == "a.test" && rq.Path == "/robots.txt" {
			delayKnown = rq.End
		}
	}
	need := func(unit string, next ht.Request) time.Duration {
		if unit == "127.0.0.1 a.test" && !next.Start.Before(delayKnown) {
			return 150 * time.Millisecond
		}
		return wait
	}
	checkUnits(t, reqs, need, floor)
	// A host's URLs go in batch order: batch 2's pages of a host (p6 and
	// up) only once batch 1 is done with it.
	for _, h := range hosts {
		var lastFirst, firstSecond time.Time
		for _, rq := range web.RequestsTo(h.Name) {
			var i int
			if _, err := fmt.Sscanf(rq.Path, "/p%d", &i); err != nil {
				continue
			}
			if i < n && rq.End.After(lastFirst) {
				lastFirst = rq.End
			}
			if i >= n && (firstSecond.IsZero() || rq.Start.Before(firstSecond)) {
				firstSecond = rq.Start
			}
		}
		if firstSecond.Before(lastFirst) {
			t.Errorf("%s: batch 2 asked at %v, before batch 1's last page ended at %v", h.Name, firstSecond, lastFirst)
		}
	}
	if most := mostInFlight(reqs); perIP > 0 && most > perIP {
		t.Errorf("%d requests in flight at once on one address, want at most connections_per_ip %d", most, cfg.Harvester.ConnectionsPerIP)
	}
}

// mostInFlight is the most requests in flight at once on one address,
// from the server's records.
func mostInFlight(reqs []ht.Request) int {
	type ev struct {
		at    time.Time
		delta int
	}
	byAddr := map[string][]ev{}
	for _, r := range reqs {
		byAddr[r.Local] = append(byAddr[r.Local], ev{r.Start, 1}, ev{r.End, -1})
	}
	most := 0
	for _, evs := range byAddr {
		sort.Slice(evs, func(i, j int) bool {
			if !evs[i].at.Equal(evs[j].at) {
				return evs[i].at.Before(evs[j].at)
			}
			return evs[i].delta < evs[j].delta // an end before a start at the same instant
		})
		cur := 0
		for _, e := range evs {
			cur += e.delta
			most = max(most, cur)
		}
	}
	return most
}

// TestFollowExitsIdle: with no newer batch, a following harvester ends
// once its batch is published, as a plain run does; a batch written
// after it ended is left for the next run.
func TestFollowExitsIdle(t *testing.T) {
	web, hosts := followWeb(t, 1)
	cfg := web.Config(0)
	col := ht.NewCollection(t, filepath.Join(t.TempDir(), "col"), cfg)
	ht.WriteBatch(t, col.Batch(1).Dir, 1, followBatch(web, hosts, 0, 1, 1))
	sums, err := harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg}, nil)
	if err != nil || len(sums) != 1 || sums[0].Batch != 1 || sums[0].Followed {
		t.Fatalf("%+v %v, want batch 1 alone", sums, err)
	}
	if got := harvester.FollowTotal(sums); !strings.HasPrefix(got, "followed 1 batches (000001)") {
		t.Errorf("total %q", got)
	}
	// Nothing ready: nothing to do, as for a plain run.
	if _, err := harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg}, nil); !errors.Is(err, collection.ErrNothingToDo) {
		t.Errorf("no batch ready: %v, want ErrNothingToDo", err)
	}
}

// TestFollowRefusesShards: following takes whole batches only.
func TestFollowRefusesShards(t *testing.T) {
	cfg := config.Defaults()
	col := ht.NewCollection(t, filepath.Join(t.TempDir(), "col"), cfg)
	_, err := harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg, Shard: harvester.Shard{I: 1, N: 2}}, nil)
	if !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("shard 1/2: %v, want a configuration error", err)
	}
}

// TestFollowFailureStopsOthers: a followed batch that fails (its batch
// file is not a batch) fails the run with its own error, and stops the
// harvest running beside it as an interruption would: not published, its
// partial directory kept with stopped.json, resumed whole by a rerun.
func TestFollowFailureStopsOthers(t *testing.T) {
	const n = 6
	web, hosts := followWeb(t, n)
	cfg := web.Config(60 * time.Millisecond)
	col := ht.NewCollection(t, filepath.Join(t.TempDir(), "col"), cfg)
	b1 := followBatch(web, hosts, 0, 2*n, 1)
	ht.WriteBatch(t, col.Batch(1).Dir, 1, b1)
	res := make(chan error, 1)
	go func() {
		_, err := harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg}, nil)
		res <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for lines := 0; lines < 3; {
		if time.Now().After(deadline) {
			t.Fatal("batch 1 never started")
		}
		time.Sleep(5 * time.Millisecond)
		data, _ := os.ReadFile(filepath.Join(col.Batch(1).Dir, harvester.PartialDir, fetchlog.LogFile))
		lines = strings.Count(string(data), "\n") - 2 // the header
	}
	if err := os.MkdirAll(col.Batch(2).Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(col.Batch(2).File(), []byte("not a batch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal("the following harvester did not end")
	}
	if err == nil || errors.Is(err, harvester.ErrInterrupted) || !strings.Contains(err.Error(), "000002") {
		t.Fatalf("run error %v, want batch 2's failure", err)
	}
	b := col.Batch(1)
	if b.Done(collection.StageHarvested) {
		t.Fatal("batch 1 published: it was not stopped")
	}
	data, rerr := os.ReadFile(filepath.Join(b.Dir, harvester.PartialDir, harvester.StoppedFile))
	if rerr != nil || !strings.Contains(string(data), harvester.StoppedInterrupted) {
		t.Errorf("batch 1 stopped.json: %s %v, want interrupted", data, rerr)
	}
	sum, err := harvester.RunCollection(context.Background(), col, 1, harvester.Options{Config: cfg})
	if err != nil || sum.URLs != len(b1) || !sum.Resumed {
		t.Fatalf("rerun of batch 1: %+v %v", sum, err)
	}
}

// TestFollowOlderFirst: where two batches of a following harvester
// compete for one unit under different names (www.a.test in batch 1,
// a.test in batch 2, one server), the older batch's requests to the unit
// all come first; and batch 2, whose header asks for a deadline far
// shorter than the time batch 1 holds the unit, is not cut by it: its
// end rules start once batch 1 is done.
func TestFollowOlderFirst(t *testing.T) {
	www := pagesHost("www.a.test", 30, 2*time.Millisecond)
	bare := pagesHost("a.test", 4, 2*time.Millisecond)
	other := pagesHost("b.test", 4, 2*time.Millisecond)
	other.IP = "127.0.0.2"
	web := ht.Start(t, www, bare, other)
	const wait = 40 * time.Millisecond
	cfg := web.Config(wait)
	cfg.Harvester.Connections = 4
	// Each request its own turn: the unit is free between two of
	// batch 1's requests, and batch 2 could take it then.
	cfg.Harvester.MaxIdle = config.Duration(10 * time.Millisecond)
	col := ht.NewCollection(t, filepath.Join(t.TempDir(), "col"), cfg)
	var u1, u2 []string
	for p := range www.Pages {
		u1 = append(u1, web.URL(www.Name, p))
	}
	for _, h := range []*ht.Host{bare, other} {
		for p := range h.Pages {
			u2 = append(u2, web.URL(h.Name, p))
		}
	}
	ht.WriteBatch(t, col.Batch(1).Dir, 1, ht.Entries(u1...))
	res := make(chan error, 1)
	var sums []*harvester.Summary
	go func() {
		var err error
		sums, err = harvester.FollowCollection(context.Background(), col, 0, harvester.Options{Config: cfg}, nil)
		res <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(web.RequestsTo(www.Name)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("batch 1 never started")
		}
		time.Sleep(2 * time.Millisecond)
	}
	e2 := ht.Entries(u2...)
	for i := range e2 {
		e2[i].DocID += 100
	}
	// Batch 2 is planned for 500 ms: its deadline (twice that) passes
	// long before batch 1 gives the unit up.
	err := collection.WriteAtomic(col.Batch(2).File(), func(w io.Writer) error {
		return batch.Write(w, batch.Header{Batch: 2, Created: time.Now(), Strategy: "test",
			Params: map[string]string{"batch_duration": "500ms"}, Counts: map[string]int{"urls": len(e2)}}, e2)
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal("the following harvester did not end")
	}
	if err != nil || len(sums) != 2 {
		t.Fatalf("%v %v", sums, err)
	}
	if s := sums[1]; s.Deferred != 0 || s.Fetched != len(e2) {
		t.Errorf("batch 2: %d deferred (ended %q), %d of %d fetched: cut while batch 1 held its unit", s.Deferred, s.Ended, s.Fetched, len(e2))
	}
	var lastOlder, firstNewer time.Time
	for _, r := range web.Requests() {
		switch r.Host {
		case www.Name:
			if r.Start.After(lastOlder) {
				lastOlder = r.Start
			}
		case bare.Name:
			if firstNewer.IsZero() || r.Start.Before(firstNewer) {
				firstNewer = r.Start
			}
		}
	}
	if !firstNewer.After(lastOlder) {
		t.Errorf("batch 2 asked the unit (a.test) at %v, before batch 1's last request to it (www.a.test) at %v", firstNewer, lastOlder)
	}
}
