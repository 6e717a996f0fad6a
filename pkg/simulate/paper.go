package simulate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wirecrawl/wire/pkg/pagerank"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// PaperOptions are the crawler model of the paper's simulator
// (Baeza-Yates et al. 2005, §3.2): a heap of sites and a heap of pages per
// site, r robots, a wait w between two visits to one site. Zero fields
// other than Wait take the defaults.
type PaperOptions struct {
	Robots    int     // r: downloads at the same time (default 1, as for the paper's Figure 4)
	Wait      float64 // w: seconds between the end of a download and the next visit to the same site (0: none; the command's default is 15, the paper's)
	FetchTime float64 // seconds one download takes (default 1)
	// PageRankEvery is K, the number of fetches between two PageRank
	// computations of the pagerank and partial-pagerank strategies; 0
	// means the pages of the graph / 30 (at least 100): the paper's
	// K = 100,000 gave 30 to 40 computations per crawl.
	PageRankEvery int
	// SydneyT, if positive, takes at most T new out-links of each fetched
	// page into the frontier and parks the rest, released T per parked
	// page when no site can be visited now (Castillo et al., "Crawling the
	// web with limited memory", the links-on-disk variant).
	SydneyT int
}

func (o PaperOptions) withDefaults(n int) PaperOptions {
	if o.Robots <= 0 {
		o.Robots = 1
	}
	o.Wait = max(o.Wait, 0)
	if o.FetchTime <= 0 {
		o.FetchTime = 1
	}
	if o.PageRankEvery <= 0 {
		o.PageRankEvery = max(100, n/30)
	}
	return o
}

// Input is what every strategy runs on.
type Input struct {
	Graph *webgraph.Graph
	// PageRank is the true PageRank of every page of Graph (the metric
	// and the omniscient oracle).
	PageRank []float64
	// History is the PageRank of each page in a previous crawl, NaN for
	// pages the previous crawl did not have (historical strategies).
	History []float64
	Damping float64 // for the PageRank estimates of the strategies
	Seed    uint64  // random strategy, random choices, τ sample
	// Points is about how many points each curve keeps (default 1000).
	Points int
	// TauSample is the number of fetched pages Kendall's τ is computed on
	// (default 5000, as in the paper).
	TauSample int
	// MaxFetch stops the crawl after this many pages (0: until nothing
	// is left to fetch).
	MaxFetch int
}

// Page states in the paper model.
const (
	stUnknown  uint8 = iota // not discovered
	stPending               // in its site's heap
	stInFlight              // being downloaded
	stFetched
)

// Site states in the paper model.
const (
	siteIdle    uint8 = iota // no pending page, not waiting
	siteReady                // in the ready heap
	siteBusy                 // a robot is downloading one of its pages
	siteCooling              // waiting w after a download
)

// paperSim is one run of the paper model.
type paperSim struct {
	in       Input
	opt      PaperOptions
	strategy string
	g        *webgraph.Graph
	n        int
	rng      *rand.Rand

	key    []float64 // priority: higher first
	seq    []int32   // discovery order: lower first among equal keys; −1 before
	state  []uint8   // stUnknown … stFetched
	hasEst []bool    // partial-pagerank: the page has a computed estimate

	part     []float64 // partial-pagerank: Σ PR(parent)/out(parent) from parents with an estimate
	partBase float64   // partial-pagerank: (1−d)/N of the last computation
	opicU    float64   // opic: cash every known page received from the virtual page
	nextSq   int32     // pages discovered so far (the next discovery number)

	pages     []iheap    // pending pages of each site
	pagePos   []int32    // position of each page in its site's heap (shared index)
	sitePend  []int32    // pending pages of each site
	siteState []uint8    // siteIdle … siteCooling
	ready     iheap      // sites that may be visited now
	cooling   eventQueue // sites waiting, by the time they may be visited again
	busy      eventQueue // downloads in progress, by end time
	pending   int        // pages in the site heaps

	park       []int32 // parked targets (Sydney)
	parkStarts []int   // start of each parked entry in park, FIFO
	parkHead   int     // first entry not released
	parked     int     // pages in the secondary queue: entries not yet released

	histValues []float64 // historical-random: the PageRank values of the previous crawl
	rec        *recorder
}

