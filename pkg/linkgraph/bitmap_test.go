package linkgraph

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// roaringBytes is what sortedSetBytes must give: roaring's own
// serialization of the set after RunOptimize.
func roaringBytes(vals []uint32) []byte {
	bm := roaring.BitmapOf(vals...)
	bm.RunOptimize()
	return mustBytes(bm)
}

func seq(from, n, step uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = from + uint32(i)*step
	}
	return out
}

func TestSortedSetBytes(t *testing.T) {
	tests := []struct {
		name string
		vals []uint32
	}{
		{"empty", nil},
		{"one", []uint32{7}},
		{"two apart", []uint32{1, 3}},
		{"a run of three", []uint32{4, 5, 6}},
		{"a run of two", []uint32{4, 5}},
		{"runs and gaps", []uint32{1, 2, 3, 10, 11, 12, 13, 40}},
		{"array of 4096", seq(0, 4096, 2)},
		{"bitmap of 4097", seq(0, 4097, 2)},
		{"bitmap of 30000", seq(1, 30000, 2)},
		{"full container", seq(1<<16, 1<<16, 1)},
		{"run better than bitmap", append(seq(0, 3000, 3), seq(20000, 40000, 1)...)},
		{"three containers, one run", append(append([]uint32{5, 9}, seq(1<<16, 10, 1)...), 3<<16|1)},
		{"four containers with runs", append(append(append([]uint32{5, 9}, seq(1<<16, 10, 1)...), 3<<16|1), 9<<16|2)},
		{"five containers, no run", []uint32{1, 1<<16 | 3, 2<<16 | 5, 3<<16 | 7, 1<<31 | 9}},
		{"highest values", []uint32{1<<32 - 3, 1<<32 - 2, 1<<32 - 1}},
		{"nine containers with runs", func() []uint32 {
			var v []uint32
			for k := range uint32(9) {
				v = append(v, seq(k<<16, k+1, 1)...)
			}
			return v
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := sortedSetBytes(tt.vals), roaringBytes(tt.vals)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d values: got %d bytes, roaring %d\n got % x\nwant % x", len(tt.vals), len(got), len(want), head(got), head(want))
			}
			if cap(got) != len(got) {
				t.Errorf("capacity %d for %d bytes", cap(got), len(got))
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }

// FuzzSortedSetBytes compares sortedSetBytes with roaring on sets made of
// the fuzzer's bytes: each pair of bytes is a gap (small gaps make runs,
// large ones new containers).
func FuzzSortedSetBytes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 1, 0, 1, 0, 5, 0})
	f.Add([]byte{0, 1, 0xff, 0xff, 1, 0})
	f.Add(bytes.Repeat([]byte{1, 0}, 5000))
	f.Fuzz(func(t *testing.T, b []byte) {
		var vals []uint32
		v := uint64(0)
		for i := 0; i+1 < len(b); i += 2 {
			gap := uint64(binary.LittleEndian.Uint16(b[i:]))
			if gap >= 0xf000 {
				gap = (gap - 0xf000) << 16 // a jump of containers
			}
			v += gap
			if v > 1<<32-1 {
				break
			}
			if len(vals) == 0 || uint32(v) != vals[len(vals)-1] {
				vals = append(vals, uint32(v))
			}
		}
		if !slices.IsSorted(vals) {
			t.Fatal("test bug: values not sorted")
		}
		if got, want := sortedSetBytes(vals), roaringBytes(vals); !bytes.Equal(got, want) {
			t.Fatalf("%d values: got %d bytes, roaring %d", len(vals), len(got), len(want))
		}
	})
}

func TestCountTargets(t *testing.T) {
	pair := func(target, source uint64) uint64 { return target<<32 | source }
	tests := []struct {
		name     string
		add, del []uint64
		want     int
	}{
		{"none", nil, nil, 0},
		{"one add", []uint64{pair(1, 2)}, nil, 1},
		{"one target, adds and dels", []uint64{pair(1, 2), pair(1, 3)}, []uint64{pair(1, 4)}, 1},
		{"dels only", nil, []uint64{pair(1, 4), pair(5, 4)}, 2},
		{"interleaved", []uint64{pair(1, 2), pair(3, 2), pair(7, 1)}, []uint64{pair(2, 9), pair(3, 1), pair(8, 8)}, 5},
		{"same pair added and removed", []uint64{pair(4, 1)}, []uint64{pair(4, 1)}, 1},
	}
	for _, tt := range tests {
		if got := countTargets(tt.add, tt.del); got != tt.want {
			t.Errorf("%s: %d targets, want %d", tt.name, got, tt.want)
		}
	}
}

// The sets that ReplaceOutLinks (for a page without out-links) and the
// in-link computation serialize without a Bitmap are roaring's bytes.
func TestNewSetsAreRoaringBytes(t *testing.T) {
	g, _ := openTemp(t)
	smallGraph(t, g)
	tests := []struct {
		name    string
		src     uint64
		targets []uint64
	}{
		{"duplicates and a self-link, unsorted", 1, []uint64{4, 2, 3, 4, 1}},
		{"one target", 3, []uint64{5}},
		{"none", 5, nil},
	}
	for _, tt := range tests {
		if err := g.Update(func(tx *Tx) error {
			var tg []Target
			for _, id := range tt.targets {
				s, err := tx.DocSite(id)
				if err != nil {
					return err
				}
				tg = append(tg, Target{Doc: id, Site: s})
			}
			srcSite, err := tx.DocSite(tt.src)
			if err != nil {
				return err
			}
			_, err = tx.ReplaceOutLinks(tt.src, srcSite, tg)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	g.View(func(tx *Tx) error {
		for _, tt := range tests {
			ids := make([]uint32, 0, len(tt.targets))
			for _, id := range tt.targets {
				ids = append(ids, uint32(id))
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			if got, want := tx.tx.Bucket(bucketOut).Get(u64(tt.src)), roaringBytes(ids); !bytes.Equal(got, want) {
				t.Errorf("%s: out-links stored as % x, roaring gives % x", tt.name, got, want)
			}
		}
		// In-links: 1 ← 1; 2 ← 1; 3 ← 1; 4 ← 1; 5 ← 3.
		for target, sources := range map[uint64][]uint32{1: {1}, 2: {1}, 3: {1}, 4: {1}, 5: {3}} {
			if got, want := tx.tx.Bucket(bucketIn).Get(u64(target)), roaringBytes(sources); !bytes.Equal(got, want) {
				t.Errorf("in-links of %d stored as % x, roaring gives % x", target, got, want)
			}
		}
		return nil
	})
}
