package faulttest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// maxStreaming is harvester.max_streaming in TestEndlessHostGivenUp (its
// default).
const maxStreaming = 3

// TestEndlessHostGivenUp crawls a mostly-HTTPS web with the hostile
// hosts (the hostile TLS hosts among them), whose
// endless host links every one of its pages to 50 more endless pages, for
// five serial cycles through the binaries: the endless host is asked at
// most max_streaming + 1 times (robots.txt requests aside, counted from
// the web's own records): its "/" and the pages after it until the
// harvester gives it up as streaming (max_streaming in a row, the count
// going on across batches), then one probe in the batch after. The
// hostile TLS hosts end as tls errors within the connect time limit
// (CheckHostileTLS).
func TestEndlessHostGivenUp(t *testing.T) {
	if testing.Short() {
		t.Skip("crawl skipped in -short mode")
	}
	// Beside the package's other crawl: most of its time is waits.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := binaries(t)
	web := startWeb(t, testweb.Config{Seed: 11, Hosts: 30, MaxPages: 40, Hostile: true, EndlessLinks: 50, HTTPSShare: 0.85})
	dir := t.TempDir()
	ca, err := CAFlags(web, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{Wait: 10 * time.Millisecond, TotalTimeout: 6 * time.Second, BatchSize: 300, Seeds: 3,
		Extra: append([]string{"--harvester-max-body-bytes", "65536"}, ca...)}
	r := &Runner{Bin: bin, Collection: filepath.Join(dir, "col"), Log: testLog{t}}
	if err := InitCollection(ctx, r, web, s); err != nil {
		t.Fatal(err)
	}
	batches, err := CrawlCycles(ctx, r, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d batches", batches)
	for _, h := range HostileRequests(web) {
		t.Logf("hostile %-14s %-28s %4d requests, %d for robots.txt", h.Kind, h.Host, h.Pages, h.Robots)
		if h.Kind == testweb.HostileEndless {
			if h.Pages == 0 {
				t.Errorf("the endless host was never asked: the test shows nothing")
			}
			if h.Pages > maxStreaming+1 {
				t.Errorf("the endless host was asked %d times, more than max_streaming + 1 = %d: %v", h.Pages, maxStreaming+1, sortedPaths(web, h.Host))
			}
		}
	}
	hc := config.Defaults().Harvester
	hc.ConnectTimeout = config.Duration(5 * time.Second) // InitCollection's
	got, problems := CheckHostileTLS(r.Collection, web, hc)
	t.Logf("hostile TLS: %d fetch log lines %v, %d connections, the longest %v", got.Lines, got.Kinds, got.Conns, got.LongestConn.Round(time.Millisecond))
	for _, p := range problems {
		t.Error(p)
	}
	if got.Kinds["tls"] < 3 || got.Conns < 3 {
		t.Error("the hostile TLS hosts were not all crawled: the test shows nothing")
	}
}
