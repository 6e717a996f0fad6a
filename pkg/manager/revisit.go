package manager

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/refresh"
)

// Revisits by value and change rate (docs/manager.md, "Revisits"). With
// manager.revisits = optimal the manager spends a revisit budget, one
// revisit per fetched page per min_revisit on average, as Cho and
// Garcia-Molina's optimal policy does ("Effective page refresh policies
// for Web crawlers", ACM TODS 2003, §5): it maximises Σ wᵢ·F(λᵢ, fᵢ), the
// expected freshness of the collection weighted by value, subject to
// Σ fᵢ = budget, where F(λ, f) = (f/λ)(1 − e^(−λ/f)) is the freshness of a
// page changing at rate λ revisited every 1/f and wᵢ = IQ^α (times
// near_duplicate_weight for a near-duplicate) is the page's value. The
// Lagrange condition wᵢ·∂F/∂fᵢ = μ gives each page its rate: important
// pages more often, pages that never change rarely, and a page whose rate
// is too high for the price (λ ≥ w/μ) none at all. A site's pages
// together get no more than its politeness room (one URL per response
// time plus wait or Crawl-delay): a site that would overrun it pays its
// own higher price.
//
// A fetched page is a candidate again once its age reaches its interval
// 1/fᵢ, bounded below by min_revisit/RevisitFloorDivisor and above by
// ProbeMultiple × min_revisit (so that a page given nothing is still
// probed now and then, and its estimate can follow it); once due it
// competes with new pages by profit as before.

const (
	// RevisitFloorDivisor bounds the revisit interval below: no page is
	// revisited sooner than min_revisit / RevisitFloorDivisor.
	RevisitFloorDivisor = 8
	// ProbeMultiple bounds it above: every fetched page is a candidate
	// again after ProbeMultiple × min_revisit, whatever the policy gives
	// it.
	ProbeMultiple = 8
	// priceSample is the most pages the price is solved on: above it, a
	// regular sample of the fetched pages with the budget scaled to its
	// share.
	priceSample = 1 << 16
)

// revisitPage is one fetched page the policy allocates revisits to (24
// bytes).
type revisitPage struct {
	lam  float64 // estimated change rate λ, changes per day
	age  float32 // days since its last fetch
	pos  int32   // position in the view
	site uint32
	near bool // a near-duplicate (its weight has near_duplicate_weight)
}

// revisitPolicy is the allocation of one plan.
type revisitPolicy struct {
	pages  []revisitPage // in position order
	budget float64       // revisits a day: len(pages) / min_revisit
	floor  time.Duration // the least interval, min_revisit / RevisitFloorDivisor
	probe  time.Duration // the longest, ProbeMultiple × min_revisit
	mu     float64       // the price μ, in days (w·∂F/∂f at the optimum)
	// siteMu holds the price of the sites whose politeness room the
	// common price would overrun, and room the revisits a day each of
	// them allows.
	siteMu map[uint32]float64
	room   map[uint32]float64
	weight []float64 // per page, filled by allocate
	// notDue counts the revisit candidates the policy held back.
	notDue int
}

// newRevisitPolicy returns the policy of the settings, nil when
// manager.revisits is uniform (or min_revisit is 0: every page is due).
func newRevisitPolicy(m *config.Manager) *revisitPolicy {
	r := m.Revisit()
	if m.Revisits != config.RevisitsOptimal || r <= 0 {
		return nil
	}
	return &revisitPolicy{floor: r / RevisitFloorDivisor, probe: ProbeMultiple * r}
}

// add records a fetched page the policy allocates to: its position, its
// site, the time of its last fetch, whether it is a near-duplicate and its
// change rate λ.
func (p *revisitPolicy) add(pos int32, site uint32, fetched time.Time, near bool, lam float64, now time.Time) {
	p.pages = append(p.pages, revisitPage{lam: lam, age: float32(days(max(now.Sub(fetched), 0))), pos: pos, site: site, near: near})
}

