package webgraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Params are the parameters of the national-web generator. Zero fields
// take the defaults (DefaultParams); docs/simulator.md explains each.
//
// The graph grows one page at a time. A page starts a new site with
// probability NewSite, otherwise it joins the site of a page drawn
// uniformly among the existing ones (Simon's model: a site grows in
// proportion to its size, so site sizes follow a power law of exponent
// about 1 + 1/(1−NewSite), capped at MaxSitePages). Each page receives a
// link from a "parent" page that already exists (a random page of its
// site, or of another site for a home page), so every page is reachable
// from the first. It then writes its own out-links to existing pages:
// their number is log-normal (σ = 1) with mean OutDegree, zero with
// probability Dangling; each is internal with probability Internal; its
// target is copied from an earlier link (to the same site, for internal
// links) with probability Copy, which gives a power-law in-degree
// (preferential attachment), or drawn uniformly; an external link goes to
// the target site's home page with probability Home. Older pages thus
// collect more links, as on the real web.
type Params struct {
	Pages        int     // number of pages
	Seed         uint64  // random seed: the same Params give the same graph
	NewSite      float64 // probability that a page starts a new site
	MaxSitePages int     // at most this many pages per site
	OutDegree    float64 // mean number of links written by a page (parent links come on top)
	Dangling     float64 // fraction of pages that write no link
	Internal     float64 // probability that a link stays within its site
	Copy         float64 // probability that a link target is copied from an earlier link
	Home         float64 // probability that an external link points to a home page
	Seeds        int     // seeds: the home pages of the first (largest) sites
}

// DefaultParams are the generator defaults: a million pages in about
// 53,000 sites, 15 million distinct links (about 83% within a site).
var DefaultParams = Params{
	Pages:        1_000_000,
	Seed:         1,
	NewSite:      0.05,
	MaxSitePages: 25000,
	OutDegree:    22,
	Dangling:     0.1,
	Internal:     0.9,
	Copy:         0.5,
	Home:         0.3,
	Seeds:        100,
}

// withDefaults fills zero fields and validates.
func (p Params) withDefaults() (Params, error) {
	d := DefaultParams
	if p.Pages == 0 {
		p.Pages = d.Pages
	}
	if p.NewSite == 0 {
		p.NewSite = d.NewSite
	}
	if p.MaxSitePages == 0 {
		p.MaxSitePages = d.MaxSitePages
	}
	if p.OutDegree == 0 {
		p.OutDegree = d.OutDegree
	}
	if p.Dangling == 0 {
		p.Dangling = d.Dangling
	}
	if p.Internal == 0 {
		p.Internal = d.Internal
	}
	if p.Copy == 0 {
		p.Copy = d.Copy
	}
	if p.Home == 0 {
		p.Home = d.Home
	}
	if p.Seeds == 0 {
		p.Seeds = d.Seeds
	}
	switch {
	case p.Pages < 1 || p.Pages > MaxPages:
		return p, fmt.Errorf("webgraph: pages must be between 1 and %d, got %d", MaxPages, p.Pages)
	case p.MaxSitePages < 1:
		return p, fmt.Errorf("webgraph: max site pages must be positive, got %d", p.MaxSitePages)
	case p.OutDegree < 0 || p.OutDegree > 1000:
		return p, fmt.Errorf("webgraph: out-degree must be between 0 and 1000, got %g", p.OutDegree)
	case p.Seeds < 1:
		return p, fmt.Errorf("webgraph: seeds must be positive, got %d", p.Seeds)
	}
	for name, v := range map[string]float64{"new-site": p.NewSite, "dangling": p.Dangling, "internal": p.Internal, "copy": p.Copy, "home": p.Home} {
		if v < 0 || v > 1 {
			return p, fmt.Errorf("webgraph: %s probability must be between 0 and 1, got %g", name, v)
		}
	}
	return p, nil
}

// growth is a generated web in creation order, before it is cut into
// one or two graphs.
type growth struct {
	site     []int32 // site of each page
	home     []int32 // home page of each site
	parent   []int32 // page whose link made it reachable (−1 for page 0)
	src, dst []int32 // links, in creation order
}

