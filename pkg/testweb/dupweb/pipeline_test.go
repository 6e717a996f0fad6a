package dupweb

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/gatherer"
	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/report"
)

// TestPipeline: the generated web harvested into WARC files, gathered by
// the gatherer (text, language, simhash in docs.jsonl) and read by the
// report: the report's duplicate counts and mirrors are those of the
// truth, as far as TestNearDuplicateGroups and TestMirrors say they are
// found.
func TestPipeline(t *testing.T) {
	gen := Generate(Config{Seed: 2})
	col, err := collection.Create(t.TempDir(), config.Render(config.Defaults()))
	if err != nil {
		t.Fatal(err)
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	pages := make([]gathertest.Page, len(gen))
	for i, p := range gen {
		pages[i] = gathertest.Page{DocID: uint64(i + 1), URL: p.URL, Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: p.HTML}
	}
	b := gathertest.Batch(t, col, 1, pages)
	o, err := gatherer.OptionsFromConfig(config.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	o.BatchDir, o.TextDir = b.Dir, col.TextPath()
	sum, err := gatherer.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.Collect(context.Background(), col, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := d.Web
	mirrors := map[string]string{}
	for _, p := range gen {
		if p.Kind == KindMirror {
			mirrors[p.Site] = gen[p.Group].Site
		}
	}
	t.Logf("gathered: languages %v; report: %d pages, %d exact and %d near-duplicates in %d groups, %d mirrors",
		sum.Languages, w.Pages, w.ExactDuplicates, w.NearDuplicates, w.NearGroups, len(w.Mirrors))
	if w.Pages != len(gen) || w.WithText != len(gen) {
		t.Errorf("%d pages (%d with text), want %d", w.Pages, w.WithText, len(gen))
	}
	if w.NearDuplicates+w.ExactDuplicates < len(gen)/10 {
		t.Errorf("%d exact and %d near-duplicates among %d pages", w.ExactDuplicates, w.NearDuplicates, len(gen))
	}
	if 2*len(w.Mirrors) < len(mirrors) { // half of them at least (TestMirrors)
		t.Errorf("mirrors %+v, want most of those of %v", w.Mirrors, mirrors)
	}
	for _, m := range w.Mirrors {
		if mirrors[m.Site] != m.Of {
			t.Errorf("%s found to mirror %s", m.Site, m.Of)
		}
	}
}
