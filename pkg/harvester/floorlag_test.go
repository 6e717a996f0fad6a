package harvester

import (
	"net/netip"
	"testing"
	"time"
)

// TestAddressFloorConnectLag: until its answer comes, a request on a
// connection it opened holds the address for up to freshHold (the server
// may start it late); its answer frees the address a wait later.
func TestAddressFloorConnectLag(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ip := netip.MustParseAddr("127.0.0.1")
	tab := newHostTable(100 * time.Millisecond)
	tab.join("a.cl", ip)
	tab.join("b.cl", ip)
	for _, c := range []struct {
		lag, want time.Duration
	}{
		{0, 110 * time.Millisecond},                    // a kept-alive connection: the margin, a tenth of the wait
		{3 * time.Millisecond, 350 * time.Millisecond}, // a new one: held until its answer, at most freshHold
	} {
		ok, seq, _ := tab.start("a.cl", now, c.lag)
		if !ok {
			t.Fatal("a.cl may not start")
		}
		if ok, _, at := tab.start("b.cl", now.Add(time.Millisecond), 0); ok || !at.Equal(now.Add(c.want)) {
			t.Errorf("lag %v: b.cl %v at %v, want %v", c.lag, ok, at.Sub(now), c.want)
		}
		// The answer at 20 ms frees the address 100 ms later.
		tab.answered("a.cl", seq, now.Add(20*time.Millisecond))
		if ok, _, at := tab.start("b.cl", now.Add(30*time.Millisecond), 0); ok || !at.Equal(now.Add(120*time.Millisecond)) {
			t.Errorf("lag %v, answered: b.cl %v at %v, want 120ms", c.lag, ok, at.Sub(now))
		}
		now = now.Add(time.Second)
	}
}
