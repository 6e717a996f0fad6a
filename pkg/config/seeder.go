package config

import "github.com/wirecrawl/wire/pkg/excerpt"

// Overflow policies of the fixed-budget frontier (seeder.frontier_overflow).
const (
	OverflowPark = "park" // new URLs over the budget are parked on disk and released later
	OverflowDrop = "drop" // new URLs over the budget are forgotten (the paper's fixed budget)
)

// Seeder holds the settings of frontier growth (Castillo, Nelli,
// Panconesi, "Crawling the Web with Limited Memory": the Sydney strategy
// and its fixed-budget variant). The frontier is the set of known URLs
// never fetched (pending or scheduled); see docs/frontier.md.
type Seeder struct {
	NewLinksPerPage  int    `toml:"new_links_per_page" doc:"Sydney strategy: at most this many new URLs per fetched page enter the frontier now, the rest are parked on disk (COLLECTION/frontier/) and released when the frontier runs low; 0 turns it off."`
	FrontierBudget   int    `toml:"frontier_budget" doc:"Fixed-budget mode: new URLs are taken into the frontier only while it holds fewer than this many URLs; 0 turns it off."`
	FrontierOverflow string `toml:"frontier_overflow" doc:"What happens to new URLs over frontier_budget: park (kept on disk and released later, nothing is lost) or drop (forgotten until a page links to them again, as in the paper)."`
	FrontierLowWater int    `toml:"frontier_low_water" doc:"Parked URLs are released (by seeder run after each batch, or seeder release) while the frontier holds fewer than this many URLs; keep it above manager.batch_size."`
	Sitemaps         bool   `toml:"sitemaps" doc:"Take the sitemaps that robots.txt files name (Sitemap: lines) into the crawl (docs/sitemaps.md); false ignores them (sitemaps given with seeder add --sitemap are still fetched)."`
	SitemapProbe     bool   `toml:"sitemap_probe" doc:"Also try /sitemap.xml of every site whose robots.txt names no sitemap (docs/sitemaps.md); off by default: most sites have none, and each try costs a request."`
	BackupEvery      int    `toml:"backup_every" doc:"seeder run writes a consistent copy of graph.db (and links to its park files) to COLLECTION/backup/ after every this many batches, keeping the previous copy too; seeder restore brings it back and takes in again the batches seeded since (docs/operations.md); 0 turns it off."`
}

func defaultSeeder() Seeder {
	return Seeder{NewLinksPerPage: 0, FrontierBudget: 0, FrontierOverflow: OverflowPark, FrontierLowWater: 200000, BackupEvery: 5, Sitemaps: true}
}

// validate reports the settings of the section that are out of range.
func (c *Seeder) validate(bad func(key, format string, args ...any)) {
	if c.NewLinksPerPage < 0 {
		bad("seeder.new_links_per_page", "must not be negative, got %d", c.NewLinksPerPage)
	}
	if c.FrontierBudget < 0 {
		bad("seeder.frontier_budget", "must not be negative, got %d", c.FrontierBudget)
	}
	if c.FrontierOverflow != OverflowPark && c.FrontierOverflow != OverflowDrop {
		bad("seeder.frontier_overflow", "must be %q or %q, got %s", OverflowPark, OverflowDrop, excerpt.Quote(c.FrontierOverflow))
	}
	if c.FrontierLowWater < 0 {
		bad("seeder.frontier_low_water", "must not be negative, got %d", c.FrontierLowWater)
	}
	if c.BackupEvery < 0 {
		bad("seeder.backup_every", "must not be negative, got %d", c.BackupEvery)
	}
	if c.FrontierBudget > 0 && c.FrontierLowWater > c.FrontierBudget {
		bad("seeder.frontier_low_water", "must not exceed seeder.frontier_budget (%d), got %d", c.FrontierBudget, c.FrontierLowWater)
	}
}
