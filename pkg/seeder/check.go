package seeder

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// DefaultCheckLimit is how many problems Check reports at most.
const DefaultCheckLimit = 100

// Check verifies a collection without changing it (graph.db is opened
// read-only) and returns the problems found, at most limit (0 means
// DefaultCheckLimit):
//
//   - that graph.db's pages are whole (linkgraph.Graph.CheckPages:
//     every page its buckets reach, then bbolt's Tx.Check); if not, the
//     error is a *linkgraph.DamagedError (collection.ErrDamaged);
//   - every invariant of graph.db that linkgraph.Tx.Check verifies: each
//     id has one URL and back, in-links mirror out-links, the site graph
//     and the frontier set agree with the documents and links, counters
//     and site page counts agree;
//   - every park file that graph.db records exists and holds as many
//     links as its record says;
//   - every batch with a seeded.done marker is recorded as seeded in
//     graph.db;
//   - every page graph.db counts as fetched has its text, or the reason
//     it has none, stored (checkComplete; Requeue repairs it).
//
// The error is for a collection that cannot be read at all.
func Check(col *collection.Collection, timeout time.Duration, limit int) ([]string, error) {
	return check(col, timeout, limit, true)
}

// check is Check; complete says whether the completeness of the text
// store is checked too (this package's tests write batches without
// texts, and check the completeness on its own).
func check(col *collection.Collection, timeout time.Duration, limit int, complete bool) ([]string, error) {
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
	add := func(format string, args ...any) {
		if len(problems) < limit {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	// The pages first: a file that bbolt cannot walk is damaged (one
	// error, exit code 6), not a list of invariants.
	pageProblems, err := g.CheckPages(limit)
	if err != nil {
		return nil, err
	}
	for _, p := range pageProblems {
		add("%s: %v", col.GraphPath(), p)
	}
	if len(pageProblems) > 0 {
		return problems, &linkgraph.DamagedError{Path: col.GraphPath(), What: fmt.Sprintf("bbolt's check found %d problems (listed above)", len(pageProblems))}
	}
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, e := range tx.Check(limit) {
			add("%v", e)
		}
		if err := tx.ForEachParked(func(p linkgraph.Parked) error {
			path := filepath.Join(col.Dir, FrontierDir, p.File)
			n := 0
			if err := readPark(path, func(parkedLink) error { n++; return nil }); err != nil {
				add("park file %d: %v", p.Seq, err)
			} else if n != p.Links {
				add("park file %d (%s): %d links, its record says %d", p.Seq, p.File, n, p.Links)
			}
			return nil
		}); err != nil {
			return err
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
		if !complete {
			return nil
		}
		if err := checkComplete(tx, col, add); err != nil {
			add("text store %s: %v", col.TextPath(), err)
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
	Batches  BatchCounts            `json:"batches"`
	Sitemaps linkgraph.SitemapStats `json:"sitemaps"`
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
		if r.Sitemaps, err = tx.SitemapStats(); err != nil {
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
	fmt.Fprintf(w, "sites    %d (%d linked pairs)\n", r.Sites, r.SiteLinks)
	fmt.Fprintf(w, "links    %d\n", r.Links)
	fmt.Fprintf(w, "frontier %d urls waiting; %d links parked in %d files\n", r.Frontier, r.Parked.Links, r.Parked.Files)
	sm := r.Sitemaps
	fmt.Fprintf(w, "sitemaps %d (%d read, %d sites publish one); %d urls found in sitemaps, %d only there (%d of them fetched); %d with a lastmod, %d stale by it\n",
		sm.Sitemaps, sm.Read, sm.Sites, sm.Found, sm.Only, sm.OnlyFetched, sm.WithLastMod, sm.StaleLastMod)
	fmt.Fprintf(w, "batches  %d: %d seeded, %d gathered, %d harvested, %d managed (graph.db records %d seeded)\n",
		r.Batches.Total, r.Batches.Seeded, r.Batches.Gathered, r.Batches.Harvested, r.Batches.Managed, r.Batches.Recorded)
}
