// Package pagerank computes PageRank by power iteration over a directed
// graph held in memory in compressed sparse row (CSR) form. The iteration
// reads the in-links of each node (the transposed graph); InBuilder makes
// them in two passes over the out-links without ever holding the forward
// graph: a graph of N nodes and L links takes 4L + 36N bytes during the
// iteration (8N more while it is built).
//
// The model is the one of Baeza-Yates et al. 2005, equation (1), with the
// usual treatment of pages without out-links ("rank sinks"): the rank of a
// dangling page is spread uniformly over all pages, so ranks always sum
// to 1:
//
//	PR(p) = (1−d)/N + d·D/N + d·Σ_{x→p} PR(x)/|out(x)|
//
// where d is the damping factor (the probability of following a link;
// the paper's ε = 1−d), N the number of nodes and D the total rank of the
// dangling nodes in the previous iteration.
package pagerank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Defaults of Options.
const (
	// DefaultTolerance stops the iteration when the L1 distance between two
	// successive rank vectors (which sum to 1) falls below it.
	DefaultTolerance = 1e-9
	// DefaultMaxIterations bounds the work when convergence is slow (a
	// damping factor close to 1). With d = 0.85 the error shrinks at least
	// by d per iteration, so 1e-9 is reached in at most ~130 iterations.
	DefaultMaxIterations = 200
)

// chunk is the number of nodes one worker handles at a time. It is fixed
// (not derived from the number of CPUs) so that floating-point sums are
// added in the same order on every machine: the same graph gives the same
// ranks, bit for bit.
const chunk = 1 << 14

// ErrDamping means the damping factor is outside (0, 1).
var ErrDamping = errors.New("damping factor must be strictly between 0 and 1")

// Graph is a directed graph over nodes 0..N-1 in CSR form: the out-links
// of node i are Targets[Offsets[i]:Offsets[i+1]]. Build one with a
// Builder.
type Graph struct {
	N       int
	Offsets []int
	Targets []uint32
}

// Edges is the number of edges of the graph.
func (g *Graph) Edges() int { return len(g.Targets) }

// OutDegree is the number of out-links of node i.
func (g *Graph) OutDegree(i int) int { return g.Offsets[i+1] - g.Offsets[i] }

// Out returns the out-links of node i (not a copy).
func (g *Graph) Out(i int) []uint32 { return g.Targets[g.Offsets[i]:g.Offsets[i+1]] }

// Transpose returns the graph with every edge reversed; the in-links of
// each node come out in increasing order of source.
func (g *Graph) Transpose() *Graph {
	t := &Graph{N: g.N, Offsets: make([]int, g.N+1), Targets: make([]uint32, len(g.Targets))}
	for _, v := range g.Targets {
		t.Offsets[v+1]++
	}
	for i := 0; i < g.N; i++ {
		t.Offsets[i+1] += t.Offsets[i]
	}
	next := make([]int, g.N)
	copy(next, t.Offsets[:g.N])
	for u := 0; u < g.N; u++ {
		for _, v := range g.Out(u) {
			t.Targets[next[v]] = uint32(u)
			next[v]++
		}
	}
	return t
}

// Builder makes a Graph from adjacency lists given in increasing order of
// source node.
type Builder struct {
	g    *Graph
	next int // nodes before next have their out-links recorded
}

// NewBuilder starts a graph of n nodes without edges.
func NewBuilder(n int) *Builder {
	return &Builder{g: &Graph{N: n, Offsets: make([]int, n+1)}}
}

// Add records the out-links of node src, which must be greater than the
// src of every earlier call. Self-links and targets outside 0..n-1 are
// dropped: a page does not vote for itself. Targets need not be sorted but
// must not repeat.
func (b *Builder) Add(src int, targets []uint32) error {
	if src < b.next || src >= b.g.N {
		return fmt.Errorf("pagerank: node %d out of order or out of range (next %d, n %d)", src, b.next, b.g.N)
	}
	for ; b.next <= src; b.next++ {
		b.g.Offsets[b.next] = len(b.g.Targets)
	}
	for _, t := range targets {
		if int(t) != src && int(t) < b.g.N {
			b.g.Targets = append(b.g.Targets, t)
		}
	}
	return nil
}

