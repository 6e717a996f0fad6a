package manager

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/pagerank"
)

// forEachRow streams the out-link sets of graph.db as positions: fn gets
// the position of each document with out-links and the positions of its
// targets, ascending, without self-links and without ids that have no
// document. targets is reused between calls. It also counts the links
// into v.stats.Links (once per pass). The sets come from the links cache
// when the run has one (v.links), else from graph.db.
func (v *graphView) forEachRow(ctx context.Context, tx *linkgraph.Tx, fn func(src int32, targets []uint32) error) error {
	var targets, ids []uint32
	links := 0
	row := func(id uint64, ids []uint32) error {
		src := v.position(id)
		if src < 0 {
			return nil
		}
		targets = targets[:0]
		for _, t32 := range ids {
			if t := v.position(uint64(t32)); t >= 0 && t != src {
				targets = append(targets, uint32(t))
			}
		}
		links += len(targets)
		return fn(src, targets)
	}
	var err error
	if v.links != nil {
		err = v.links.forEach(ctx, func(src uint32, ids []uint32) error { return row(uint64(src), ids) })
	} else {
		rows := 0
		err = tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
			if rows++; rows%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			ids = appendBitmap(ids[:0], bm)
			return row(id, ids)
		})
	}
	if err != nil {
		return fmt.Errorf("read links: %w", err)
	}
	v.stats.Links = links
	return nil
}

// inDegrees counts the in-links of every position in one pass.
func (v *graphView) inDegrees(ctx context.Context, tx *linkgraph.Tx) ([]int32, error) {
	indeg := make([]int32, len(v.ids))
	err := v.forEachRow(ctx, tx, func(_ int32, targets []uint32) error {
		for _, t := range targets {
			indeg[t]++
		}
		return nil
	})
	return indeg, err
}

// inGraph builds the compact in-link graph of PageRank in two passes over
// the out-link sets (count, then fill), so that only the transpose, 4
// bytes per link, is ever held.
func (v *graphView) inGraph(ctx context.Context, tx *linkgraph.Tx) (*pagerank.Graph, []uint32, error) {
	b := pagerank.NewInBuilder(len(v.ids))
	if err := v.forEachRow(ctx, tx, func(src int32, t []uint32) error { return b.Count(int(src), t) }); err != nil {
		return nil, nil, err
	}
	b.Allocate()
	if err := v.forEachRow(ctx, tx, func(src int32, t []uint32) error { return b.Fill(int(src), t) }); err != nil {
		return nil, nil, err
	}
	return b.Graph()
}

// pageRank is the PageRank of every position over the known graph, the
// iteration started from start (by position) if it is not nil.
func (v *graphView) pageRank(ctx context.Context, tx *linkgraph.Tx, damping float64, start []float64) ([]float64, error) {
	in, deg, err := v.inGraph(ctx, tx)
	if err != nil {
		return nil, err
	}
	res, err := pagerank.ComputeIn(ctx, in, deg, pagerank.Options{Damping: damping, Start: start})
	if err != nil {
		return nil, fmt.Errorf("compute pagerank: %w", err)
	}
	v.stats.Iterations, v.stats.Converged = res.Iterations, res.Converged
	return res.Rank, nil
}

// byPosition turns a vector by doc id (a stored PageRank) into the start
// of an iteration by position: a document the vector has no value for
// (found since) starts at the mean, 1/N. Nil without a vector.
func (v *graphView) byPosition(byID []float64) []float64 {
	if len(byID) == 0 || len(v.ids) == 0 {
		return nil
	}
	start := make([]float64, len(v.ids))
	mean := 1 / float64(len(v.ids))
	for p, id := range v.ids {
		if int(id) < len(byID) && byID[id] > 0 {
			start[p] = byID[id]
		} else {
			start[p] = mean
		}
	}
	return start
}

// byID turns a vector by position into one by doc id (0 for ids without
// a document), as the scores bucket stores it.
func (v *graphView) byID(byPos []float64) []float64 {
	out := make([]float64, v.maxID()+1)
	for p, id := range v.ids {
		out[id] = byPos[p]
	}
	return out
}

// parentShares gives every position p with want(p) the sum, over the
// pages x linking to it with a value val(x) > 0, of val(x)/|out(x)|, in
// one pass over the links: the temporary PageRank of partial-pagerank and
// the "parent" rule of historical. It returns the sums (0 for positions
// without such a parent).
func (v *graphView) parentShares(ctx context.Context, tx *linkgraph.Tx, val func(p int32) float64, want func(p int32) bool) ([]float64, error) {
	sum := make([]float64, len(v.ids))
	err := v.forEachRow(ctx, tx, func(src int32, targets []uint32) error {
		x := val(src)
		if x <= 0 || len(targets) == 0 {
			return nil
		}
		share := x / float64(len(targets))
		for _, t := range targets {
			if want(int32(t)) {
				sum[t] += share
			}
		}
		return nil
	})
	return sum, err
}
