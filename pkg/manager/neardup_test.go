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
		page{url: "http://espejo.cl/nueva"},
		page{url: "http://b.cl/nueva"},
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
	// A site the seeder found to mirror a.cl: its pages, fetched or not,
	// get the weight once.
	f.update(func(tx *linkgraph.Tx) error {
		d, err := tx.Doc(f.ids["http://espejo.cl/"])
		if err != nil {
			return err
		}
		a, err := tx.Doc(f.ids["http://a.cl/"])
		if err != nil {
			return err
		}
		s, err := tx.Site(d.Site)
		if err != nil {
			return err
		}
		s.MirrorOf = a.Site
		return tx.PutSite(s)
	})
	pending, other := f.explain("http://espejo.cl/nueva"), f.explain("http://b.cl/nueva")
	if pending.Mirror != "http://a.cl" || !approx(pending.Profit, (pending.VAfter-pending.VNow)*0.1) || !approx(other.Profit, other.VAfter-other.VNow) {
		t.Errorf("mirror's new page: mirror of %q, profit %g of %g; another site's %g of %g", pending.Mirror, pending.Profit, pending.VAfter-pending.VNow, other.Profit, other.VAfter-other.VNow)
	}
	if again := f.explain("http://espejo.cl/"); !approx(again.Profit, want) {
		t.Errorf("a mirror's near-duplicate: profit %g, want %g (the weight once)", again.Profit, want)
	}
	out.Reset()
	pending.Print(&out)
	if !strings.Contains(out.String(), "mirror of  http://a.cl") || !strings.Contains(out.String(), "a page of a mirror site") {
		t.Errorf("explain output:\n%s", out.String())
	}
	// In the batch, the mirror's new page comes after the other site's.
	res := f.mustRun()
	_, entries := readBatch(t, f.col, res.Batch)
	pos := map[string]int{}
	for i, e := range entries {
		pos[e.URL] = i + 1
	}
	if pos["http://b.cl/nueva"] == 0 || pos["http://espejo.cl/nueva"] != 0 && pos["http://espejo.cl/nueva"] < pos["http://b.cl/nueva"] {
		t.Errorf("batch order: %v", pos)
	}
	// Weight 1 turns it off.
	f.cfg.Manager.NearDuplicateWeight = 1
	if ex := f.explain("http://a.cl/print"); ex.NearDupWeight != 0 || !approx(ex.Profit, ex.VAfter-ex.VNow) {
		t.Errorf("weight 1: %+v", ex)
	}
}
