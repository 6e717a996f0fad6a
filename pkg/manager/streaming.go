package manager

import (
	"fmt"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// maxProbeShift caps the doubling of the gap between two probes of a
// streaming site: at most 2^6 = 64 batches.
const maxProbeShift = 6

// nextProbe is the first batch that may probe a site flagged as
// streaming: one batch after the harvest that gave it up, then twice as
// many batches after each probe that was cut again (1, 2, 4, ... up to
// 64): a host that streams forever costs a handful of requests over a
// crawl, and one that comes back is crawled again soon after.
func nextProbe(s *linkgraph.Streaming) int {
	return s.Last + 1<<min(max(s.Probes, 0), maxProbeShift)
}

// streamingSites reads the record of every site with candidates and
// returns, for each one flagged as streaming, how many of its pages the
// batch may take: 1 (its probe) from the batch nextProbe on, else 0.
// Taken in profit order, the one page is the site's best-valued
// candidate. The URLs that links in truncated bodies added to the site
// wait with the others.
func streamingSites(tx *linkgraph.Tx, v *graphView, batch int) (map[uint32]int32, error) {
	seen := map[uint32]bool{}
	var out map[uint32]int32
	for i := range v.cands {
		id := v.cands[i].site
		if seen[id] {
			continue
		}
		seen[id] = true
		s, err := tx.Site(uint64(id))
		if err != nil {
			return nil, fmt.Errorf("streaming sites: %w", err)
		}
		if s.Streaming == nil {
			continue
		}
		if out == nil {
			out = map[uint32]int32{}
		}
		out[id] = 0
		if batch >= nextProbe(s.Streaming) {
			out[id] = 1
		}
	}
	return out, nil
}

// streamingFate says why a flagged site's candidate waits (explain).
func streamingFate(allowed int32) string {
	if allowed == 0 {
		return "its site is flagged as streaming and its next probe is not due in this batch (see streaming above)"
	}
	return "its site is flagged as streaming: the batch takes one probe URL of it, and a better-valued one is the probe"
}

// describeStreaming is explain's line on the site's streaming flag, ""
// when there is nothing to say.
func describeStreaming(s *linkgraph.Site, batch, maxStreaming int) string {
	f := s.Streaming
	if f == nil {
		if s.Streak == 0 {
			return ""
		}
		return fmt.Sprintf("not flagged: its host's last %d responses were cut (the flag is set at harvester.max_streaming %d)", s.Streak, maxStreaming)
	}
	probe := fmt.Sprintf("the next batch (%d) takes one probe URL of the site, its best-valued", batch)
	if n := nextProbe(f); batch < n {
		probe = fmt.Sprintf("no URL of the site before batch %d (the next batch is %d), then one probe URL", n, batch)
	}
	return fmt.Sprintf("flagged since batch %d (%s); %d probes cut since, the last in batch %d; %s, until a response comes whole",
		f.Since, orNone(f.Reason), f.Probes, f.Last, probe)
}
