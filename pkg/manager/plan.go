package manager

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/pagerank"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Stats describe how a batch was chosen.
type Stats struct {
	Docs       int            // documents in graph.db
	Links      int            // links between known documents (self-links excluded)
	Candidates int            // documents that could be scheduled
	Skipped    map[string]int // documents not candidates, by reason (state, recent, deep, failures, bad_url, no_gain)
	SiteCapped int            // candidates left out by the per-site limit
	Left       int            // candidates left out because the batch was full
	Iterations int            // PageRank iterations (pagerank strategy)
	Converged  bool           // PageRank converged within its iteration limit
}

// scored is a candidate with its profit.
type scored struct {
	id        uint64
	site      uint64
	depth     int32
	revisit   bool
	logProfit float64 // ln(profit); the order of the batch
}

// graphView is the part of graph.db the value function needs, in dense
// arrays indexed by the position of the document in id order.
type graphView struct {
	ids   []uint64 // position → doc id (ascending)
	found []int32
	depth []int32
	pos   []int32 // doc id → position, −1 for ids without a document; nil if ids are sparse
	cands []candidateDoc
	stats Stats
}

type candidateDoc struct {
	pos  int32
	site uint64
	assessment
}

// plan is a batch chosen but not yet written.
type plan struct {
	entries []batch.Entry
	stats   Stats
}

