package simulate

import (
	"fmt"
	"slices"
	"strings"
)

// Page-ordering strategies of the paper model (Baeza-Yates et al. 2005,
// §4). The names of the manager's estimators are the manager's own
// (manager.strategy); docs/simulator.md defines each one precisely.
const (
	BreadthFirst     = "breadth-first"         // §4.1: pages in order of discovery
	Backlink         = "backlink"              // §4.1: most in-links from fetched pages first
	BatchPageRank    = "pagerank"              // §4.1 batch PageRank: PageRank of the known graph every K fetches
	PartialPageRank  = "partial-pagerank"      // §4.1: batch PageRank, new pages get Σ PR(parent)/out(parent) meanwhile
	OPIC             = "opic"                  // §4.1: most cash received from fetched pages first
	LargerSitesFirst = "larger-sites-first"    // §4.1: sites with most pending pages first
	HistoricalZero   = "historical-zero"       // §4.2: PageRank of the previous crawl; new pages 0
	HistoricalRandom = "historical-random"     // §4.2: new pages a random PageRank of the previous crawl
	HistoricalParent = "historical-parent"     // §4.2: new pages PR(parent)/out(parent)
	HistoricalOmni   = "historical-omniscient" // §4.2: new pages their true PageRank
	Omniscient       = "omniscient"            // §4.3: the true PageRank of the full graph
	Random           = "random"                // baseline: a random priority per page
)

// Strategies lists every strategy of the paper model, in the order of the
// paper's Table 2 (random first, the omniscient ones last).
func Strategies() []string {
	return []string{Random, Backlink, PartialPageRank, BreadthFirst, BatchPageRank, OPIC, LargerSitesFirst,
		HistoricalZero, HistoricalRandom, HistoricalParent, HistoricalOmni, Omniscient}
}

// Historical reports whether a strategy needs the PageRank of a previous
// crawl.
func Historical(s string) bool { return strings.HasPrefix(s, "historical-") }

// Known reports whether s is a strategy of the paper model.
func Known(s string) bool { return slices.Contains(Strategies(), s) }

// ParseStrategies splits a comma-separated list. "all" means every
// strategy in all, "history" the historical ones of all; unknown names
// (not in all) are an error naming the known ones.
func ParseStrategies(list string, all []string) ([]string, error) {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			for _, s := range all {
				add(s)
			}
		case f == "history":
			for _, s := range all {
				if Historical(s) {
					add(s)
				}
			}
		case slices.Contains(all, f):
			add(f)
		default:
			return nil, fmt.Errorf("unknown strategy %q (want all, history or some of %s)", f, strings.Join(all, ", "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no strategy given (want all, history or some of %s)", strings.Join(all, ", "))
	}
	return out, nil
}
