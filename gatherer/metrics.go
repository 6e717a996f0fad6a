package main

import (
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/gatherer"
)

// recordMetrics fills a gatherer run's metrics from its summary
// (docs/operations.md, "Metrics").
func recordMetrics(m *command.StageMetrics, s *gatherer.Summary) {
	if m == nil || s == nil {
		return
	}
	m.SetBatch(s.Batch, s.Docs, s.Seconds, s.BytesIn)
	m.SetCount("gatherer_docs_total", "Documents the gatherer's last run wrote to docs.jsonl.", float64(s.Docs))
	m.SetCount("gatherer_html_total", "Pages the gatherer's last run parsed as HTML.", float64(s.HTML))
	m.SetCount("gatherer_links_total", "Out-links the gatherer's last run wrote.", float64(s.Links))
	m.SetCount("gatherer_segment_bytes_total", "Bytes of the text segment the gatherer's last run wrote.", float64(s.SegmentBytes))
	m.SetBy("gatherer_errors", "Records of the gatherer's last run that failed, by kind.", "kind", map[string]int{
		"fetch": s.FetchErrors, "read": s.ReadErrors, "unread": s.Unread})
}

// gatherNeed is the room a gathering of b may take: the body bytes of
// its harvest (harvested.done), which bound its text segment and
// docs.jsonl (text is shorter than the pages it comes from; links and
// metadata take a fraction of it). 0 when unknown.
func gatherNeed(b *collection.Batch) int64 {
	var s struct {
		Bytes int64 `json:"bytes"`
	}
	if b.Summary(collection.StageHarvested, &s) != nil {
		return 0
	}
	return s.Bytes
}
