package harvester

import (
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
)

// TestValueGateClock: the clock releases the best URLs first, at the pace
// that releases the last at its share (here 0.5) of the predicted
// remaining time; a server that cannot wait is never held; releaseTo frees a held
// server at once.
func TestValueGateClock(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	mk := func(host string, scores ...float64) *Server {
		sq := &SiteQueue{Site: "http://" + host}
		for _, s := range scores {
			sq.Entries = append(sq.Entries, batch.Entry{Score: s})
		}
		return &Server{Host: host, Sites: []*SiteQueue{sq}, left: len(scores), Est: Estimates{ResponseTime: 100 * time.Millisecond, RequestsPerConn: 1}}
	}
	a := mk("a.cl", 0.9, 0.5, 0.1)
	b := mk("b.cl", 0.8, 0.4, 0.3, 0.2)
	g := newValueGate([]*Server{a, b}, 0, 0, 0.5, t0)
	// Two servers: the two best URLs are released at the start.
	if got := math.Float64frombits(g.threshold.Load()); got != 0.8 {
		t.Fatalf("threshold at the start %v, want 0.8", got)
	}
	if g.allows(0.5, 0) || !g.allows(0.8, 0) {
		t.Error("allows: want 0.8 released and 0.5 held")
	}
	needs := func(yield func(time.Duration, netip.Addr)) {
		yield(g.need(a, 0), netip.Addr{}) // 300 ms
		yield(g.need(b, 0), netip.Addr{}) // 400 ms
	}
	if g.tick(t0.Add(valueTick/2), needs) {
		t.Error("the clock ticked before valueTick")
	}
	// 50 ms of 0.5 × 400 ms: a quarter of the 5 URLs left.
	if !g.tick(t0.Add(valueTick), needs) {
		t.Fatal("the clock did not tick")
	}
	if want := 2 + 5*0.25; math.Abs(g.released-want) > 1e-9 {
		t.Errorf("released %v, want %v", g.released, want)
	}
	if got := time.Duration(g.remaining.Load()); got != 400*time.Millisecond {
		t.Errorf("remaining %v, want 400ms (b's need)", got)
	}
	// A server whose need is half the remaining time or more is not held.
	if !g.allows(0.01, 200*time.Millisecond) || g.allows(0.01, 199*time.Millisecond) {
		t.Error("the critical share does not hold at half the remaining time")
	}
	g.releaseTo(0.2)
	if !g.allows(0.2, 0) || g.allows(0.1, 0) {
		t.Error("releaseTo(0.2) did not release 0.2 only")
	}
	// Nothing left to do: everything is released.
	if !g.tick(t0.Add(2*valueTick), func(func(time.Duration, netip.Addr)) {}) || !g.allows(math.Inf(-1), 0) {
		t.Error("an empty batch holds URLs back")
	}
}
