package harvester

import (
	"reflect"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
)

func TestPendingHostsTop(t *testing.T) {
	var p pendingHosts
	p.init([]*Server{{Host: "a.cl", left: 3}, {Host: "b.cl", left: 5}, {Host: "c.cl", left: 3}, {Host: "d.cl", left: 1}})
	want := []fetchlog.HostLeft{{Host: "b.cl", Left: 5}, {Host: "a.cl", Left: 3}, {Host: "c.cl", Left: 3}}
	if got := p.top(3); !reflect.DeepEqual(got, want) {
		t.Errorf("top(3) = %v, want %v", got, want)
	}
	for i := 0; i < 4; i++ {
		p.logged("http://b.cl/x", "")
	}
	p.logged("https://d.cl:8443/y", ErrGaveUp)
	p.logged("http://unknown.cl/", "timeout")
	if p.givenUp() != 1 {
		t.Errorf("%d hosts given up, want 1", p.givenUp())
	}
	want = []fetchlog.HostLeft{{Host: "a.cl", Left: 3}, {Host: "c.cl", Left: 3}, {Host: "b.cl", Left: 1}}
	if got := p.top(3); !reflect.DeepEqual(got, want) {
		t.Errorf("after logging: top(3) = %v, want %v", got, want)
	}
	if got := p.top(1); len(got) != 1 || got[0].Host != "a.cl" {
		t.Errorf("top(1) = %v", got)
	}
}

func TestRecent(t *testing.T) {
	r := Recent{Window: 4 * time.Second}
	if r.ETA() != -1 {
		t.Error("ETA without samples")
	}
	// 10 URLs a second for 5 s, then 2 a second: the rate follows the
	// last 4 s, not the run's average.
	logged := 0
	for s := 0; s <= 10; s++ {
		if s > 0 && s <= 5 {
			logged += 10
		} else if s > 5 {
			logged += 2
		}
		r.Add(Stats{Total: 100, Logged: logged, Pages: logged, Elapsed: time.Duration(s) * time.Second})
	}
	urls, pages, span := r.Rates()
	if urls != 2 || pages != 2 || span != 4*time.Second {
		t.Errorf("rates %v %v over %v, want 2 and 2 over 4s", urls, pages, span)
	}
	if eta := r.ETA(); eta != time.Duration(float64(100-60)/2*float64(time.Second)) {
		t.Errorf("ETA %v, want 20s", eta)
	}
}
