package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/seeder/internal/sample"
)

// sydney splits the new URLs a page src links to (Castillo, Nelli,
// Panconesi, "Crawling the Web with Limited Memory", Figure 2): at most t
// of them (all when t is 0) enter the frontier now, the rest are parked.
// The sample is pseudo-random but reproducible: the t URLs with the
// smallest hash of (src, url), so a batch taken in again parks the same
// links. Both lists keep the page's order.
func sydney(src uint64, cands []candidate, t int) (now, later []candidate) {
	if t <= 0 || len(cands) <= t {
		return cands, nil
	}
	urls := make([]string, len(cands))
	for i, c := range cands {
		urls[i] = c.url
	}
	chosen := sample.Choose(src, urls, t)
	now = make([]candidate, 0, t)
	later = make([]candidate, 0, len(cands)-t)
	for i, c := range cands {
		if chosen[i] {
			now = append(now, c)
		} else {
			later = append(later, c)
		}
	}
	return now, later
}

// ReleaseOptions are the inputs of Release.
type ReleaseOptions struct {
	Collection *collection.Collection
	Config     config.Config
	// All releases every park file, however large the frontier is (the
	// budget still applies: what it does not take is parked again).
	All bool
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
	Logger       *slog.Logger
}

// ReleaseSummary is what a release of parked links did.
type ReleaseSummary struct {
	FrontierBefore uint64         `json:"frontierBefore"` // frontier documents before
	FrontierAfter  uint64         `json:"frontierAfter"`  // and after
	LowWater       int            `json:"lowWater"`       // seeder.frontier_low_water
	Files          int            `json:"files"`          // park files released
	Links          int            `json:"links"`          // parked links read
	NewURLs        int            `json:"newURLs"`        // URLs given an id
	NewExcluded    int            `json:"newExcluded"`    // of which robots.txt forbids
	Known          int            `json:"known"`          // links to URLs known by now (the link is added)
	Stale          int            `json:"stale"`          // links of a page fetched again since (dropped: its new version was taken in)
	Reparked       int            `json:"reparked"`       // links over the budget, parked again
	OutLinks       uint64         `json:"outLinks"`       // links added to the graph
	Rejected       map[string]int `json:"rejected"`       // links kept out, by reason
	Left           int            `json:"left"`           // park files still waiting
	Elapsed        string         `json:"elapsed"`
}

// WriteText prints the summary for people.
func (s *ReleaseSummary) WriteText(w io.Writer) {
	if s.Files == 0 {
		fmt.Fprintf(w, "  release     none: frontier %d (low water %d), %d park files waiting\n", s.FrontierBefore, s.LowWater, s.Left)
		return
	}
	fmt.Fprintf(w, "  release     %d park files, %d links: %d new urls (%d excluded by robots), %d known, %d stale, %d parked again; frontier %d -> %d; %d files waiting\n",
		s.Files, s.Links, s.NewURLs, s.NewExcluded, s.Known, s.Stale, s.Reparked, s.FrontierBefore, s.FrontierAfter, s.Left)
	if len(s.Rejected) > 0 {
		fmt.Fprintf(w, "              rejected %s\n", formatCounts(s.Rejected))
	}
}

// Release takes parked links back into graph.db (docs/frontier.md): park
// files oldest first, while the frontier holds fewer than
// seeder.frontier_low_water documents (every file with All). seeder run
// does the same after each batch.
func Release(ctx context.Context, opts ReleaseOptions) (*ReleaseSummary, error) {
	return withGraph(opts, func(g *linkgraph.Graph, log *slog.Logger) (*ReleaseSummary, error) {
		return release(ctx, g, opts.Collection, opts.Config, opts.All, log)
	})
}

// withGraph runs fn on the collection's graph.db, open for writing under
// the seeder's lock, once the park files no record names are removed:
// the frame of the commands that work on graph.db without a batch
// (release, exchange).
func withGraph[T any](opts ReleaseOptions, fn func(g *linkgraph.Graph, log *slog.Logger) (T, error)) (T, error) {
	var zero T
	log := logger(opts.Logger)
	col := opts.Collection
	lock, err := col.Lock(LockName)
	if err != nil {
		return zero, err
	}
	defer lock.Release()
	g, err := openGraph(col, false, opts.GraphTimeout)
	if err != nil {
		return zero, err
	}
	defer g.Close()
	if err := removeOrphanParks(g, col, log); err != nil {
		return zero, err
	}
	return fn(g, log)
}

