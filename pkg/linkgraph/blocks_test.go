package linkgraph

import (
	"slices"
	"testing"
)

func TestBlocks(t *testing.T) {
	for _, n := range []int{0, 1, blockLen - 1, blockLen, blockLen + 1, 3*blockLen + 7} {
		var l blocks[int]
		var want []int
		for i := range n {
			l.add(i * 3)
			want = append(want, i*3)
		}
		if l.len() != n {
			t.Errorf("%d added: len %d", n, l.len())
		}
		for i := range n {
			if got := *l.at(i); got != want[i] {
				t.Fatalf("%d added: at(%d) = %d, want %d", n, i, got, want[i])
			}
		}
		if n > 0 {
			*l.at(n - 1) = -1 // at gives the entry itself
			want[n-1] = -1
		}
		got := l.slice()
		if !slices.Equal(got, want) || cap(got) != n {
			t.Errorf("%d added: slice of %d entries (cap %d) differs", n, len(got), cap(got))
		}
		if got := l.appendTo([]int{5}); len(got) != n+1 || got[0] != 5 || !slices.Equal(got[1:], want) {
			t.Errorf("%d added: appendTo differs", n)
		}
	}
}

// keyBytes shares the string's memory and has its length.
func TestKeyBytes(t *testing.T) {
	for _, s := range []string{"", "a", "http://a.cl/x?y=1"} {
		b := keyBytes(s)
		if string(b) != s || len(b) != len(s) {
			t.Errorf("keyBytes(%q) = %q", s, b)
		}
		if len(s) > 0 && !shares(b, s) {
			t.Errorf("keyBytes(%q) is a copy", s)
		}
	}
}
