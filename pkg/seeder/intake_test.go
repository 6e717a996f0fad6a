package seeder

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestGroupedUpdates: the log of target updates comes out grouped by id,
// each id's proposals in the order they were made, whether it is long
// (counting sort, across blocks) or short with large ids (sorted).
func TestGroupedUpdates(t *testing.T) {
	for _, tc := range []struct{ n, maxID int }{{0, 1}, {5, 1 << 30}, {3*updateBlock + 17, 50_000}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
		var m targetUpdates
		type update struct {
			id     uint32
			depth  int32
			anchor string
		}
		var want []update
		for i := range tc.n {
			id := uint64(1 + rng.IntN(tc.maxID))
			anchor := fmt.Sprintf("a%d", i)
			if i%5 == 4 {
				anchor = "" // no text
			}
			m.propose(id, i%7, anchor)
			want = append(want, update{id: uint32(id), depth: int32(i % 7), anchor: anchor})
		}
		slices.SortStableFunc(want, func(a, b update) int { return cmp.Compare(a.id, b.id) })
		var got []update
		for _, u := range m.grouped() {
			got = append(got, update{id: u.id, depth: u.depth, anchor: m.text.text(u.anchor)})
		}
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("n=%d maxID=%d: log not grouped in order", tc.n, tc.maxID)
		}
		if m.n != 0 || len(m.blocks) != 0 {
			t.Errorf("n=%d: log not emptied", tc.n)
		}
	}
}

// TestAnchorArena: texts of every length up to MaxAnchorBytes come back
// as they went in, across blocks; an empty text is no text.
func TestAnchorArena(t *testing.T) {
	var a anchorArena
	if r := a.add(""); r != 0 || a.text(r) != "" {
		t.Fatalf("empty text: ref %d", r)
	}
	var refs []anchorRef
	var texts []string
	for i := 0; len(a.blocks) < 3; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%MaxAnchorBytes)
		refs = append(refs, a.add(s))
		texts = append(texts, s)
	}
	for i, r := range refs {
		if got := a.text(r); got != texts[i] {
			t.Fatalf("text %d: %q, want %q", i, got, texts[i])
		}
	}
}
