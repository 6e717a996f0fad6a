package manager

import (
	"fmt"
	"slices"

	"github.com/wirecrawl/wire/pkg/config"
)

// before tells whether candidate a comes before candidate b in a batch:
// higher profit first, ties by ascending doc id, so the same graph always
// gives the same batch.
func (v *graphView) before(a, b int32) bool {
	ca, cb := &v.cands[a], &v.cands[b]
	if ca.logProfit != cb.logProfit {
		return ca.logProfit > cb.logProfit
	}
	return v.ids[ca.pos] < v.ids[cb.pos]
}

// candHeap is a binary heap of candidate indices, the first in batch
// order on top. Building it is linear and each pop logarithmic, so a
// batch of k pages out of n candidates costs O(n + k log n), not a sort of
// all n.
type candHeap struct {
	v *graphView
	h []int32
}

func newCandHeap(v *graphView) *candHeap {
	h := &candHeap{v: v, h: make([]int32, len(v.cands))}
	for i := range h.h {
		h.h[i] = int32(i)
	}
	for i := len(h.h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

func (h *candHeap) down(i int) {
	n := len(h.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		best := l
		if r := l + 1; r < n && h.v.before(h.h[r], h.h[l]) {
			best = r
		}
		if !h.v.before(h.h[best], h.h[i]) {
			return
		}
		h.h[i], h.h[best] = h.h[best], h.h[i]
		i = best
	}
}

func (h *candHeap) pop() int32 {
	top := h.h[0]
	last := len(h.h) - 1
	h.h[0] = h.h[last]
	h.h = h.h[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

// selectBatch takes candidates in batch order, skipping those the limits
// forbid, until the batch is full (docs/manager.md, "Candidates and
// limits"):
//
//   - max_pages_per_site pages of one site in the batch;
//   - max_site_pages pages of one site in the collection: a page not yet
//     fetched, tried or scheduled is skipped once its site has that many;
//   - max_fetches_per_script query URLs per script: a new query URL is
//     skipped once that many URLs of its script were fetched, tried or
//     scheduled (or taken into this batch);
//   - batch_duration (tb, nil when off): a URL is skipped once its host
//     has no time left for it in the batch;
//   - a site flagged as streaming gets at most its probe URL
//     (streamingSites).
//
// Then, with batch_duration, it fills the batch up to its makespan: the
// candidates held back by time only are taken again, in batch order, as
// long as they end on their host and their address before the batch's
// busiest server is done (budget.makespan), so that no server idles at
// the end of a batch that its slowest server holds up anyway (docs/manager.md,
// "Filling a batch to its length").
//
// It returns the indices of the chosen candidates in batch order.
func selectBatch(v *graphView, m *config.Manager, tb *budget) []int32 {
	st := &v.stats
	h := newCandHeap(v)
	bySite := make([]int32, len(v.held))
	watch := int32(-1)
	if v.watch != nil {
		watch = int32(v.watch.cand)
	}
	// limitOf names the limit that keeps candidate c out of the batch
	// now ("" if none), the time budget asked with fits.
	limitOf := func(c *cand, fits func() bool) string {
		allowed, streaming := v.streaming[c.site]
		switch {
		case streaming && bySite[c.site] >= allowed:
			return "streaming"
		case int(bySite[c.site]) >= m.MaxPagesPerSite:
			return "max_pages_per_site"
		case !c.holds && m.MaxSitePages > 0 && int(v.held[c.site]) >= m.MaxSitePages:
			return "max_site_pages"
		case c.script >= 0 && m.MaxFetchesPerScript > 0 && int(v.slots[c.script]) >= m.MaxFetchesPerScript:
			return "max_fetches_per_script"
		case fits != nil && !fits():
			return "batch_duration"
		}
		return ""
	}
	var out, timeHeld []int32
	take := func(i int32, c *cand, first bool) {
		bySite[c.site]++
		if !c.holds {
			v.held[c.site]++
			if c.script >= 0 {
				v.slots[c.script]++
			}
		}
		if tb != nil {
			tb.take(c.site, first)
		}
		out = append(out, i)
	}
	for len(h.h) > 0 {
		if len(out) == m.BatchSize {
			st.Left += len(h.h)
			break
		}
		i := h.pop()
		c := &v.cands[i]
		first := bySite[c.site] == 0
		var fits func() bool
		if tb != nil {
			fits = func() bool { return tb.fits(c.site, first) }
		}
		limit := limitOf(c, fits) // the limit that skips it, by its setting's name
		switch limit {
		case "streaming":
			st.StreamingHeld++
		case "max_pages_per_site":
			st.SiteCapped++
		case "max_site_pages":
			st.SiteFull++
		case "max_fetches_per_script":
			st.ScriptCapped++
		case "batch_duration":
			st.TimeCapped++
			timeHeld = append(timeHeld, i)
		}
		if i == watch {
			v.watch.fate = fate(v, c, m, tb, limit, first)
		}
		if limit != "" {
			continue
		}
		take(i, c, first)
	}
	if tb != nil && len(timeHeld) > 0 && len(out) < m.BatchSize {
		until := tb.makespan()
		n := len(out)
		for _, i := range timeHeld {
			if len(out) == m.BatchSize {
				break
			}
			c := &v.cands[i]
			first := bySite[c.site] == 0
			if limitOf(c, func() bool { return tb.fitsWithin(c.site, first, until) }) != "" {
				continue
			}
			take(i, c, first)
			if i == watch {
				v.watch.fate = ""
			}
		}
		st.TimeCapped -= len(out) - n
		st.Filled = len(out) - n
		if len(out) > n {
			slices.SortFunc(out, func(a, b int32) int {
				switch {
				case a == b:
					return 0
				case v.before(a, b):
					return -1
				}
				return 1
			})
		}
	}
	if watch >= 0 {
		if at := slices.Index(out, watch); at >= 0 {
			v.watch.batchAt = at
		}
	}
	if watch >= 0 && v.watch.fate == "" && v.watch.batchAt < 0 {
		v.watch.fate = fmt.Sprintf("the batch is full (batch_size %d) before its turn", m.BatchSize)
	}
	return out
}

// fate says why the limit named keeps candidate c out of the batch, ""
// if none does (explain).
func fate(v *graphView, c *cand, m *config.Manager, tb *budget, limit string, first bool) string {
	switch limit {
	case "max_pages_per_site":
		return fmt.Sprintf("its site already has %d pages of higher profit in this batch (max_pages_per_site)", m.MaxPagesPerSite)
	case "max_site_pages":
		return fmt.Sprintf("its site has %d pages fetched, tried or scheduled (max_site_pages %d)", v.held[c.site], m.MaxSitePages)
	case "max_fetches_per_script":
		return fmt.Sprintf("its script already has %d URLs fetched, tried or scheduled (max_fetches_per_script %d)", v.slots[c.script], m.MaxFetchesPerScript)
	case "batch_duration":
		return tb.heldBack(c.site, first)
	case "streaming":
		return streamingFate(v.streaming[c.site])
	}
	return ""
}

// rankOf counts the candidates that come before candidate i.
func (v *graphView) rankOf(i int32) int {
	r := 0
	for j := range v.cands {
		if int32(j) != i && v.before(int32(j), i) {
			r++
		}
	}
	return r
}
