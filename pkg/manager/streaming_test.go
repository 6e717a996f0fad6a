package manager

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// streamingFixture is a web of two sites, a.cl with five pages (its home
// page linked from every other page, so the best valued) and b.cl with
// two.
func streamingFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.cfg.Manager.Strategy = StrategyPageRank
	f.add(
		page{url: "http://a.cl/", links: []string{"http://a.cl/1", "http://a.cl/2", "http://b.cl/"}},
		page{url: "http://a.cl/1", depth: 1, links: []string{"http://a.cl/"}},
		page{url: "http://a.cl/2", depth: 1, links: []string{"http://a.cl/", "http://a.cl/3"}},
		page{url: "http://a.cl/3", depth: 2, links: []string{"http://a.cl/"}},
		page{url: "http://a.cl/4", depth: 2, links: []string{"http://a.cl/"}},
		page{url: "http://b.cl/", links: []string{"http://b.cl/1", "http://a.cl/"}},
		page{url: "http://b.cl/1", depth: 1},
	)
	return f
}

// plan makes the plan of batch number id without writing it.
func (f *fixture) plan(id int) *plan {
	f.t.Helper()
	var p *plan
	f.view(func(tx *linkgraph.Tx) error {
		var err error
		p, err = makePlan(context.Background(), tx, &f.cfg, testNow, slog.New(slog.DiscardHandler), 0, id, nil, nil)
		return err
	})
	return p
}

func sitePages(entries []batch.Entry, site string) []string {
	var out []string
	for _, e := range entries {
		if e.Site == site {
			out = append(out, e.URL)
		}
	}
	return out
}

// A site flagged as streaming gets its best-valued URL as its probe in a
// batch where one is due (the batch after the harvest that flagged it,
// then min_revisit after a probe cut again, doubling up to 8 times), and
// nothing in the others; the other site is not touched.
func TestStreamingProbe(t *testing.T) {
	f := streamingFixture(t)
	free := f.plan(1)
	all := sitePages(free.entries, "http://a.cl")
	if len(all) != 5 || len(sitePages(free.entries, "http://b.cl")) != 2 {
		t.Fatalf("unflagged batch: a.cl %v, %d entries", all, len(free.entries))
	}
	best := all[0] // the batch is in profit order
	tests := []struct {
		name  string
		flag  linkgraph.Streaming
		batch int
		probe bool
	}{
		{"the batch after the flag", linkgraph.Streaming{Since: 3, Last: 3, At: testNow.Add(-time.Minute)}, 4, true},
		{"later", linkgraph.Streaming{Since: 3, Last: 3, At: testNow.Add(-time.Minute)}, 9, true},
		{"the flag's own batch number", linkgraph.Streaming{Since: 3, Last: 3, At: testNow.Add(-time.Minute)}, 3, false},
		{"one probe cut: not before min_revisit", linkgraph.Streaming{Since: 3, Last: 4, Probes: 1, At: testNow.Add(-6 * day)}, 50, false},
		{"one probe cut: due after min_revisit", linkgraph.Streaming{Since: 3, Last: 4, Probes: 1, At: testNow.Add(-7 * day)}, 5, true},
		{"three probes cut: four times min_revisit", linkgraph.Streaming{Since: 3, Last: 10, Probes: 3, At: testNow.Add(-27 * day)}, 11, false},
		{"three probes cut: due", linkgraph.Streaming{Since: 3, Last: 10, Probes: 3, At: testNow.Add(-28 * day)}, 11, true},
		{"the gap stops doubling at 8 times", linkgraph.Streaming{Since: 3, Last: 10, Probes: 40, At: testNow.Add(-56 * day)}, 11, true},
		{"a record without its time: by batch", linkgraph.Streaming{Since: 3, Last: 10, Probes: 2}, 11, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flag := tt.flag
			f.site("http://a.cl", func(s *linkgraph.Site) { s.Streaming, s.Streak = &flag, 3 })
			p := f.plan(tt.batch)
			got := sitePages(p.entries, "http://a.cl")
			want := []string(nil)
			if tt.probe {
				want = []string{best}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("a.cl in batch %d: %v, want %v", tt.batch, got, want)
			}
			if held := 5 - len(want); p.stats.StreamingHeld != held {
				t.Errorf("streaming held %d, want %d", p.stats.StreamingHeld, held)
			}
			if n := len(sitePages(p.entries, "http://b.cl")); n != 2 {
				t.Errorf("b.cl has %d pages, want 2", n)
			}
			// The batch's servers.jsonl gives the harvester the streak.
			var streak int
			for _, s := range p.servers {
				if s.Host == "a.cl" {
					streak = s.Streak
				}
			}
			if tt.probe && streak != 3 {
				t.Errorf("servers.jsonl streak of a.cl %d, want 3 (%+v)", streak, p.servers)
			}
		})
	}
}