// revisitRate is the revisit rate, in visits per day, that the optimum
// at price mu (days) gives a page of value w and change rate lam
// (changes per day): the f with w·∂F/∂f = mu, 0 for a page that never
// changes, has no value, or changes too fast to be worth a visit at
// that price (lam ≥ w/mu).
func revisitRate(w, lam, mu float64) float64 {
	if w <= 0 || lam <= 0 {
		return 0
	}
	return refresh.Rate(lam, mu/w)
}

// rateBound bounds revisitRate from above: f = λ/x with g(x) = c = λμ/w
// and g(x) ≤ x²/2 (g′(x) = x·e^(−x) ≤ x, refresh.Marginal), so x ≥
// √(2c) and f ≤ λ/√(2c) = √(λw/2μ); 0 where the rate is 0. The margin
// covers the rounding of the Newton solve.
func rateBound(w, lam, mu float64) float64 {
	if w <= 0 || lam <= 0 {
		return 0
	}
	c := mu / w * lam
	switch {
	case c >= 1:
		return 0
	case c <= 0:
		return math.Inf(1)
	}
	return lam / math.Sqrt(2*c) * (1 + 1e-9)
}

// revisitInterval is the time between revisits at rate f (visits per
// day), within [floor, probe]; a rate of 0 gets probe.
func revisitInterval(f float64, floor, probe time.Duration) time.Duration {
	if f <= 0 {
		return probe
	}
	d := float64(24*time.Hour) / f
	if d >= float64(probe) {
		return probe
	}
	return max(time.Duration(d), floor)
}

// allocate computes every page's weight and the price: first the common
// price over all pages, then each site whose pages would spend more than
// its room at that price gets its own (the price at which they spend the
// room), and the common price is solved again with those as floors.
func (p *revisitPolicy) allocate(sites *planSites, est *estimate, cfg *config.Config) error {
	m := &cfg.Manager
	n := len(p.pages)
	p.budget = float64(n) / days(m.Revisit())
	p.weight = make([]float64, n)
	for i, pg := range p.pages {
		w := math.Pow(est.iq(pg.pos), m.Alpha)
		if pg.near {
			w *= m.NearDuplicateWeight
		}
		p.weight[i] = w
	}
	sample := max(1, (n+priceSample-1)/priceSample)
	solve := func(floors map[uint32]float64) float64 {
		var lams, ws, fl []float64
		for i := 0; i < n; i += sample {
			lams, ws = append(lams, p.pages[i].lam), append(ws, p.weight[i])
			if floors != nil {
				fl = append(fl, floors[p.pages[i].site])
			}
		}
		return refresh.Price(lams, ws, fl, p.budget*float64(len(lams))/float64(n))
	}
	p.mu = solve(nil)
	// The sites whose pages would spend more than their politeness room
	// at the common price. A page's rate is at most rateBound (one
	// square root, where the rate is a Newton solve), so only the pages
	// of the sites whose bound passes their room get their rates
	// solved; a site within its room by the bound is within it.
	var bound []float64 // by site id
	for i, pg := range p.pages {
		for int(pg.site) >= len(bound) {
			bound = append(bound, 0)
		}
		bound[pg.site] += rateBound(p.weight[i], pg.lam, p.mu)
	}
	pc := paceOf(&cfg.Harvester)
	rooms := make([]float64, len(bound)) // the room of the sites to check, else 0
	check := false
	for id, b := range bound {
		if b <= 0 {
			continue // within any room: its record is not read
		}
		s, err := sites.site(uint32(id))
		if err != nil {
			return fmt.Errorf("revisits: %w", err)
		}
		resp := s.response
		if !s.measured {
			resp = defaultResponseTime
		}
		room := float64(24*time.Hour) / float64(max(pc.urlCost(resp, s.crawlDelay(cfg.Crawl.ProductToken)), time.Millisecond))
		if b > room {
			rooms[id], check = room, true
		}
	}
	if !check {
		return nil
	}
	spend := make([]float64, len(bound))
	for i, pg := range p.pages {
		if rooms[pg.site] > 0 {
			spend[pg.site] += revisitRate(p.weight[i], pg.lam, p.mu)
		}
	}
	over := map[uint32][]int{} // site over its room → its pages
	for i, pg := range p.pages {
		if r := rooms[pg.site]; r > 0 && spend[pg.site] > r {
			over[pg.site] = append(over[pg.site], i)
		}
	}
	for _, site := range slices.Sorted(maps.Keys(over)) {
		var lams, ws []float64
		for _, i := range over[site] {
			lams, ws = append(lams, p.pages[i].lam), append(ws, p.weight[i])
		}
		if p.siteMu == nil {
			p.siteMu, p.room = map[uint32]float64{}, map[uint32]float64{}
		}
		p.siteMu[site], p.room[site] = refresh.Price(lams, ws, nil, rooms[site]), rooms[site]
	}
	if p.siteMu != nil {
		p.mu = solve(p.siteMu)
	}
	return nil
}

