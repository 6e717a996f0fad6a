// Package sample is the pseudo-random sample of the Sydney strategy
// (Castillo, Nelli, Panconesi, "Crawling the Web with Limited Memory",
// Figure 2: "a random sample of t nodes from N+(v)"), shared by the seeder
// and its frontier simulator: reproducible, so a batch taken in again
// makes the same choice, and unbiased by the order of links in a page.
package sample

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Choose marks the t URLs (of the new URLs a page src links to) with the
// smallest FNV-1a hash of (src, url): chosen[i] tells whether urls[i] is
// in the sample. With t ≤ 0 or at most t URLs, every URL is chosen.
func Choose(src uint64, urls []string, t int) []bool {
	chosen := make([]bool, len(urls))
	if t <= 0 || len(urls) <= t {
		for i := range chosen {
			chosen[i] = true
		}
		return chosen
	}
	type keyed struct {
		h uint64
		i int
	}
	keys := make([]keyed, len(urls))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], src)
	for i, u := range urls {
		h := fnv.New64a()
		h.Write(b[:])
		h.Write([]byte(u))
		keys[i] = keyed{h.Sum64(), i}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return a.i - b.i
	})
	for _, k := range keys[:t] {
		chosen[k.i] = true
	}
	return chosen
}