// Graph finishes the graph; the Builder must not be used afterwards.
func (b *Builder) Graph() *Graph {
	for ; b.next <= b.g.N; b.next++ {
		b.g.Offsets[b.next] = len(b.g.Targets)
	}
	return b.g
}

// InBuilder makes the transpose of a graph (the in-links of every node)
// and the out-degrees without ever holding the forward graph: the edges
// are given twice, first to Count, then, after Allocate, to Fill, each
// time in increasing order of source. Its peak memory is the result: 4
// bytes per edge, 12 per node.
type InBuilder struct {
	n      int
	outDeg []uint32
	offs   []int // in-degree counts, then start offsets
	cursor []int // next free slot of each node during Fill
	srcs   []uint32
	last   int // last source given in the current pass, -1 before any
	filled bool
}

// NewInBuilder starts the transpose of a graph of n nodes.
func NewInBuilder(n int) *InBuilder {
	return &InBuilder{n: n, outDeg: make([]uint32, n), offs: make([]int, n+1), last: -1}
}

// keep tells whether an edge src→t is part of the graph: self-links and
// targets outside 0..n-1 are dropped, as in Builder.Add.
func (b *InBuilder) keep(src int, t uint32) bool { return int(t) != src && int(t) < b.n }

func (b *InBuilder) order(src int) error {
	if src <= b.last || src >= b.n {
		return fmt.Errorf("pagerank: node %d out of order or out of range (last %d, n %d)", src, b.last, b.n)
	}
	b.last = src
	return nil
}

// Count records the out-links of src in the first pass. Targets must not
// repeat.
func (b *InBuilder) Count(src int, targets []uint32) error {
	if b.cursor != nil {
		return errors.New("pagerank: Count after Allocate")
	}
	if err := b.order(src); err != nil {
		return err
	}
	for _, t := range targets {
		if b.keep(src, t) {
			b.offs[t+1]++
			b.outDeg[src]++
		}
	}
	return nil
}

// Allocate ends the first pass and makes room for the edges.
func (b *InBuilder) Allocate() {
	for i := 0; i < b.n; i++ {
		b.offs[i+1] += b.offs[i]
	}
	b.srcs = make([]uint32, b.offs[b.n])
	b.cursor = make([]int, b.n)
	copy(b.cursor, b.offs[:b.n])
	b.last = -1
}

// Fill records the out-links of src in the second pass: the same edges as
// in the first.
func (b *InBuilder) Fill(src int, targets []uint32) error {
	if b.cursor == nil {
		return errors.New("pagerank: Fill before Allocate")
	}
	if err := b.order(src); err != nil {
		return err
	}
	for _, t := range targets {
		if !b.keep(src, t) {
			continue
		}
		if b.cursor[t] >= b.offs[t+1] {
			return fmt.Errorf("pagerank: node %d has more in-links in the second pass than in the first", t)
		}
		b.srcs[b.cursor[t]] = uint32(src)
		b.cursor[t]++
	}
	return nil
}

// Graph returns the in-link graph (in.Out(p) are the sources linking to
// p, in increasing order) and the out-degrees. It fails if the two passes
// did not give the same edges.
func (b *InBuilder) Graph() (in *Graph, outDeg []uint32, err error) {
	if b.filled || b.cursor == nil {
		return nil, nil, errors.New("pagerank: Graph before Allocate or twice")
	}
	for i := 0; i < b.n; i++ {
		if b.cursor[i] != b.offs[i+1] {
			return nil, nil, fmt.Errorf("pagerank: node %d has fewer in-links in the second pass than in the first", i)
		}
	}
	b.filled, b.cursor = true, nil
	return &Graph{N: b.n, Offsets: b.offs, Targets: b.srcs}, b.outDeg, nil
}

// Options tune Compute; zero fields take the defaults.
type Options struct {
	Damping       float64 // probability of following a link; required, in (0, 1)
	Tolerance     float64 // L1 convergence threshold; 0 means DefaultTolerance
	MaxIterations int     // 0 means DefaultMaxIterations
	// Start, if it has one value per node, is the vector the iteration
	// starts from instead of the uniform one (a warm start: the ranks of
	// a graph that changed little since); it is scaled to sum 1. A
	// vector with a negative, infinite or NaN value, or none above 0,
	// is ignored.
	Start []float64
}

