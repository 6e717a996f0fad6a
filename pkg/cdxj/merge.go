package cdxj

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Source is a series of index lines in index order (by key, then
// timestamp), such as a Reader over an index file.
type Source interface {
	// Next returns the next line, io.EOF after the last.
	Next() (Line, error)
	// Name names the source in errors.
	Name() string
}

// Lines is a Source over lines held in memory (sorted already).
func Lines(name string, lines []Line) Source { return &sliceSource{name: name, lines: lines} }

type sliceSource struct {
	name  string
	lines []Line
}

func (s *sliceSource) Next() (Line, error) {
	if len(s.lines) == 0 {
		return Line{}, io.EOF
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	return l, nil
}

func (s *sliceSource) Name() string { return s.name }

// Merge writes the lines of all sources to w as one index, in index
// order, holding one line per source at a time (an index over many WARC
// files need not fit in memory). Lines of equal key and timestamp come
// in the order of their text. A source out of order is an error naming
// it. It returns the number of lines written.
func Merge(w io.Writer, sources []Source) (int, error) {
	h := &mergeHeap{}
	for _, src := range sources {
		if err := h.pull(&mergeItem{src: src}); err != nil {
			return 0, err
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	for h.Len() > 0 {
		it := (*h)[0]
		if _, err := bw.WriteString(it.text); err != nil {
			return n, err
		}
		n++
		heap.Pop(h)
		if err := h.pull(it); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// mergeItem is a source and its next line.
type mergeItem struct {
	src  Source
	line Line
	text string // line.Append, with its line end
	prev string // sortKey of the line before, to check the order
}

// mergeHeap orders the sources by their next line's key and timestamp,
// then text.
type mergeHeap []*mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := strings.Compare(h[i].line.sortKey(), h[j].line.sortKey()); c != 0 {
		return c < 0
	}
	return h[i].text < h[j].text
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// pull reads the source's next line and puts the item (back) on the
// heap; a source at its end is dropped.
func (h *mergeHeap) pull(it *mergeItem) error {
	l, err := it.src.Next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	k := l.sortKey()
	if k < it.prev {
		return fmt.Errorf("merge index %s: %w: %s", it.src.Name(), ErrFormat, notSorted)
	}
	it.line, it.text, it.prev = l, string(l.Append(nil)), k
	heap.Push(h, it)
	return nil
}