// readDocs is the one pass over the documents.
func readDocs(ctx context.Context, tx *linkgraph.Tx, m *config.Manager, now time.Time) (*graphView, error) {
	v := &graphView{stats: Stats{Skipped: map[string]int{}}}
	var skipped [skipCount]int
	err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
		if len(v.ids)%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if d.ID > math.MaxUint32 || (len(v.ids) > 0 && d.ID <= v.ids[len(v.ids)-1]) {
			return fmt.Errorf("doc %d: id out of order or range", d.ID)
		}
		p := int32(len(v.ids))
		v.ids = append(v.ids, d.ID)
		v.found = append(v.found, int32(d.Found))
		v.depth = append(v.depth, int32(d.Depth))
		a := assess(d, m, now)
		skipped[a.skip]++
		if a.skip == candidate {
			v.cands = append(v.cands, candidateDoc{pos: p, site: d.Site, assessment: a})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	n := len(v.ids)
	maxID := uint64(0)
	if n > 0 {
		maxID = v.ids[n-1]
	}
	if maxID <= 4*uint64(n)+1024 { // ids are dense (the seeder counts them out)
		v.pos = make([]int32, maxID+1)
		for i := range v.pos {
			v.pos[i] = -1
		}
		for p, id := range v.ids {
			v.pos[id] = int32(p)
		}
	}
	v.stats.Docs = n
	v.stats.Candidates = len(v.cands)
	for s := skip(1); s < skipCount; s++ {
		if skipped[s] > 0 {
			v.stats.Skipped[skipNames[s]] = skipped[s]
		}
	}
	return v, nil
}

// position maps a doc id found in an out-link set to its position, or −1.
func (v *graphView) position(id uint64) int32 {
	if v.pos == nil {
		if p, ok := slices.BinarySearch(v.ids, id); ok {
			return int32(p)
		}
		return -1
	}
	if id >= uint64(len(v.pos)) {
		return -1
	}
	return v.pos[id]
}

// readLinks is the one pass over the out-link sets. It counts in-links
// (backlink) or builds the CSR graph (pagerank); links to or from ids
// without a document and self-links are ignored.
func readLinks(ctx context.Context, tx *linkgraph.Tx, v *graphView, strategy string) (indeg []int32, g *pagerank.Graph, err error) {
	n := len(v.ids)
	var b *pagerank.Builder
	if strategy == StrategyPageRank {
		b = pagerank.NewBuilder(n)
	} else {
		indeg = make([]int32, n)
	}
	var targets []uint32
	rows := 0
	err = tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		if rows++; rows%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		src := v.position(id)
		if src < 0 {
			return nil
		}
		targets = targets[:0]
		it := bm.Iterator()
		for it.HasNext() {
			if t := v.position(uint64(it.Next())); t >= 0 && t != src {
				targets = append(targets, uint32(t))
			}
		}
		v.stats.Links += len(targets)
		if b != nil {
			return b.Add(int(src), targets)
		}
		for _, t := range targets {
			indeg[t]++
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read links: %w", err)
	}
	if b != nil {
		g = b.Graph()
	}
	return indeg, g, nil
}

// intrinsicQuality runs the configured estimator over the whole graph.
func intrinsicQuality(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) ([]float64, error) {
	switch m.Strategy {
	case StrategyBreadthFirst:
		return breadthFirstIQ(v.found, v.depth, v.ids), nil
	case StrategyBacklink:
		indeg, _, err := readLinks(ctx, tx, v, m.Strategy)
		if err != nil {
			return nil, err
		}
		return backlinkIQ(indeg), nil
	case StrategyPageRank:
		_, g, err := readLinks(ctx, tx, v, m.Strategy)
		if err != nil {
			return nil, err
		}
		iq, res, err := pagerankIQ(ctx, g, m.Damping)
		if err != nil {
			return nil, err
		}
		v.stats.Iterations, v.stats.Converged = res.Iterations, res.Converged
		return iq, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (want one of %s)", m.Strategy, strings.Join(config.Strategies(), ", "))
}

// makePlan chooses the next batch from graph.db: one pass over the
// documents, one over the links if the strategy needs them, the value
// function, then the batch limits in descending order of profit.
func makePlan(ctx context.Context, tx *linkgraph.Tx, m *config.Manager, now time.Time, log *slog.Logger) (*plan, error) {
	t0 := time.Now()
	v, err := readDocs(ctx, tx, m, now)
	if err != nil {
		return nil, err
	}
	log.Debug("read documents", "docs", v.stats.Docs, "candidates", v.stats.Candidates, "skipped", v.stats.Skipped, "elapsed", time.Since(t0).Round(time.Millisecond))
	if len(v.cands) == 0 {
		return &plan{stats: v.stats}, nil
	}
	t0 = time.Now()
	iq, err := intrinsicQuality(ctx, tx, v, m)
	if err != nil {
		return nil, err
	}
	log.Debug("intrinsic quality", "strategy", m.Strategy, "links", v.stats.Links, "iterations", v.stats.Iterations, "elapsed", time.Since(t0).Round(time.Millisecond))
	if m.Strategy == StrategyPageRank && !v.stats.Converged {
		log.Warn("pagerank did not converge; using the last iteration", "iterations", v.stats.Iterations)
	}
	s := score(v, iq, m.Alpha)
	v.cands = nil
	chosen := selectBatch(s, m.BatchSize, m.MaxPagesPerSite, &v.stats)
	entries, err := makeEntries(tx, chosen)
	if err != nil {
		return nil, err
	}
	return &plan{entries: entries, stats: v.stats}, nil
}

// score computes ln(profit) = α·ln(IQ) + ln(1 − RQ^β·F^γ) [+ ln ½ if
// failed] for every candidate. Logarithms keep the order exact where
// IQ^α would underflow (large α, tiny PageRank).
func score(v *graphView, iq []float64, alpha float64) []scored {
	s := make([]scored, len(v.cands))
	for i, c := range v.cands {
		lp := c.logGain
		if alpha != 0 {
			lp += alpha * math.Log(iq[c.pos])
		}
		s[i] = scored{id: v.ids[c.pos], site: c.site, depth: v.depth[c.pos], revisit: c.revisit, logProfit: lp}
	}
	return s
}

// selectBatch sorts the candidates by descending profit, ties by
// ascending doc id (so the same graph always gives the same batch), and
// takes them in that order, skipping a page whose site already has
// perSite pages in the batch, until size pages are taken.
func selectBatch(s []scored, size, perSite int, st *Stats) []scored {
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.logProfit, a.logProfit); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	bySite := map[uint64]int{}
	var out []scored
	for i, c := range s {
		if len(out) == size {
			st.Left += len(s) - i
			break
		}
		if bySite[c.site] >= perSite {
			st.SiteCapped++
			continue
		}
		bySite[c.site]++
		out = append(out, c)
	}
	return out
}

// makeEntries reads the URLs of the chosen documents.
func makeEntries(tx *linkgraph.Tx, chosen []scored) ([]batch.Entry, error) {
	entries := make([]batch.Entry, len(chosen))
	for i, c := range chosen {
		d, err := tx.Doc(c.id)
		if err != nil {
			return nil, err
		}
		kind := batch.KindNew
		if c.revisit {
			kind = batch.KindRevisit
		}
		entries[i] = batch.Entry{
			DocID: c.id,
			Site:  urlnorm.SiteKey(d.URL),
			Score: math.Exp(c.logProfit),
			Depth: int(c.depth),
			Kind:  kind,
			URL:   d.URL,
		}
	}
	return entries, nil
}

// header describes a batch in its file.
func header(id int, created time.Time, m *config.Manager, entries []batch.Entry) batch.Header {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	h := batch.Header{
		Batch:    id,
		Created:  created,
		Strategy: m.Strategy,
		Params: map[string]string{
			"alpha":              f(m.Alpha),
			"beta":               f(m.Beta),
			"gamma":              f(m.Gamma),
			"damping":            f(m.Damping),
			"batch_size":         strconv.Itoa(m.BatchSize),
			"max_pages_per_site": strconv.Itoa(m.MaxPagesPerSite),
			"max_depth_static":   strconv.Itoa(m.MaxDepthStatic),
			"max_depth_dynamic":  strconv.Itoa(m.MaxDepthDynamic),
			"min_revisit":        m.MinRevisit.String(),
		},
		Counts: map[string]int{},
	}
	c := count(entries)
	h.Counts["urls"], h.Counts["sites"], h.Counts["new"], h.Counts["revisits"] = len(entries), c.sites, c.new, c.revisits
	return h
}

type counts struct {
	sites, new, revisits int
	scoreMin, scoreMax   float64
}

func count(entries []batch.Entry) counts {
	var c counts
	sites := map[string]bool{}
	for i, e := range entries {
		sites[e.Site] = true
		if e.Kind == batch.KindRevisit {
			c.revisits++
		} else {
			c.new++
		}
		if i == 0 || e.Score < c.scoreMin {
			c.scoreMin = e.Score
		}
		if i == 0 || e.Score > c.scoreMax {
			c.scoreMax = e.Score
		}
	}
	c.sites = len(sites)
	return c
}
