package main

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestPrintBalance: one address holding most of the time bounds every
// split (the largest unit's bound), an even web is dealt within 1.2 x the
// mean by the table, and the hash's figure is the hash's.
func TestPrintBalance(t *testing.T) {
	host := func(addr, unit string, secs int) hostCost {
		return hostCost{addr: netip.MustParseAddr(addr), unit: addr + " " + unit, pages: secs, cost: time.Duration(secs) * time.Second}
	}
	for _, tc := range []struct {
		name  string
		hosts []hostCost
		want  []string // lines that must be printed
	}{
		{"one big server", []hostCost{host("10.0.0.1", "a.cl", 100), host("10.0.0.2", "b.cl", 10), host("10.0.0.3", "c.cl", 10)},
			[]string{"largest unit 1m40s, largest address 1m40s", "   2  addresses dealt (table)      1.667      1.667  yes"}},
		{"even", []hostCost{host("10.0.0.1", "a.cl", 10), host("10.0.0.2", "b.cl", 10), host("10.0.0.3", "c.cl", 10), host("10.0.0.4", "d.cl", 10)},
			[]string{"   2  addresses dealt (table)      1.000      1.200  yes", "40 pages on 4 hosts, 4 politeness units, 4 addresses"}},
		{"one unit, two names", []hostCost{host("10.0.0.1", "a.cl", 10), host("10.0.0.1", "a.cl", 10), host("10.0.0.2", "b.cl", 5)},
			[]string{"3 hosts, 2 politeness units, 2 addresses", "largest unit 20s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printBalance(&b, tc.hosts, []int{2})
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
		})
	}
}
