package partition

import (
	"net/netip"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Partition
	}{{"", Partition{}}, {"1/2", Partition{1, 2}}, {" 3/4 ", Partition{3, 4}}, {"1/1", Partition{1, 1}}} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1/0", "2", "a/b", "1/2/3", "-1/2", "1/2000", "1/"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if (Partition{1, 1}).String() != "" || (Partition{}).String() != "" || (Partition{2, 3}).String() != "2/3" {
		t.Error("String")
	}
}

// TestHashPinned: the hash is part of the collection and harvest formats
// (partitions and shards must agree across machines and versions).
func TestHashPinned(t *testing.T) {
	p := Partition{I: 1, K: 4}
	got := []int{Hash("www.uchile.cl", 4), Hash("WWW.UCHILE.CL", 4), Hash("a.cl", 1024), Hash("a.cl", 1),
		p.OfName("depto.uchile.cl"), p.OfName("uchile.cl"), p.OfAddress(netip.MustParseAddr("200.89.70.3")),
		p.OfAddress(netip.MustParseAddr("::ffff:200.89.70.3"))}
	want := []int{3, 3, 50, 1, Hash("uchile.cl", 4), Hash("uchile.cl", 4), Hash("200.89.70.3", 4), Hash("200.89.70.3", 4)}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("hashes %v, want %v: the function changed, which breaks partitions and shards", got, want)
		}
	}
	if !(Partition{}).Mine(7) || !p.Mine(1) || p.Mine(2) {
		t.Error("Mine")
	}
}
