package manager

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

const day = 24 * time.Hour

// bisectRate solves ½ + exact + Σ g(λΔ) = λ·(15 + ΣΔ + exposure) by
// bisection, independently of solveRate's Newton steps.
func bisectRate(exact float64, changed []float64, exposure float64) float64 {
	total := 15 + exposure
	for _, d := range changed {
		total += d
	}
	f := func(l float64) float64 {
		s := 0.5 + exact - l*total
		for _, d := range changed {
			x := l * d
			s += x / (1 - math.Exp(-x))
		}
		return s
	}
	lo, hi := 1e-9, 100.0
	for range 200 {
		mid := (lo + hi) / 2
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func visit(dayNo float64, changed bool, lm string) linkgraph.Visit {
	return linkgraph.Visit{Time: daysAgo(100 - dayNo), Status: 200, Changed: changed, LastModified: lm}
}

func httpDate(dayNo float64) string { return daysAgo(100 - dayNo).Format(http.TimeFormat) }

func TestEstimateHistory(t *testing.T) {
	tests := []struct {
		name string
		doc  linkgraph.Doc
		want float64 // changes per day
		h    History // counts to check (Lambda and Span ignored)
	}{
		// Nothing observed: the prior's mode, one change per 30 days.
		{"no visit", linkgraph.Doc{}, 1.0 / 30, History{FromDoc: true}},
		{"one visit", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, "")}}, 1.0 / 30, History{Visits: 1}},
		// No change in two intervals of 20 days: ½/(15 + 40).
		{"stable", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, ""), visit(20, false, ""), visit(40, false, "")}},
			0.5 / 55, History{Visits: 3, Unchanged: 2}},
		// Changed between day 0 and 10, and Last-Modified says on day 7:
		// one dated change, then 3 days without: (½ + 1)/(15 + 3).
		{"dated change", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, ""), visit(10, true, httpDate(7))}},
			1.5 / 18, History{Visits: 2, Exact: 1}},
		// The first visit's Last-Modified, 20 days before it, adds a dated
		// change and 20 days without: (½ + 2)/(15 + 20 + 3).
		{"first visit dated", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, httpDate(-20)), visit(10, true, httpDate(7))}},
			2.5 / 38, History{Visits: 2, Exact: 2}},
		// A Last-Modified before the previous visit cannot date a change
		// in the interval (the server's date is wrong): censored.
		{"stale last-modified", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, ""), visit(15, true, httpDate(-3))}},
			bisectRate(0, []float64{15}, 0), History{Visits: 2, Changed: 1}},
		// One changed interval of 15 days: more than one change may hide
		// in it, so λ is above the uncorrected (½ + 1)/(15 + 15) = 0.05.
		{"censored", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, ""), visit(15, true, "")}},
			bisectRate(0, []float64{15}, 0), History{Visits: 2, Changed: 1}},
		// Changing at every daily visit for ten days.
		{"always changed", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, ""), visit(1, true, ""), visit(2, true, ""), visit(3, true, ""),
			visit(4, true, ""), visit(5, true, ""), visit(6, true, ""), visit(7, true, ""), visit(8, true, ""), visit(9, true, ""), visit(10, true, "")}},
			bisectRate(0, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0), History{Visits: 11, Changed: 10}},
		// Out of order and repeated visits are sorted and skipped.
		{"unordered", linkgraph.Doc{History: []linkgraph.Visit{visit(40, false, ""), visit(0, false, ""), visit(20, false, ""), visit(20, true, "")}},
			0.5 / 55, History{Visits: 3, Unchanged: 2}},
		// A Last-Modified in the future (a wrong server clock) is ignored.
		{"future last-modified", linkgraph.Doc{History: []linkgraph.Visit{visit(0, false, httpDate(5))}}, 1.0 / 30, History{Visits: 1}},
		// Without a history: Visits − 1 intervals spread over the span
		// from FirstFetched to Fetched, Changes of them changed.
		{"counts, stable", linkgraph.Doc{Visits: 3, FirstFetched: daysAgo(70), Fetched: daysAgo(10)},
			0.5 / 75, History{Visits: 3, Unchanged: 2, FromDoc: true}},
		{"counts, changing", linkgraph.Doc{Visits: 5, Changes: 4, FirstFetched: daysAgo(55), Fetched: daysAgo(10)},
			bisectRate(0, []float64{11.25, 11.25, 11.25, 11.25}, 0), History{Visits: 5, Changed: 4, FromDoc: true}},
		// Without FirstFetched each interval is min_revisit (7 days); more
		// changes than intervals count as one per interval.
		{"counts, no first fetch", linkgraph.Doc{Visits: 3, Changes: 5, Fetched: daysAgo(10)},
			bisectRate(0, []float64{7, 7}, 0), History{Visits: 3, Changed: 2, FromDoc: true}},
	}
	for _, tt := range tests {
		h := EstimateHistory(&tt.doc, 7*day)
		if math.Abs(h.Lambda-tt.want) > 1e-9*tt.want {
			t.Errorf("%s: λ = %.12g, want %.12g", tt.name, h.Lambda, tt.want)
		}
		got := h
		got.Lambda, got.Span = 0, 0
		if got != tt.h {
			t.Errorf("%s: history %+v, want %+v", tt.name, got, tt.h)
		}
		if ChangeRate(&tt.doc, 7*day) != h.Lambda {
			t.Errorf("%s: ChangeRate differs", tt.name)
		}
	}
	// The correction for hidden changes only ever raises λ.
	if l := EstimateHistory(&tests[6].doc, 7*day).Lambda; l <= 0.05 {
		t.Errorf("censored λ %g not above 0.05", l)
	}
}

