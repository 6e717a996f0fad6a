package seeder

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestGroupedUpdates: the log of target updates comes out grouped by id,
// each id's proposals in the order they were made, whether it is long
// (counting sort, across blocks) or short with large ids (sorted).
func TestGroupedUpdates(t *testing.T) {
	for _, tc := range []struct{ n, maxID int }{{0, 1}, {5, 1 << 30}, {3*updateBlock + 17, 50_000}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
		var m targetUpdates
		var want []targetUpdate
		for i := range tc.n {
			id := uint64(1 + rng.IntN(tc.maxID))
			anchor := fmt.Sprintf("a%d", i)
			m.propose(id, i%7, anchor)
			want = append(want, targetUpdate{id: uint32(id), depth: int32(i % 7), anchor: anchor})
		}
		slices.SortStableFunc(want, func(a, b targetUpdate) int { return cmp.Compare(a.id, b.id) })
		got := m.grouped()
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("n=%d maxID=%d: log not grouped in order", tc.n, tc.maxID)
		}
		if m.n != 0 || len(m.blocks) != 0 {
			t.Errorf("n=%d: log not emptied", tc.n)
		}
	}
}
