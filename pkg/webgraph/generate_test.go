package webgraph

import (
	"math"
	"slices"
	"testing"
)

func TestGenerateShape(t *testing.T) {
	p := Params{Pages: 50000, Seed: 7, MaxSitePages: 2000}
	g, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	st := g.Stats()
	t.Logf("%+v", st)
	if st.Pages != 50000 {
		t.Errorf("pages %d", st.Pages)
	}
	// Simon's model: about NewSite·N sites.
	if want := 0.05 * 50000; math.Abs(float64(st.Sites)-want) > 0.15*want {
		t.Errorf("sites %d, want about %.0f", st.Sites, want)
	}
	if st.MaxSite > 2000 || st.MaxSite < 1000 {
		t.Errorf("largest site %d, want near the cap 2000", st.MaxSite)
	}
	if st.MedianSite > 5 {
		t.Errorf("median site %d pages: sizes are not heavy-tailed", st.MedianSite)
	}
	if st.Internal < 0.75 || st.Internal > 0.95 {
		t.Errorf("internal links %.2f, want mostly internal", st.Internal)
	}
	if mean := float64(st.Links) / float64(st.Pages); mean < 8 || mean > 20 {
		t.Errorf("mean out-degree %.1f", mean)
	}
	// Power-law in-degree: the most linked page has far more links than
	// a Poisson graph of this size would give (mean + a few σ).
	if mean := float64(st.Links) / float64(st.Pages); float64(st.MaxInDegree) < 50*mean {
		t.Errorf("max in-degree %d for a mean of %.1f: not heavy-tailed", st.MaxInDegree, mean)
	}
	if n := g.Reachable(); n != g.N() {
		t.Errorf("%d of %d pages reachable from the seeds", n, g.N())
	}
	// The same parameters give the same graph.
	g2, _ := Generate(p)
	if !slices.Equal(g.Names, g2.Names) || !slices.Equal(g.Links.Targets, g2.Links.Targets) {
		t.Error("Generate is not deterministic")
	}
}

func TestGenerateInDegreeTail(t *testing.T) {
	g, err := Generate(Params{Pages: 100000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, g.N())
	for _, t := range g.Links.Targets {
		in[t]++
	}
	// On a power law the number of pages with in-degree ≥ k falls by a
	// roughly constant factor per doubling of k, over decades.
	count := func(k int) int {
		n := 0
		for _, c := range in {
			if c >= k {
				n++
			}
		}
		return n
	}
	var counts []int
	for k := 16; k <= 4096; k *= 4 {
		counts = append(counts, count(k))
	}
	t.Logf("pages with in-degree >= 16, 64, 256, 1024, 4096: %v", counts)
	for i := 1; i < len(counts); i++ {
		if counts[i] == 0 || counts[i] >= counts[i-1] {
			t.Fatalf("in-degree tail ends early: %v", counts)
		}
	}
}

func TestGeneratePair(t *testing.T) {
	before, after, err := GeneratePair(Params{Pages: 40000, Seed: 2}, History{New: 0.4, Dead: 0.1, Churn: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{before, after} {
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		if n := g.Reachable(); n != g.N() {
			t.Errorf("%d of %d pages reachable", n, g.N())
		}
	}
	if d := after.N() - 40000; d < -1 || d > 1 {
		t.Errorf("after has %d pages, want 40000", after.N())
	}
	idx := before.Index()
	old := 0
	for _, name := range after.Names {
		if _, ok := idx[name]; ok {
			old++
		}
	}
	if f := 1 - float64(old)/float64(after.N()); math.Abs(f-0.4) > 0.01 {
		t.Errorf("new fraction %.3f, want 0.4", f)
	}
	if gone := before.N() - old; math.Abs(float64(gone)/float64(before.N())-0.1) > 0.01 {
		t.Errorf("%d of %d old pages gone, want 10%%", gone, before.N())
	}
}

func TestParamsValidate(t *testing.T) {
	for _, p := range []Params{{Pages: -1}, {Internal: 2}, {OutDegree: -3}, {MaxSitePages: -1}} {
		if _, err := Generate(p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	if _, _, err := GeneratePair(Params{Pages: 100}, History{New: 1}); err == nil {
		t.Error("history with only new pages accepted")
	}
}

func TestSubgraph(t *testing.T) {
	g, err := ReadFile("testdata/small.graph")
	if err != nil {
		t.Fatal(err)
	}
	idx := g.Index()
	keep := make([]bool, g.N())
	for _, n := range []string{"http://a.cl/", "http://a.cl/x", "http://b.cl/"} {
		keep[idx[n]] = true
	}
	s, old := g.Subgraph(keep)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.N() != 3 || s.Links.Edges() != 3 || len(s.Seeds) != 1 || len(old) != 3 {
		t.Fatalf("got %+v", s.Stats())
	}
}
