package manager

import (
	"fmt"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// maxProbeShift caps the doubling of the time between two probes of a
// streaming site: at most 2^3 = 8 times manager.min_revisit.
const maxProbeShift = 3

// probeDue tells whether a batch numbered batch, made at now, may probe a
// site flagged as streaming, and if not, when it may: the first probe in
// the batch after the harvest that gave the host up (the host may have
// streamed for a moment); after a probe cut again, not before
// manager.min_revisit has passed since it, then twice that after each
// further one cut (up to 8 times). A host that streams forever costs
// max_streaming + 1 requests in a crawl shorter than min_revisit, and one
// request a week or less after that (with the default min_revisit);
// one that comes back is crawled as before once a probe comes whole.
func probeDue(f *linkgraph.Streaming, batch int, now time.Time, minRevisit time.Duration) (bool, string) {
	if batch <= f.Last {
		return false, fmt.Sprintf("batch %d", f.Last+1)
	}
	if f.Probes == 0 || f.At.IsZero() {
		return true, ""
	}
	at := f.At.Add(minRevisit << min(f.Probes-1, maxProbeShift))
	if now.Before(at) {
		return false, at.UTC().Format(time.RFC3339)
	}
	return true, ""
}

// streamingSites reads the record of every site with candidates and
// returns, for each one flagged as streaming, how many of its pages the
// batch may take: 1 (its probe) when probeDue, else 0.
// Taken in profit order, the one page is the site's best-valued
// candidate. The URLs that links in truncated bodies added to the site
// wait with the others.
func streamingSites(v *graphView, batch int, now time.Time, minRevisit time.Duration) (map[uint32]int32, error) {
	seen := map[uint32]bool{}
	var out map[uint32]int32
	for i := range v.cands {
		id := v.cands[i].site
		if seen[id] {
			continue
		}
		seen[id] = true
		s, err := v.sites.site(id)
		if err != nil {
			return nil, fmt.Errorf("streaming sites: %w", err)
		}
		if s.streaming == nil {
			continue
		}
		if out == nil {
			out = map[uint32]int32{}
		}
		out[id] = 0
		if due, _ := probeDue(s.streaming, batch, now, minRevisit); due {
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
func describeStreaming(s *linkgraph.Site, batch, maxStreaming int, now time.Time, minRevisit time.Duration) string {
	f := s.Streaming
	if f == nil {
		if s.Streak == 0 {
			return ""
		}
		return fmt.Sprintf("not flagged: its host's last %d responses were cut (the flag is set at harvester.max_streaming %d)", s.Streak, maxStreaming)
	}
	probe := fmt.Sprintf("the next batch (%d) takes one probe URL of the site, its best-valued", batch)
	if due, when := probeDue(f, batch, now, minRevisit); !due {
		probe = fmt.Sprintf("no URL of the site before %s (the next batch is %d), then one probe URL", when, batch)
	}
	return fmt.Sprintf("flagged since batch %d (%s); %d probes cut since, the last in batch %d; %s, until a response comes whole",
		f.Since, orNone(f.Reason), f.Probes, f.Last, probe)
}