// page returns the index of the page at view position pos, −1 if the
// policy does not hold it.
func (p *revisitPolicy) page(pos int32) int {
	i, ok := slices.BinarySearchFunc(p.pages, pos, func(pg revisitPage, pos int32) int { return int(pg.pos - pos) })
	if !ok {
		return -1
	}
	return i
}

// price is the price page i pays: the common one, or its site's when
// higher.
func (p *revisitPolicy) price(i int) float64 {
	return max(p.mu, p.siteMu[p.pages[i].site])
}

// rate is the revisit rate, in visits per day, page i gets.
func (p *revisitPolicy) rate(i int) float64 {
	return revisitRate(p.weight[i], p.pages[i].lam, p.price(i))
}

// interval is the time between revisits page i gets.
func (p *revisitPolicy) interval(i int) time.Duration {
	return revisitInterval(p.rate(i), p.floor, p.probe)
}

// due tells whether page i is due: its age has reached its interval.
// It decides without solving for the page's rate (a Newton solve, for
// every fetched candidate of every run): within [floor, probe) the
// interval 1/f, f = λ/x with g(x) = c (refresh.Rate, c = λ·price/w), is
// at most the age exactly when x ≤ λ·age, that is, g rising, when c ≤
// g(λ·age) — one exponential.
func (p *revisitPolicy) due(i int) bool {
	pg := p.pages[i]
	age := float64(pg.age)
	switch {
	case age >= days(p.probe):
		return true // the longest interval
	case age < days(p.floor):
		return false // the shortest
	}
	w := p.weight[i]
	if w <= 0 || pg.lam <= 0 {
		return false // no rate: the interval is probe
	}
	c := p.price(i) / w * pg.lam
	switch {
	case c >= 1:
		return false // too fast for the price: probe
	case c <= 0:
		return true // an infinite rate: the floor
	}
	return c <= refresh.Marginal(pg.lam*age)
}

// applyRevisits allocates the revisit budget once intrinsic quality is
// known and takes out of the candidates the revisits of fetched pages
// that are not due yet (counted as skipped "not_due"). The candidates
// keep their order; the watched document's candidate index follows.
func applyRevisits(v *graphView, est *estimate, cfg *config.Config) error {
	p := v.revisits
	if p == nil || len(p.pages) == 0 {
		return nil
	}
	if err := p.allocate(v.sites, est, cfg); err != nil {
		return err
	}
	watch := -1
	if w := v.watch; w != nil {
		watch = w.cand
		if k := p.page(w.pos); k >= 0 {
			w.revisit = p.allocation(k, w.doc.Fetched)
		}
	}
	out := v.cands[:0]
	k := 0 // the candidates and the policy's pages are both in position order: one walk
	for i, c := range v.cands {
		if c.revisit && !c.sitemap {
			for k < len(p.pages) && p.pages[k].pos < c.pos {
				k++
			}
			if k < len(p.pages) && p.pages[k].pos == c.pos && !p.due(k) {
				p.notDue++
				if i == watch {
					v.watch.cand = -1
				}
				continue
			}
		}
		if i == watch {
			v.watch.cand = len(out)
		}
		out = append(out, c)
	}
	v.cands = out
	if p.notDue > 0 {
		v.stats.Skipped["not_due"] += p.notDue
		v.stats.Candidates -= p.notDue
	}
	return nil
}