// release does Release's work on an open graph, in one transaction; the
// released files are removed after the commit.
func release(ctx context.Context, g *linkgraph.Graph, col *collection.Collection, cfg config.Config, all bool, log *slog.Logger) (*ReleaseSummary, error) {
	start := time.Now()
	s := &ReleaseSummary{LowWater: cfg.Seeder.FrontierLowWater, Rejected: map[string]int{}}
	res, err := newResolver(cfg)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(col.Dir, FrontierDir)
	low := uint64(max(cfg.Seeder.FrontierLowWater, 0))
	// A look first, so that a run with nothing to release writes nothing.
	var recs []linkgraph.Parked
	var fr uint64
	if err := g.View(func(tx *linkgraph.Tx) error {
		if err := tx.ForEachParked(func(p linkgraph.Parked) error {
			recs = append(recs, p)
			return nil
		}); err != nil {
			return err
		}
		fr, err = tx.FrontierSize()
		return err
	}); err != nil {
		return nil, err
	}
	s.FrontierBefore, s.FrontierAfter, s.Left = fr, fr, len(recs)
	if len(recs) == 0 || (!all && fr >= low) {
		s.Elapsed = time.Since(start).Round(time.Millisecond).String()
		return s, nil
	}
	var released []string
	err = g.Update(func(tx *linkgraph.Tx) error {
		in := newIntake(tx, cfg, 0, res, dir)
		defer in.abortPark()
		rel := &releaseRun{in: in, s: s, links: map[uint64][]linkgraph.Target{}}
		for _, p := range recs {
			if !all && fr >= low {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			path := filepath.Join(dir, p.File)
			if err := readPark(path, rel.link); err != nil {
				return fmt.Errorf("release park file %d: %w", p.Seq, err)
			}
			if err := tx.DeleteParked(p.Seq); err != nil {
				return err
			}
			released = append(released, path)
			s.Files++
			s.Left--
			if fr, err = tx.FrontierSize(); err != nil {
				return err
			}
		}
		if err := rel.flush(); err != nil {
			return err
		}
		if _, err := rel.updates.apply(tx); err != nil {
			return err
		}
		if err := in.flushSites(); err != nil {
			return err
		}
		s.NewURLs, s.NewExcluded, s.Reparked = in.counts.newURLs, in.counts.newExcluded, in.counts.parked
		for k, n := range in.counts.rejected {
			s.Rejected[k] += n
		}
		if in.counts.parked > 0 {
			s.Left++
		}
		if s.FrontierAfter, err = tx.FrontierSize(); err != nil {
			return err
		}
		return in.finishPark(0)
	})
	if err != nil {
		return nil, err
	}
	for _, path := range released {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("cannot remove released park file; the next run will", "path", path, "err", err)
		}
	}
	s.Elapsed = time.Since(start).Round(time.Millisecond).String()
	if s.Files > 0 {
		log.Debug("parked links released", "files", s.Files, "links", s.Links, "new_urls", s.NewURLs, "frontier", s.FrontierAfter)
	}
	return s, nil
}

// releaseRun takes parked links in, one at a time.
type releaseRun struct {
	in      *intake
	s       *ReleaseSummary
	updates targetUpdates
	links   map[uint64][]linkgraph.Target // source doc → links to add

	src *linkgraph.Doc // the last source page read
}

// link takes one parked link in: the target URL gets an id (unless it is
// known by now, out of scope, over the limits, or the source page has been
// fetched again since: then its new version decided) and the link is
// added to the source's out-links.
func (r *releaseRun) link(l parkedLink) error {
	in := r.in
	r.s.Links++
	if r.src == nil || r.src.ID != l.Src {
		d, err := in.tx.Doc(l.Src)
		if err != nil {
			return fmt.Errorf("parked link from doc %d: %w", l.Src, err)
		}
		r.src = d
	}
	if !r.src.Fetched.Equal(l.Fetched) {
		r.s.Stale++
		return nil
	}
	u, rej := in.resolve(l.URL)
	if rej != nil {
		in.reject(rej)
		return nil
	}
	if id, ok := in.tx.LookupURL(u); ok {
		r.s.Known++
		site, err := in.siteOf(u)
		if err != nil {
			return err
		}
		r.links[l.Src] = append(r.links[l.Src], linkgraph.Target{Doc: id, Site: site})
		r.updates.proposeDepth(id, l.Depth)
		if l.Anchor != "" {
			r.updates.addAnchor(id, l.Anchor)
		}
		return nil
	}
	forbidden, rej, err := in.screen(u, l.Depth)
	if err != nil {
		return err
	}
	if rej != nil {
		in.reject(rej)
		return nil
	}
	if !forbidden {
		full, err := in.budgetFull()
		if err != nil {
			return err
		}
		if full {
			if in.frontier.FrontierOverflow == config.OverflowDrop {
				in.reject(&rejection{reason: ReasonBudget})
				return nil
			}
			return in.parkLink(l)
		}
	}
	in.batch = l.Batch
	id, site, rej, err := in.create(u, l.Depth, cleanAnchor(l.Anchor))
	if err != nil {
		return err
	}
	if rej != nil {
		in.reject(rej)
		return nil
	}
	r.links[l.Src] = append(r.links[l.Src], linkgraph.Target{Doc: id, Site: site})
	return nil
}

// flush adds the released links to their sources' out-link sets.
func (r *releaseRun) flush() error {
	srcs := make([]uint64, 0, len(r.links))
	for id := range r.links {
		srcs = append(srcs, id)
	}
	slices.Sort(srcs)
	for _, id := range srcs {
		site, err := r.in.tx.DocSite(id)
		if err != nil {
			return err
		}
		n, err := r.in.tx.AddOutLinks(id, site, r.links[id])
		if err != nil {
			return err
		}
		r.s.OutLinks += n
	}
	return nil
}

// removeOrphanParks removes the files under COLLECTION/frontier/ that no
// graph.db record names: park files of a transaction that did not commit,
// files released by one that did (removed after its commit), temporary
// files of a killed run. The caller holds the seeder lock and has graph.db
// open for writing, so no other run is writing there.
func removeOrphanParks(g *linkgraph.Graph, col *collection.Collection, log *slog.Logger) error {
	dir := filepath.Join(col.Dir, FrontierDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	known := map[string]bool{}
	if err := g.View(func(tx *linkgraph.Tx) error {
		return tx.ForEachParked(func(p linkgraph.Parked) error {
			known[p.File] = true
			return nil
		})
	}); err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		_, isPark := parsePark(name)
		isTemp := strings.HasPrefix(name, ".park-") && strings.Contains(name, ".tmp-")
		if (!isPark && !isTemp) || known[name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("remove orphan park file: %w", err)
		}
		log.Debug("removed orphan park file", "file", name)
	}
	return nil
}