// grow runs the growth model for n pages.
func grow(p Params, n int) *growth {
	r := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	g := &growth{site: make([]int32, 0, n), parent: make([]int32, 0, n)}
	m := int(float64(n) * (p.OutDegree + 1))
	g.src, g.dst = make([]int32, 0, m), make([]int32, 0, m)
	var sitePages [][]int32   // pages of each site
	var siteTargets [][]int32 // targets of internal links of each site
	var extTargets []int32    // targets of external links
	sigma := 1.0
	mu := math.Log(p.OutDegree) - sigma*sigma/2
	link := func(a, b int32) {
		g.src = append(g.src, a)
		g.dst = append(g.dst, b)
		if g.site[a] == g.site[b] {
			siteTargets[g.site[b]] = append(siteTargets[g.site[b]], b)
		} else {
			extTargets = append(extTargets, b)
		}
	}
	for i := int32(0); int(i) < n; i++ {
		s := int32(-1)
		if i > 0 && r.Float64() >= p.NewSite {
			for try := 0; try < 4; try++ {
				c := g.site[r.IntN(int(i))]
				if len(sitePages[c]) < p.MaxSitePages {
					s = c
					break
				}
			}
		}
		if s < 0 {
			s = int32(len(sitePages))
			sitePages = append(sitePages, nil)
			siteTargets = append(siteTargets, nil)
			g.home = append(g.home, i)
		}
		g.site = append(g.site, s)
		// The parent link that makes page i reachable.
		par := int32(-1)
		switch {
		case i == 0:
		case len(sitePages[s]) == 0:
			par = r.Int32N(i) // a new site is linked from anywhere
		default:
			par = sitePages[s][r.IntN(len(sitePages[s]))]
		}
		g.parent = append(g.parent, par)
		sitePages[s] = append(sitePages[s], i)
		if par >= 0 {
			link(par, i)
		}
		if i == 0 || r.Float64() < p.Dangling {
			continue
		}
		k := int(math.Round(math.Exp(mu + sigma*r.NormFloat64())))
		k = min(k, 1000)
		for ; k > 0; k-- {
			var t int32
			own := sitePages[s]
			if len(own) > 1 && r.Float64() < p.Internal {
				if tl := siteTargets[s]; len(tl) > 0 && r.Float64() < p.Copy {
					t = tl[r.IntN(len(tl))]
				} else {
					t = own[r.IntN(len(own)-1)] // i is the last page of its site
				}
			} else {
				if len(extTargets) > 0 && r.Float64() < p.Copy {
					t = extTargets[r.IntN(len(extTargets))]
				} else {
					t = r.Int32N(i)
				}
				if r.Float64() < p.Home {
					t = g.home[g.site[t]]
				}
			}
			if t != i {
				link(i, t)
			}
		}
	}
	return g
}

// Generate makes a graph with the shape of a national web (see Params).
// Page names are "http://sS.sim/pI" (site S, creation number I), site
// names "http://sS.sim"; the seeds are the home pages of the first
// p.Seeds sites, which are the largest.
func Generate(p Params) (*Graph, error) {
	p, err := p.withDefaults()
	if err != nil {
		return nil, err
	}
	gr := grow(p, p.Pages)
	keep := make([]bool, p.Pages)
	for i := range keep {
		keep[i] = true
	}
	return gr.graph(p, keep, gr.src, gr.dst), nil
}

// graph cuts the pages keep[i] out of the growth with links src→dst
// (links touching other pages are dropped).
func (gr *growth) graph(p Params, keep []bool, src, dst []int32) *Graph {
	n := len(gr.site)
	newID := make([]int32, n)
	g := &Graph{}
	siteID := make([]int32, len(gr.home))
	for i := range siteID {
		siteID[i] = -1
	}
	for i := 0; i < n; i++ {
		newID[i] = -1
		if !keep[i] {
			continue
		}
		s := gr.site[i]
		if siteID[s] < 0 {
			siteID[s] = int32(len(g.SiteNames))
			g.SiteNames = append(g.SiteNames, siteName(s))
		}
		newID[i] = int32(len(g.Names))
		g.Names = append(g.Names, siteName(s)+"/p"+strconv.Itoa(i))
		g.Site = append(g.Site, siteID[s])
	}
	var fs, fd []int32
	for k := range src {
		a, b := newID[src[k]], newID[dst[k]]
		if a >= 0 && b >= 0 {
			fs = append(fs, a)
			fd = append(fd, b)
		}
	}
	g.Links = CSR(len(g.Names), fs, fd)
	for s := 0; s < len(gr.home) && len(g.Seeds) < p.Seeds; s++ {
		if h := newID[gr.home[s]]; h >= 0 {
			g.Seeds = append(g.Seeds, h)
		}
	}
	return g
}

