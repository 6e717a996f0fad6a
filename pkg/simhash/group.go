package simhash

import "sort"

// Blocks is the number of blocks of 16 bits an Index keys fingerprints
// by: two fingerprints at Hamming distance Distance (3) or less agree on
// at least one of four blocks (pigeonhole), so every pair within the
// distance shares a key in one of the four tables, and only pairs that
// share one are compared.
const Blocks = 4

// Index finds near-duplicate fingerprints: banded tables, one per block of
// 16 bits, of the distinct fingerprints added. Not safe for concurrent
// use.
type Index struct {
	fps  []uint64        // distinct fingerprints, in order of first Add
	ids  map[uint64]int  // fingerprint → its index in fps
	head [Blocks][]int32 // per block value: the last fingerprint added with it, plus one (0: none)
	next [Blocks][]int32 // per fingerprint: the previous one with the same block value, plus one
	// parent is a union-find over fps: near-duplicate groups.
	parent []int32
}

// NewIndex returns an empty index sized for about n fingerprints. Its
// tables take 1 MiB, plus 28 bytes per fingerprint.
func NewIndex(n int) *Index {
	x := &Index{ids: make(map[uint64]int, n), fps: make([]uint64, 0, n), parent: make([]int32, 0, n)}
	for b := range x.head {
		x.head[b] = make([]int32, 1<<16)
		x.next[b] = make([]int32, 0, n)
	}
	return x
}

// Add puts fp into the index, joins it to the group of every fingerprint
// already there within Distance, and returns its position (the same for
// equal fingerprints). Fingerprint 0 (an empty text) is never joined to
// another.
func (x *Index) Add(fp uint64) int {
	if i, ok := x.ids[fp]; ok {
		return i
	}
	i := int32(len(x.fps))
	x.fps = append(x.fps, fp)
	x.ids[fp] = int(i)
	x.parent = append(x.parent, i)
	for b := 0; b < Blocks; b++ {
		key := uint16(fp >> (16 * b))
		if fp != 0 {
			for j := x.head[b][key] - 1; j >= 0; j = x.next[b][j] - 1 {
				if x.fps[j] != 0 && Hamming(fp, x.fps[j]) <= Distance {
					x.union(i, j)
				}
			}
		}
		x.next[b] = append(x.next[b], x.head[b][key])
		x.head[b][key] = i + 1
	}
	return int(i)
}

func (x *Index) find(i int32) int32 {
	for x.parent[i] != i {
		x.parent[i] = x.parent[x.parent[i]]
		i = x.parent[i]
	}
	return i
}

// union joins two groups; the root is the fingerprint added first, so a
// group's representative is its oldest member.
func (x *Index) union(a, b int32) {
	ra, rb := x.find(a), x.find(b)
	if ra == rb {
		return
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	x.parent[rb] = ra
}

// Group returns the position of the first-added fingerprint of the
// near-duplicate group of the fingerprint at position i.
func (x *Index) Group(i int) int { return int(x.find(int32(i))) }

// Len is the number of distinct fingerprints added.
func (x *Index) Len() int { return len(x.fps) }

// Groups returns, for items with fingerprints fps (one per item, in any
// order), the near-duplicate group of each item: the index of the group's
// first item (in fps's order), itself for an item with no near-duplicate.
// Items with fingerprint 0 are alone.
func Groups(fps []uint64) []int {
	x := NewIndex(len(fps))
	pos := make([]int, len(fps))
	for i, fp := range fps {
		pos[i] = x.Add(fp)
	}
	first := make([]int, x.Len()) // group root position → first item
	for i := range first {
		first[i] = -1
	}
	out := make([]int, len(fps))
	for i, fp := range fps {
		r := x.Group(pos[i])
		if fp == 0 {
			out[i] = i
			continue
		}
		if first[r] < 0 {
			first[r] = i
		}
		out[i] = first[r]
	}
	return out
}

// Members returns the groups of more than one item, as lists of item
// indexes in order, the lists ordered by their first item: what Groups
// gives, gathered.
func Members(groups []int) [][]int {
	by := map[int][]int{}
	for i, g := range groups {
		by[g] = append(by[g], i)
	}
	var out [][]int
	for _, m := range by {
		if len(m) > 1 {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
