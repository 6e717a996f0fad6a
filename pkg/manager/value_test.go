package manager

import (
	"math"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

const day = 24 * time.Hour

func TestChangeRate(t *testing.T) {
	fetched := daysAgo(10)
	tests := []struct {
		name string
		doc  linkgraph.Doc
		want float64 // changes per day
	}{
		// One visit: only the prior, one change per 30 days.
		{"one visit", linkgraph.Doc{Visits: 1, Fetched: fetched}, 1.0 / 30},
		{"no visit", linkgraph.Doc{}, 1.0 / 30},
		// 4 changes in 4 intervals over 45 days: (4 + 1/2)/(45 + 15).
		{"changing", linkgraph.Doc{Visits: 5, Changes: 4, FirstFetched: fetched.Add(-45 * day), Fetched: fetched}, 4.5 / 60},
		// No change in 60 days: (0 + 1/2)/(60 + 15) = 1/150.
		{"stable", linkgraph.Doc{Visits: 3, FirstFetched: fetched.Add(-60 * day), Fetched: fetched}, 1.0 / 150},
		// Without FirstFetched the span is (Visits−1)·min_revisit = 14
		// days; more changes than intervals count as one per interval:
		// (2 + 1/2)/(14 + 15).
		{"no first fetch", linkgraph.Doc{Visits: 3, Changes: 5, Fetched: fetched}, 2.5 / 29},
	}
	for _, tt := range tests {
		if got := ChangeRate(&tt.doc, 7*day); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: λ = %g, want %g", tt.name, got, tt.want)
		}
	}
}

func TestFreshness(t *testing.T) {
	tests := []struct {
		name string
		doc  linkgraph.Doc
		want float64
	}{
		{"pending", linkgraph.Doc{State: linkgraph.StatePending}, 0},
		{"fetched, time unknown", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1}, 0},
		// λ = 1/30 per day, 30 days old: e^−1.
		{"fetched a month ago", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, math.Exp(-1)},
		{"fetched now", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: testNow}, 1},
		{"fetched in the future", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: testNow.Add(time.Hour)}, 1},
	}
	for _, tt := range tests {
		if got := Freshness(&tt.doc, testNow, 7*day); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: F = %g, want %g", tt.name, got, tt.want)
		}
	}
}

