package simulate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Point is the state of a simulated crawl after some pages were fetched.
type Point struct {
	Fetched  int     // distinct pages fetched so far
	Fraction float64 // Fetched / pages of the graph
	Time     float64 // simulated seconds since the crawl began
	PageRank float64 // cumulative PageRank: the sum of the true PageRank of the pages fetched
	Pending  int     // pages discovered and not fetched yet (the frontier)
	Parked   int     // pages whose links the Sydney limit parked (the secondary queue)
}

// Result is the outcome of one strategy on one graph.
type Result struct {
	Strategy string
	Model    string  // "paper" or "batch"
	Pages    int     // pages of the graph
	Fetched  int     // pages fetched by the end of the crawl
	Time     float64 // simulated seconds at the end
	Curve    []Point // from the start (nothing fetched) to the end
	// AvgPageRank is the average cumulative PageRank over the crawl: the
	// area under the curve of cumulative PageRank against the fraction of
	// the graph's pages fetched (the curve stays flat after the last fetch).
	AvgPageRank float64
	// Tau is Kendall's τ-b between the fetch order and the PageRank order
	// on a random sample of TauSample fetched pages (1: fetched in
	// decreasing PageRank; 0: unrelated).
	Tau       float64
	TauSample int
	MaxQueue  int     // largest Pending + Parked seen
	Batches   int     // batches written (batch model)
	Elapsed   float64 // wall-clock seconds the simulation took
}

// recorder follows a crawl as it goes and turns it into a Result.
type recorder struct {
	pr      []float64 // true PageRank of each page
	n       int
	every   int // a point every this many fetches
	cum     float64
	order   []int32 // pages in fetch order
	curve   []Point
	maxQ    int
	lastT   float64
	lastPen int
	lastPar int
}

// newRecorder records a crawl of a graph whose pages have the true ranks
// pr, keeping about points points of the curve.
func newRecorder(pr []float64, points int) *recorder {
	if points <= 0 {
		points = 1000
	}
	r := &recorder{pr: pr, n: len(pr), every: max(1, len(pr)/points)}
	r.curve = append(r.curve, Point{})
	return r
}

// fetched records the first fetch of page p at time t, with the queue
// sizes after it.
func (r *recorder) fetched(p int32, t float64, pending, parked int) {
	r.order = append(r.order, p)
	r.cum += r.pr[p]
	r.maxQ = max(r.maxQ, pending+parked)
	r.lastT, r.lastPen, r.lastPar = t, pending, parked
	if len(r.order)%r.every == 0 {
		r.point()
	}
}

// queue records a queue size seen between fetches.
func (r *recorder) queue(pending, parked int) { r.maxQ = max(r.maxQ, pending+parked) }

func (r *recorder) point() {
	k := len(r.order)
	r.curve = append(r.curve, Point{Fetched: k, Fraction: float64(k) / float64(max(r.n, 1)), Time: r.lastT,
		PageRank: r.cum, Pending: r.lastPen, Parked: r.lastPar})
}

// result finishes the record: the last point, the average cumulative
// PageRank and Kendall's τ on a sample of tauSample pages drawn with seed.
func (r *recorder) result(strategy, model string, tauSample int, seed uint64) *Result {
	if last := r.curve[len(r.curve)-1]; last.Fetched != len(r.order) {
		r.point()
	}
	res := &Result{Strategy: strategy, Model: model, Pages: r.n, Fetched: len(r.order), Time: r.lastT,
		Curve: r.curve, MaxQueue: r.maxQ}
	res.AvgPageRank = AverageCumulative(r.pr, r.order, r.n)
	res.Tau, res.TauSample = sampleTau(r.pr, r.order, tauSample, seed)
	return res
}

// AverageCumulative is the average cumulative PageRank of a crawl that
// fetched the pages order (of n pages with ranks pr): the mean, over
// k = 1..n, of the rank fetched by the k-th download, counting the final
// total for k beyond the pages fetched. It equals the area under the
// cumulative PageRank curve against the fraction of pages (Baeza-Yates et
// al., §5.2); a random order gives about 0.5 and an order by decreasing
// PageRank the most possible.
func AverageCumulative(pr []float64, order []int32, n int) float64 {
	if n == 0 {
		return 0
	}
	sum, cum := 0.0, 0.0
	for _, p := range order {
		cum += pr[p]
		sum += cum
	}
	sum += cum * float64(n-len(order))
	return sum / float64(n)
}

