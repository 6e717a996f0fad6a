package seeder

import (
	"net/http"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/parsed"
)

// TestValidatorTrust: revisits of three sites whose text changes at the
// fifth visit only. The honest one dates its version (Last-Modified the
// time of the change), the lying one sends the time of the request on
// every answer (its unchanged pages come as 2xx with the stored
// payload, which the harvester writes as revisits), the silent one no
// date. The lying site loses the
// manager's trust at its third contradiction (the fourth visit: three
// unchanged texts dated after the visit before); the honest one keeps
// it, its checks agreeing; the silent one has nothing checked.
func TestValidatorTrust(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	sites := []string{"http://honest.cl/", "http://lying.cl/", "http://silent.cl/"}
	addSeeds(t, col, cfg, sites...)
	changeAt := 4 * time.Hour // between the fourth and the fifth visit
	for visit := range 6 {
		at := t0.Add(time.Duration(visit) * time.Hour).Add(time.Minute)
		hash, version := "h1", t0.Add(-24*time.Hour)
		if time.Duration(visit)*time.Hour+time.Minute > changeAt {
			hash, version = "h2", t0.Add(changeAt)
		}
		var docs []*parsed.Doc
		for _, u := range sites {
			lm := ""
			switch u {
			case "http://honest.cl/":
				lm = version.UTC().Format(http.TimeFormat)
			case "http://lying.cl/":
				lm = at.UTC().Format(http.TimeFormat)
			}
			d := &parsed.Doc{URL: u, Status: 200, Fetched: at, MIME: "text/html", Title: "T", Hash: hash, LastModified: lm}
			if u == "http://lying.cl/" && visit > 0 && hash == "h1" {
				// The harvester stores a 2xx with the stored payload as
				// an identical-payload revisit.
				d.Unchanged, d.Revisit = true, true
			}
			docs = append(docs, d)
		}
		id := visit + 1
		writeBatch(t, col, id, testBatch{urls: sites, docs: docs})
		s := runBatch(t, col, cfg, id, false)
		g := readGraph(t, col)
		lying := g.sites["http://lying.cl"].Validators
		wantUntrusted := 0
		if id == 4 {
			wantUntrusted = 1 // the third contradiction
		}
		if s.Untrusted != wantUntrusted {
			t.Errorf("visit %d: %d sites found untrusted, want %d", id, s.Untrusted, wantUntrusted)
		}
		if got, want := lying.Trusted(), id < 4; got != want {
			t.Errorf("visit %d: lying.cl %+v trusted %v, want %v", id, lying, got, want)
		}
		if h := g.sites["http://honest.cl"].Validators; !h.Trusted() || (id > 1 && (h == nil || h.Disagree != 0 || h.Agree != id-1)) {
			t.Errorf("visit %d: honest.cl %+v, want %d agreeing checks", id, h, id-1)
		}
		if v := g.sites["http://silent.cl"].Validators; v != nil {
			t.Errorf("visit %d: silent.cl %+v, want nothing checked", id, v)
		}
	}
	// After six visits: the lying site's fifth (changed, dated now)
	// agreed, its others did not.
	g := readGraph(t, col)
	if v := g.sites["http://lying.cl"].Validators; v == nil || v.Agree != 1 || v.Disagree != 4 {
		t.Errorf("lying.cl %+v, want 1 agreeing, 4 disagreeing", v)
	}
}
