package main

import (
	"time"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// recordMetrics fills a seeder run's metrics from its summary
// (docs/operations.md, "Metrics").
func recordMetrics(m *command.StageMetrics, s *seeder.Summary) {
	if m == nil || s == nil {
		return
	}
	secs := -1.0
	if d, err := time.ParseDuration(s.Elapsed); err == nil {
		secs = d.Seconds()
	}
	m.SetBatch(s.Batch, s.Scheduled, secs, -1)
	m.Set("frontier_urls", "URLs in the frontier (pending, not scheduled) after the seeder's last run.", float64(s.Frontier))
	m.SetCount("seeder_docs_total", "Records the seeder's last run took in.", float64(s.Docs))
	m.SetCount("seeder_new_urls_total", "URLs the seeder's last run added.", float64(s.NewURLs))
	m.SetCount("seeder_new_sites_total", "Sites the seeder's last run added.", float64(s.NewSites))
	m.SetCount("seeder_links_total", "Links the seeder's last run read.", float64(s.Links))
	m.SetCount("seeder_parked_total", "Links to new URLs the seeder's last run parked on disk.", float64(s.Parked))
	m.SetBy("seeder_records", "Records of the seeder's last run by outcome.", "outcome", map[string]int{
		"fetched": s.Fetched, "failed": s.Failed, "excluded": s.Excluded, "pending": s.Pending, "missing": s.Missing})
}
