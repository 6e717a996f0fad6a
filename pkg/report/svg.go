package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The plots are drawn as inline SVG by this file: no library, no
// script, no font or style sheet from outside, so the report opens
// anywhere without a network and the same data gives the same bytes.

// color is the colour of series i.
func color(i int) string {
	return [...]string{"#1f77b4", "#d95f02", "#2ca02c", "#7570b3", "#e7298a", "#66a61e"}[i%6]
}

// Plot geometry, in SVG user units (pixels at 100 % zoom).
const (
	plotWidth   = 560
	plotHeight  = 330
	marginLeft  = 64
	marginRight = 16
	marginTop   = 44
	marginBot   = 52
)

// XY is one point of a series.
type XY struct{ X, Y float64 }

// Series is a named set of points drawn in one colour.
type Series struct {
	Name   string
	Points []XY
	// Line joins the points (in X order) instead of drawing dots.
	Line bool
	// Dashed draws the line dashed (a reference, not data).
	Dashed bool
}

// XYPlot is a scatter or line plot on linear or logarithmic axes.
type XYPlot struct {
	ID, Title, XLabel, YLabel string
	LogX, LogY                bool
	Series                    []Series
	// YMax, if positive, fixes the top of the Y axis (e.g. 1 for a
	// fraction).
	YMax float64
	// VLines are X values marked by thin vertical lines (batch ends).
	VLines []float64
}

// BarPlot is a bar chart over categories, one bar per series in each.
type BarPlot struct {
	ID, Title, XLabel, YLabel string
	Categories                []string
	Series                    []string
	// Values[s][c] is the value of series s in category c.
	Values [][]float64
	// Horizontal puts categories on the Y axis (long labels).
	Horizontal bool
}

// svgBuf collects SVG elements.
type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(b, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

// num formats a coordinate with two decimals at most.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// open starts an SVG element with a title, a frame and axis labels.
func open(b *svgBuf, id, title, xlabel, ylabel string, w, h int) {
	b.f(`<svg class="plot" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-family="sans-serif" font-size="11">`,
		esc(id), w, h, w, h, esc(title))
	b.f(`<title>%s</title>`, esc(title))
	b.f(`<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, w, h)
	b.f(`<text x="%d" y="18" font-size="14" font-weight="bold" text-anchor="middle">%s</text>`, w/2, esc(title))
	b.f(`<text x="%d" y="%d" text-anchor="middle">%s</text>`, marginLeft+(w-marginLeft-marginRight)/2, h-8, esc(xlabel))
	b.f(`<text transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`, marginTop+(h-marginTop-marginBot)/2, esc(ylabel))
}

// axis maps data values to pixels along one direction.
type axis struct {
	lo, hi     float64 // data range (log10 of it for a log axis)
	log        bool
	from, to   float64 // pixel range
	ticks      []float64
	tickLabels []string
}

// newAxis fits an axis to values between min and max.
func newAxis(min, max float64, log bool, from, to float64) axis {
	a := axis{log: log, from: from, to: to}
	if log {
		lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
		if hi <= lo {
			hi = lo + 1
		}
		a.lo, a.hi = lo, hi
		step := math.Max(1, math.Ceil((hi-lo)/6))
		for e := lo; e <= hi+1e-9; e += step {
			a.ticks = append(a.ticks, e)
			a.tickLabels = append(a.tickLabels, short(math.Pow(10, e)))
		}
		return a
	}
	if max <= min {
		max = min + 1
	}
	step := niceStep((max - min) / 5)
	lo, hi := math.Floor(min/step)*step, math.Ceil(max/step)*step
	a.lo, a.hi = lo, hi
	for v := lo; v <= hi+step/2; v += step {
		a.ticks = append(a.ticks, v)
		a.tickLabels = append(a.tickLabels, short(v))
	}
	return a
}

// pos is the pixel position of data value v.
func (a axis) pos(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// tickPos is the pixel position of tick i.
func (a axis) tickPos(i int) float64 {
	return a.from + (a.ticks[i]-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// short prints a tick value: 0.25, 3, 1.5k, 20M.
func short(v float64) string {
	av := math.Abs(v)
	switch {
	case av >= 1e9:
		return trim(v/1e9) + "G"
	case av >= 1e6:
		return trim(v/1e6) + "M"
	case av >= 1e3:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// SVG draws the plot. A plot without any point says so in its frame.
func (p *XYPlot) SVG() string {
	var b svgBuf
	w, h := plotWidth, plotHeight
	open(&b, p.ID, p.Title, p.XLabel, p.YLabel, w, h)
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	n := 0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if !p.usable(pt) {
				continue
			}
			n++
			minX, maxX = math.Min(minX, pt.X), math.Max(maxX, pt.X)
			minY, maxY = math.Min(minY, pt.Y), math.Max(maxY, pt.Y)
		}
	}
	if n == 0 {
		noData(&b, w, h)
		return b.String()
	}
	if !p.LogY {
		minY = math.Min(minY, 0)
	}
	if !p.LogX {
		minX = math.Min(minX, 0)
	}
	if p.YMax > 0 {
		maxY = math.Max(maxY, p.YMax)
	}
	// Inset so that points on the ends of the range stay off the frame.
	const inset = 6
	x := newAxis(minX, maxX, p.LogX, marginLeft+inset, float64(w-marginRight-inset))
	y := newAxis(minY, maxY, p.LogY, float64(h-marginBot-inset), marginTop+inset)
	drawAxes(&b, x, y, w, h)
	b.f(`<g class="vlines" stroke="#999" stroke-dasharray="2,3">`)
	for _, v := range p.VLines {
		if p.usable(XY{v, 1}) {
			px := num(x.pos(v))
			b.f(`<line x1="%s" x2="%s" y1="%d" y2="%d"/>`, px, px, marginTop, h-marginBot)
		}
	}
	b.f(`</g>`)
	for i, s := range p.Series {
		col := color(i)
		if s.Line {
			var pts []string
			for _, pt := range s.Points {
				if p.usable(pt) {
					pts = append(pts, num(x.pos(pt.X))+","+num(y.pos(pt.Y)))
				}
			}
			class, dash := "mark line", ""
			if s.Dashed {
				class, dash = "reference", ` stroke-dasharray="6,4"`
			}
			b.f(`<polyline class="%s" fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, class, col, dash, strings.Join(pts, " "))
			continue
		}
		b.f(`<g class="series" fill="%s" fill-opacity="0.8">`, col)
		for _, pt := range s.Points {
			if p.usable(pt) {
				b.f(`<circle class="mark" cx="%s" cy="%s" r="3"/>`, num(x.pos(pt.X)), num(y.pos(pt.Y)))
			}
		}
		b.f(`</g>`)
	}
	legend(&b, seriesNames(p.Series), w)
	b.f(`</svg>`)
	return b.String()
}

