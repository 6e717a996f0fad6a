package main

import (
	"fmt"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/manager"
)

// recordMetrics fills a manager run's metrics from its result
// (docs/operations.md, "Metrics").
func recordMetrics(m *command.StageMetrics, r *manager.Result) {
	if m == nil || r == nil {
		return
	}
	m.SetBatch(r.Batch, r.URLs, r.Elapsed.Seconds(), -1)
	m.Set("batch_sites", "Sites of the batch the manager's last run wrote.", float64(r.Sites))
	m.Set("manager_candidates", "Frontier pages the manager's last run could schedule (the frontier as the manager sees it).", float64(r.Stats.Candidates))
	m.SetBy("manager_urls", "URLs of the manager's last batch, new or revisits.", "kind", map[string]int{"new": r.New, "revisit": r.Revisits})
}

// batchSpace returns the check of a batch's expected size on disk
// (manager.Options.Fits): a batch of n URLs takes n times the bytes per
// URL the last five harvested batches took (their directories and text
// segments), and must leave collection.min_free free. It fails at once,
// before graph.db is read, when the disk is already at the limit.
func batchSpace(col *collection.Collection, cfg config.Config) (func(urls int) error, error) {
	if err := command.CheckDisk(col.Dir, cfg, 0, ""); err != nil {
		return nil, err
	}
	perURL, n, err := col.BytesPerURL(5)
	if err != nil {
		return nil, err
	}
	return func(urls int) error {
		hint := collection.DiskFullHint
		if n > 0 {
			hint = fmt.Sprintf("a batch takes about %d bytes per URL (measured on the last %d batches): lower manager.batch_size (%d), or %s",
				perURL, n, cfg.Manager.BatchSize, collection.DiskFullHint)
		}
		return command.CheckDisk(col.Dir, cfg, perURL*int64(urls), hint)
	}, nil
}
