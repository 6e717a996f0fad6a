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

// Mirror is a site most of whose pages are near-duplicates of pages of
// another site.
type Mirror struct {
	Site string `json:"site"` // the mirror
	Of   string `json:"of"`   // the site it mirrors
	// Pages is the number of Site's pages with text; Shared those of them
	// with a near-duplicate (or an exact one) on Of.
	Pages  int `json:"pages"`
	Shared int `json:"shared"`
}

// Mirrors finds mirrored sites: item i is on site sites[i] and in the
// near-duplicate group groups[i] (as Groups gives). A site of at least
// minPages items mirrors another when at least minShare of its items
// have a near-duplicate there; of two sites mirroring each other, the
// one whose pages were seen later (by item order) is the mirror. Sorted
// by Site.
func Mirrors(sites []string, groups []int, minPages int, minShare float64) []Mirror {
	pages := map[string]int{}
	first := map[string]int{} // site → its first item
	bySite := map[string]map[int]bool{}
	for i, s := range sites {
		if _, ok := first[s]; !ok {
			first[s] = i
		}
		pages[s]++
		if bySite[s] == nil {
			bySite[s] = map[int]bool{}
		}
		bySite[s][groups[i]] = true
	}
	// For each group, the sites with a member in it.
	groupSites := map[int][]string{}
	for s, gs := range bySite {
		for g := range gs {
			groupSites[g] = append(groupSites[g], s)
		}
	}
	shared := map[[2]string]int{} // (site, other) → items of site with a near-duplicate on other
	for i, s := range sites {
		if pages[s] < minPages {
			continue
		}
		for _, o := range groupSites[groups[i]] {
			if o != s {
				shared[[2]string{s, o}]++
			}
		}
	}
	best := map[string]Mirror{}
	for k, n := range shared {
		s, o := k[0], k[1]
		if float64(n) < minShare*float64(pages[s]) {
			continue
		}
		if float64(shared[[2]string{o, s}]) >= minShare*float64(pages[o]) && pages[o] >= minPages && first[s] < first[o] {
			continue // they mirror each other: o, seen later, is the mirror
		}
		if b, ok := best[s]; !ok || n > b.Shared || n == b.Shared && o < b.Of {
			best[s] = Mirror{Site: s, Of: o, Pages: pages[s], Shared: n}
		}
	}
	out := make([]Mirror, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Site < out[j].Site })
	return out
}

// Table finds, for a fingerprint, a stored item within Distance: banded
// tables as in Index, of items (an id and a fingerprint), without
// grouping. Each table's bucket holds its items' fingerprints and ids
// side by side, so that a look-up reads four short runs of memory rather
// than following links through the whole table (which made a look-up in
// a million items cost 30 µs of cache misses instead of 2). Not safe for
// concurrent use.
type Table struct {
	buckets [Blocks][][]entry // per block value, the items with it
	n       int
}

type entry struct {
	fp, id uint64
}

// NewTable returns an empty table. It takes 6 MiB, plus 64 bytes an item.
func NewTable() *Table {
	t := &Table{}
	for b := range t.buckets {
		t.buckets[b] = make([][]entry, 1<<16)
	}
	return t
}

// NewTableOf returns a table of the items ids[i], fps[i], built at once:
// each block's buckets share one array, sized by a first count.
func NewTableOf(ids, fps []uint64) *Table {
	t := &Table{}
	for b := range t.buckets {
		count := make([]int32, 1<<16)
		for _, fp := range fps {
			if fp != 0 {
				count[uint16(fp>>(16*b))]++
			}
		}
		all := make([]entry, 0, len(fps))
		t.buckets[b] = make([][]entry, 1<<16)
		for k, c := range count {
			t.buckets[b][k] = all[len(all) : len(all) : len(all)+int(c)]
			all = all[:len(all)+int(c)]
		}
		for i, fp := range fps {
			if fp != 0 {
				k := uint16(fp >> (16 * b))
				t.buckets[b][k] = append(t.buckets[b][k], entry{fp, ids[i]})
			}
		}
	}
	for _, fp := range fps {
		if fp != 0 {
			t.n++
		}
	}
	return t
}

// Add stores an item. Fingerprint 0 (no text) is not stored.
func (t *Table) Add(id, fp uint64) {
	if fp == 0 {
		return
	}
	t.n++
	for b := 0; b < Blocks; b++ {
		key := uint16(fp >> (16 * b))
		t.buckets[b][key] = append(t.buckets[b][key], entry{fp, id})
	}
}

// Len is the number of items stored.
func (t *Table) Len() int { return t.n }

// Nearest returns the stored item closest to fp within Distance whose id
// is not self and for which keep (if not nil) says yes: the smallest
// distance, then the smallest id. ok is false when there is none, or fp
// is 0.
func (t *Table) Nearest(fp, self uint64, keep func(id, fp uint64) bool) (id uint64, dist int, ok bool) {
	if fp == 0 {
		return 0, 0, false
	}
	dist = Distance + 1
	for b := 0; b < Blocks; b++ {
		for _, e := range t.buckets[b][uint16(fp>>(16*b))] {
			d := Hamming(fp, e.fp)
			if d > Distance || e.id == self || d > dist || d == dist && e.id >= id {
				continue
			}
			if keep != nil && !keep(e.id, e.fp) {
				continue
			}
			id, dist, ok = e.id, d, true
		}
	}
	return id, dist, ok
}
