package config

import (
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/timescale"
)

// Strategies returns the intrinsic-quality estimators the manager knows,
// the names accepted by manager.strategy (Baeza-Yates et al. 2005, §4).
func Strategies() []string {
	return []string{"breadth-first", "backlink", "pagerank", "partial-pagerank", "opic", "larger-sites-first", "historical"}
}

// HistoricalNewPages returns the ways the historical strategy values a
// page the previous crawl did not have, the names accepted by
// manager.historical_new_pages.
func HistoricalNewPages() []string {
	return []string{"zero", "random", "parent", "pagerank"}
}

// The revisit policies (manager.revisits).
const (
	// RevisitsOptimal spends the revisit budget by value and change rate.
	RevisitsOptimal = "optimal"
	// RevisitsUniform revisits every page once min_revisit has passed.
	RevisitsUniform = "uniform"
)

// Manager holds the settings of the value function and of batches.
type Manager struct {
	Strategy            string   `toml:"strategy" doc:"Intrinsic-quality estimator: breadth-first, backlink, pagerank, partial-pagerank, opic, larger-sites-first or historical."`
	Alpha               float64  `toml:"alpha" doc:"Exponent of intrinsic quality in V(p) = IQ^alpha * RQ^beta * F^gamma."`
	Beta                float64  `toml:"beta" doc:"Exponent of representational quality."`
	Gamma               float64  `toml:"gamma" doc:"Exponent of freshness."`
	RQURL               float64  `toml:"rq_url" doc:"Representational quality of a page known only by its URL (between 0 and rq_anchors)."`
	RQAnchors           float64  `toml:"rq_anchors" doc:"Representational quality of a page known by its URL and the anchor text of links to it (below 1, the value of a fetched page)."`
	Damping             float64  `toml:"damping" doc:"PageRank damping factor (pagerank, partial-pagerank, historical)."`
	PageRankInterval    int      `toml:"pagerank_interval" doc:"partial-pagerank: PageRank is computed again once this many pages have been fetched since the last computation."`
	HistoricalNewPages  string   `toml:"historical_new_pages" doc:"historical: value of pages the previous crawl did not have: zero, random or parent (the paper's variants), or pagerank (their PageRank in the graph known now, per average page)."`
	BatchSize           int      `toml:"batch_size" doc:"At most this many URLs in one batch."`
	MaxPagesPerSite     int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site in one batch: a safety cap; batch_duration sets the pace."`
	BatchDuration       Duration `toml:"batch_duration" doc:"Longest target duration of a batch: each host gets at most the URLs it can serve politely in this time (its response time plus the harvester's wait or its robots.txt Crawl-delay per URL); the harvester may take it as its deadline. With batch_cycle_factor the manager plans shorter batches while the other stages are fast. 0 turns time sizing off."`
	BatchCycleFactor    float64  `toml:"batch_cycle_factor" doc:"A batch is planned to last this many times what a cycle cost: what the gatherer and the seeder took on the newest seeded batch (from its harvest's end to its seeding's end) and the harvester's start floor (max(wait, address_wait)), at least four harvester waits and one second, and at most batch_duration: short while the pipeline returns links quickly, so no server waits long for the links its pages gave (docs/manager.md, \"How long a batch is\"). 0: every batch lasts batch_duration."`
	MaxSitePages        int      `toml:"max_site_pages" doc:"At most this many pages of one site are fetched in the whole collection (new pages of a site with that many fetched or scheduled pages wait); 0 means no cap."`
	MaxDepthStatic      int      `toml:"max_depth_static" doc:"Pages of static URLs deeper than this (links from where the crawl entered the site) are not scheduled."`
	MaxDepthDynamic     int      `toml:"max_depth_dynamic" doc:"Pages of dynamic URLs (a query, a script extension or /cgi-bin/) deeper than this are not scheduled."`
	DynamicExtensions   []string `toml:"dynamic_extensions" doc:"File extensions (without dot) that make a URL dynamic even without a query."`
	MaxFetchesPerScript int      `toml:"max_fetches_per_script" doc:"At most this many URLs with a query are fetched per script (URL before the '?'); 0 means no limit."`
	MinRevisit          Duration `toml:"min_revisit" doc:"The revisit budget (times time_scale): with revisits = optimal, on average one revisit per fetched page in this time, spent by value and change rate, no page sooner than min_revisit/8 (docs/manager.md, \"Revisits\"); with revisits = uniform, a fetched page is not scheduled again before this much time has passed."`
	Revisits            string   `toml:"revisits" doc:"Revisit policy: optimal (Cho and Garcia-Molina's optimal allocation of the budget min_revisit sets, by value and estimated change rate, within each site's politeness room) or uniform (every page as soon as min_revisit has passed)."`
	TimeScale           float64  `toml:"time_scale" doc:"Factor s on every duration of the freshness machinery: the change-rate prior (one change per 30 days), the 365-day cap on Last-Modified ages, sitemap changefreq rates, the lying-sitemap window (1 h) and future slack (24 h), the report's age classes and min_revisit (docs/manager.md, \"Time scale\"); 1 is real time, 1/1440 (0.000694444444444444) turns a day into a minute. Harvester waits, Crawl-delay, timeouts and batch lengths are not scaled."`
	RobotsMaxAge        Duration `toml:"robots_max_age" doc:"A site's stored robots.txt younger than this goes into the batch (robots.jsonl) so the harvester need not fetch it again; 0 sends none."`
	NearDuplicateWeight float64  `toml:"near_duplicate_weight" doc:"Factor of the profit of a page that is a near-duplicate of a fetched page (simhash within 3 bits, or rel=canonical to it), or a page of a site found to mirror another (docs/manager.md): 1 ignores near-duplicates."`
}

