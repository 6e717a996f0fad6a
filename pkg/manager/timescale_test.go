package manager

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// aMinute is the time scale of issue 35's recrawl experiment: a day of
// the freshness machinery lasts a minute.
const aMinute = 0.000694444444444444

// scaledClock is the clock of the default settings at time scale s.
func scaledClock(s float64) Clock {
	m := config.Defaults().Manager
	m.TimeScale = s
	return NewClock(&m)
}

// TestClockDurations: every duration the freshness code asks its clock
// for, at s = 1 (the constants, unchanged) and at s = 1/1440 (issue 35:
// the prior becomes one change per 30 minutes).
func TestClockDurations(t *testing.T) {
	daily := func(c Clock) float64 { r, _ := c.ChangeFreqRate("daily"); return r }
	hourly := func(c Clock) float64 { r, _ := c.ChangeFreqRate("hourly"); return r }
	for _, tt := range []struct {
		s                  float64
		prior, lmCap, revi time.Duration
		daily, hourly      float64 // changes per day
		lambdaOnce         float64 // λ of a page seen once, per day
	}{
		{1, PriorChangeInterval, MaxLastModifiedAge, 7 * day, 1, 24, 1.0 / 30},
		{aMinute, 30 * time.Minute, 365 * time.Minute, 7 * time.Minute, 1440, 24 * 1440, 48},
		{0.5, 15 * day, 365 * 12 * time.Hour, 84 * time.Hour, 2, 48, 1.0 / 15},
	} {
		c := scaledClock(tt.s)
		if c.PriorChangeInterval() != tt.prior || c.MaxLastModifiedAge() != tt.lmCap || c.MinRevisit != tt.revi {
			t.Errorf("s = %g: prior %s, Last-Modified cap %s, min_revisit %s; want %s, %s, %s",
				tt.s, c.PriorChangeInterval(), c.MaxLastModifiedAge(), c.MinRevisit, tt.prior, tt.lmCap, tt.revi)
		}
		if math.Abs(daily(c)-tt.daily) > 1e-9*tt.daily || math.Abs(hourly(c)-tt.hourly) > 1e-9*tt.hourly {
			t.Errorf("s = %g: changefreq daily %g, hourly %g per day; want %g, %g", tt.s, daily(c), hourly(c), tt.daily, tt.hourly)
		}
		once := linkgraph.Doc{History: []linkgraph.Visit{{Time: testNow, Status: 200}}}
		if l := c.History(&once).Lambda; math.Abs(l-tt.lambdaOnce) > 1e-9*tt.lambdaOnce {
			t.Errorf("s = %g: λ of a page seen once %g per day, want %g", tt.s, l, tt.lambdaOnce)
		}
	}
	// s = 1 is the package functions' clock.
	if c := scaledClock(1); c != (Clock{MinRevisit: 7 * day, Scale: 1}) {
		t.Errorf("clock at s = 1: %+v", c)
	}
}

// compress returns d lived s times faster up to testNow: every time it
// holds (fetches, visits, Last-Modified dates, sitemap lastmod) moved
// toward testNow by the factor s.
func compress(d linkgraph.Doc, s float64) linkgraph.Doc {
	at := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return testNow.Add(time.Duration(math.Round(float64(t.Sub(testNow)) * s)))
	}
	d.Fetched, d.FirstFetched, d.SitemapLastMod = at(d.Fetched), at(d.FirstFetched), at(d.SitemapLastMod)
	d.History = append([]linkgraph.Visit(nil), d.History...)
	for i, v := range d.History {
		d.History[i].Time = at(v.Time)
		if m, err := http.ParseTime(v.LastModified); err == nil {
			d.History[i].LastModified = at(m).Format(http.TimeFormat)
		}
	}
	return d
}