// Explain shows the site's flag and why the site's other URLs wait.
func TestExplainStreaming(t *testing.T) {
	f := streamingFixture(t)
	f.site("http://a.cl", func(s *linkgraph.Site) {
		s.Streak = 3
		s.Streaming = &linkgraph.Streaming{Since: 0, Last: 0, At: testNow.Add(-time.Hour), Reason: "streaming: 3 responses in a row cut (last: body cap 2097152 bytes)"}
	})
	// The next batch is 1: its probe is due.
	probe := f.explain("http://a.cl/")
	if !probe.InBatch || !strings.Contains(probe.Streaming, "flagged since batch 0 (streaming: 3 responses in a row cut") ||
		!strings.Contains(probe.Streaming, "the next batch (1) takes one probe URL of the site, its best-valued") {
		t.Errorf("probe: in batch %v, streaming %q", probe.InBatch, probe.Streaming)
	}
	other := f.explain("http://a.cl/3")
	if other.InBatch || !strings.Contains(other.Verdict, "flagged as streaming: the batch takes one probe URL of it") {
		t.Errorf("other: in batch %v, verdict %q", other.InBatch, other.Verdict)
	}
	var out strings.Builder
	if err := other.Print(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "streaming  flagged since batch 0") {
		t.Errorf("explain output:\n%s", out.String())
	}
	// A probe cut an hour ago: none before a week after it.
	f.site("http://a.cl", func(s *linkgraph.Site) { s.Streaming.Probes = 1 })
	if ex := f.explain("http://a.cl/"); ex.InBatch || !strings.Contains(ex.Streaming, "no URL of the site before "+testNow.Add(-time.Hour+7*day).UTC().Format(time.RFC3339)+" (the next batch is 1)") ||
		!strings.Contains(ex.Verdict, "next probe is not due") {
		t.Errorf("not due: in batch %v, streaming %q, verdict %q", ex.InBatch, ex.Streaming, ex.Verdict)
	}
	// Not flagged, but its host streamed twice.
	f.site("http://a.cl", func(s *linkgraph.Site) { s.Streaming, s.Streak = nil, 2 })
	if ex := f.explain("http://a.cl/"); !strings.Contains(ex.Streaming, "not flagged: its host's last 2 responses were cut") {
		t.Errorf("unflagged: streaming %q", ex.Streaming)
	}
	if ex := f.explain("http://b.cl/"); ex.Streaming != "" {
		t.Errorf("b.cl: streaming %q", ex.Streaming)
	}
}

// A frontier that holds nothing but the URLs of a streaming site whose
// probe is not due has nothing to do now: the probe waits for its time
// (the crawl ends rather than asking the host again and again).
func TestStreamingProbeWhenNothingElse(t *testing.T) {
	f := newFixture(t)
	f.add(page{url: "http://a.cl/", links: []string{"http://a.cl/1"}}, page{url: "http://a.cl/1", depth: 1})
	f.site("http://a.cl", func(s *linkgraph.Site) {
		s.Streaming, s.Streak = &linkgraph.Streaming{Since: 5, Last: 5, Probes: 2, At: testNow.Add(-time.Hour)}, 5
	})
	p := f.plan(6)
	if got := sitePages(p.entries, "http://a.cl"); len(got) != 0 || p.stats.StreamingHeld != 2 {
		t.Errorf("a.cl %v, %d held; want nothing, 2 held", got, p.stats.StreamingHeld)
	}
}