// RunPaper simulates one strategy with the paper's crawler model.
func RunPaper(ctx context.Context, in Input, strategy string, opt PaperOptions) (*Result, error) {
	if !Known(strategy) {
		return nil, fmt.Errorf("simulate: unknown strategy %q", strategy)
	}
	g := in.Graph
	n := g.N()
	if len(in.PageRank) != n {
		return nil, fmt.Errorf("simulate: %d PageRank values for %d pages", len(in.PageRank), n)
	}
	if Historical(strategy) && len(in.History) != n {
		return nil, fmt.Errorf("simulate: strategy %s needs the PageRank of a previous crawl (--history)", strategy)
	}
	if len(g.Seeds) == 0 {
		return nil, errors.New("simulate: the graph has no seeds")
	}
	if in.Damping == 0 {
		in.Damping = 0.85
	}
	s := &paperSim{in: in, opt: opt.withDefaults(n), strategy: strategy, g: g, n: n,
		rng: rand.New(rand.NewPCG(in.Seed, 0x5eed))}
	s.init()
	if err := s.run(ctx); err != nil {
		return nil, err
	}
	return s.rec.result(strategy, "paper", in.TauSample, in.Seed), nil
}

func (s *paperSim) init() {
	n, sites := s.n, s.g.Sites()
	s.key = make([]float64, n)
	s.seq = make([]int32, n)
	s.state = make([]uint8, n)
	for i := range s.seq {
		s.seq[i] = -1
	}
	if s.strategy == PartialPageRank {
		s.hasEst = make([]bool, n)
		s.part = make([]float64, n)
	}
	s.pagePos = make([]int32, n)
	for i := range s.pagePos {
		s.pagePos[i] = -1
	}
	s.pages = make([]iheap, sites)
	for i := range s.pages {
		s.pages[i] = iheap{pos: s.pagePos, less: s.pageLess}
	}
	s.sitePend = make([]int32, sites)
	s.siteState = make([]uint8, sites)
	sitePos := make([]int32, sites)
	for i := range sitePos {
		sitePos[i] = -1
	}
	s.ready = iheap{pos: sitePos, less: s.siteLess}
	if s.strategy == LargerSitesFirst {
		s.ready.less = s.largerSiteLess
	}
	if s.strategy == HistoricalRandom {
		for _, v := range s.in.History {
			if !math.IsNaN(v) {
				s.histValues = append(s.histValues, v)
			}
		}
	}
	s.rec = newRecorder(s.in.PageRank, s.in.Points)
}

// pageLess orders the pages of a site: higher key first, then earlier
// discovery.
func (s *paperSim) pageLess(a, b int32) bool {
	if s.key[a] != s.key[b] {
		return s.key[a] > s.key[b]
	}
	return s.seq[a] < s.seq[b]
}

// siteLess orders sites by their best page.
func (s *paperSim) siteLess(a, b int32) bool {
	return s.pageLess(s.pages[a].Top(), s.pages[b].Top())
}

// largerSiteLess orders sites by pending pages, then by their oldest
// pending page (larger-sites-first).
func (s *paperSim) largerSiteLess(a, b int32) bool {
	if s.sitePend[a] != s.sitePend[b] {
		return s.sitePend[a] > s.sitePend[b]
	}
	return s.seq[s.pages[a].Top()] < s.seq[s.pages[b].Top()]
}

