package harvester

import (
	"net/netip"
	"testing"
	"time"
)

// TestAddressFloorConnectLag: until its answer comes, a request whose
// connection took longer to open than the margin holds the address's
// next start back by twice that time instead (the server starts it late
// too).
func TestAddressFloorConnectLag(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ip := netip.MustParseAddr("127.0.0.1")
	tab := newHostTable(100 * time.Millisecond)
	tab.join("a.cl", ip)
	tab.join("b.cl", ip)
	for _, c := range []struct {
		lag, want time.Duration
	}{
		{0, 110 * time.Millisecond},                     // the margin: a tenth of the wait
		{3 * time.Millisecond, 110 * time.Millisecond},  // a fast connection: the margin
		{80 * time.Millisecond, 260 * time.Millisecond}, // a slow one: twice its time
	} {
		ok, _, _ := tab.start("a.cl", now, c.lag)
		if !ok {
			t.Fatal("a.cl may not start")
		}
		if ok, _, at := tab.start("b.cl", now.Add(time.Millisecond), 0); ok || !at.Equal(now.Add(c.want)) {
			t.Errorf("lag %v: b.cl %v at %v, want %v", c.lag, ok, at.Sub(now), c.want)
		}
		now = now.Add(time.Second)
	}
}
