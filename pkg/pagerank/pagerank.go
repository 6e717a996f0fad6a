// Package pagerank computes PageRank by power iteration over a directed
// graph held in compressed sparse row (CSR) form.
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

// Options tune Compute; zero fields take the defaults.
type Options struct {
	Damping       float64 // probability of following a link; required, in (0, 1)
	Tolerance     float64 // L1 convergence threshold; 0 means DefaultTolerance
	MaxIterations int     // 0 means DefaultMaxIterations
}

// Result is the outcome of Compute.
type Result struct {
	Rank       []float64 // PageRank of each node; sums to 1
	Iterations int       // power iterations done
	Delta      float64   // L1 distance between the last two iterations
	Converged  bool      // Delta < Tolerance
}

// Compute runs the power iteration from the uniform vector until the L1
// change drops below the tolerance or the iteration limit is reached
// (then Converged is false and the last vector is returned). It checks ctx
// between iterations.
func Compute(ctx context.Context, g *Graph, opt Options) (Result, error) {
	d := opt.Damping
	if !(d > 0 && d < 1) {
		return Result{}, fmt.Errorf("pagerank: %w, got %g", ErrDamping, d)
	}
	tol := opt.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	maxIter := opt.MaxIterations
	if maxIter <= 0 {
		maxIter = DefaultMaxIterations
	}
	n := g.N
	if n == 0 {
		return Result{Rank: []float64{}, Converged: true}, nil
	}
	in := g.Transpose()
	rank := make([]float64, n)
	next := make([]float64, n)
	contrib := make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
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
			if k := g.OutDegree(i); k > 0 {
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
