package linkgraph

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkSortU64 compares sortU64 with slices.Sort on a copy of a.
func checkSortU64(t *testing.T, a []uint64) {
	t.Helper()
	want := slices.Clone(a)
	slices.Sort(want)
	got := sortU64(slices.Clone(a), nil)
	if !slices.Equal(got, want) {
		t.Fatalf("sortU64 of %d values differs from slices.Sort", len(a))
	}
}

// TestSortU64: empty, short and long lists, values spread over every
// digit, over some, or all equal; the in-link changes of a batch.
func TestSortU64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 255, 256, 257, 1000, 100_000} {
		for _, gen := range []func() uint64{
			r.Uint64,
			func() uint64 { return uint64(r.IntN(1<<20))<<32 | uint64(r.IntN(1<<20)) },
			func() uint64 { return uint64(r.IntN(3)) << 48 },
			func() uint64 { return 42 },
		} {
			a := make([]uint64, n)
			for i := range a {
				a[i] = gen()
			}
			checkSortU64(t, a)
		}
	}
	// Already sorted and reversed.
	a := make([]uint64, 5000)
	for i := range a {
		a[i] = uint64(i) * 0x1_0001_0001
	}
	checkSortU64(t, a)
	slices.Reverse(a)
	checkSortU64(t, a)
	// The scratch space given is used, and a short one grows.
	a = a[:1000]
	got := sortU64(slices.Clone(a), make([]uint64, 10))
	if !slices.IsSorted(got) || len(got) != len(a) {
		t.Fatal("short scratch space: not sorted")
	}
}

func FuzzSortU64(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		a := make([]uint64, 0, len(b)/8)
		for len(b) >= 8 {
			a = append(a, binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		// Long enough for the radix passes: repeat the values, shifted.
		for len(a) > 0 && len(a) < 300 {
			a = append(a, a[len(a)-1]*0x9e3779b97f4a7c15)
		}
		checkSortU64(t, a)
	})
}

func BenchmarkSortU64(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	a := make([]uint64, 1_600_000)
	for i := range a {
		a[i] = uint64(r.IntN(400_000))<<32 | uint64(r.IntN(130_000))
	}
	b.Run("radix", func(b *testing.B) {
		c, tmp := make([]uint64, len(a)), make([]uint64, len(a))
		for b.Loop() {
			copy(c, a)
			sortU64(c, tmp)
		}
	})
	b.Run("slices", func(b *testing.B) {
		c := make([]uint64, len(a))
		for b.Loop() {
			copy(c, a)
			slices.Sort(c)
		}
	})
}
