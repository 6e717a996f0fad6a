package simulate

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteTau is Kendall's τ-b by its definition, over every pair.
func bruteTau(x, y []float64) float64 {
	var c, d, tx, ty int
	n := len(x)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tx++
				ty++
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx*dy > 0:
				c++
			default:
				d++
			}
		}
	}
	p := n * (n - 1) / 2
	return float64(c-d) / math.Sqrt(float64(p-tx)*float64(p-ty))
}

func TestKendallTauHandChecked(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// Pairs (1,2) and (1,3) concordant, (2,3) discordant: (2−1)/3.
		{"one swap of three", []float64{1, 2, 3}, []float64{1, 3, 2}, 1.0 / 3},
		// 4 items, C = 4, D = 2 (swaps 1↔2 and 3↔4 ... by hand: pairs
		// (a,b) D, (a,c) C, (a,d) C, (b,c) C, (b,d) C, (c,d) D).
		{"two swaps of four", []float64{1, 2, 3, 4}, []float64{2, 1, 4, 3}, 2.0 / 6},
		// Ties: x = 1,1,2,3 y = 1,2,2,3. Pairs: (a,b) tied in x; (a,c) C;
		// (a,d) C; (b,c) tied in y; (b,d) C; (c,d) C. C = 4, D = 0,
		// P = 6, Tx = 1, Ty = 1: τ-b = 4/√(5·5) = 0.8.
		{"ties", []float64{1, 1, 2, 3}, []float64{1, 2, 2, 3}, 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KendallTau(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("τ = %v, want %v", got, tt.want)
			}
			if got := bruteTau(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("brute force τ = %v, want %v (the test is wrong)", got, tt.want)
			}
		})
	}
	if !math.IsNaN(KendallTau([]float64{1, 1, 1}, []float64{1, 2, 3})) {
		t.Error("a constant ranking gives a number")
	}
}

func TestKendallTauMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 2 + r.IntN(300)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = float64(r.IntN(20)) // many ties
			y[i] = float64(r.IntN(1 + trial))
			if trial%2 == 0 {
				y[i] += x[i] // correlated
			}
		}
		want := bruteTau(x, y)
		got := KendallTau(x, y)
		if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && math.Abs(got-want) > 1e-9) {
			t.Fatalf("n=%d: τ = %v, brute force %v", n, got, want)
		}
	}
}

func TestAverageCumulative(t *testing.T) {
	pr := []float64{0.5, 0.3, 0.2}
	tests := []struct {
		order []int32
		want  float64
	}{
		{[]int32{0, 1, 2}, (0.5 + 0.8 + 1.0) / 3}, // best order
		{[]int32{2, 1, 0}, (0.2 + 0.5 + 1.0) / 3}, // worst order
		{[]int32{0}, (0.5 + 0.5 + 0.5) / 3},       // stopped after one page: flat after
		{nil, 0},
	}
	for _, tt := range tests {
		if got := AverageCumulative(pr, tt.order, 3); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("order %v: %v, want %v", tt.order, got, tt.want)
		}
	}
}

func TestUpperBound(t *testing.T) {
	ub := UpperBound([]float64{0.1, 0.4, 0.2, 0.3}, 4)
	want := []float64{0, 0.4, 0.7, 0.9, 1.0}
	for i := range want {
		if math.Abs(ub[i]-want[i]) > 1e-12 {
			t.Fatalf("upper bound %v, want %v", ub, want)
		}
	}
}

func TestAt(t *testing.T) {
	r := &Result{Curve: []Point{{}, {Fraction: 0.5, PageRank: 0.8}, {Fraction: 1, PageRank: 1}}}
	for _, c := range []struct{ f, want float64 }{{0, 0}, {0.25, 0.4}, {0.5, 0.8}, {0.75, 0.9}, {1, 1}} {
		if got := At(r, c.f); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("At(%v) = %v, want %v", c.f, got, c.want)
		}
	}
}

func sampleResults() []*Result {
	return []*Result{
		{Strategy: "a", Model: "paper", Pages: 2, Fetched: 2, AvgPageRank: 0.75, Tau: 1, TauSample: 2, Time: 30,
			Curve: []Point{{}, {Fetched: 1, Fraction: 0.5, Time: 1, PageRank: 0.5, Pending: 1}, {Fetched: 2, Fraction: 1, Time: 17, PageRank: 1}}},
		{Strategy: "b & <c>", Model: "paper", Pages: 2, Fetched: 1, AvgPageRank: 0.25, Tau: math.NaN(),
			Curve: []Point{{}, {Fetched: 1, Fraction: 0.5, Time: 1, PageRank: 0.25, Parked: 3}}},
	}
}

func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+3+2 || strings.Join(recs[0], ",") != strings.Join(CSVColumns, ",") {
		t.Fatalf("records %q", recs)
	}
	if got := strings.Join(recs[2], ","); got != "paper,a,1,0.5,1,0.5,1,0" {
		t.Errorf("row %q", got)
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"avg PR", "tau", "0.7500", "1.0000", "2/2", "1/2", "30s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestChartsAreSVG(t *testing.T) {
	res := sampleResults()
	for _, c := range []Chart{PageRankChart("t", res, []float64{0.6, 0.4}), TimeChart("t", res), QueueChart("t", res)} {
		var buf bytes.Buffer
		if err := c.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(&buf)
		lines := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v", c.YLabel, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
				lines++
			}
		}
		if lines < len(res) {
			t.Errorf("%d lines for %d results", lines, len(res))
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{{1, 0.2}, {0.8, 0.1}, {37, 5}, {1000, 200}} {
		if got := niceStep(c.v); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
