package main

import (
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
)

func TestFormatStats(t *testing.T) {
	var r harvester.Recent
	r.Add(harvester.Stats{Total: 100, Logged: 10, Pages: 10, Elapsed: 5 * time.Second})
	st := harvester.Stats{Total: 100, Logged: 40, Pages: 30, Bytes: 2048, Errors: 2, HostsActive: 3, HostsWaiting: 4, HostsDone: 5,
		Holding: []fetchlog.HostLeft{{Host: "www.a.cl", Left: 30}, {Host: "b.cl", Left: 20}}, Elapsed: 15 * time.Second}
	r.Add(st)
	want := "harvesting: 40/100 URLs, 30 pages, 2.0 KiB, 2.0 pages/s, ETA 20s, hosts 3 active 4 waiting 5 done, 2 errors, 15s; most left: www.a.cl 30, b.cl 20"
	if got := formatStats("harvesting", st, &r); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	var empty harvester.Recent
	if got := formatStats("harvesting", harvester.Stats{Total: 5}, &empty); got != "harvesting: 0/5 URLs, 0 pages, 0 B, 0.0 pages/s, ETA ?, hosts 0 active 0 waiting 0 done, 0 errors, 0s" {
		t.Errorf("at the start: %q", got)
	}
}
