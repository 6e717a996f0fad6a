package manager

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/refresh"
)

// TestRevisitRatePaper: Cho and Garcia-Molina's example (TODS 2003, §5,
// Table 2): five pages changing 1, 2, 3, 4 and 5 times a day, five
// visits a day; the optimum visits them 1.15, 1.36, 1.35, 1.14 and 0
// times a day: the fastest page gets nothing.
func TestRevisitRatePaper(t *testing.T) {
	lams := []float64{1, 2, 3, 4, 5}
	want := []float64{1.15, 1.36, 1.35, 1.14, 0}
	mu := refresh.Price(lams, nil, nil, 5)
	sum := 0.0
	for i, l := range lams {
		f := revisitRate(1, l, mu)
		sum += f
		if math.Abs(f-want[i]) > 0.005 {
			t.Errorf("λ %g: rate %.3f, want %.2f", l, f, want[i])
		}
	}
	if math.Abs(sum-5) > 1e-6 {
		t.Errorf("rates add up to %g, want the budget 5", sum)
	}
	// Value moves the allocation: the same five pages with the first
	// worth a tenth of the others give it less and the rest more.
	ws := []float64{0.1, 1, 1, 1, 1}
	mu = refresh.Price(lams, ws, nil, 5)
	if f := revisitRate(ws[0], 1, mu); f >= want[0] {
		t.Errorf("λ 1 at a tenth of the value: rate %.3f, want below %.2f", f, want[0])
	}
	if f := revisitRate(1, 2, mu); f <= want[1] {
		t.Errorf("λ 2 when λ 1 is worth a tenth: rate %.3f, want above %.2f", f, want[1])
	}
}

// TestRevisitRateEdges: no value, no change or a price above w/λ give no
// revisit.
func TestRevisitRateEdges(t *testing.T) {
	for _, tc := range []struct {
		name        string
		w, lam, mu  float64
		wantNonZero bool
	}{
		{"changing, valued", 1, 1, 0.1, true},
		{"no value", 0, 1, 0.1, false},
		{"never changes", 1, 0, 0.1, false},
		{"too fast for the price", 1, 20, 0.1, false}, // λ ≥ w/μ = 10
		{"just slow enough", 1, 9.9, 0.1, true},
		{"too fast once worth less", 0.5, 9.9, 0.1, false},
	} {
		if got := revisitRate(tc.w, tc.lam, tc.mu); (got > 0) != tc.wantNonZero {
			t.Errorf("%s: rate %g, want positive %v", tc.name, got, tc.wantNonZero)
		}
	}
}

// TestRevisitInterval: 1/f within [floor, probe]; no rate is the probe.
func TestRevisitInterval(t *testing.T) {
	floor, probe := 21*time.Hour, 56*24*time.Hour
	for _, tc := range []struct {
		f    float64 // visits a day
		want time.Duration
	}{
		{1.0 / 7, 7 * 24 * time.Hour},
		{0.5, 48 * time.Hour},
		{2, floor},     // every 12 h: held at the floor
		{0.001, probe}, // every 1,000 days: probed every 56
		{0, probe},
	} {
		if got := revisitInterval(tc.f, floor, probe); got != tc.want {
			t.Errorf("rate %g/day: interval %s, want %s", tc.f, got, tc.want)
		}
	}
}