// The profit factor 1 − RQ^β·F^γ (times ½ for failed pages) and the
// candidate rules, with IQ left out (it multiplies every case).
func TestAssess(t *testing.T) {
	defaults := config.Defaults().Manager // α = β = γ = 1, min_revisit 7 days, depth 15/5
	with := func(beta, gamma float64) config.Manager {
		m := defaults
		m.Beta, m.Gamma = beta, gamma
		return m
	}
	url := "http://a.cl/p"
	tests := []struct {
		name    string
		m       config.Manager
		doc     linkgraph.Doc
		skip    skip
		gain    float64 // exp(logGain) when a candidate
		revisit bool
	}{
		// A page never fetched has F = 0: value now 0, profit IQ^α.
		{"pending", defaults, linkgraph.Doc{URL: url, State: linkgraph.StatePending}, candidate, 1, false},
		{"pending with anchors", defaults, linkgraph.Doc{URL: url, State: linkgraph.StatePending, Anchors: []string{"x"}}, candidate, 1, false},
		// γ = 0 ignores freshness (0^0 = 1): the index already holds the
		// URL (RQ ½) or URL and anchors (RQ ¾), a visit adds the rest.
		{"pending, gamma 0", with(1, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending}, candidate, 0.5, false},
		{"anchors, gamma 0", with(1, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending, Anchors: []string{"x"}}, candidate, 0.25, false},
		{"anchors, beta 2, gamma 0", with(2, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending, Anchors: []string{"x"}}, candidate, 1 - 0.5625, false},
		{"beta 0, gamma 0", with(0, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending}, skipNoGain, 0, false},
		// A revisit: RQ = 1, F = e^−1 after 30 days at λ = 1/30.
		{"revisit", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, candidate, 1 - math.Exp(-1), true},
		{"revisit, gamma 2", with(1, 2), linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, candidate, 1 - math.Exp(-2), true},
		{"revisit, gamma 0", with(1, 0), linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, skipNoGain, 0, true},
		{"revisit too soon", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(6.9)}, skipRecent, 0, false},
		{"revisit just in time", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(7)}, candidate, 1 - math.Exp(-7.0/30), true},
		// A failed page is a new page at half the profit, until it has
		// failed MaxFailures times in a row.
		{"failed", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: 1}, candidate, 0.5, false},
		{"failed after visits", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: 2, Visits: 2, Fetched: daysAgo(1)}, candidate, 0.5, true},
		{"failed too often", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: MaxFailures}, skipFailures, 0, false},
		{"scheduled", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateScheduled}, skipState, 0, false},
		{"excluded", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateExcluded}, skipState, 0, false},
		// Depth limits (Baeza-Yates et al. 2005, §5.1): 15 static, 5 dynamic.
		{"static at limit", defaults, linkgraph.Doc{URL: url, Depth: 15, State: linkgraph.StatePending}, candidate, 1, false},
		{"static too deep", defaults, linkgraph.Doc{URL: url, Depth: 16, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"dynamic at limit", defaults, linkgraph.Doc{URL: url + "?id=1", Depth: 5, State: linkgraph.StatePending}, candidate, 1, false},
		{"dynamic too deep", defaults, linkgraph.Doc{URL: url + "?id=1", Depth: 6, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"not http", defaults, linkgraph.Doc{URL: "ftp://a.cl/p", State: linkgraph.StatePending}, skipBadURL, 0, false},
		{"tab in url", defaults, linkgraph.Doc{URL: "http://a.cl/a\tb", State: linkgraph.StatePending}, skipBadURL, 0, false},
		{"no path", defaults, linkgraph.Doc{URL: "http://a.cl", State: linkgraph.StatePending}, skipBadURL, 0, false},
	}
	for _, tt := range tests {
		a := assess(&tt.doc, &tt.m, testNow)
		if a.skip != tt.skip {
			t.Errorf("%s: skip %q, want %q", tt.name, skipNames[a.skip], skipNames[tt.skip])
			continue
		}
		if a.skip != candidate {
			continue
		}
		if g := math.Exp(a.logGain); math.Abs(g-tt.gain) > 1e-12 {
			t.Errorf("%s: gain %g, want %g", tt.name, g, tt.gain)
		}
		if a.revisit != tt.revisit {
			t.Errorf("%s: revisit %v, want %v", tt.name, a.revisit, tt.revisit)
		}
	}
}

// Profit trades a new page against a revisit: with α = β = γ = 1 a new
// page of IQ 0.3 (profit 0.3) beats a page of IQ 1 fetched a week ago
// (1 − e^{−7/30} ≈ 0.208) but loses to it a month later (1 − e^{−1} ≈
// 0.632).
func TestProfitNewVersusRevisit(t *testing.T) {
	m := config.Defaults().Manager
	newPage := assess(&linkgraph.Doc{URL: "http://a.cl/new", State: linkgraph.StatePending}, &m, testNow)
	week := assess(&linkgraph.Doc{URL: "http://a.cl/old", State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(7)}, &m, testNow)
	month := assess(&linkgraph.Doc{URL: "http://a.cl/old", State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, &m, testNow)
	pNew := math.Log(0.3) + newPage.logGain
	if pWeek := week.logGain; pNew <= pWeek {
		t.Errorf("new page %g should beat a week-old revisit %g", math.Exp(pNew), math.Exp(pWeek))
	}
	if pMonth := month.logGain; pNew >= pMonth {
		t.Errorf("new page %g should lose to a month-old revisit %g", math.Exp(pNew), math.Exp(pMonth))
	}
}
