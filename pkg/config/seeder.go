package config

// Seeder holds the settings of frontier growth (Castillo, Nelli,
// Panconesi, "Crawling the Web with Limited Memory": the Sydney strategy).
type Seeder struct {
	NewLinksPerPage int `toml:"new_links_per_page" doc:"Sydney strategy: at most this many new URLs per fetched page enter the frontier now, the rest are parked on disk; 0 turns it off."`
	FrontierBudget  int `toml:"frontier_budget" doc:"Fixed-budget mode: at most this many pending URLs; new URLs over it are parked on disk; 0 turns it off."`
}

func defaultSeeder() Seeder {
	return Seeder{NewLinksPerPage: 0, FrontierBudget: 0}
}

// validate reports the settings of the section that are out of range.
func (c *Seeder) validate(bad func(key, format string, args ...any)) {
	if c.NewLinksPerPage < 0 {
		bad("seeder.new_links_per_page", "must not be negative, got %d", c.NewLinksPerPage)
	}
	if c.FrontierBudget < 0 {
		bad("seeder.frontier_budget", "must not be negative, got %d", c.FrontierBudget)
	}
}
