package main

import (
	"container/heap"
	"fmt"
	"io"
	"time"
)

// Nutch's adaptive fetch schedule (AdaptiveFetchSchedule, Apache Nutch
// 1.x, its default factors), simulated on the crawl's budget of the known
// pages (issue 35): after a fetch the page's interval is multiplied by
// 1 + 0.4 if it had not changed, by 1 − 0.2 if it had, kept between 60 s
// and a year (db.fetch.schedule.adaptive.min_interval and
// db.fetch.interval.max), and starts at 30 days
// (db.fetch.interval.default); every duration is multiplied by the
// crawl's manager.time_scale, as the crawl's own are. The generator takes
// the most overdue pages first: the budget's B fetches are spread evenly
// over the window, and each takes the due page whose due time is the
// earliest (none when no page is due, so a slot can go unused). It runs
// twice: from Nutch's default interval, and from the crawl's
// min_revisit (a Nutch configured like the crawl).

// Nutch's defaults, at time scale 1.
const (
	nutchIncFactor       = 0.4
	nutchDecFactor       = 0.2
	nutchMinInterval     = 60 * time.Second
	nutchMaxInterval     = 365 * 24 * time.Hour
	nutchDefaultInterval = 30 * 24 * time.Hour
)

// NutchSim is the simulated schedule's result over the known pages.
type NutchSim struct {
	// Budget is the fetches it may make (the crawl's to the known
	// pages in the window); Fetches those it made, Changed those that
	// found a new version.
	Budget  int `json:"budget"`
	Fetches int `json:"fetches"`
	Changed int `json:"changed"`
	// Freshness and Weighted are the time-averaged freshness of the
	// known pages, plain and PageRank-weighted, as the crawl's are
	// measured.
	Freshness float64 `json:"freshness"`
	Weighted  float64 `json:"weighted_freshness"`
	// Scale is the time scale its durations were multiplied by;
	// MinInterval, MaxInterval and Initial the scaled bounds and
	// starting interval, seconds.
	Scale       float64 `json:"time_scale"`
	MinInterval float64 `json:"min_interval_s"`
	MaxInterval float64 `json:"max_interval_s"`
	Initial     float64 `json:"initial_interval_s"`
}

// nutchPage is one page's state in the simulation.
type nutchPage struct {
	page     int     // index in the input's pages
	due      float64 // when it is next due
	interval float64
	has      bool // a stored copy
	v        int  // its version
	last     float64
	fresh    float64 // ∫ fresh dt over the window so far
}

type nutchQueue []*nutchPage

func (q nutchQueue) Len() int { return len(q) }
func (q nutchQueue) Less(a, b int) bool {
	if q[a].due != q[b].due {
		return q[a].due < q[b].due
	}
	return q[a].page < q[b].page
}
func (q nutchQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *nutchQueue) Push(x any)   { *q = append(*q, x.(*nutchPage)) }
func (q *nutchQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// simulateNutch runs the schedule over the window on the pages known
// (idx), each starting from the copy and the last fetch the crawl had at
// the window's start, with budget fetches.
// initial is the starting interval in seconds, 0 for Nutch's default
// (30 days at the time scale).
func (in freshnessInput) simulateNutch(idx []int, budget int, scale, initial float64) NutchSim {
	s := NutchSim{Budget: budget, Scale: scale}
	sc := func(d time.Duration) float64 { return d.Seconds() * scale }
	s.MinInterval, s.MaxInterval, s.Initial = sc(nutchMinInterval), sc(nutchMaxInterval), sc(nutchDefaultInterval)
	if initial > 0 {
		s.Initial = initial
	}
	w := in.end - in.start
	if len(idx) == 0 || w <= 0 {
		return s
	}
	q := make(nutchQueue, 0, len(idx))
	pages := make([]*nutchPage, len(idx))
	for k, i := range idx {
		np := &nutchPage{page: i, interval: s.Initial, last: in.start}
		lastFetch := in.start
		for _, e := range in.fetches[i] {
			if e.at >= in.start {
				break
			}
			if e.status == 200 {
				np.has, np.v = true, in.pages[i].version(e.at)
			}
			if e.status == 200 || e.status == 304 {
				lastFetch = e.at
			}
		}
		np.due = lastFetch + np.interval
		pages[k] = np
		q = append(q, np)
	}
	heap.Init(&q)
	for b := range budget {
		t := in.start + (float64(b)+0.5)*w/float64(budget)
		if q[0].due > t {
			continue
		}
		np := q[0]
		p := &in.pages[np.page]
		fr, _ := copyOver(p, np.has, np.v, np.last, t)
		np.fresh += fr
		v := p.version(t)
		changed := !np.has || v != np.v
		np.has, np.v, np.last = true, v, t
		s.Fetches++
		if changed {
			s.Changed++
			np.interval *= 1 - nutchDecFactor
		} else {
			np.interval *= 1 + nutchIncFactor
		}
		np.interval = min(max(np.interval, s.MinInterval), s.MaxInterval)
		np.due = t + np.interval
		heap.Fix(&q, 0)
	}
	var wsum, wfresh float64
	for _, np := range pages {
		p := &in.pages[np.page]
		fr, _ := copyOver(p, np.has, np.v, np.last, in.end)
		np.fresh += fr
		f := np.fresh / w
		s.Freshness += f
		wsum += p.weight
		wfresh += p.weight * f
	}
	s.Freshness /= float64(len(pages))
	if wsum > 0 {
		s.Weighted = wfresh / wsum
	}
	return s
}

// Print writes the simulation's line.
func (s *NutchSim) Print(w io.Writer) {
	fmt.Fprintf(w, "Nutch adaptive schedule from %.0f s, known pages, same budget: fresh %.4f, weighted %.4f; %d of %d fetches made (%d found a new version); intervals x1.4 unchanged, x0.8 changed, %.3g s to %.0f s (time_scale %g)\n",
		s.Initial, s.Freshness, s.Weighted, s.Fetches, s.Budget, s.Changed, s.MinInterval, s.MaxInterval, s.Scale)
}
