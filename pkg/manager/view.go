package manager

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// graphView is the part of graph.db the value function needs, in dense
// arrays indexed by the position of the document in id order: 12 bytes
// per document (8 more for breadth-first, 4 for opic), 24 per candidate
// (docs/manager.md, "Scale").
type graphView struct {
	ids    []uint32 // position → doc id (ascending)
	site   []uint32 // site id
	found  []int32  // batch in which it was found (breadth-first only)
	depth  []int32  // depth (breadth-first and historical only)
	visits []uint32 // fetches with a response (opic only)
	pos    []int32  // doc id → position, −1 for ids without a document; nil if ids are sparse
	cands  []cand

	held    []int32          // site id → pages of the site fetched, tried or scheduled
	pending []int32          // site id → pending pages of the site
	scripts map[uint64]int32 // script hash → index in slots
	slots   []int32          // script index → query URLs of it fetched, tried or scheduled
	fetched int              // documents with at least one visit
	// streaming holds the candidate sites flagged as streaming, each with
	// the pages of it the batch may take (0, or 1 for its probe).
	streaming map[uint32]int32

	// revisits is the revisit policy (manager.revisits = optimal) with
	// the fetched pages it allocates to, nil under uniform.
	revisits *revisitPolicy

	// sites is what the plan reads of the site records, read once
	// (sites.go).
	sites *planSites

	watch *watched   // the document explain asks about, or nil
	links *linkCache // the run's links cache, or nil: read the links from graph.db
	stats Stats
}

// cand is a document that may be scheduled (24 bytes).
type cand struct {
	logProfit float64 // ln(profit); first ln of the IQ-free part, then the whole
	pos       int32
	site      uint32
	script    int32 // script index (slots) of a new query URL subject to max_fetches_per_script, else −1
	revisit   bool
	holds     bool
	sitemap   bool // a sitemap: scheduled ahead of pages (profit 1)
	near      bool // a near-duplicate (Doc.NearDup): its profit already has near_duplicate_weight
}

// script returns the index of the script of query URL u, adding it.
func (v *graphView) script(u string) int32 { return v.scriptOf(scriptHash(u)) }

// scriptOf returns the index of the script of hash h (scriptHash), adding
// it; −1 for 0 (no script).
func (v *graphView) scriptOf(h uint64) int32 {
	if h == 0 {
		return -1
	}
	i, ok := v.scripts[h]
	if !ok {
		i = int32(len(v.slots))
		v.scripts[h] = i
		v.slots = append(v.slots, 0)
	}
	return i
}

// watched is what explain records of one document while a plan is made.
type watched struct {
	id      uint64
	doc     *linkgraph.Doc
	pos     int32
	a       assessment
	hist    History
	cand    int // index in cands, −1 if not a candidate
	iq, raw float64
	rawName string
	rank    int    // candidates with a higher profit (or equal and a lower id)
	fate    string // what the selection did with it
	batchAt int    // position in the batch, −1 if not in it
	clock   Clock  // the freshness clock of the plan (with the sites whose dates are not trusted)
	// revisit is what the revisit policy gives it (a fetched page under
	// manager.revisits = optimal), nil otherwise.
	revisit *RevisitAllocation
}

