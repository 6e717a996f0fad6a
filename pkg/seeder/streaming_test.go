package seeder

import (
	"fmt"
	"testing"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestStreamingFlag follows a site through the harvests of four batches:
// given up as streaming (flag set; the links of its truncated page kept),
// its probe cut again (counted), a batch in which its host was not asked
// (nothing changes), then a whole response (flag cleared).
func TestStreamingFlag(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 0
	cfg.Harvester.MaxStreaming = 3
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/", "http://b.cl/")
	const reason = "streaming: 3 responses in a row cut (last: body cap 2097152 bytes)"
	steps := []struct {
		url    string
		server fetchlog.Server
		links  int // links of a.cl found in the page
		want   *linkgraph.Streaming
		streak int
		set    int
		clear  int
	}{
		{"http://a.cl/", fetchlog.Server{Host: "a.cl", Streak: 3, Streaming: true, GaveUp: reason, Measured: t0}, 20,
			&linkgraph.Streaming{Since: 1, Last: 1, At: t0, Reason: reason}, 3, 1, 0},
		{"http://a.cl/p1", fetchlog.Server{Host: "a.cl", Streak: 4, Streaming: true, GaveUp: "streaming: 4 responses", Measured: t0}, 0,
			&linkgraph.Streaming{Since: 1, Last: 2, At: t0, Probes: 1, Reason: "streaming: 4 responses"}, 4, 0, 0},
		{"http://a.cl/p2", fetchlog.Server{Host: "a.cl", Streak: 4, GaveUp: "3 consecutive failures (last: connect)", Measured: t0}, 0,
			&linkgraph.Streaming{Since: 1, Last: 2, At: t0, Probes: 1, Reason: "streaming: 4 responses"}, 4, 0, 0},
		{"http://a.cl/p3", fetchlog.Server{Host: "a.cl", Streak: 0, Measured: t0}, 0, nil, 0, 0, 1},
	}
	for i, st := range steps {
		id := i + 1
		doc := &parsed.Doc{URL: st.url, Status: 200, Fetched: t0}
		for k := range st.links {
			doc.Links = append(doc.Links, parsed.Link{URL: fmt.Sprintf("http://a.cl/p%d", k+1)})
		}
		writeBatch(t, col, id, testBatch{
			urls:    []string{st.url, "http://b.cl/"},
			servers: []fetchlog.Server{st.server, {Host: "b.cl", Streak: 1, Measured: t0}},
			docs:    []*parsed.Doc{doc, {URL: "http://b.cl/", Status: 200, Fetched: t0}},
		})
		s := runBatch(t, col, cfg, id, false)
		if s.StreamingSet != st.set || s.StreamingCleared != st.clear {
			t.Errorf("batch %d: %d set, %d cleared; want %d, %d", id, s.StreamingSet, s.StreamingCleared, st.set, st.clear)
		}
		if id == 1 && s.NewURLs < st.links {
			t.Errorf("batch 1: %d new URLs, want the %d links of the truncated page kept", s.NewURLs, st.links)
		}
		g := readGraph(t, col)
		a, b := g.sites["http://a.cl"], g.sites["http://b.cl"]
		if fmt.Sprint(a.Streaming) != fmt.Sprint(st.want) || a.Streak != st.streak {
			t.Errorf("batch %d: a.cl streaming %+v streak %d; want %+v %d", id, a.Streaming, a.Streak, st.want, st.streak)
		}
		if b.Streaming != nil || b.Streak != 1 {
			t.Errorf("batch %d: b.cl streaming %+v streak %d; want none, 1", id, b.Streaming, b.Streak)
		}
	}
}
