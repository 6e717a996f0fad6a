package seeder

import (
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestUpgradeToHTTPS: a permanent redirect of an http page to the same
// URL on https marks its site as upgraded, and the links of later
// batches to the http site are taken on https directly; a page the http
// site serves again clears the mark.
func TestUpgradeToHTTPS(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	addSeeds(t, col, cfg, "http://a.cl/p", "http://b.cl/", "http://c.cl/x", "http://a.cl/z")
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	writeBatch(t, col, 1, testBatch{
		urls: []string{"http://a.cl/p", "http://b.cl/", "http://c.cl/x"},
		docs: []*parsed.Doc{
			{URL: "http://a.cl/p", Status: 301, Fetched: t0, Redirect: "https://a.cl/p"},
			{URL: "http://b.cl/", Status: 200, Fetched: t0, Hash: "b", Links: []parsed.Link{{URL: "http://a.cl/q"}}},
			// To another path: not an upgrade.
			{URL: "http://c.cl/x", Status: 301, Fetched: t0, Redirect: "https://c.cl/"},
		},
	})
	s := runBatch(t, col, cfg, 1, false)
	if s.Upgraded != 1 || s.Folded != 2 {
		t.Errorf("summary: %d sites upgraded, %d pending URLs moved, want 1 and 2 (a.cl/z, a.cl/q)", s.Upgraded, s.Folded)
	}
	g := readGraph(t, col)
	if a := g.sites["http://a.cl"]; a.Upgrade != "https://a.cl" {
		t.Errorf("http://a.cl upgrade %q", a.Upgrade)
	}
	if c := g.sites["http://c.cl"]; c.Upgrade != "" {
		t.Errorf("http://c.cl upgrade %q", c.Upgrade)
	}
	// The site's pending URLs move to https, those of batch 1's own
	// links too (prepared before it learned the upgrade).
	for _, u := range []string{"http://a.cl/z", "http://a.cl/q"} {
		if d := g.doc(t, u); d.State != linkgraph.StateExcluded || d.Reason != ExcludedHTTPS {
			t.Errorf("%s: %s %q, want excluded %q", u, d.State, d.Reason, ExcludedHTTPS)
		}
		if d := g.doc(t, "https"+u[4:]); d.State != linkgraph.StatePending {
			t.Errorf("https twin of %s: %s", u, d.State)
		}
	}

	t1 := t0.Add(time.Hour)
	writeBatch(t, col, 2, testBatch{
		urls: []string{"http://b.cl/"},
		docs: []*parsed.Doc{{URL: "http://b.cl/", Status: 200, Fetched: t1, Hash: "b", Links: []parsed.Link{
			{URL: "http://a.cl/r"}, {URL: "http://a.cl/q"}, {URL: "http://c.cl/y"},
		}}},
	})
	runBatch(t, col, cfg, 2, false)
	g = readGraph(t, col)
	if _, ok := g.docs["http://a.cl/r"]; ok {
		t.Error("http://a.cl/r taken on http after the upgrade")
	}
	for _, u := range []string{"https://a.cl/r", "https://a.cl/q", "http://c.cl/y"} {
		if _, ok := g.docs[u]; !ok {
			t.Errorf("%s not taken", u)
		}
	}
	want := map[string]bool{"https://a.cl/r": true, "https://a.cl/q": true, "http://c.cl/y": true}
	for _, u := range g.out["http://b.cl/"] {
		delete(want, u)
	}
	if len(want) != 0 {
		t.Errorf("b.cl/ out-links %v", g.out["http://b.cl/"])
	}

	// The http site serves a page again: the mark goes, and the URLs
	// it moved come back.
	addSeeds(t, col, cfg, "http://a.cl/new")
	writeBatch(t, col, 3, testBatch{
		urls: []string{"http://a.cl/new"},
		docs: []*parsed.Doc{{URL: "http://a.cl/new", Status: 200, Fetched: t1.Add(time.Hour), Hash: "q"}},
	})
	if s := runBatch(t, col, cfg, 3, false); s.Downgraded != 1 {
		t.Errorf("summary: %d downgraded, want 1", s.Downgraded)
	}
	g = readGraph(t, col)
	if a := g.sites["http://a.cl"]; a.Upgrade != "" {
		t.Errorf("http://a.cl upgrade %q after a page", a.Upgrade)
	}
	if d := g.doc(t, "http://a.cl/z"); d.State != linkgraph.StatePending {
		t.Errorf("http://a.cl/z %s %q after the site served a page", d.State, d.Reason)
	}
}