func siteName(s int32) string { return "http://s" + strconv.Itoa(int(s)) + ".sim" }

// History describes how a web changes between two crawls (the paper's
// Figure 5: the .gr crawl of September guided by the one of May, where 45%
// of the pages were new). Zero fields take the defaults.
type History struct {
	// New is the fraction of the pages of the second crawl that the
	// first did not have (default 0.45).
	New float64
	// Dead is the fraction of the pages of the first crawl that are gone
	// in the second (default 0.1). Only pages that no other page depends
	// on for its reachability die.
	Dead float64
	// Churn is the probability that a link between two pages of the first
	// crawl pointed elsewhere in the first crawl (default 0.25: "every
	// week, about 25% new links are created", Ntoulas et al.).
	Churn float64
}

// DefaultHistory is the default change between two crawls.
var DefaultHistory = History{New: 0.45, Dead: 0.1, Churn: 0.25}

// GeneratePair makes two crawls of one growing web: before is the web at
// time 1, after (with p.Pages pages) at time 2. Pages that exist at both
// times have the same name, so the PageRank of before can guide a crawl
// of after. Both are graphs with the shape Generate gives.
func GeneratePair(p Params, h History) (before, after *Graph, err error) {
	p, err = p.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if h.New == 0 {
		h.New = DefaultHistory.New
	}
	if h.Dead == 0 {
		h.Dead = DefaultHistory.Dead
	}
	if h.Churn == 0 {
		h.Churn = DefaultHistory.Churn
	}
	for name, v := range map[string]float64{"new": h.New, "dead": h.Dead, "churn": h.Churn} {
		if v < 0 || v >= 1 {
			return nil, nil, fmt.Errorf("webgraph: history %s fraction must be in [0, 1), got %g", name, v)
		}
	}
	// after = n1 old pages − dead + new: with n2 = p.Pages pages of which
	// New are new, n1·(1−Dead) = n2·(1−New).
	n2 := p.Pages
	n1 := int(math.Round(float64(n2) * (1 - h.New) / (1 - h.Dead)))
	nDead := int(math.Round(float64(n1) * h.Dead))
	total := n2 + nDead
	if n1 < 1 || n1 > total {
		return nil, nil, fmt.Errorf("webgraph: history fractions give %d old pages of %d", n1, total)
	}
	gr := grow(p, total)
	r := rand.New(rand.NewPCG(p.Seed, 0x5851f42d4c957f2d))

	// Dead pages: old pages that are not a home page and no page's parent.
	isParent := make([]bool, total)
	for _, par := range gr.parent {
		if par >= 0 {
			isParent[par] = true
		}
	}
	var candidates []int32
	for i := int32(0); int(i) < n1; i++ {
		if !isParent[i] && gr.home[gr.site[i]] != i {
			candidates = append(candidates, i)
		}
	}
	r.Shuffle(len(candidates), func(a, b int) { candidates[a], candidates[b] = candidates[b], candidates[a] })
	keepAfter := make([]bool, total)
	for i := range keepAfter {
		keepAfter[i] = true
	}
	for _, d := range candidates[:min(nDead, len(candidates))] {
		keepAfter[d] = false
	}
	keepBefore := make([]bool, total)
	for i := 0; i < n1; i++ {
		keepBefore[i] = true
	}

	// Links at time 1: those between old pages, a Churn fraction pointing
	// elsewhere in the site (parent links stay, so time 1 stays reachable).
	sitePages := make([][]int32, len(gr.home))
	for i := int32(0); int(i) < n1; i++ {
		sitePages[gr.site[i]] = append(sitePages[gr.site[i]], i)
	}
	var bs, bd []int32
	for k := range gr.src {
		a, b := gr.src[k], gr.dst[k]
		if int(a) >= n1 || int(b) >= n1 {
			continue
		}
		if gr.parent[b] != a && r.Float64() < h.Churn {
			pages := sitePages[gr.site[a]]
			b = pages[r.IntN(len(pages))]
		}
		bs = append(bs, a)
		bd = append(bd, b)
	}
	before = gr.graph(p, keepBefore, bs, bd)
	after = gr.graph(p, keepAfter, gr.src, gr.dst)
	return before, after, nil
}