// hash01 is a deterministic uniform number in [0, 1) for page p.
func (s *paperSim) hash01(p int32, salt uint64) float64 {
	x := uint64(p)*0x9e3779b97f4a7c15 ^ s.in.Seed*0xbf58476d1ce4e5b9 ^ salt
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// initialKey is the priority a page gets when it is discovered through
// parent (−1 for a seed).
func (s *paperSim) initialKey(p, parent int32) float64 {
	switch s.strategy {
	case Omniscient:
		return s.in.PageRank[p]
	case Random:
		return s.hash01(p, 1)
	case HistoricalZero, HistoricalRandom, HistoricalParent, HistoricalOmni:
		if h := s.in.History[p]; !math.IsNaN(h) {
			return h
		}
		switch s.strategy {
		case HistoricalRandom:
			if len(s.histValues) == 0 {
				return 0
			}
			return s.histValues[int(s.hash01(p, 2)*float64(len(s.histValues)))]
		case HistoricalParent:
			if parent < 0 {
				return 0
			}
			return s.key[parent] / float64(s.g.Links.OutDegree(int(parent)))
		case HistoricalOmni:
			return s.in.PageRank[p]
		}
		return 0
	case OPIC:
		// key = cash received − the virtual page's cash given before the
		// page was known, so that key + opicU is what it holds now.
		return s.key[p] - s.opicU
	case PartialPageRank:
		// Σ PR(x)/|out(x)| over fetched parents x with a computed PageRank,
		// or (1−d)/N of the last computation if none.
		if s.part[p] > 0 {
			return s.part[p]
		}
		return s.partBase
	}
	// Breadth-first, larger-sites-first: 0 (discovery order decides).
	// Backlink: the fetched pages that link to it so far.
	// Batch PageRank: 0 until the next computation.
	return s.key[p]
}

// discover puts page p, found through parent, in the frontier.
func (s *paperSim) discover(p, parent int32) {
	s.seq[p] = s.nextSq
	s.nextSq++
	s.key[p] = s.initialKey(p, parent)
	s.state[p] = stPending
	site := s.g.Site[p]
	s.pages[site].Push(p)
	s.sitePend[site]++
	s.pending++
	switch s.siteState[site] {
	case siteIdle:
		s.siteState[site] = siteReady
		s.ready.Push(site)
	case siteReady:
		s.ready.Fix(site)
	}
}

// raise adds delta to the key of page p (backlink, OPIC, partial
// PageRank) and restores the heaps.
func (s *paperSim) raise(p int32, delta float64) {
	s.key[p] += delta
	if s.state[p] != stPending {
		return
	}
	site := s.g.Site[p]
	s.pages[site].Fix(p)
	if s.siteState[site] == siteReady && s.strategy != LargerSitesFirst {
		s.ready.Fix(site)
	}
}

// start begins the download of the best page of the best ready site.
func (s *paperSim) start(now float64) {
	site := s.ready.Pop()
	p := s.pages[site].Pop()
	s.sitePend[site]--
	s.pending--
	s.siteState[site] = siteBusy
	s.state[p] = stInFlight
	s.busy.push(event{at: now + s.opt.FetchTime, id: p})
}

// complete finishes the download of page p at time now: the page's links
// are revealed and the site waits.
func (s *paperSim) complete(p int32, now float64) {
	s.state[p] = stFetched
	out := s.g.Links.Out(int(p))
	var share float64
	switch s.strategy {
	case OPIC:
		// The page gives all its cash (1 to start with, plus what it
		// received) to its out-links in equal parts; a page without
		// out-links gives it to every known page (the virtual page).
		cash := 1 + s.key[p] + s.opicU
		if len(out) > 0 {
			share = cash / float64(len(out))
		} else {
			s.opicU += cash / float64(s.nextSq)
		}
	case PartialPageRank:
		if len(out) > 0 && s.hasEst[p] {
			share = s.key[p] / float64(len(out))
		}
	case Backlink:
		share = 1
	}
	var fresh []int32
	for _, t32 := range out {
		t := int32(t32)
		if share != 0 && s.state[t] != stFetched && s.state[t] != stInFlight {
			switch {
			case s.strategy != PartialPageRank:
				s.raise(t, share)
			case !s.hasEst[t]:
				s.part[t] += share
				s.raise(t, s.part[t]-s.key[t])
			}
		}
		if s.state[t] == stUnknown && s.seq[t] < 0 {
			fresh = append(fresh, t)
		}
	}
	s.reveal(p, fresh)
	site := s.g.Site[p]
	s.siteState[site] = siteCooling
	s.cooling.push(event{at: now + s.opt.Wait, id: site})
	s.rec.fetched(p, now, s.pending, s.parked)
}

// reveal adds the undiscovered targets of p to the frontier, or at most
// SydneyT of them (chosen at random) and parks the rest.
func (s *paperSim) reveal(p int32, fresh []int32) {
	t := s.opt.SydneyT
	if t <= 0 || len(fresh) <= t {
		for _, x := range fresh {
			s.discover(x, p)
		}
		return
	}
	for i := 0; i < t; i++ {
		j := i + s.rng.IntN(len(fresh)-i)
		fresh[i], fresh[j] = fresh[j], fresh[i]
		s.discover(fresh[i], p)
	}
	s.parkStarts = append(s.parkStarts, len(s.park))
	s.park = append(s.park, p) // the entry's first element is the page that found the links
	s.park = append(s.park, fresh[t:]...)
	s.parked++
}

// release takes parked links back while no site can be visited now (the
// primary queue has nothing to offer a free robot): each parked page, in
// the order they were parked, gives at most SydneyT links still
// undiscovered; the rest of its links go to the back of the queue.
func (s *paperSim) release() {
	for s.ready.Len() == 0 && s.parkHead < len(s.parkStarts) {
		start := s.parkStarts[s.parkHead]
		end := len(s.park)
		if s.parkHead+1 < len(s.parkStarts) {
			end = s.parkStarts[s.parkHead+1]
		}
		s.parkHead++
		from := s.park[start]
		entry := s.park[start+1 : end]
		s.parked--
		var left []int32
		taken := 0
		for _, x := range entry {
			switch {
			case s.state[x] != stUnknown || s.seq[x] >= 0:
			case taken < s.opt.SydneyT:
				s.discover(x, from)
				taken++
			default:
				left = append(left, x)
			}
		}
		if len(left) > 0 {
			s.parkStarts = append(s.parkStarts, len(s.park))
			s.park = append(s.park, from)
			s.park = append(s.park, left...)
			s.parked++
		}
		if s.parkHead > 1<<16 && s.parkHead > len(s.parkStarts)/2 {
			s.compactPark()
		}
	}
}

// compactPark drops released entries from the front of the park queue.
func (s *paperSim) compactPark() {
	base := s.parkStarts[s.parkHead]
	s.park = append(s.park[:0], s.park[base:]...)
	starts := s.parkStarts[s.parkHead:]
	for i := range starts {
		starts[i] -= base
	}
	s.parkStarts = append(s.parkStarts[:0], starts...)
	s.parkHead = 0
}

// estimate computes PageRank over the known graph (pages discovered,
// links of the pages fetched) and makes it the key of every known page
// (batch and partial PageRank).
func (s *paperSim) estimate(ctx context.Context) error {
	local := make([]int32, s.n)
	var known []int32
	for p := int32(0); int(p) < s.n; p++ {
		local[p] = -1
		if s.seq[p] >= 0 {
			local[p] = int32(len(known))
			known = append(known, p)
		}
	}
	b := pagerank.NewBuilder(len(known))
	var targets []uint32
	for i, p := range known {
		if s.state[p] != stFetched {
			continue
		}
		targets = targets[:0]
		for _, t := range s.g.Links.Out(int(p)) {
			if l := local[t]; l >= 0 {
				targets = append(targets, uint32(l))
			}
		}
		if err := b.Add(i, targets); err != nil {
			return err
		}
	}
	res, err := pagerank.Compute(ctx, b.Graph(), pagerank.Options{Damping: s.in.Damping})
	if err != nil {
		return fmt.Errorf("estimate pagerank: %w", err)
	}
	for i, p := range known {
		s.key[p] = res.Rank[i]
		if s.hasEst != nil {
			s.hasEst[p] = true
		}
	}
	s.partBase = (1 - s.in.Damping) / float64(max(len(known), 1))
	for i := range s.pages {
		s.pages[i].Init()
	}
	s.ready.Init()
	return nil
}

// run is the event loop.
func (s *paperSim) run(ctx context.Context) error {
	for _, p := range s.g.Seeds {
		if s.seq[p] < 0 {
			s.discover(p, -1)
		}
	}
	batchPR := s.strategy == BatchPageRank || s.strategy == PartialPageRank
	if batchPR {
		if err := s.estimate(ctx); err != nil {
			return err
		}
	}
	free := s.opt.Robots
	now := 0.0
	fetched := 0
	for {
		if fetched%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if free > 0 && s.ready.Len() == 0 && s.parkHead < len(s.parkStarts) {
			s.release()
		}
		for free > 0 && s.ready.Len() > 0 {
			s.start(now)
			free--
		}
		s.rec.queue(s.pending, s.parked)
		switch {
		case s.busy.Len() > 0:
			now = s.busy.min().at
			if free > 0 && s.cooling.Len() > 0 {
				now = math.Min(now, s.cooling.min().at)
			}
		case s.pending > 0:
			now = s.cooling.min().at // every pending page is in a waiting site
		case s.parkHead < len(s.parkStarts):
			continue
		default:
			return nil
		}
		for s.busy.Len() > 0 && s.busy.min().at <= now {
			e := s.busy.pop()
			s.complete(e.id, now)
			free++
			fetched++
			if s.in.MaxFetch > 0 && fetched >= s.in.MaxFetch {
				return nil
			}
			if batchPR && fetched%s.opt.PageRankEvery == 0 {
				if err := s.estimate(ctx); err != nil {
					return err
				}
			}
		}
		for s.cooling.Len() > 0 && s.cooling.min().at <= now {
			site := s.cooling.pop().id
			if s.sitePend[site] > 0 {
				s.siteState[site] = siteReady
				s.ready.Push(site)
			} else {
				s.siteState[site] = siteIdle
			}
		}
	}
}
