package linkgraph

import "encoding/binary"

// Constants of roaring's portable serialization
// (https://github.com/RoaringBitmap/RoaringFormatSpec) and of the choice
// of container that roaring's RunOptimize makes.
const (
	cookieNoRuns     = 12346 // only array and bitmap containers
	cookieRuns       = 12347 // some run containers
	noOffsetMaxKeys  = 4     // with runs, fewer containers than this have no offset header
	arrayMaxCard     = 4096  // larger containers are bitmaps (or runs)
	bitmapBytes      = 8192  // a bitmap container's 2^16 bits
	bitmapSizeInHeap = 8224  // what RunOptimize counts for a bitmap container (its struct and bits)
)

// bitmapContainer is one container of a set about to be serialized: the
// values of vals sharing the high 16 bits key.
type bitmapContainer struct {
	key  uint16
	vals []uint32
	runs int
}

// kind is 'r' (run), 'a' (array) or 'b' (bitmap): the container roaring
// keeps after RunOptimize.
func (c *bitmapContainer) kind() byte {
	card := len(c.vals)
	if 2+4*c.runs < min(bitmapSizeInHeap, 2*card) {
		return 'r'
	}
	if card <= arrayMaxCard {
		return 'a'
	}
	return 'b'
}

// size is the serialized size of the container's data.
func (c *bitmapContainer) size() int {
	switch c.kind() {
	case 'r':
		return 2 + 4*c.runs
	case 'a':
		return 2 * len(c.vals)
	}
	return bitmapBytes
}

// splitContainers groups sorted, distinct values by their high 16 bits
// and counts the runs of consecutive values in each group.
func splitContainers(vals []uint32, cs []bitmapContainer) []bitmapContainer {
	for len(vals) > 0 {
		key := vals[0] >> 16
		n, runs := 1, 1
		for n < len(vals) && vals[n]>>16 == key {
			if vals[n] != vals[n-1]+1 {
				runs++
			}
			n++
		}
		cs = append(cs, bitmapContainer{key: uint16(key), vals: vals[:n], runs: runs})
		vals = vals[n:]
	}
	return cs
}

// sortedSetBytes returns the roaring bitmap of vals (sorted in increasing
// order, without duplicates) in roaring's portable serialization, byte
// for byte what roaring.BitmapOf(vals...) gives after RunOptimize and
// ToBytes, in a slice of that size: the out-link and in-link sets that a
// batch writes, built without a Bitmap (TestSortedSetBytes and
// FuzzSortedSetBytes compare it with roaring).
func sortedSetBytes(vals []uint32) []byte {
	var buf [4]bitmapContainer
	cs := splitContainers(vals, buf[:0])
	hasRuns := false
	data := 0
	for i := range cs {
		if cs[i].kind() == 'r' {
			hasRuns = true
		}
		data += cs[i].size()
	}
	n := len(cs)
	header := 8 + 4*n + 4*n // cookie, size, keys and cardinalities, offsets
	if hasRuns {
		header = 4 + (n+7)/8 + 4*n
		if n >= noOffsetMaxKeys {
			header += 4 * n
		}
	}
	b := make([]byte, 0, header+data)
	if hasRuns {
		b = binary.LittleEndian.AppendUint16(b, cookieRuns)
		b = binary.LittleEndian.AppendUint16(b, uint16(n-1))
		flags := len(b)
		b = append(b, make([]byte, (n+7)/8)...)
		for i := range cs {
			if cs[i].kind() == 'r' {
				b[flags+i/8] |= 1 << (i % 8)
			}
		}
	} else {
		b = binary.LittleEndian.AppendUint32(b, cookieNoRuns)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
	}
	for i := range cs {
		b = binary.LittleEndian.AppendUint16(b, cs[i].key)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(cs[i].vals)-1))
	}
	if !hasRuns || n >= noOffsetMaxKeys {
		off := header
		for i := range cs {
			b = binary.LittleEndian.AppendUint32(b, uint32(off))
			off += cs[i].size()
		}
	}
	for i := range cs {
		c := &cs[i]
		switch c.kind() {
		case 'r':
			b = binary.LittleEndian.AppendUint16(b, uint16(c.runs))
			start := 0
			for j := 1; j <= len(c.vals); j++ {
				if j == len(c.vals) || c.vals[j] != c.vals[j-1]+1 {
					b = binary.LittleEndian.AppendUint16(b, uint16(c.vals[start]))
					b = binary.LittleEndian.AppendUint16(b, uint16(j-1-start))
					start = j
				}
			}
		case 'a':
			for _, v := range c.vals {
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			}
		default:
			at := len(b)
			b = b[:at+bitmapBytes]
			clear(b[at:])
			for _, v := range c.vals {
				lo := uint16(v)
				b[at+int(lo>>3)] |= 1 << (lo & 7)
			}
		}
	}
	return b
}
