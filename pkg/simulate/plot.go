package simulate

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
)

// Series is one line of a chart.
type Series struct {
	Name string
	X, Y []float64
	Dash bool // drawn dashed (reference lines)
}

// Chart is a line chart written as a standalone SVG file.
type Chart struct {
	Title, XLabel, YLabel string
	XMax, YMax            float64 // axis ends; 0 means the largest value, rounded up
	Series                []Series
}

// palette holds colours that stay apart for the 12 strategies.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#000000"}

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 860, 560
	marginL        = 70
	marginR        = 230 // legend
	marginT        = 40
	marginB        = 55
	maxPlotPoints  = 300 // per series; longer series are thinned
)

// WriteSVG draws the chart.
func (c Chart) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	xmax, ymax := c.XMax, c.YMax
	for _, s := range c.Series {
		for i := range s.X {
			if c.XMax == 0 {
				xmax = math.Max(xmax, s.X[i])
			}
			if c.YMax == 0 {
				ymax = math.Max(ymax, s.Y[i])
			}
		}
	}
	xstep, ystep := niceStep(xmax), niceStep(ymax)
	if c.XMax == 0 {
		xmax = math.Ceil(xmax/xstep-1e-9) * xstep
	}
	if c.YMax == 0 {
		ymax = math.Ceil(ymax/ystep-1e-9) * ystep
	}
	if xmax <= 0 {
		xmax = 1
	}
	if ymax <= 0 {
		ymax = 1
	}
	pw, ph := float64(chartW-marginL-marginR), float64(chartH-marginT-marginB)
	px := func(x float64) float64 { return marginL + x/xmax*pw }
	py := func(y float64) float64 { return marginT + ph - y/ymax*ph }
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", chartW, chartH)
	fmt.Fprintf(bw, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", marginL, html.EscapeString(c.Title))
	// Grid and ticks.
	for x := 0.0; x <= xmax+xstep/1e6; x += xstep {
		fmt.Fprintf(bw, `<line x1="%s" y1="%d" x2="%s" y2="%s" stroke="#e0e0e0"/>`+"\n", num(px(x)), marginT, num(px(x)), num(py(0)))
		fmt.Fprintf(bw, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(px(x)), num(py(0)+18), tick(x, xstep))
	}
	for y := 0.0; y <= ymax+ystep/1e6; y += ystep {
		fmt.Fprintf(bw, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#e0e0e0"/>`+"\n", marginL, num(py(y)), num(px(xmax)), num(py(y)))
		fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", marginL-6, num(py(y)+4), tick(y, ystep))
	}
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="black"/>`+"\n", marginL, marginT, num(pw), num(ph))
	fmt.Fprintf(bw, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num(marginL+pw/2), chartH-12, html.EscapeString(c.XLabel))
	fmt.Fprintf(bw, `<text x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`+"\n", num(marginT+ph/2), num(marginT+ph/2), html.EscapeString(c.YLabel))
	// Lines and legend.
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		dash := ""
		if s.Dash || i >= len(palette) {
			dash = ` stroke-dasharray="6 4"`
		}
		if s.Dash {
			color = "#555555"
		}
		fmt.Fprintf(bw, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="`, color, dash)
		stride := max(1, len(s.X)/maxPlotPoints)
		for k := 0; k < len(s.X); k += stride {
			fmt.Fprintf(bw, "%s,%s ", num(px(math.Min(s.X[k], xmax))), num(py(math.Min(s.Y[k], ymax))))
		}
		if n := len(s.X); n > 0 && (n-1)%stride != 0 {
			fmt.Fprintf(bw, "%s,%s", num(px(math.Min(s.X[n-1], xmax))), num(py(math.Min(s.Y[n-1], ymax))))
		}
		bw.WriteString(`"/>` + "\n")
		ly := marginT + 10 + i*18
		lx := chartW - marginR + 15
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", lx, ly, lx+28, ly, color, dash)
		fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", lx+34, ly+4, html.EscapeString(s.Name))
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// niceStep is a tick spacing of 1, 2 or 5 times a power of ten giving
// about 5 to 10 ticks up to v.
func niceStep(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0.1
	}
	raw := v / 8
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// tick formats a tick label with the digits its step needs.
func tick(v, step float64) string {
	d := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return strconv.FormatFloat(v, 'f', d, 64)
}

// PageRankChart plots cumulative PageRank against the fraction of pages
// fetched, one line per result, with the upper bound of the graph (pages
// by decreasing PageRank, links ignored) dashed.
func PageRankChart(title string, results []*Result, pr []float64) Chart {
	c := Chart{Title: title, XLabel: "fraction of pages fetched", YLabel: "cumulative PageRank", XMax: 1, YMax: 1}
	for _, r := range results {
		s := Series{Name: r.Strategy}
		for _, p := range r.Curve {
			s.X = append(s.X, p.Fraction)
			s.Y = append(s.Y, p.PageRank)
		}
		c.Series = append(c.Series, s)
	}
	if len(pr) > 0 {
		ub := UpperBound(pr, 500)
		s := Series{Name: "upper bound", Dash: true}
		for i, v := range ub {
			s.X = append(s.X, float64(i)/500)
			s.Y = append(s.Y, v)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// TimeChart plots cumulative PageRank against simulated time in hours.
func TimeChart(title string, results []*Result) Chart {
	c := Chart{Title: title, XLabel: "simulated time (hours)", YLabel: "cumulative PageRank", YMax: 1}
	for _, r := range results {
		s := Series{Name: r.Strategy}
		for _, p := range r.Curve {
			s.X = append(s.X, p.Time/3600)
			s.Y = append(s.Y, p.PageRank)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// QueueChart plots the frontier (pending pages plus parked pages) as a
// fraction of the graph's pages against the fraction of pages fetched.
func QueueChart(title string, results []*Result) Chart {
	c := Chart{Title: title, XLabel: "fraction of pages fetched", YLabel: "pending queue / pages", XMax: 1}
	for _, r := range results {
		s := Series{Name: r.Strategy}
		for _, p := range r.Curve {
			s.X = append(s.X, p.Fraction)
			s.Y = append(s.Y, float64(p.Pending+p.Parked)/float64(max(r.Pages, 1)))
		}
		c.Series = append(c.Series, s)
	}
	return c
}