// readDocs is the one pass over the documents: the arrays of the view,
// the per-site and per-script counts of the limits, and the candidates
// with the IQ-free part of their profit. The documents' facts come from
// the documents cache when the run has one (docs, in step with tx), else
// from graph.db's records.
func readDocs(ctx context.Context, tx *linkgraph.Tx, m *config.Manager, now time.Time, watch uint64, docs *docCache) (*graphView, error) {
	v := &graphView{stats: Stats{Skipped: map[string]int{}}, scripts: map[uint64]int32{}}
	if watch != 0 {
		v.watch = &watched{id: watch, pos: -1, cand: -1, batchAt: -1}
	}
	rules := newLimits(m)
	v.revisits = newRevisitPolicy(m)
	var err error
	if v.sites, rules.clock.untrusted, err = readSites(tx, now, m.RobotsMaxAge.D()); err != nil {
		return nil, err
	}
	keepVisits := m.Strategy == StrategyOPIC
	keepOrder := m.Strategy == StrategyBreadthFirst
	keepDepth := keepOrder || m.Strategy == StrategyHistorical // historical: a new site's pages by depth
	var skipped [skipCount]int
	// add takes in the next document; it returns its position and its
	// index in the candidates (−1 if it is not one) and what assess said.
	add := func(f *docFacts) (int32, int, assessment, error) {
		if len(v.ids)%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, assessment{}, err
			}
		}
		if len(v.ids) > 0 && f.id <= v.ids[len(v.ids)-1] {
			return 0, 0, assessment{}, fmt.Errorf("doc %d: id out of order or range", f.id)
		}
		p := int32(len(v.ids))
		site := f.site
		v.ids = append(v.ids, f.id)
		v.site = append(v.site, site)
		if keepOrder {
			v.found = append(v.found, f.found)
		}
		if keepDepth {
			v.depth = append(v.depth, f.depth)
		}
		if keepVisits {
			v.visits = append(v.visits, f.visits)
		}
		if f.visits > 0 {
			v.fetched++
		}
		for int(site) >= len(v.held) {
			v.held = append(v.held, 0)
			v.pending = append(v.pending, 0)
		}
		a := assessFacts(f, m, rules, now)
		if a.holds {
			v.held[site]++
			if f.state != factStateExcluded {
				if i := v.scriptOf(f.script); i >= 0 {
					v.slots[i]++
				}
			}
		}
		if f.state == factStatePending {
			v.pending[site]++
		}
		skipped[a.skip]++
		if a.track && v.revisits != nil {
			v.revisits.add(p, f.site, f.fetchedAt(), f.has(factNear), a.lam, now)
		}
		c := -1
		if a.skip == candidate {
			c = len(v.cands)
			k := cand{pos: p, site: site, logProfit: a.logGain, script: -1, revisit: a.revisit, holds: a.holds, sitemap: f.has(factSitemap), near: f.has(factNear)}
			if !a.holds {
				k.script = v.scriptOf(f.script)
			}
			v.cands = append(v.cands, k)
		}
		return p, c, a, nil
	}
	if docs != nil {
		// The document arrays at (an upper bound of) their final size
		// from the start: grown by appending (a quarter more each time
		// at this size) they were copied dozens of times over at a
		// million documents. The candidates and the revisit policy's
		// pages are parts of the documents of unknown size: reserved
		// for every row, the rest would stay reserved through the plan
		// and raise the collector's heap goal (measured: peak
		// anonymous memory +17–21 %), so they grow.
		n := docs.rows()
		v.ids, v.site = make([]uint32, 0, n), make([]uint32, 0, n)
		err = docs.forEach(ctx, func(f *docFacts) error {
			_, _, _, err := add(f)
			return err
		})
	} else {
		err = tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if err := checkIDs(d); err != nil {
				return err
			}
			f := factsOf(d, rules)
			p, c, a, err := add(&f)
			if err != nil {
				return err
			}
			if w := v.watch; w != nil && w.id == d.ID {
				w.doc, w.pos, w.a, w.cand = d, p, a, c
				_, w.hist = rules.clock.freshness(d, now)
				w.clock = rules.clock
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	v.indexPositions()
	n := len(v.ids)
	v.stats.Docs = n
	v.stats.Candidates = len(v.cands)
	for s := skip(1); s < skipCount; s++ {
		if skipped[s] > 0 {
			v.stats.Skipped[skipNames[s]] = skipped[s]
		}
	}
	return v, nil
}

// indexPositions makes the map from doc id to position, a dense array
// when the ids are (the seeder counts them out), else nil and position
// searches the ids.
func (v *graphView) indexPositions() {
	n := len(v.ids)
	maxID := v.maxID()
	if maxID > 4*uint64(n)+1024 {
		return
	}
	v.pos = make([]int32, maxID+1)
	for i := range v.pos {
		v.pos[i] = -1
	}
	for p, id := range v.ids {
		v.pos[id] = int32(p)
	}
}

// position maps a doc id found in an out-link set to its position, or −1.
func (v *graphView) position(id uint64) int32 {
	if v.pos == nil {
		if id > math.MaxUint32 {
			return -1
		}
		if p, ok := slices.BinarySearch(v.ids, uint32(id)); ok {
			return int32(p)
		}
		return -1
	}
	if id >= uint64(len(v.pos)) {
		return -1
	}
	return v.pos[id]
}

// maxID is the largest doc id, 0 without documents.
func (v *graphView) maxID() uint64 {
	if len(v.ids) == 0 {
		return 0
	}
	return uint64(v.ids[len(v.ids)-1])
}
