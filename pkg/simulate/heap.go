package simulate

// iheap is a binary heap of int32 items (pages or sites) with an index:
// pos[item] is the item's position in items, −1 when it is in no heap.
// Several heaps may share one pos slice when their items are disjoint
// (the page heaps of the sites). The best item, by less, is at the top.
type iheap struct {
	items []int32
	pos   []int32
	less  func(a, b int32) bool
}

func (h *iheap) Len() int { return len(h.items) }

// Top returns the best item; the heap must not be empty.
func (h *iheap) Top() int32 { return h.items[0] }

// Push adds an item that is in no heap.
func (h *iheap) Push(x int32) {
	h.pos[x] = int32(len(h.items))
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// Pop removes and returns the best item.
func (h *iheap) Pop() int32 {
	x := h.items[0]
	h.remove(0)
	return x
}

// Remove takes x out of the heap if it is in it.
func (h *iheap) Remove(x int32) {
	if i := h.pos[x]; i >= 0 && int(i) < len(h.items) && h.items[i] == x {
		h.remove(int(i))
	}
}

func (h *iheap) remove(i int) {
	x := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	h.pos[x] = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

// Fix restores the order after the key of x changed; x must be in the
// heap.
func (h *iheap) Fix(x int32) {
	i := int(h.pos[x])
	if !h.down(i) {
		h.up(i)
	}
}

// Contains reports whether x is in this heap.
func (h *iheap) Contains(x int32) bool {
	i := h.pos[x]
	return i >= 0 && int(i) < len(h.items) && h.items[i] == x
}

// Init re-orders the whole heap after many keys changed.
func (h *iheap) Init() {
	for i, x := range h.items {
		h.pos[x] = int32(i)
	}
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *iheap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = int32(i)
	h.pos[h.items[j]] = int32(j)
}

func (h *iheap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down sifts item i down and reports whether it moved.
func (h *iheap) down(i0 int) bool {
	i := i0
	n := len(h.items)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && h.less(h.items[r], h.items[j]) {
			j = r
		}
		if !h.less(h.items[j], h.items[i]) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// event is something that happens to a page or site at a simulated time.
type event struct {
	at float64
	id int32
}

// eventQueue is a min-heap of events by time, ties by id, so the
// simulation is deterministic.
type eventQueue []event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) min() event { return q[0] }

func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	j := len(h) - 1
	for j > 0 {
		i := (j - 1) / 2
		if !h.before(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (q *eventQueue) pop() event {
	h := *q
	e := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		j := 2*i + 1
		if j >= len(h) {
			break
		}
		if r := j + 1; r < len(h) && h.before(r, j) {
			j = r
		}
		if !h.before(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	*q = h
	return e
}

func (q eventQueue) before(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].id < q[j].id
}