func TestFreshness(t *testing.T) {
	tests := []struct {
		name string
		doc  linkgraph.Doc
		want float64
	}{
		// Never fetched: no stored copy can be stale.
		{"pending", linkgraph.Doc{State: linkgraph.StatePending}, 1},
		{"failed, never fetched", linkgraph.Doc{State: linkgraph.StateFailed, Failures: 1}, 1},
		{"fetched, time unknown", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1}, 0},
		// λ = 1/30 per day, 30 days old: e^−1.
		{"fetched a month ago", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, math.Exp(-1)},
		{"failed, fetched a month ago", linkgraph.Doc{State: linkgraph.StateFailed, Visits: 1, Failures: 1, Fetched: daysAgo(30)}, math.Exp(-1)},
		{"fetched now", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: testNow}, 1},
		{"fetched in the future", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: testNow.Add(time.Hour)}, 1},
		// Stable history (λ = ½/55): 55 days after the fetch, e^−½.
		{"stable page", linkgraph.Doc{State: linkgraph.StateFetched, Visits: 3, Fetched: daysAgo(55),
			History: []linkgraph.Visit{{Time: daysAgo(95)}, {Time: daysAgo(75)}, {Time: daysAgo(55)}}}, math.Exp(-0.5)},
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
	defaults := config.Defaults().Manager      // α = β = γ = 1, rq 0.25/0.5, min_revisit 7 days, depth 15/5
	defaults.Revisits = config.RevisitsUniform // the revisit rule alone (the optimal policy's floor: TestRevisitFloor)
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
		// A page never fetched is in the index by its URL (RQ ¼) or its
		// URL and anchor text (RQ ½), and F = 1: a visit adds the rest.
		{"pending", defaults, linkgraph.Doc{URL: url, State: linkgraph.StatePending}, candidate, 0.75, false},
		{"pending with anchors", defaults, linkgraph.Doc{URL: url, State: linkgraph.StatePending, Anchors: []string{"x"}}, candidate, 0.5, false},
		{"anchors, beta 2", with(2, 1), linkgraph.Doc{URL: url, State: linkgraph.StatePending, Anchors: []string{"x"}}, candidate, 0.75, false},
		// β = 0: representation is worth nothing, a new page gains nothing.
		{"pending, beta 0", with(0, 1), linkgraph.Doc{URL: url, State: linkgraph.StatePending}, skipNoGain, 0, false},
		{"beta 0, gamma 0", with(0, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending}, skipNoGain, 0, false},
		// γ does not touch a page never fetched.
		{"pending, gamma 0", with(1, 0), linkgraph.Doc{URL: url, State: linkgraph.StatePending}, candidate, 0.75, false},
		// A revisit: RQ = 1, F = e^−1 after 30 days at λ = 1/30.
		{"revisit", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, candidate, 1 - math.Exp(-1), true},
		{"revisit, gamma 2", with(1, 2), linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, candidate, 1 - math.Exp(-2), true},
		{"revisit, gamma 0", with(1, 0), linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, skipNoGain, 0, true},
		{"revisit too soon", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(6.9)}, skipRecent, 0, false},
		{"revisit just in time", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(7)}, candidate, 1 - math.Exp(-7.0/30), true},
		// A failed page has half the profit it would have, until it has
		// failed MaxFailures times in a row.
		{"failed", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: 1}, candidate, 0.375, false},
		{"failed after a visit", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: 2, Visits: 1, Fetched: daysAgo(30)}, candidate, 0.5 * (1 - math.Exp(-1)), true},
		{"failed too often", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateFailed, Failures: MaxFailures}, skipFailures, 0, false},
		{"scheduled", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateScheduled}, skipState, 0, false},
		{"excluded", defaults, linkgraph.Doc{URL: url, State: linkgraph.StateExcluded}, skipState, 0, false},
		// Depth limits (Baeza-Yates et al. 2005, §5.1): 15 static, 5
		// dynamic; a query, a script extension or /cgi-bin/ make a URL
		// dynamic.
		{"static at limit", defaults, linkgraph.Doc{URL: url, Depth: 15, State: linkgraph.StatePending}, candidate, 0.75, false},
		{"static too deep", defaults, linkgraph.Doc{URL: url, Depth: 16, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"dynamic at limit", defaults, linkgraph.Doc{URL: url + "?id=1", Depth: 5, State: linkgraph.StatePending}, candidate, 0.75, false},
		{"dynamic too deep", defaults, linkgraph.Doc{URL: url + "?id=1", Depth: 6, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"script too deep", defaults, linkgraph.Doc{URL: "http://a.cl/x/view.PHP", Depth: 6, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"cgi-bin too deep", defaults, linkgraph.Doc{URL: "http://a.cl/cgi-bin/x", Depth: 6, State: linkgraph.StatePending}, skipDeep, 0, false},
		{"html not dynamic", defaults, linkgraph.Doc{URL: "http://a.cl/php/x.html", Depth: 6, State: linkgraph.StatePending}, candidate, 0.75, false},
		{"not http", defaults, linkgraph.Doc{URL: "ftp://a.cl/p", State: linkgraph.StatePending}, skipBadURL, 0, false},
		{"tab in url", defaults, linkgraph.Doc{URL: "http://a.cl/a\tb", State: linkgraph.StatePending}, skipBadURL, 0, false},
		{"no path", defaults, linkgraph.Doc{URL: "http://a.cl", State: linkgraph.StatePending}, skipBadURL, 0, false},
	}
	for _, tt := range tests {
		a := assess(&tt.doc, &tt.m, newLimits(&tt.m), testNow)
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

// The dynamic-page rule (Baeza-Yates et al. 2005, §5.1: known filename
// extensions and a question mark) and the script of a query URL
// (Nakahira et al.: /index.php?id=2 belongs to /index.php).
func TestDynamicAndScript(t *testing.T) {
	m := config.Defaults().Manager
	l := newLimits(&m)
	tests := []struct {
		url     string
		dynamic bool
		script  string
	}{
		{"http://a.cl/", false, ""},
		{"http://a.cl/index.html", false, ""},
		{"http://a.cl/index.php", true, ""},
		{"http://a.cl/index.php?id=2", true, "http://a.cl/index.php"},
		{"http://a.cl/?p=1", true, "http://a.cl/"},
		{"http://a.cl/Default.ASPX", true, ""},
		{"http://a.cl/x.jsp;jsessionid=1", true, ""},
		{"http://a.cl/cgi-bin/search", true, ""},
		{"http://a.cl/cgi-binary/x", false, ""},
		{"http://a.cl/php.cl/x.htm", false, ""},
		{"http://a.cl/a.pl/b.html", false, ""},
		{"https://a.cl:8443/q.cfm#top", true, ""},
	}
	for _, tt := range tests {
		if got := l.dynamic(tt.url); got != tt.dynamic {
			t.Errorf("dynamic(%s) = %v", tt.url, got)
		}
		if got := ScriptOf(tt.url); got != tt.script {
			t.Errorf("ScriptOf(%s) = %q, want %q", tt.url, got, tt.script)
		}
	}
}

// Profit trades a new page against a revisit: with α = β = γ = 1 a new
// page known by anchor text (gain ½) of IQ 0.5 (profit 0.25) beats a page
// of IQ 1 fetched a week ago (1 − e^{−7/30} ≈ 0.208) but loses to it a
// month later (1 − e^{−1} ≈ 0.632).
func TestProfitNewVersusRevisit(t *testing.T) {
	m := config.Defaults().Manager
	l := newLimits(&m)
	newPage := assess(&linkgraph.Doc{URL: "http://a.cl/new", State: linkgraph.StatePending, Anchors: []string{"new"}}, &m, l, testNow)
	week := assess(&linkgraph.Doc{URL: "http://a.cl/old", State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(7)}, &m, l, testNow)
	month := assess(&linkgraph.Doc{URL: "http://a.cl/old", State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(30)}, &m, l, testNow)
	pNew := math.Log(0.5) + newPage.logGain
	if pWeek := week.logGain; pNew <= pWeek {
		t.Errorf("new page %g should beat a week-old revisit %g", math.Exp(pNew), math.Exp(pWeek))
	}
	if pMonth := month.logGain; pNew >= pMonth {
		t.Errorf("new page %g should lose to a month-old revisit %g", math.Exp(pNew), math.Exp(pMonth))
	}
}

// Representational quality ranks pages never fetched as Castillo (ch. 3,
// §3.4) orders the index's representations: a page already known by the
// anchor text of links to it is partly in the index, so a visit adds
// less than to a page known only by its URL, and nothing changes for a
// fetched page.
func TestRepresentationalQuality(t *testing.T) {
	m := config.Defaults().Manager
	tests := []struct {
		doc  linkgraph.Doc
		want float64
	}{
		{linkgraph.Doc{State: linkgraph.StatePending}, m.RQURL},
		{linkgraph.Doc{State: linkgraph.StatePending, Anchors: []string{"home"}}, m.RQAnchors},
		{linkgraph.Doc{State: linkgraph.StateFailed, Failures: 1, Anchors: []string{"home"}}, m.RQAnchors},
		{linkgraph.Doc{State: linkgraph.StateFetched, Visits: 1, Fetched: daysAgo(1), Anchors: []string{"home"}}, RQFull},
	}
	for i, tt := range tests {
		if got := RepresentationalQuality(&tt.doc, &m); got != tt.want {
			t.Errorf("case %d: RQ %g, want %g", i, got, tt.want)
		}
	}
}
