package linkgraph

import "unsafe"

// blockLen is the number of entries per block of a blocks list.
const blockLen = 1 << 12

// blocks is a list that grows by blocks of blockLen entries: appending
// never copies what it holds. A batch's transaction appends hundreds of
// thousands of new URLs and records, which a doubling slice would copy
// again and again (leaving the old arrays to the GC).
type blocks[T any] struct {
	b [][]T
	n int
}

// add appends v.
func (l *blocks[T]) add(v T) {
	if l.n%blockLen == 0 {
		l.b = append(l.b, make([]T, 0, blockLen))
	}
	last := &l.b[len(l.b)-1]
	*last = append(*last, v)
	l.n++
}

// len is the number of entries.
func (l *blocks[T]) len() int { return l.n }

// at is the entry i (0 <= i < len).
func (l *blocks[T]) at(i int) *T { return &l.b[i/blockLen][i%blockLen] }

// appendTo appends the entries, in order, to s.
func (l *blocks[T]) appendTo(s []T) []T {
	for _, b := range l.b {
		s = append(s, b...)
	}
	return s
}

// slice returns the entries in one slice of their number.
func (l *blocks[T]) slice() []T {
	if l.n == 0 {
		return nil
	}
	return l.appendTo(make([]T, 0, l.n))
}

// keyBytes is s as a byte slice sharing its memory, for keys that bbolt
// only reads or copies (Bucket.Put clones its key, Cursor.Seek does not
// keep it); never for values, which bbolt keeps until the commit.
func keyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