// untrustedSites reads the sites whose dates the estimator must not read
// (linkgraph.Validators.Trusted), nil when there are none.
func untrustedSites(tx *linkgraph.Tx) (*siteSet, error) {
	var out *siteSet
	err := tx.ForEachSite(func(s *linkgraph.Site) error {
		if !s.Validators.Trusted() {
			if out == nil {
				out = &siteSet{ids: map[uint64]bool{}}
			}
			out.ids[s.ID] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("validator trust: %w", err)
	}
	return out, nil
}

// RevisitAllocation is what the revisit policy gives one fetched page
// (manager explain).
type RevisitAllocation struct {
	Weight   float64       // w: IQ^α, times near_duplicate_weight for a near-duplicate
	Lambda   float64       // the estimated change rate, changes per day
	Rate     float64       // revisits a day the optimum gives it; 0: none (it changes too fast for the price, or has no value)
	Interval time.Duration // the time between its revisits: 1/Rate within [min_revisit/8, 8·min_revisit]
	Price    float64       // the price μ it pays, in days: w·∂F/∂f at its rate
	Room     float64       // revisits a day its site's politeness allows, when that room sets its price (0 otherwise)
	Budget   float64       // revisits a day for the whole collection: Pages / min_revisit
	Pages    int           // fetched pages sharing the budget
	Expected float64       // F(λ, Rate): the share of the time its copy is expected fresh
	Due      time.Time     // when it is a candidate again (its last fetch + Interval)
}

// allocation returns page i's allocation, fetched at fetched.
func (p *revisitPolicy) allocation(i int, fetched time.Time) *RevisitAllocation {
	pg := p.pages[i]
	a := &RevisitAllocation{Weight: p.weight[i], Lambda: pg.lam, Rate: p.rate(i), Interval: p.interval(i), Price: p.price(i), Budget: p.budget, Pages: len(p.pages)}
	if sm, ok := p.siteMu[pg.site]; ok && sm > p.mu {
		a.Room = p.room[pg.site]
	}
	a.Expected = refresh.Freshness(pg.lam, 1/days(a.Interval))
	a.Due = fetched.Add(a.Interval)
	return a
}

// describe says in words what the allocation is and why.
func (a *RevisitAllocation) describe() string {
	var why string
	switch {
	case a.Weight <= 0:
		why = "it has no value (w = 0)"
	case a.Rate == 0:
		why = fmt.Sprintf("it changes too fast to be kept fresh at this budget (λ %s/day ≥ w/μ = %s/day): no revisit but a probe", g4(a.Lambda), g4(a.Weight/a.Price))
	case a.Room > 0:
		why = fmt.Sprintf("its site's politeness room (%s revisits/day) sets its price", g4(a.Room))
	default:
		why = "w·∂F/∂f = μ"
	}
	return fmt.Sprintf("%s/day (one every %s, expected fresh %s of the time); w %s, λ %s/day, μ %s days; budget %s revisits/day over %d fetched pages; %s",
		g4(a.Rate), a.Interval.Round(time.Second), g4(a.Expected), g4(a.Weight), g4(a.Lambda), g4(a.Price), g4(a.Budget), a.Pages, why)
}

// trustWhy says whether a site's dates are trusted, and why.
func trustWhy(v *linkgraph.Validators) (bool, string) {
	switch {
	case v == nil:
		return true, "trusted: no revisit has checked its dates against the text yet"
	case !v.Trusted():
		return false, fmt.Sprintf("not trusted: %d of %d checks of Last-Modified or sitemap lastmod against the text hash disagreed; the estimator reads the text hash only", v.Disagree, v.Agree+v.Disagree)
	}
	return true, fmt.Sprintf("trusted: %d of %d checks of its dates against the text hash agreed", v.Agree, v.Agree+v.Disagree)
}
