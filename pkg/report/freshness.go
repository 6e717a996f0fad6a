package report

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// The freshness section (issue 35): how often the fetched pages change by
// the manager's estimate, how fresh the collection is estimated to be,
// and how many revisits found a change, by depth and for the largest
// sites. The estimates are the manager's (its change-rate estimator, the
// sites whose dates it does not trust left out), which the report, a
// library, cannot compute itself: the manager binary supplies them
// through Options.Changes.

// PageChange is what the freshness section reads of one fetched page.
type PageChange struct {
	Site  string // site key
	Depth int
	// Lambda is the estimated change rate, changes per day (at
	// manager.time_scale s a day of the clock lasts s days).
	Lambda float64
	// Age is the time since its last fetch.
	Age time.Duration
	// Revisits counts its visits after the first (of those kept), and
	// Changed those that found the text changed.
	Revisits, Changed int
}

// Changes calls fn with every fetched page's change estimate.
type Changes func(ctx context.Context, fn func(PageChange) error) error

// Freshness is the freshness section's numbers.
type Freshness struct {
	// Pages counts the fetched pages with an estimate.
	Pages int `json:"pages"`
	// Estimated is the mean over them of exp(−λ·age), the probability
	// that the stored copy is still what the site holds: the estimated
	// freshness of the collection now.
	Estimated float64 `json:"estimatedFreshness"`
	// Revisits and Changed count the revisits and those that found the
	// text changed.
	Revisits int `json:"revisits"`
	Changed  int `json:"changed"`
	// TimeScale is manager.time_scale when not 1: intervals are in its
	// days.
	TimeScale float64 `json:"timeScale,omitempty"`
	// ByDepth has a row per depth, BySite one per site for the sites with
	// the most fetched pages (Options.Top).
	ByDepth []ChangeRow `json:"byDepth"`
	BySite  []ChangeRow `json:"bySite"`
}

// ChangeRow is the section's figures for a group of pages.
type ChangeRow struct {
	Label string `json:"label"`
	Pages int    `json:"pages"`
	// MedianInterval is the median of the pages' estimated mean time
	// between changes, 1/λ, in days (of the clock at the time scale).
	MedianInterval float64 `json:"medianIntervalDays"`
	// Freshness is the mean of exp(−λ·age).
	Freshness float64 `json:"estimatedFreshness"`
	Revisits  int     `json:"revisits"`
	Changed   int     `json:"changed"`
}

// changeGroup accumulates one row.
type changeGroup struct {
	intervals []float64
	fresh     float64
	revisits  int
	changed   int
}

func (g *changeGroup) add(c PageChange, scale float64) {
	if c.Lambda > 0 {
		g.intervals = append(g.intervals, 1/(c.Lambda*scale))
	} else {
		g.intervals = append(g.intervals, math.Inf(1))
	}
	g.fresh += math.Exp(-c.Lambda * c.Age.Hours() / 24)
	g.revisits += c.Revisits
	g.changed += c.Changed
}

func (g *changeGroup) row(label string) ChangeRow {
	r := ChangeRow{Label: label, Pages: len(g.intervals), Revisits: g.revisits, Changed: g.changed}
	if r.Pages == 0 {
		return r
	}
	sort.Float64s(g.intervals)
	r.MedianInterval = g.intervals[(len(g.intervals)-1)/2]
	r.Freshness = g.fresh / float64(r.Pages)
	return r
}

// collectFreshness reads the estimates: the whole, by depth, and the top
// sites by fetched pages (ties by key).
func collectFreshness(ctx context.Context, changes Changes, scale float64, top int) (*Freshness, error) {
	if scale <= 0 {
		scale = 1
	}
	var all changeGroup
	var byDepth []*changeGroup
	bySite := map[string]*changeGroup{}
	err := changes(ctx, func(c PageChange) error {
		all.add(c, scale)
		d := max(c.Depth, 0)
		for len(byDepth) <= d {
			byDepth = append(byDepth, &changeGroup{})
		}
		byDepth[d].add(c, scale)
		g, ok := bySite[c.Site]
		if !ok {
			g = &changeGroup{}
			bySite[c.Site] = g
		}
		g.add(c, scale)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("change estimates: %w", err)
	}
	whole := all.row("all")
	f := &Freshness{Pages: whole.Pages, Estimated: whole.Freshness, Revisits: whole.Revisits, Changed: whole.Changed}
	if scale != 1 {
		f.TimeScale = scale
	}
	for d, g := range byDepth {
		f.ByDepth = append(f.ByDepth, g.row(strconv.Itoa(d)))
	}
	sites := make([]string, 0, len(bySite))
	for s := range bySite {
		sites = append(sites, s)
	}
	sort.Slice(sites, func(a, b int) bool {
		na, nb := len(bySite[sites[a]].intervals), len(bySite[sites[b]].intervals)
		if na != nb {
			return na > nb
		}
		return sites[a] < sites[b]
	})
	for _, s := range sites[:min(top, len(sites))] {
		f.BySite = append(f.BySite, bySite[s].row(s))
	}
	return f, nil
}

// freshnessPlot adds the section's plot: by depth, the estimated
// freshness and the share of revisits that found a change.
func (d *Data) freshnessPlot(add func(svg, caption string)) {
	var cats []string
	var fresh, found []float64
	if f := d.Freshness; f != nil {
		for _, r := range f.ByDepth {
			cats = append(cats, r.Label)
			fresh = append(fresh, r.Freshness)
			share := 0.0
			if r.Revisits > 0 {
				share = float64(r.Changed) / float64(r.Revisits)
			}
			found = append(found, share)
		}
	}
	caption := "No change estimates (the manager supplies them: manager report)."
	if f := d.Freshness; f != nil {
		caption = fmt.Sprintf("By depth: the estimated freshness of the stored copies now (mean of exp(−λ·age) with the manager's change-rate estimates; %.3f over all %d fetched pages), and the share of revisits that found the text changed (%d of %d).",
			f.Estimated, f.Pages, f.Changed, f.Revisits)
	}
	add((&BarPlot{ID: "plot-freshness-depth", Title: "Freshness and changes by depth", XLabel: "depth", YLabel: "share",
		Categories: cats, Series: []string{"estimated freshness", "revisits that found a change"}, Values: [][]float64{fresh, found}}).SVG(), caption)
}
