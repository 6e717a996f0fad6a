package manager

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// TestRevisitCarriesCapture: a revisit entry carries the page's stored
// capture from graph.db (batch version 4), which the harvester, never
// reading graph.db, needs for its revisit records; a batch without one
// stays version 2, and a capture graph.db holds malformed is left out.
func TestRevisitCarriesCapture(t *testing.T) {
	for _, c := range []struct {
		name    string
		capture capture.Capture
		version string
	}{
		{"none", capture.Capture{}, "# wire-batch 2\n"},
		{"stored", capture.Capture{ID: "<urn:uuid:0b2d4e6f-8a1c-4e3b-9d5f-7a2c4e6b8d01>", Date: time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC), Digest: "sha1:S4TIOXVXXYAPNJWQ3I7J2UZHJZFGMWRS"}, "# wire-batch 4\n"},
		{"malformed", capture.Capture{ID: "no brackets", Date: time.Date(2026, 11, 2, 15, 4, 5, 0, time.UTC), Digest: "sha1:S4"}, "# wire-batch 2\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := smallWebFixture(t, StrategyBreadthFirst)
			f.update(func(tx *linkgraph.Tx) error {
				d, err := tx.Doc(f.ids["http://b.cl/"])
				if err != nil {
					return err
				}
				d.Capture = c.capture
				return tx.PutDoc(d)
			})
			f.mustRun()
			data, err := os.ReadFile(f.col.Batch(1).File())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), c.version) {
				t.Errorf("batch file starts %.16q, want %q", data, c.version)
			}
			_, entries := readBatch(t, f.col, 1)
			for _, e := range entries {
				want := capture.Capture{}
				if e.URL == "http://b.cl/" && c.capture.Check() == nil {
					want = c.capture
				}
				if e.Capture != want || e.URL == "http://b.cl/" && e.Kind != batch.KindRevisit {
					t.Errorf("%s: %s entry with capture %+v, want %+v", e.URL, e.Kind, e.Capture, want)
				}
			}
		})
	}
}