// sampleTau computes Kendall's τ between fetch position and PageRank on
// a uniform sample of at most size fetched pages.
func sampleTau(pr []float64, order []int32, size int, seed uint64) (float64, int) {
	if size <= 0 {
		size = 5000
	}
	idx := make([]int, len(order))
	for i := range idx {
		idx[i] = i
	}
	if len(idx) > size {
		r := rand.New(rand.NewPCG(seed, 0x7a75))
		for i := 0; i < size; i++ {
			j := i + r.IntN(len(idx)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		idx = idx[:size]
	}
	x := make([]float64, len(idx))
	y := make([]float64, len(idx))
	for k, i := range idx {
		x[k] = -float64(i) // fetched earlier ranks higher
		y[k] = pr[order[i]]
	}
	return KendallTau(x, y), len(idx)
}

// KendallTau is Kendall's τ-b between two rankings given as scores (a
// higher score ranks first in both): (C − D) / √((P − Tx)(P − Ty)) with C
// concordant pairs, D discordant pairs, P all pairs, Tx and Ty the pairs
// tied in x and in y (Kendall, Rank Correlation Methods). It is 1 for the
// same order, −1 for the reverse, about 0 for unrelated orders, and NaN
// when one ranking is constant. O(n log n) after Knight (1966).
func KendallTau(x, y []float64) float64 {
	n := len(x)
	if n != len(y) || n < 2 {
		return math.NaN()
	}
	type pair struct{ x, y float64 }
	p := make([]pair, n)
	for i := range p {
		p[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(p, func(a, b pair) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(a.y, b.y)
	})
	total := int64(n) * int64(n-1) / 2
	// Pairs tied in x, and tied in both.
	var tx, txy int64
	for i := 0; i < n; {
		j := i
		for j < n && p[j].x == p[i].x {
			j++
		}
		tx += int64(j-i) * int64(j-i-1) / 2
		for k := i; k < j; {
			l := k
			for l < j && p[l].y == p[k].y {
				l++
			}
			txy += int64(l-k) * int64(l-k-1) / 2
			k = l
		}
		i = j
	}
	// Sorting by y with a merge sort counts the swaps: the discordant
	// pairs (pairs tied in x are already in y order, so add no swap).
	ys := make([]float64, n)
	for i := range p {
		ys[i] = p[i].y
	}
	swaps := mergeCount(ys, make([]float64, n))
	var ty int64
	for i := 0; i < n; {
		j := i
		for j < n && ys[j] == ys[i] {
			j++
		}
		ty += int64(j-i) * int64(j-i-1) / 2
		i = j
	}
	// C − D = P − Tx − Ty + Txy − 2·D.
	num := float64(total - tx - ty + txy - 2*swaps)
	den := math.Sqrt(float64(total-tx)) * math.Sqrt(float64(total-ty))
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// mergeCount sorts a ascending and returns the number of inversions
// (pairs i < j with a[i] > a[j]); buf is scratch space of the same length.
func mergeCount(a, buf []float64) int64 {
	n := len(a)
	var swaps int64
	for width := 1; width < n; width *= 2 {
		for lo := 0; lo < n-width; lo += 2 * width {
			mid, hi := lo+width, min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if a[j] < a[i] {
					buf[k] = a[j]
					swaps += int64(mid - i)
					j++
				} else {
					buf[k] = a[i]
					i++
				}
				k++
			}
			k += copy(buf[k:], a[i:mid])
			copy(buf[k:], a[j:hi])
			copy(a[lo:hi], buf[lo:hi])
		}
	}
	return swaps
}

// UpperBound is the cumulative PageRank curve of the best order that
// ignores the links: pages by decreasing PageRank (the paper's Figure 3).
// It returns the cumulative rank after each of points+1 evenly spaced
// fractions 0, 1/points, …, 1.
func UpperBound(pr []float64, points int) []float64 {
	s := slices.Clone(pr)
	slices.SortFunc(s, func(a, b float64) int { return cmp.Compare(b, a) })
	out := make([]float64, points+1)
	cum := 0.0
	k := 0
	for i := 0; i <= points; i++ {
		upto := int(math.Round(float64(i) / float64(points) * float64(len(s))))
		for ; k < upto; k++ {
			cum += s[k]
		}
		out[i] = cum
	}
	return out
}
