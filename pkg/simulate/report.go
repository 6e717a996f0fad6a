package simulate

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// CSVColumns are the columns of the curves file, one row per point of
// each strategy's curve.
var CSVColumns = []string{"model", "strategy", "fetched", "fraction", "time_s", "cum_pagerank", "pending", "parked"}

// WriteCSV writes the curves of every result.
func WriteCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
	for _, r := range results {
		for _, p := range r.Curve {
			rec := []string{r.Model, r.Strategy, strconv.Itoa(p.Fetched), f(p.Fraction), f(p.Time), f(p.PageRank),
				strconv.Itoa(p.Pending), strconv.Itoa(p.Parked)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the summary table: per strategy the average
// cumulative PageRank, Kendall's τ, the cumulative PageRank at 10%, 20%
// and 50% of the pages, the pages fetched, the largest queue, the
// simulated time and the wall-clock time.
func WriteTable(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tmodel\tavg PR\ttau\tPR@10%\tPR@20%\tPR@50%\tfetched\tmax queue\tsim time\twall time\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%s\t%.3f\t%.3f\t%.3f\t%d/%d\t%d\t%s\t%.1fs\t\n",
			r.Strategy, r.Model, r.AvgPageRank, fmtTau(r.Tau), At(r, 0.1), At(r, 0.2), At(r, 0.5),
			r.Fetched, r.Pages, r.MaxQueue, fmtDuration(r.Time), r.Elapsed)
	}
	return tw.Flush()
}

func fmtTau(t float64) string {
	if math.IsNaN(t) {
		return "-"
	}
	return strconv.FormatFloat(t, 'f', 4, 64)
}

// fmtDuration prints simulated seconds as hours, minutes or seconds.
func fmtDuration(s float64) string {
	switch {
	case s >= 2*86400:
		return fmt.Sprintf("%.1fd", s/86400)
	case s >= 7200:
		return fmt.Sprintf("%.1fh", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.1fm", s/60)
	}
	return fmt.Sprintf("%.0fs", s)
}

// At is the cumulative PageRank of a result when the given fraction of
// the graph's pages had been fetched (linear between points; the final
// value after the end).
func At(r *Result, fraction float64) float64 {
	c := r.Curve
	for i := 1; i < len(c); i++ {
		if c[i].Fraction >= fraction {
			a, b := c[i-1], c[i]
			if b.Fraction == a.Fraction {
				return b.PageRank
			}
			return a.PageRank + (b.PageRank-a.PageRank)*(fraction-a.Fraction)/(b.Fraction-a.Fraction)
		}
	}
	return c[len(c)-1].PageRank
}