// Scale returns manager.time_scale, the factor on the durations of the
// freshness machinery.
func (c *Manager) Scale() timescale.Scale { return timescale.Scale(c.TimeScale) }

// Revisit returns min_revisit at the time scale: the one value every use
// of min_revisit takes.
func (c *Manager) Revisit() time.Duration { return c.Scale().D(c.MinRevisit.D()) }

func defaultManager() Manager {
	return Manager{
		Strategy:           "pagerank",
		Revisits:           RevisitsOptimal,
		Alpha:              1,
		Beta:               1,
		Gamma:              1,
		RQURL:              0.25,
		RQAnchors:          0.5,
		Damping:            0.85,
		PageRankInterval:   100000,
		HistoricalNewPages: "parent",
		BatchSize:          100000,
		// A safety cap, not the pace: with batch_duration 1h a host
		// reaches 10,000 URLs only at 0.36 s per URL, a wait far below a
		// polite one (docs/manager.md, "Candidates and limits").
		MaxPagesPerSite: 10000,
		// One hour: at the default harvester.wait of 15 s (plus the
		// default response estimate of 0.5 s) that is 233 URLs per host,
		// so the batch's slowest hosts end with the batch instead of
		// holding it up, and each cycle's links reach the next batch
		// within about an hour.
		BatchDuration: Duration(time.Hour),
		// Gathering and seeding a batch then cost at most a quarter of
		// its time (docs/manager.md, "How long a batch is").
		BatchCycleFactor: 4,
		MaxSitePages:     25000,
		MaxDepthStatic:   15,
		MaxDepthDynamic:  5,
		DynamicExtensions: []string{
			"php", "php3", "php4", "php5", "phtml", "asp", "aspx", "jsp", "jspx",
			"cgi", "pl", "py", "cfm", "shtml", "do", "action", "dll",
		},
		MaxFetchesPerScript: 1,
		MinRevisit:          Duration(7 * 24 * time.Hour),
		TimeScale:           1,
		RobotsMaxAge:        Duration(24 * time.Hour),
		NearDuplicateWeight: 0.1,
	}
}

