package config

import (
	"strings"
	"time"
)

// Strategies returns the intrinsic-quality estimators the manager knows,
// the names accepted by manager.strategy.
func Strategies() []string {
	return []string{"breadth-first", "backlink", "pagerank"}
}

// Manager holds the settings of the value function and of batches.
type Manager struct {
	Strategy        string   `toml:"strategy" doc:"Intrinsic-quality estimator: breadth-first, backlink or pagerank."`
	Alpha           float64  `toml:"alpha" doc:"Exponent of intrinsic quality in V(p) = IQ^alpha * RQ^beta * F^gamma."`
	Beta            float64  `toml:"beta" doc:"Exponent of representational quality."`
	Gamma           float64  `toml:"gamma" doc:"Exponent of freshness."`
	Damping         float64  `toml:"damping" doc:"PageRank damping factor (pagerank strategy)."`
	BatchSize       int      `toml:"batch_size" doc:"At most this many URLs in one batch."`
	MaxPagesPerSite int      `toml:"max_pages_per_site" doc:"At most this many URLs of one site in one batch."`
	MaxDepthStatic  int      `toml:"max_depth_static" doc:"Pages of static URLs deeper than this (links from the site's entry page) are not scheduled."`
	MaxDepthDynamic int      `toml:"max_depth_dynamic" doc:"Pages of dynamic URLs (with a query) deeper than this are not scheduled."`
	MinRevisit      Duration `toml:"min_revisit" doc:"A fetched page is not scheduled again before this much time has passed."`
}

func defaultManager() Manager {
	return Manager{
		Strategy:        "pagerank",
		Alpha:           1,
		Beta:            1,
		Gamma:           1,
		Damping:         0.85,
		BatchSize:       100000,
		MaxPagesPerSite: 1000,
		MaxDepthStatic:  15,
		MaxDepthDynamic: 5,
		MinRevisit:      Duration(7 * 24 * time.Hour),
	}
}

// validate reports the settings of the section that are out of range.
func (c *Manager) validate(bad func(key, format string, args ...any)) {
	if !contains(Strategies(), c.Strategy) {
		bad("manager.strategy", "unknown strategy %q (want one of %s)", c.Strategy, strings.Join(Strategies(), ", "))
	}
	for key, v := range map[string]float64{"manager.alpha": c.Alpha, "manager.beta": c.Beta, "manager.gamma": c.Gamma} {
		if v < 0 || v > 100 {
			bad(key, "must be between 0 and 100, got %g", v)
		}
	}
	if c.Damping <= 0 || c.Damping >= 1 {
		bad("manager.damping", "must be strictly between 0 and 1, got %g", c.Damping)
	}
	if c.BatchSize < 1 {
		bad("manager.batch_size", "must be at least 1, got %d", c.BatchSize)
	}
	if c.MaxPagesPerSite < 1 {
		bad("manager.max_pages_per_site", "must be at least 1, got %d", c.MaxPagesPerSite)
	}
	if c.MaxDepthStatic < 0 || c.MaxDepthDynamic < 0 {
		bad("manager.max_depth_*", "must not be negative")
	}
	if c.MinRevisit < 0 {
		bad("manager.min_revisit", "must not be negative")
	}
}