// Result is the outcome of Compute.
type Result struct {
	Rank       []float64 // PageRank of each node; sums to 1
	Iterations int       // power iterations done
	Delta      float64   // L1 distance between the last two iterations
	Converged  bool      // Delta < Tolerance
}

// Compute runs the power iteration from the uniform vector (or
// Options.Start) until the L1
// change drops below the tolerance or the iteration limit is reached
// (then Converged is false and the last vector is returned). It checks ctx
// between iterations. It builds the transpose of g; ComputeIn takes the
// in-links directly and needs half the memory.
func Compute(ctx context.Context, g *Graph, opt Options) (Result, error) {
	deg := make([]uint32, g.N)
	for i := range deg {
		deg[i] = uint32(g.OutDegree(i))
	}
	return ComputeIn(ctx, g.Transpose(), deg, opt)
}

// ComputeIn is Compute over the transposed graph: in.Out(p) lists the
// pages linking to p, and outDeg[x] is the number of out-links of x. The
// iteration reads only these two arrays and three rank vectors: 4 bytes
// per link and 36 per node (plus the 8-byte offsets).
func ComputeIn(ctx context.Context, in *Graph, outDeg []uint32, opt Options) (Result, error) {
	d := opt.Damping
	if !(d > 0 && d < 1) {
		return Result{}, fmt.Errorf("pagerank: %w, got %g", ErrDamping, d)
	}
	if len(outDeg) != in.N {
		return Result{}, fmt.Errorf("pagerank: %d out-degrees for %d nodes", len(outDeg), in.N)
	}
	tol := opt.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	maxIter := opt.MaxIterations
	if maxIter <= 0 {
		maxIter = DefaultMaxIterations
	}
	n := in.N
	if n == 0 {
		return Result{Rank: []float64{}, Converged: true}, nil
	}
	rank := make([]float64, n)
	next := make([]float64, n)
	contrib := make([]float64, n)
	if !startFrom(rank, opt.Start) {
		for i := range rank {
			rank[i] = 1 / float64(n)
		}
	}
	chunks := (n + chunk - 1) / chunk
	partial := make([]float64, chunks)
	workers := min(runtime.GOMAXPROCS(0), chunks)
	res := Result{}
	for res.Iterations < maxIter {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		dangling := 0.0
		for i, r := range rank {
			if k := outDeg[i]; k > 0 {
				contrib[i] = r / float64(k)
			} else {
				contrib[i] = 0
				dangling += r
			}
		}
		base := (1-d)/float64(n) + d*dangling/float64(n)
		parallel(chunks, workers, func(c int) {
			lo, hi := c*chunk, min((c+1)*chunk, n)
			delta := 0.0
			for p := lo; p < hi; p++ {
				s := 0.0
				for _, x := range in.Out(p) {
					s += contrib[x]
				}
				v := base + d*s
				next[p] = v
				delta += math.Abs(v - rank[p])
			}
			partial[c] = delta
		})
		res.Delta = 0
		for _, x := range partial {
			res.Delta += x
		}
		rank, next = next, rank
		res.Iterations++
		if res.Delta < tol {
			res.Converged = true
			break
		}
	}
	res.Rank = rank
	return res, nil
}

// startFrom copies start, scaled to sum 1, into rank, if it is a usable
// start vector for it (Options.Start).
func startFrom(rank, start []float64) bool {
	if len(start) != len(rank) {
		return false
	}
	sum := 0.0
	for _, x := range start {
		if !(x >= 0) || math.IsInf(x, 0) {
			return false
		}
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return false
	}
	for i, x := range start {
		rank[i] = x / sum
	}
	return true
}

// parallel calls fn(0..count-1) on up to workers goroutines.
func parallel(count, workers int, fn func(int)) {
	if workers <= 1 {
		for c := 0; c < count; c++ {
			fn(c)
		}
		return
	}
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for c := range jobs {
				fn(c)
			}
		})
	}
	for c := 0; c < count; c++ {
		jobs <- c
	}
	close(jobs)
	wg.Wait()
}

// NormalizeMax scales v in place so that its largest element is 1 (a
// vector of zeros or an empty one is left as is).
func NormalizeMax(v []float64) {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	if m <= 0 {
		return
	}
	for i := range v {
		v[i] /= m
	}
}