// usable tells whether a point can be drawn on the plot's axes.
func (p *XYPlot) usable(pt XY) bool {
	if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) {
		return false
	}
	return (!p.LogX || pt.X > 0) && (!p.LogY || pt.Y > 0)
}

func seriesNames(ss []Series) []string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return names
}

// drawAxes draws grid lines, ticks and tick labels.
func drawAxes(b *svgBuf, x, y axis, w, h int) {
	b.f(`<g class="axes" stroke="#ccc" stroke-width="1">`)
	for i := range y.ticks {
		py := num(y.tickPos(i))
		b.f(`<line x1="%d" x2="%d" y1="%s" y2="%s"/>`, marginLeft, w-marginRight, py, py)
	}
	for i := range x.ticks {
		px := num(x.tickPos(i))
		b.f(`<line x1="%s" x2="%s" y1="%d" y2="%d"/>`, px, px, marginTop, h-marginBot)
	}
	b.f(`</g><g class="ticks" fill="#333">`)
	for i, l := range y.tickLabels {
		b.f(`<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, marginLeft-5, num(y.tickPos(i)), esc(l))
	}
	for i, l := range x.tickLabels {
		b.f(`<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(x.tickPos(i)), h-marginBot+15, esc(l))
	}
	b.f(`</g>`)
	b.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#666"/>`, marginLeft, marginTop, w-marginLeft-marginRight, h-marginTop-marginBot)
}

// legend lists the series names in a row under the title, when there
// are two or more.
func legend(b *svgBuf, names []string, w int) {
	if len(names) < 2 {
		return
	}
	x, y := float64(marginLeft), 34.0
	for i, name := range names {
		b.f(`<rect x="%s" y="%s" width="10" height="10" fill="%s"/>`, num(x), num(y-9), color(i))
		b.f(`<text x="%s" y="%s">%s</text>`, num(x+14), num(y), esc(name))
		x += 14 + 6.2*float64(len([]rune(name))) + 18
	}
}

