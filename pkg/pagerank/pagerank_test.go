package pagerank

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

func build(t *testing.T, n int, adj map[int][]uint32) *Graph {
	t.Helper()
	b := NewBuilder(n)
	for src := 0; src < n; src++ {
		if out, ok := adj[src]; ok {
			if err := b.Add(src, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.Graph()
}

// The expected ranks are solved by hand from
//
//	PR(p) = (1−d)/N + d·D/N + d·Σ_{x→p} PR(x)/|out(x)|,  d = 0.85.
func TestComputeHandChecked(t *testing.T) {
	const A, B, C, D = 0, 1, 2, 3
	tests := []struct {
		name string
		n    int
		adj  map[int][]uint32
		want []float64
	}{
		{
			// A→B→C→A: by symmetry every page has 1/3.
			name: "cycle",
			n:    3,
			adj:  map[int][]uint32{A: {B}, B: {C}, C: {A}},
			want: []float64{1.0 / 3, 1.0 / 3, 1.0 / 3},
		},
		{
			// A→B, A→C, B→C, C→A (Page et al.'s classic example).
			//   a = 0.05 + 0.85c
			//   b = 0.05 + 0.85a/2
			//   c = 0.05 + 0.85a/2 + 0.85b
			// Substituting b and c into a: a = 686/1769, b = 380/1769,
			// c = 703/1769 (sum 1).
			name: "classic",
			n:    3,
			adj:  map[int][]uint32{A: {B, C}, B: {C}, C: {A}},
			want: []float64{686.0 / 1769, 380.0 / 1769, 703.0 / 1769},
		},
		{
			// A→B and B dangling: B's rank is spread over both pages.
			//   a = 0.075 + 0.85b/2
			//   b = 0.075 + 0.85b/2 + 0.85a
			// With a + b = 1: a = 0.5 − 0.425a, so a = 20/57, b = 37/57.
			name: "dangling",
			n:    2,
			adj:  map[int][]uint32{A: {B}},
			want: []float64{20.0 / 57, 37.0 / 57},
		},
		{
			// A→A, A→B: the self-link is dropped, so this is "dangling".
			name: "self-link",
			n:    2,
			adj:  map[int][]uint32{A: {A, B}},
			want: []float64{20.0 / 57, 37.0 / 57},
		},
		{
			// B→A, C→A, D→A, A→B: C and D get only the random jump.
			//   c = d = 0.15/4 = 0.0375
			//   b = 0.0375 + 0.85a
			//   a = 0.0375 + 0.85(b + c + d) = 0.10125 + 0.85b
			// so 0.2775a = 0.133125: a = 71/148, b = 659/1480.
			name: "star",
			n:    4,
			adj:  map[int][]uint32{A: {B}, B: {A}, C: {A}, D: {A}},
			want: []float64{71.0 / 148, 659.0 / 1480, 0.0375, 0.0375},
		},
		{
			// No links at all: the uniform vector.
			name: "isolated",
			n:    4,
			want: []float64{0.25, 0.25, 0.25, 0.25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, tt.n, tt.adj)
			res, err := Compute(context.Background(), g, Options{Damping: 0.85})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Errorf("not converged after %d iterations (delta %g)", res.Iterations, res.Delta)
			}
			sum := 0.0
			for i, want := range tt.want {
				sum += res.Rank[i]
				if math.Abs(res.Rank[i]-want) > 1e-8 {
					t.Errorf("rank[%d] = %.10f, want %.10f", i, res.Rank[i], want)
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("ranks sum to %g", sum)
			}
		})
	}
}

func TestComputeEmptyAndBadDamping(t *testing.T) {
	res, err := Compute(context.Background(), NewBuilder(0).Graph(), Options{Damping: 0.85})
	if err != nil || len(res.Rank) != 0 || !res.Converged {
		t.Errorf("empty graph: %+v, %v", res, err)
	}
	for _, d := range []float64{0, 1, -0.5, math.NaN()} {
		if _, err := Compute(context.Background(), NewBuilder(1).Graph(), Options{Damping: d}); !errors.Is(err, ErrDamping) {
			t.Errorf("damping %g: err %v, want ErrDamping", d, err)
		}
	}
}

func TestComputeIterationLimitAndCancel(t *testing.T) {
	g := build(t, 3, map[int][]uint32{0: {1, 2}, 1: {2}, 2: {0}})
	res, err := Compute(context.Background(), g, Options{Damping: 0.85, MaxIterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Converged || res.Iterations != 2 {
		t.Errorf("limit 2: converged=%v after %d iterations", res.Converged, res.Iterations)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compute(ctx, g, Options{Damping: 0.85}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err %v", err)
	}
}

func TestBuilderAndTranspose(t *testing.T) {
	b := NewBuilder(4)
	if err := b.Add(1, []uint32{0, 3, 1, 9}); err != nil { // self-link 1 and out-of-range 9 dropped
		t.Fatal(err)
	}
	if err := b.Add(1, nil); err == nil {
		t.Error("repeated source accepted")
	}
	if err := b.Add(3, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	g := b.Graph()
	if g.Edges() != 3 || g.OutDegree(0) != 0 || g.OutDegree(1) != 2 || g.OutDegree(2) != 0 || g.OutDegree(3) != 1 {
		t.Fatalf("graph %+v", g)
	}
	in := g.Transpose()
	if got := in.Out(0); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("in-links of 0: %v, want [1 3]", got)
	}
	if got := in.Out(3); len(got) != 1 || got[0] != 1 {
		t.Errorf("in-links of 3: %v, want [1]", got)
	}
}

func TestNormalizeMax(t *testing.T) {
	v := []float64{0.1, 0.4, 0.2}
	NormalizeMax(v)
	if v[0] != 0.25 || v[1] != 1 || v[2] != 0.5 {
		t.Errorf("got %v", v)
	}
	z := []float64{0, 0}
	NormalizeMax(z)
	if z[0] != 0 || z[1] != 0 {
		t.Errorf("zeros became %v", z)
	}
}

// randomGraph has n nodes with about k out-links each, skewed towards low
// node numbers as on the Web (a few pages get most links).
func randomGraph(n, k int, seed uint64) *Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	b := NewBuilder(n)
	seen := map[uint32]bool{}
	var out []uint32
	for src := 0; src < n; src++ {
		if r.IntN(5) == 0 {
			continue // dangling, like a page not fetched yet
		}
		out = out[:0]
		clear(seen)
		for j := r.IntN(2 * k); j > 0; j-- {
			t := uint32(float64(n) * math.Pow(r.Float64(), 3))
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		b.Add(src, out)
	}
	return b.Graph()
}

// The chunked parallel sums must not depend on the number of CPUs.
func TestComputeDeterministic(t *testing.T) {
	g := randomGraph(3*chunk+17, 8, 7)
	a, err := Compute(context.Background(), g, Options{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	old := runtime.GOMAXPROCS(1)
	b, err := Compute(context.Background(), g, Options{Damping: 0.85})
	runtime.GOMAXPROCS(old)
	if err != nil {
		t.Fatal(err)
	}
	if a.Iterations != b.Iterations {
		t.Fatalf("iterations %d vs %d", a.Iterations, b.Iterations)
	}
	for i := range a.Rank {
		if a.Rank[i] != b.Rank[i] {
			t.Fatalf("rank[%d] %v vs %v with one CPU", i, a.Rank[i], b.Rank[i])
		}
	}
}

// BenchmarkCompute runs on a graph of the size the manager must handle
// (1M pages, ~15M links): go test -bench Compute ./pkg/pagerank
func BenchmarkCompute(b *testing.B) {
	g := randomGraph(1_000_000, 19, 1)
	b.Logf("%d nodes, %d edges", g.N, g.Edges())
	b.ResetTimer()
	for b.Loop() {
		res, err := Compute(context.Background(), g, Options{Damping: 0.85})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Iterations), "iterations")
	}
}

// The two-pass in-link builder gives the transpose of the forward
// graph, and ComputeIn over it the same ranks as Compute.
func TestInBuilder(t *testing.T) {
	g := randomGraph(2*chunk+5, 6, 3)
	b := NewInBuilder(g.N)
	for pass := 0; pass < 2; pass++ {
		for src := 0; src < g.N; src++ {
			out := append([]uint32(nil), g.Out(src)...)
			if src%7 == 0 {
				out = append(out, uint32(src), uint32(g.N+3)) // dropped: self-link, out of range
			}
			var err error
			if pass == 0 {
				err = b.Count(src, out)
			} else {
				err = b.Fill(src, out)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if pass == 0 {
			b.Allocate()
		}
	}
	in, deg, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := g.Transpose()
	if in.Edges() != want.Edges() {
		t.Fatalf("%d edges, want %d", in.Edges(), want.Edges())
	}
	for p := 0; p < g.N; p++ {
		if deg[p] != uint32(g.OutDegree(p)) {
			t.Fatalf("outdeg[%d] = %d, want %d", p, deg[p], g.OutDegree(p))
		}
		a, w := in.Out(p), want.Out(p)
		for i := range w {
			if a[i] != w[i] {
				t.Fatalf("in-links of %d: %v, want %v", p, a, w)
			}
		}
	}
	r1, err := Compute(context.Background(), g, Options{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ComputeIn(context.Background(), in, deg, Options{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r1.Rank {
		if r1.Rank[i] != r2.Rank[i] {
			t.Fatalf("rank[%d] %v vs %v", i, r1.Rank[i], r2.Rank[i])
		}
	}
}

func TestInBuilderMisuse(t *testing.T) {
	b := NewInBuilder(3)
	if err := b.Fill(0, nil); err == nil {
		t.Error("Fill before Allocate accepted")
	}
	if err := b.Count(1, []uint32{0, 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.Count(1, nil); err == nil {
		t.Error("repeated source accepted")
	}
	b.Allocate()
	if err := b.Count(2, nil); err == nil {
		t.Error("Count after Allocate accepted")
	}
	if err := b.Fill(1, []uint32{0}); err != nil { // one edge short
		t.Fatal(err)
	}
	if _, _, err := b.Graph(); err == nil {
		t.Error("a second pass with fewer edges accepted")
	}
	b2 := NewInBuilder(2)
	b2.Count(0, []uint32{1})
	b2.Allocate()
	if err := b2.Fill(1, []uint32{0}); err == nil {
		t.Error("a second pass with an edge the first did not have accepted")
	}
	if _, err := ComputeIn(context.Background(), &Graph{N: 2, Offsets: make([]int, 3)}, []uint32{0}, Options{Damping: 0.85}); err == nil {
		t.Error("out-degrees of the wrong length accepted")
	}
}

// A warm start from the ranks of a slightly different graph converges to
// the ranks of this one, within the tolerance, in fewer iterations than
// the uniform start; an unusable start vector is ignored.
func TestComputeWarmStart(t *testing.T) {
	g := randomGraph(5000, 8, 3)
	cold, err := Compute(context.Background(), g, Options{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	// The ranks of the graph with a tenth of its pages' links changed.
	h := randomGraph(5000, 8, 4)
	mixed := NewBuilder(g.N)
	for i := range g.N {
		out := g.Out(i)
		if i%10 == 0 {
			out = h.Out(i)
		}
		if err := mixed.Add(i, out); err != nil {
			t.Fatal(err)
		}
	}
	prev, err := Compute(context.Background(), mixed.Graph(), Options{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	scaled := make([]float64, len(prev.Rank))
	for i, x := range prev.Rank {
		scaled[i] = 3 * x // any scale
	}
	warm, err := Compute(context.Background(), g, Options{Damping: 0.85, Start: scaled})
	if err != nil {
		t.Fatal(err)
	}
	if !warm.Converged || warm.Iterations >= cold.Iterations {
		t.Errorf("warm start: %d iterations (converged %v), cold %d", warm.Iterations, warm.Converged, cold.Iterations)
	}
	dist := 0.0
	for i := range cold.Rank {
		dist += math.Abs(cold.Rank[i] - warm.Rank[i])
	}
	if dist > 1e-7 {
		t.Errorf("warm and cold ranks %g apart (L1)", dist)
	}
	for _, bad := range [][]float64{make([]float64, g.N), {1, 2}, append([]float64{math.NaN()}, prev.Rank[1:]...), append([]float64{-1}, prev.Rank[1:]...)} {
		r, err := Compute(context.Background(), g, Options{Damping: 0.85, Start: bad})
		if err != nil {
			t.Fatal(err)
		}
		if r.Iterations != cold.Iterations || r.Rank[7] != cold.Rank[7] {
			t.Errorf("start %v…: used (%d iterations, cold %d)", bad[:2], r.Iterations, cold.Iterations)
		}
	}
}
