package linkgraph

// Digits of the radix sort.
const (
	radixBits   = 11
	radixDigits = (64 + radixBits - 1) / radixBits
	radixMask   = 1<<radixBits - 1
)

// sortU64 sorts a in increasing order, with tmp (grown if shorter than
// a) as scratch space, and returns the sorted slice: a or tmp. It is a
// least-significant-digit radix sort on 11-bit digits (their counts fit
// in the caches) that skips the digits all values share: the in-link
// changes of a batch (target<<32 | source, ids below 2^20 or so) take
// five passes, a quarter of slices.Sort's time for 1.6 million values.
func sortU64(a, tmp []uint64) []uint64 {
	if len(a) < 256 {
		sortSmallU64(a)
		return a
	}
	if cap(tmp) < len(a) {
		tmp = make([]uint64, len(a))
	}
	tmp = tmp[:len(a)]
	var counts [radixDigits][1 << radixBits]int
	for _, v := range a {
		for d := range radixDigits {
			counts[d][v>>(radixBits*d)&radixMask]++
		}
	}
	src, dst := a, tmp
	for d := range radixDigits {
		c := &counts[d]
		if c[a[0]>>(radixBits*d)&radixMask] == len(a) {
			continue // every value has this digit
		}
		pos := 0
		for i, n := range c {
			c[i] = pos
			pos += n
		}
		shift := radixBits * d
		for _, v := range src {
			k := v >> shift & radixMask
			dst[c[k]] = v
			c[k]++
		}
		src, dst = dst, src
	}
	return src
}

// sortSmallU64 is an insertion sort, for the short lists a release of a
// few parked links makes.
func sortSmallU64(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}