func noData(b *svgBuf, w, h int) {
	b.f(`<text class="nodata" x="%d" y="%d" text-anchor="middle" fill="#999">no data yet</text></svg>`, w/2, h/2)
}

// SVG draws the bar chart.
func (p *BarPlot) SVG() string {
	var b svgBuf
	w, h := plotWidth, plotHeight
	open(&b, p.ID, p.Title, p.XLabel, p.YLabel, w, h)
	maxV := 0.0
	for _, vs := range p.Values {
		for _, v := range vs {
			maxV = math.Max(maxV, v)
		}
	}
	if len(p.Categories) == 0 || maxV <= 0 {
		noData(&b, w, h)
		return b.String()
	}
	ns := len(p.Series)
	if p.Horizontal {
		// Categories down the left side, values along X.
		left := marginLeft + 90
		x := newAxis(0, maxV, false, float64(left), float64(w-marginRight))
		band := float64(h-marginTop-marginBot) / float64(len(p.Categories))
		b.f(`<g class="axes" stroke="#ccc">`)
		for i := range x.ticks {
			px := num(x.tickPos(i))
			b.f(`<line x1="%s" x2="%s" y1="%d" y2="%d"/>`, px, px, marginTop, h-marginBot)
		}
		b.f(`</g><g class="ticks" fill="#333">`)
		for i, l := range x.tickLabels {
			b.f(`<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(x.tickPos(i)), h-marginBot+15, esc(l))
		}
		for c, name := range p.Categories {
			b.f(`<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, left-5, num(float64(marginTop)+band*(float64(c)+0.5)), esc(clipLabel(name, 24)))
		}
		b.f(`</g>`)
		bar := band * 0.8 / float64(ns)
		for s := range p.Series {
			b.f(`<g class="series" fill="%s">`, color(s))
			for c := range p.Categories {
				v := p.Values[s][c]
				y0 := float64(marginTop) + band*float64(c) + band*0.1 + bar*float64(s)
				b.f(`<rect class="mark bar" x="%d" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
					left, num(y0), num(x.pos(v)-float64(left)), num(bar), esc(p.Categories[c]), esc(trim(v)))
			}
			b.f(`</g>`)
		}
		b.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#666"/>`, left, marginTop, w-marginRight-left, h-marginTop-marginBot)
	} else {
		y := newAxis(0, maxV, false, float64(h-marginBot), marginTop)
		band := float64(w-marginLeft-marginRight) / float64(len(p.Categories))
		b.f(`<g class="axes" stroke="#ccc">`)
		for i := range y.ticks {
			py := num(y.tickPos(i))
			b.f(`<line x1="%d" x2="%d" y1="%s" y2="%s"/>`, marginLeft, w-marginRight, py, py)
		}
		b.f(`</g><g class="ticks" fill="#333">`)
		for i, l := range y.tickLabels {
			b.f(`<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, marginLeft-5, num(y.tickPos(i)), esc(l))
		}
		every := max(1, len(p.Categories)/12)
		for c, name := range p.Categories {
			if c%every == 0 {
				b.f(`<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(float64(marginLeft)+band*(float64(c)+0.5)), h-marginBot+15, esc(clipLabel(name, 10)))
			}
		}
		b.f(`</g>`)
		bar := band * 0.8 / float64(ns)
		for s := range p.Series {
			b.f(`<g class="series" fill="%s">`, color(s))
			for c := range p.Categories {
				v := p.Values[s][c]
				x0 := float64(marginLeft) + band*float64(c) + band*0.1 + bar*float64(s)
				top := y.pos(v)
				b.f(`<rect class="mark bar" x="%s" y="%s" width="%s" height="%s"><title>%s: %s</title></rect>`,
					num(x0), num(top), num(bar), num(float64(h-marginBot)-top), esc(p.Categories[c]), esc(trim(v)))
			}
			b.f(`</g>`)
		}
		b.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#666"/>`, marginLeft, marginTop, w-marginLeft-marginRight, h-marginTop-marginBot)
	}
	legend(&b, p.Series, w)
	b.f(`</svg>`)
	return b.String()
}

// clipLabel shortens a label to n runes.
func clipLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