// TestCompressedHistory: the same history lived 1440 times faster, read
// at time scale 1/1440, gives the same estimate in scaled days — λ 1440
// times larger per real day, the same F — for every part of the
// estimator: the prior, censored and dated intervals, the one-year cap on
// a Last-Modified age, min_revisit for a page without history, a
// sitemap's changefreq and lastmod. This is what lets a recrawl
// experiment run in minutes with the code a year-long crawl uses.
func TestCompressedHistory(t *testing.T) {
	fetched := func(h ...linkgraph.Visit) linkgraph.Doc {
		return linkgraph.Doc{State: linkgraph.StateFetched, Visits: len(h), Fetched: h[len(h)-1].Time, History: h}
	}
	docs := []struct {
		name string
		doc  linkgraph.Doc
	}{
		{"seen once, a month ago (the prior)", fetched(visit(70, false, ""))},
		{"stable", fetched(visit(0, false, ""), visit(20, false, ""), visit(40, false, ""))},
		{"dated change", fetched(visit(0, false, ""), visit(10, true, httpDate(7)))},
		{"censored", fetched(visit(0, false, ""), visit(15, true, ""))},
		{"always changed", fetched(visit(80, false, ""), visit(81, true, ""), visit(82, true, ""), visit(83, true, ""))},
		// Ten years unchanged count as one: the cap, scaled.
		{"Last-Modified ten years back", fetched(visit(60, false, httpDate(60-3650)))},
		{"Last-Modified in the future", fetched(visit(60, false, httpDate(61)))},
		{"counts, no first fetch (min_revisit)", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 3, Changes: 1, Fetched: daysAgo(10)}},
		{"counts, first fetch", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 4, Changes: 2, FirstFetched: daysAgo(50), Fetched: daysAgo(5)}},
		{"changefreq daily", func() linkgraph.Doc { d := fetched(visit(90, false, "")); d.ChangeFreq = "daily"; return d }()},
		{"changefreq yearly", func() linkgraph.Doc { d := fetched(visit(50, false, "")); d.ChangeFreq = "yearly"; return d }()},
		{"sitemap lastmod after the fetch", func() linkgraph.Doc { d := fetched(visit(50, false, "")); d.SitemapLastMod = daysAgo(20); return d }()},
	}
	real, fast := scaledClock(1), scaledClock(aMinute)
	for _, tt := range docs {
		c := compress(tt.doc, aMinute)
		h, hc := real.History(&tt.doc), fast.History(&c)
		if want := h.Lambda / aMinute; math.Abs(hc.Lambda-want) > 1e-9*want {
			t.Errorf("%s: λ %g per day at s = 1/1440, want %g (%g at s = 1)", tt.name, hc.Lambda, want, h.Lambda)
		}
		if want := h.Span * aMinute; math.Abs(hc.Span-want) > 1e-9*want+1e-12 {
			t.Errorf("%s: span %g days, want %g", tt.name, hc.Span, want)
		}
		h.Lambda, h.Span, hc.Lambda, hc.Span = 0, 0, 0, 0
		if h != hc {
			t.Errorf("%s: history %+v at s = 1/1440, %+v at s = 1", tt.name, hc, h)
		}
		f, fc := real.Freshness(&tt.doc, testNow), fast.Freshness(&c, testNow)
		if math.Abs(f-fc) > 1e-9 {
			t.Errorf("%s: F %g at s = 1/1440, want %g", tt.name, fc, f)
		}
	}
}

// TestScaledRevisit: at s = 1/1440 min_revisit's week lasts 7 minutes,
// and a copy 30 minutes old is as stale as one 30 days old at s = 1.
func TestScaledRevisit(t *testing.T) {
	m := config.Defaults().Manager
	m.TimeScale = aMinute
	m.Revisits = config.RevisitsUniform // the rule alone; TestRevisitFloor has the optimal policy's
	l := newLimits(&m)
	ago := func(d time.Duration) *linkgraph.Doc {
		return &linkgraph.Doc{URL: "http://a.cl/p", State: linkgraph.StateFetched, Visits: 1, Fetched: testNow.Add(-d)}
	}
	if a := assess(ago(6*time.Minute), &m, l, testNow); a.skip != skipRecent {
		t.Errorf("fetched 6 minutes ago: skip %q, want recent", skipNames[a.skip])
	}
	a := assess(ago(30*time.Minute), &m, l, testNow)
	if want := 1 - math.Exp(-1); a.skip != candidate || !a.revisit || math.Abs(math.Exp(a.logGain)-want) > 1e-9 {
		t.Errorf("fetched 30 minutes ago: skip %q, gain %g, want a revisit of gain %g", skipNames[a.skip], math.Exp(a.logGain), want)
	}
	m.TimeScale = 1
	if a := assess(ago(30*time.Minute), &m, newLimits(&m), testNow); a.skip != skipRecent {
		t.Errorf("at s = 1, fetched 30 minutes ago: skip %q, want recent", skipNames[a.skip])
	}
}
