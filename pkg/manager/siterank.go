package manager

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/sitegraph"
)

// Global site rank (docs/manager.md, "Global site rank"). A partition of
// a web split over K collections knows its own pages and their links,
// and of the rest of the web only the links other partitions sent it,
// without their source pages: its PageRank misses the rank that flows
// into its sites from the others'. Every partition publishes its site
// graph (pkg/sitegraph); the manager ranks the sites over the union of
// its own and the newest one of every peer (global) and over its own
// alone (local), and multiplies the intrinsic quality of every page by
// its site's global rank over its local rank: the page-level order
// within a site stays the partition's own, the weight of the site
// becomes the whole web's. With no peer graph yet, or
// manager.global_site_rank false, nothing changes.

// globalSites is the factor of each site of graph.db, by site id.
type globalSites struct {
	factor []float64 // site id → global rank / local rank (1 for none)
	rank   []float64 // site id → global rank
	note   string
}

// loadGlobalSites reads this partition's site graph from graph.db and
// the newest one of every peer (its crawl.partition_peers' exchange
// directories and the copies in col's exchange/in/), and ranks the
// sites. Nil outside partitioned collections, with global_site_rank
// off, or while no peer has published one.
func loadGlobalSites(tx *linkgraph.Tx, col string, cfg *config.Config, now time.Time, log *slog.Logger) (*globalSites, error) {
	part := cfg.Crawl.PartitionOf()
	if part.Whole() || !cfg.Manager.GlobalSiteRank {
		return nil, nil
	}
	t0 := time.Now()
	peers, warn := sitegraph.Peers(col, part, cfg.Crawl.PartitionPeers)
	for _, err := range warn {
		log.Warn("site graph skipped", "err", err)
	}
	if len(peers) == 0 {
		log.Info("global site rank: no site graph from another partition yet; ordering by this partition's graph alone")
		return nil, nil
	}
	own, err := sitegraph.FromTx(tx, part, now)
	if err != nil {
		return nil, err
	}
	all := []*sitegraph.Graph{own}
	var ages []string
	for _, i := range slices.Sorted(maps.Keys(peers)) {
		g := peers[i]
		all = append(all, g)
		ages = append(ages, fmt.Sprintf("%d: %s old, %d sites, %d linked pairs", i, now.Sub(g.Written).Round(time.Second), len(g.Sites), len(g.Edges)))
	}
	d := cfg.Manager.Damping
	global := sitegraph.Rank(all, d)
	local := sitegraph.Rank(all[:1], d)
	gs := &globalSites{factor: make([]float64, tx.LastSiteID()+1), rank: make([]float64, tx.LastSiteID()+1)}
	for i := range gs.factor {
		gs.factor[i] = 1
	}
	if err := tx.ForEachSiteKey(func(key []byte, id uint64) error {
		if id < uint64(len(gs.factor)) {
			k := string(key)
			gs.rank[id] = global.Of(k)
			gs.factor[id] = gs.rank[id] / local.Of(k)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	gs.note = fmt.Sprintf("global site rank over %d sites, %d linked pairs (site graphs of partitions %s)", global.Sites, global.Edges, strings.Join(ages, "; "))
	log.Info("global site rank", "sites", global.Sites, "pairs", global.Edges, "iterations", global.Iter, "peers", len(peers), "elapsed", time.Since(t0).Round(time.Millisecond))
	return gs, nil
}

// apply returns the estimate with every page's value multiplied by its
// site's factor and scaled to a largest value of 1; est itself (whose
// state an estimator may save) is left as it was.
func (gs *globalSites) apply(v *graphView, est *estimate) *estimate {
	if gs == nil {
		return est
	}
	out := &estimate{val: make([]float64, len(est.val)), save: est.save, notes: append(slices.Clone(est.notes), gs.note)}
	for p, x := range est.val {
		out.val[p] = x / est.scale * gs.of(v.site[p])
	}
	out.scaleToMax()
	out.describe = func(p int32) string {
		s, rank := v.site[p], 0.0
		if int(s) < len(gs.rank) {
			rank = gs.rank[s]
		}
		return fmt.Sprintf("%s; × %s for its site (global site rank %s over this partition's %s), / %s",
			est.describe(p), g4(gs.of(s)), g4(rank), g4(rank/gs.of(s)), g4(out.scale))
	}
	return out
}

// of is the factor of site id s.
func (gs *globalSites) of(s uint32) float64 {
	if int(s) < len(gs.factor) {
		return gs.factor[s]
	}
	return 1
}