// TestRevisitFloor: under the optimal policy a fetched page is a
// candidate again from min_revisit/8 (the policy then decides), before
// it it is "recent" but in the budget with its rate; sitemap documents
// and pages their sitemap says changed keep min_revisit's bound; under
// uniform the rule is min_revisit.
func TestRevisitFloor(t *testing.T) {
	m := config.Defaults().Manager // min_revisit 7 days: floor 21 h
	l := newLimits(&m)
	doc := func(ago time.Duration) *linkgraph.Doc {
		return &linkgraph.Doc{URL: "http://a.cl/p", State: linkgraph.StateFetched, Visits: 1, Fetched: testNow.Add(-ago)}
	}
	if a := assess(doc(20*time.Hour), &m, l, testNow); a.skip != skipRecent || !a.track || a.lam <= 0 {
		t.Errorf("20 h: skip %q track %v λ %g, want recent, tracked with a rate", skipNames[a.skip], a.track, a.lam)
	}
	if a := assess(doc(22*time.Hour), &m, l, testNow); a.skip != candidate || !a.revisit || !a.track {
		t.Errorf("22 h: skip %q revisit %v track %v, want a tracked revisit candidate", skipNames[a.skip], a.revisit, a.track)
	}
	// A sitemap document keeps min_revisit and is not in the budget; a
	// page a sitemap says changed is timed by the policy until
	// min_revisit has passed, then due whatever it says.
	sm := doc(2 * 24 * time.Hour)
	sm.Sitemap = true
	if a := assess(sm, &m, l, testNow); a.skip != skipRecent || a.track {
		t.Errorf("sitemap, 2 days: skip %q track %v, want recent, untracked", skipNames[a.skip], a.track)
	}
	stale := func(ago time.Duration) *linkgraph.Doc {
		d := doc(ago)
		d.SitemapLastMod = d.Fetched.Add(time.Hour)
		return d
	}
	if a := assess(stale(3*24*time.Hour), &m, l, testNow); a.skip != candidate || !a.track {
		t.Errorf("stale by its sitemap, 3 days: skip %q track %v, want a tracked candidate", skipNames[a.skip], a.track)
	}
	if a := assess(stale(8*24*time.Hour), &m, l, testNow); a.skip != candidate || a.track {
		t.Errorf("stale by its sitemap, 8 days: skip %q track %v, want a candidate the policy does not hold", skipNames[a.skip], a.track)
	}
	m.Revisits = config.RevisitsUniform
	l = newLimits(&m)
	if a := assess(doc(6*24*time.Hour), &m, l, testNow); a.skip != skipRecent || a.track {
		t.Errorf("uniform, 6 days: skip %q track %v, want recent, untracked", skipNames[a.skip], a.track)
	}
}

// daily returns n visits a day apart ending at end, each changed or not.
func daily(n int, end time.Time, changed bool) []linkgraph.Visit {
	out := make([]linkgraph.Visit, n)
	for i := range out {
		out[i] = linkgraph.Visit{Time: end.Add(-time.Duration(n-1-i) * 24 * time.Hour), Status: 200, Changed: changed && i > 0}
	}
	return out
}

// TestRevisitPolicyRun: through a run, at the same age (5 days), a page
// that changed at every daily visit is revisited and one that never
// changed in eight is not (counted as not due); explain gives both their
// rate and says why.
func TestRevisitPolicyRun(t *testing.T) {
	f := newFixture(t)
	last := daysAgo(5)
	f.add(
		page{url: "http://a.cl/", state: linkgraph.StateFetched, visits: 8, fetched: last, history: daily(8, last, true)},
		page{url: "http://b.cl/", state: linkgraph.StateFetched, visits: 8, fetched: last, history: daily(8, last, false)},
		page{url: "http://c.cl/", state: linkgraph.StateFetched, visits: 8, fetched: last, history: daily(8, last, false)},
		page{url: "http://d.cl/", state: linkgraph.StateFetched, visits: 8, fetched: last, history: daily(8, last, false)},
	)
	for _, u := range []string{"http://a.cl/", "http://b.cl/"} {
		ex := f.explain(u)
		if ex.Revisit == nil {
			t.Fatalf("%s: no revisit allocation", u)
		}
		t.Logf("%s: %s; %s", u, ex.Revisit.describe(), ex.Verdict)
	}
	if ex := f.explain("http://b.cl/"); !strings.HasPrefix(ex.Verdict, "not due: the revisit policy gives it one visit every") || ex.InBatch {
		t.Errorf("b.cl/ (never changed): verdict %q, want not due", ex.Verdict)
	}
	res := f.mustRun()
	_, entries := readBatch(t, f.col, res.Batch)
	if len(entries) != 1 || entries[0].URL != "http://a.cl/" || entries[0].Kind != "revisit" {
		t.Errorf("batch %+v, want the revisit of http://a.cl/ alone", entries)
	}
	if res.Stats.Skipped["not_due"] != 3 {
		t.Errorf("skipped %v, want 3 not due", res.Stats.Skipped)
	}
}

