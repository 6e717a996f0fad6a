package linkgraph

import "hash/maphash"

// URLKey is a URL's 128-bit digest under the secret seeds of an open
// Graph (Tx.URLKey), by which a write transaction finds the URLs it
// created (CreatedURLKey). It can be computed on any goroutine, ahead of
// the transaction: the seeder's preparing workers compute it for every
// link graph.db did not know. Two URLs with the same key would be taken
// for one: with 128 bits from seeds drawn anew each time graph.db is
// opened, and never written anywhere, neither chance (about n²/2¹²⁹ for n
// URLs created in one transaction) nor a crafted link can make that
// happen.
type URLKey [2]uint64

// urlKeyer computes URL keys under two seeds.
type urlKeyer struct{ seeds [2]maphash.Seed }

func newURLKeyer() *urlKeyer {
	return &urlKeyer{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

func (k *urlKeyer) key(url string) URLKey {
	return URLKey{maphash.String(k.seeds[0], url), maphash.String(k.seeds[1], url)}
}

// createdIndex maps the keys of the URLs a transaction created to their
// ids: an open-addressing table of keys and ids, probed linearly from the
// key's first word (already uniformly spread), at most half full. A
// lookup reads one slot, usually one cache line, where a map of strings
// reads its control word, its slot and the stored string.
type createdIndex struct {
	slots []createdSlot // a power of two; id 0 marks an empty slot
	n     int
}

type createdSlot struct {
	key URLKey
	id  uint64
}

// resize rebuilds the table with room for at least n keys.
func (x *createdIndex) resize(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	old := x.slots
	x.slots = make([]createdSlot, size)
	for _, s := range old {
		if s.id != 0 {
			x.slots[x.free(s.key)] = s
		}
	}
}

// free returns the slot where key would go: its own if present, else the
// first empty one of its probe sequence.
func (x *createdIndex) free(key URLKey) int {
	mask := uint64(len(x.slots) - 1)
	for i := key[0] & mask; ; i = (i + 1) & mask {
		if s := &x.slots[i]; s.id == 0 || s.key == key {
			return int(i)
		}
	}
}

// get returns the id stored for key.
func (x *createdIndex) get(key URLKey) (uint64, bool) {
	if x.n == 0 {
		return 0, false
	}
	s := x.slots[x.free(key)]
	return s.id, s.id != 0
}

// put stores id (not 0) for key.
func (x *createdIndex) put(key URLKey, id uint64) {
	if 2*(x.n+1) > len(x.slots) {
		x.resize(2 * (x.n + 1))
	}
	i := x.free(key)
	if x.slots[i].id == 0 {
		x.n++
	}
	x.slots[i] = createdSlot{key: key, id: id}
}
