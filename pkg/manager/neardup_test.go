package manager

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// TestNearDuplicateWeight: a page the seeder found to be a near-duplicate
// of a fetched page (Doc.NearDup) has its profit multiplied by
// manager.near_duplicate_weight, and explain says so.
func TestNearDuplicateWeight(t *testing.T) {
	f := newFixture(t)
	f.add(
		page{url: "http://a.cl/", state: linkgraph.StateFetched, visits: 1, first: daysAgo(40), fetched: daysAgo(40)},
		page{url: "http://espejo.cl/", state: linkgraph.StateFetched, visits: 1, first: daysAgo(40), fetched: daysAgo(40)},
		page{url: "http://a.cl/print", links: nil},
	)
	f.update(func(tx *linkgraph.Tx) error {
		for _, u := range []string{"http://espejo.cl/", "http://a.cl/print"} {
			d, err := tx.Doc(f.ids[u])
			if err != nil {
				return err
			}
			d.NearDup = f.ids["http://a.cl/"]
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		return nil
	})
	orig, mirror := f.explain("http://a.cl/"), f.explain("http://espejo.cl/")
	if orig.NearDup != "" || orig.NearDupWeight != 0 {
		t.Errorf("a.cl/: near-duplicate %q, weight %g", orig.NearDup, orig.NearDupWeight)
	}
	want := (mirror.VAfter - mirror.VNow) * f.cfg.Manager.NearDuplicateWeight
	if mirror.NearDup != "http://a.cl/" || mirror.NearDupWeight != 0.1 || !approx(mirror.Profit, want) || !(mirror.Profit < orig.Profit) {
		t.Errorf("espejo.cl/: near-duplicate %q, weight %g, profit %g (want %g; a.cl/ %g)", mirror.NearDup, mirror.NearDupWeight, mirror.Profit, want, orig.Profit)
	}
	var out bytes.Buffer
	mirror.Print(&out)
	if !strings.Contains(out.String(), "near-duplicate of  http://a.cl/") || !strings.Contains(out.String(), "times 0.1") {
		t.Errorf("explain output:\n%s", out.String())
	}
	// Weight 1 turns it off.
	f.cfg.Manager.NearDuplicateWeight = 1
	if ex := f.explain("http://a.cl/print"); ex.NearDupWeight != 0 || !approx(ex.Profit, ex.VAfter-ex.VNow) {
		t.Errorf("weight 1: %+v", ex)
	}
}