// TestRevisitSiteRoom: a site whose Crawl-delay (20 s and the default
// response time of 0.5 s: 4,215 URLs a day) is less than its pages'
// share of the budget (ten pages at one revisit a minute each,
// min_revisit 1 min: 14,400 a day) pays its own price: its pages
// together get at most its room, and explain says the room set it; a
// site without a delay keeps the common price.
func TestRevisitSiteRoom(t *testing.T) {
	f := newFixture(t)
	f.cfg.Manager.MinRevisit = config.Duration(time.Minute)
	f.cfg.Harvester.Wait = config.Duration(time.Second) // free.cl: 57,600 URLs a day
	last := testNow.Add(-2 * time.Minute)
	var pages []page
	for _, site := range []string{"http://slow.cl", "http://free.cl"} {
		for i := range 10 {
			u := site + "/" + string(rune('a'+i))
			pages = append(pages, page{url: u, state: linkgraph.StateFetched, visits: 1, fetched: last})
		}
	}
	f.add(pages...)
	f.site("http://slow.cl", func(s *linkgraph.Site) {
		s.RobotsStatus, s.RobotsFetched, s.RobotsBody = 200, testNow.Add(-time.Hour), "User-agent: *\nCrawl-delay: 20\n"
	})
	slow := f.explain("http://slow.cl/a").Revisit
	free := f.explain("http://free.cl/a").Revisit
	if slow == nil || free == nil {
		t.Fatalf("allocations %v, %v", slow, free)
	}
	if want := 86400 / 20.5; math.Abs(slow.Room-want) > 1e-6*want || slow.Price <= free.Price {
		t.Errorf("slow.cl: room %g/day, price %g (free.cl %g): want a room of 86400/20.5 a day setting a higher price", slow.Room, slow.Price, free.Price)
	}
	if got := 10 * slow.Rate; got > slow.Room*(1+1e-6) {
		t.Errorf("slow.cl's ten pages get %g revisits/day, above its room %g", got, slow.Room)
	}
	if free.Room != 0 {
		t.Errorf("free.cl: room %g, want none (the common price)", free.Room)
	}
	if !strings.Contains(free.describe(), "w·∂F/∂f = μ") || !strings.Contains(slow.describe(), "politeness room") {
		t.Errorf("describe: %q / %q", free.describe(), slow.describe())
	}
}

// TestUntrustedDates: the same history, Last-Modified at the time of
// every answer and the text changed at two visits of four, gives on a
// site whose dates agreed with the text hash three changes dated exactly
// (the first visit's date counts too),
// and on a site found lying none: the estimator counts its two changed
// intervals as censored, from the hash alone. explain says which, and
// why.
func TestUntrustedDates(t *testing.T) {
	f := newFixture(t)
	last := daysAgo(10)
	hist := func() []linkgraph.Visit {
		h := daily(4, last, false)
		h[1].Changed, h[3].Changed = true, true
		for i := range h {
			h[i].LastModified = h[i].Time.Format(http.TimeFormat)
		}
		return h
	}
	f.add(
		page{url: "http://honest.cl/", state: linkgraph.StateFetched, visits: 4, fetched: last, history: hist()},
		page{url: "http://lying.cl/", state: linkgraph.StateFetched, visits: 4, fetched: last, history: hist()},
	)
	f.site("http://honest.cl", func(s *linkgraph.Site) { s.Validators = &linkgraph.Validators{Agree: 6} })
	f.site("http://lying.cl", func(s *linkgraph.Site) { s.Validators = &linkgraph.Validators{Agree: 2, Disagree: 4} })
	honest, lying := f.explain("http://honest.cl/"), f.explain("http://lying.cl/")
	if !honest.DatesTrusted || honest.Change.Exact != 3 || honest.Change.Changed != 0 {
		t.Errorf("honest.cl: trusted %v, %+v; want trusted, 3 changes dated", honest.DatesTrusted, honest.Change)
	}
	if lying.DatesTrusted || lying.Change.Exact != 0 || lying.Change.Changed != 2 || !strings.Contains(lying.TrustWhy, "4 of 6 checks") {
		t.Errorf("lying.cl: trusted %v (%s), %+v; want untrusted, 2 censored changes", lying.DatesTrusted, lying.TrustWhy, lying.Change)
	}
	if honest.Change.Lambda <= lying.Change.Lambda {
		// Dated at the answer, a change leaves no span after it: the
		// lying dates make the page look faster than the hash does.
		t.Errorf("λ honest-dated %g, hash only %g: want the dated estimate higher", honest.Change.Lambda, lying.Change.Lambda)
	}
	var b strings.Builder
	if err := lying.Print(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not trusted: 4 of 6") || !strings.Contains(b.String(), "revisit rate") {
		t.Errorf("explain prints:\n%s", b.String())
	}
}

