package seeder

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// DefaultCheckLimit is how many problems Check reports at most.
const DefaultCheckLimit = 100

// Check verifies a collection without changing it (graph.db is opened
// read-only) and returns the problems found, at most limit (0 means
// DefaultCheckLimit):
//
//   - the invariants of graph.db that linkgraph.Tx.Check verifies;
//   - every document's site record exists and has the key of its URL;
//   - every site's Pages equals the number of its documents;
//   - every batch with a seeded.done marker is recorded as seeded in
//     graph.db.
//
// The error is for a collection that cannot be read at all.
func Check(col *collection.Collection, timeout time.Duration, limit int) ([]string, error) {
	if limit <= 0 {
		limit = DefaultCheckLimit
	}
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	g, err := openGraph(col, true, timeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	var problems []string
	add := func(format string, args ...any) bool {
		if len(problems) < limit {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		return len(problems) < limit
	}
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, e := range tx.Check(limit) {
			add("%v", e)
		}
		sites := map[uint64]*linkgraph.Site{}
		if err := tx.ForEachSite(func(s *linkgraph.Site) error {
			sites[s.ID] = s
			return nil
		}); err != nil {
			return err
		}
		pages := map[uint64]int{}
		if err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			pages[d.Site]++
			s, ok := sites[d.Site]
			switch {
			case !ok:
				// linkgraph's check reports site ids above the counter;
				// this catches a missing record below it.
				add("doc %d: site %d has no record", d.ID, d.Site)
			case s.Key != urlnorm.SiteKey(d.URL):
				add("doc %d: url %s is not on its site %s", d.ID, d.URL, s.Key)
			}
			return nil
		}); err != nil {
			return err
		}
		siteIDs := make([]uint64, 0, len(sites))
		for id := range sites {
			siteIDs = append(siteIDs, id)
		}
		slices.Sort(siteIDs)
		for _, id := range siteIDs {
			if s := sites[id]; s.Pages != pages[id] {
				add("site %d (%s): pages %d, but %d documents", id, s.Key, s.Pages, pages[id])
			}
		}
		for _, id := range ids {
			b := col.Batch(id)
			if !b.Done(collection.StageSeeded) {
				continue
			}
			st, ok, err := tx.Batch(id)
			if err != nil {
				add("batch %s: %v", b.Name(), err)
				continue
			}
			if !ok || st.Seeded.IsZero() {
				add("batch %s: has %s.done but graph.db does not record it as seeded", b.Name(), collection.StageSeeded)
			}
		}
		return nil
	})
	if err != nil {
		return problems, fmt.Errorf("check %s: %w", col.GraphPath(), err)
	}
	return problems, nil
}

// StatsReport counts what a collection holds.
type StatsReport struct {
	linkgraph.Stats
	Batches BatchCounts `json:"batches"`
}

// BatchCounts counts batch directories by the last stage they went
// through, and the batches graph.db records as seeded.
type BatchCounts struct {
	Total     int `json:"total"`
	Managed   int `json:"managed"` // managed, not harvested yet
	Harvested int `json:"harvested"`
	Gathered  int `json:"gathered"`
	Seeded    int `json:"seeded"`
	// Recorded is the number of batches graph.db records as seeded.
	Recorded int `json:"recorded"`
}

// Stats counts documents by state, sites, links and batches, read-only.
func Stats(col *collection.Collection, timeout time.Duration) (*StatsReport, error) {
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	g, err := openGraph(col, true, timeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	r := &StatsReport{}
	err = g.View(func(tx *linkgraph.Tx) error {
		if r.Stats, err = tx.Stats(); err != nil {
			return err
		}
		for _, id := range ids {
			b := col.Batch(id)
			r.Batches.Total++
			switch {
			case b.Done(collection.StageSeeded):
				r.Batches.Seeded++
			case b.Done(collection.StageGathered):
				r.Batches.Gathered++
			case b.Done(collection.StageHarvested):
				r.Batches.Harvested++
			default:
				r.Batches.Managed++
			}
			if st, ok, err := tx.Batch(id); err == nil && ok && !st.Seeded.IsZero() {
				r.Batches.Recorded++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stats %s: %w", col.GraphPath(), err)
	}
	return r, nil
}

// WriteText prints the report for people.
func (r *StatsReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "docs     %d\n", r.Docs)
	for _, st := range []linkgraph.State{linkgraph.StatePending, linkgraph.StateScheduled, linkgraph.StateFetched, linkgraph.StateFailed, linkgraph.StateExcluded} {
		fmt.Fprintf(w, "  %-10s %d\n", st, r.ByState[st])
	}
	fmt.Fprintf(w, "sites    %d\n", r.Sites)
	fmt.Fprintf(w, "links    %d\n", r.Links)
	fmt.Fprintf(w, "batches  %d: %d seeded, %d gathered, %d harvested, %d managed (graph.db records %d seeded)\n",
		r.Batches.Total, r.Batches.Seeded, r.Batches.Gathered, r.Batches.Harvested, r.Batches.Managed, r.Batches.Recorded)
}