// validate reports the settings of the section that are out of range.
func (c *Manager) validate(bad func(key, format string, args ...any)) {
	if !contains(Strategies(), c.Strategy) {
		bad("manager.strategy", "unknown strategy %s (want one of %s)", excerpt.Quote(c.Strategy), strings.Join(Strategies(), ", "))
	}
	for key, v := range map[string]float64{"manager.alpha": c.Alpha, "manager.beta": c.Beta, "manager.gamma": c.Gamma} {
		if v < 0 || v > 100 {
			bad(key, "must be between 0 and 100, got %g", v)
		}
	}
	if !(c.RQURL >= 0 && c.RQURL <= c.RQAnchors) {
		bad("manager.rq_url", "must be between 0 and rq_anchors (%g), got %g", c.RQAnchors, c.RQURL)
	}
	if !(c.NearDuplicateWeight > 0 && c.NearDuplicateWeight <= 1) {
		bad("manager.near_duplicate_weight", "must be above 0 and at most 1, got %g", c.NearDuplicateWeight)
	}
	if !(c.RQAnchors >= 0 && c.RQAnchors < 1) {
		bad("manager.rq_anchors", "must be at least 0 and below 1, got %g", c.RQAnchors)
	}
	if c.Damping <= 0 || c.Damping >= 1 {
		bad("manager.damping", "must be strictly between 0 and 1, got %g", c.Damping)
	}
	if c.PageRankInterval < 1 {
		bad("manager.pagerank_interval", "must be at least 1, got %d", c.PageRankInterval)
	}
	if !contains(HistoricalNewPages(), c.HistoricalNewPages) {
		bad("manager.historical_new_pages", "want one of %s, got %s", strings.Join(HistoricalNewPages(), ", "), excerpt.Quote(c.HistoricalNewPages))
	}
	if c.BatchSize < 1 {
		bad("manager.batch_size", "must be at least 1, got %d", c.BatchSize)
	}
	if c.MaxPagesPerSite < 1 {
		bad("manager.max_pages_per_site", "must be at least 1, got %d", c.MaxPagesPerSite)
	}
	if c.BatchDuration < 0 {
		bad("manager.batch_duration", "must not be negative (0 turns time sizing off)")
	}
	if !(c.BatchCycleFactor >= 0 && c.BatchCycleFactor <= 1000) {
		bad("manager.batch_cycle_factor", "must be between 0 and 1000 (0: every batch lasts batch_duration), got %g", c.BatchCycleFactor)
	}
	if c.MaxSitePages < 0 {
		bad("manager.max_site_pages", "must not be negative, got %d", c.MaxSitePages)
	}
	if c.MaxDepthStatic < 0 || c.MaxDepthDynamic < 0 {
		bad("manager.max_depth_*", "must not be negative")
	}
	for _, e := range c.DynamicExtensions {
		if e == "" || strings.ContainsAny(e, "./?# ") {
			bad("manager.dynamic_extensions", "want extensions without dot, got %s", excerpt.Quote(e))
		}
	}
	if c.MaxFetchesPerScript < 0 {
		bad("manager.max_fetches_per_script", "must not be negative, got %d", c.MaxFetchesPerScript)
	}
	if c.MinRevisit < 0 {
		bad("manager.min_revisit", "must not be negative")
	}
	if c.Revisits != RevisitsOptimal && c.Revisits != RevisitsUniform {
		bad("manager.revisits", "want %s or %s, got %s", RevisitsOptimal, RevisitsUniform, excerpt.Quote(c.Revisits))
	}
	if err := timescale.Check(c.TimeScale); err != nil {
		bad("manager.time_scale", "%v", err)
	}
	if c.RobotsMaxAge < 0 {
		bad("manager.robots_max_age", "must not be negative")
	}
}