// TestDueAgreesWithInterval checks due, which decides without solving
// for the rate, against its definition — the age has reached the
// interval of the rate refresh.Rate gives — on pages of every kind:
// rates over six orders of magnitude, weights over ten, no weight, no
// change, ages from below the floor to beyond the probe, and sites with
// their own price. A page whose age is within 1e-9 of its interval may
// go either way.
func TestDueAgreesWithInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := &revisitPolicy{floor: 3 * time.Hour, probe: 8 * 24 * time.Hour, mu: 1e-3, siteMu: map[uint32]float64{2: 1e-1}}
	for range 20000 {
		pg := revisitPage{site: uint32(r.IntN(3)), age: float32(12 * r.Float64())}
		if r.IntN(10) > 0 {
			pg.lam = math.Pow(10, -3+6*r.Float64())
		}
		w := 0.0
		if r.IntN(20) > 0 {
			w = math.Pow(10, -10+10*r.Float64())
		}
		p.pages, p.weight = append(p.pages, pg), append(p.weight, w)
	}
	disagree := 0
	for i, pg := range p.pages {
		iv := days(p.interval(i))
		want := float64(pg.age) >= iv
		if got := p.due(i); got != want {
			if math.Abs(float64(pg.age)-iv) <= 1e-9*iv {
				continue
			}
			disagree++
			if disagree < 5 {
				t.Errorf("page %d (λ %g, w %g, age %g days): due %v, interval %g days says %v", i, pg.lam, p.weight[i], pg.age, got, iv, want)
			}
		}
	}
	if disagree > 0 {
		t.Errorf("%d of %d pages disagree", disagree, len(p.pages))
	}
}

// TestRateBound checks that rateBound is never below the rate it bounds
// (a site within its room by the bound must be within it) and is close
// to it at low prices, where the rate goes as √(λw/2μ).
func TestRateBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		lam, w, mu := math.Pow(10, -4+7*r.Float64()), math.Pow(10, -10+10*r.Float64()), math.Pow(10, -12+14*r.Float64())
		f, b := revisitRate(w, lam, mu), rateBound(w, lam, mu)
		if b < f {
			t.Fatalf("λ %g, w %g, μ %g: bound %g below rate %g", lam, w, mu, b, f)
		}
		if c := mu / w * lam; c < 1e-6 && b > f*1.01 {
			t.Errorf("λ %g, w %g, μ %g (c %g): bound %g, rate %g: want within 1%% at low prices", lam, w, mu, c, b, f)
		}
	}
	if rateBound(0, 1, 1) != 0 || rateBound(1, 0, 1) != 0 || rateBound(1, 2, 1) != 0 {
		t.Error("a page with no weight, no change or too fast for the price has rate 0: its bound too")
	}
}
