package main

import (
	"container/heap"
	"sort"
	"time"
)

// boundUnit is one politeness unit as the polite bound sees it.
type boundUnit struct {
	// addr is the unit's address.
	addr string
	// pages are its reachable pages.
	pages int
	// resp is the time one of its requests takes (the median in the log),
	// gap the least time from the end of one to the start of the next:
	// max(wait, the largest Crawl-delay of its names).
	resp, gap time.Duration
}

// serverBound returns, for each time in at, the pages a crawler that
// kept every rule could have fetched by then: each unit one request at
// a time and gap after each end, each address at most
// connections_per_ip requests in flight and starts address_wait apart,
// from time zero on. A page counts at the end of its request. Addresses
// are independent; on each, whenever a request may start, the unit that
// has been ready the longest starts its next page (a greedy schedule:
// it keeps the address as busy as its rules allow, the bound of the
// order that never leaves a server idle).
func serverBound(units []boundUnit, r serverRules, at []time.Duration) []int {
	horizon := time.Duration(0)
	for _, t := range at {
		horizon = max(horizon, t)
	}
	byAddr := map[string][]boundUnit{}
	for _, u := range units {
		if u.pages > 0 {
			byAddr[u.addr] = append(byAddr[u.addr], u)
		}
	}
	var done []time.Duration
	for _, us := range byAddr {
		done = simulateAddress(done, us, r, horizon)
	}
	sort.Slice(done, func(a, b int) bool { return done[a] < done[b] })
	out := make([]int, len(at))
	for i, t := range at {
		out[i] = sort.Search(len(done), func(k int) bool { return done[k] > t })
	}
	return out
}

// simulateAddress serves the units of one address from time zero until
// a request could only start after horizon, appending to done the end of
// every request that ends by horizon.
func simulateAddress(done []time.Duration, units []boundUnit, r serverRules, horizon time.Duration) []time.Duration {
	ready := make(readyHeap, len(units))
	left := make([]int, len(units))
	for i, u := range units {
		ready[i] = readyUnit{unit: i}
		left[i] = u.pages
	}
	heap.Init(&ready)
	var inFlight durHeap
	t := time.Duration(0) // the earliest the address allows the next start
	for ready.Len() > 0 {
		top := ready[0]
		t = max(t, top.at)
		if r.connectionsPerIP > 0 {
			for inFlight.Len() > 0 && inFlight[0] <= t {
				heap.Pop(&inFlight)
			}
			if inFlight.Len() >= r.connectionsPerIP {
				t = max(t, heap.Pop(&inFlight).(time.Duration))
			}
		}
		if t > horizon {
			break
		}
		u := units[top.unit]
		end := t + u.resp
		if end <= horizon {
			done = append(done, end)
		}
		if r.connectionsPerIP > 0 {
			heap.Push(&inFlight, end)
		}
		if left[top.unit]--; left[top.unit] > 0 {
			ready[0].at = end + u.gap
			heap.Fix(&ready, 0)
		} else {
			heap.Pop(&ready)
		}
		t += r.addressWait
	}
	return done
}

// readyUnit is a unit and when it may start its next request.
type readyUnit struct {
	unit int
	at   time.Duration
}

// readyHeap orders units by the time they are ready, then by index.
type readyHeap []readyUnit

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].unit < h[b].unit
}
func (h readyHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *readyHeap) Push(x any)   { *h = append(*h, x.(readyUnit)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// durHeap is a min-heap of times.
type durHeap []time.Duration

func (h durHeap) Len() int           { return len(h) }
func (h durHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h durHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *durHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
