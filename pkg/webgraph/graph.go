// Package webgraph holds a web graph in memory for crawl simulations:
// named pages, the site of each page, the out-links in compressed sparse
// row form and the seed pages. It reads and writes the edge-list text
// format, loads the graph of a collection's graph.db or of the test web,
// and generates graphs with the shape of a national web, alone or as a
// pair of crawls of one web at two times. The formats and parameters are
// documented in docs/simulator.md.
package webgraph

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/wirecrawl/wire/pkg/pagerank"
)

// MaxPages is the largest number of pages a Graph holds (32-bit ids).
const MaxPages = 1<<31 - 1

// ErrNoSite means a page was named in a link or as a seed but never
// declared with its site.
var ErrNoSite = errors.New("page has no site")

// Graph is a web graph. Pages are numbered 0..N−1 and sites 0..S−1.
type Graph struct {
	// Names are the page names, unique: normalised URLs for crawled
	// graphs, any token for others. They identify a page across two
	// graphs of the same web (historical strategies).
	Names []string
	// Site is the site of each page.
	Site []int32
	// SiteNames are the site keys ("http://host[:port]" for URLs).
	SiteNames []string
	// Links are the out-links: distinct targets per page, no self-links.
	Links *pagerank.Graph
	// Seeds are the pages a crawl starts from, without repeats.
	Seeds []int32
}

// N is the number of pages.
func (g *Graph) N() int { return len(g.Site) }

// Reachable is the number of pages reachable from the seeds by links.
func (g *Graph) Reachable() int {
	seen := make([]bool, g.N())
	var stack []int32
	for _, s := range g.Seeds {
		if !seen[s] {
			seen[s] = true
			stack = append(stack, s)
		}
	}
	n := len(stack)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.Links.Out(int(p)) {
			if !seen[t] {
				seen[t] = true
				n++
				stack = append(stack, int32(t))
			}
		}
	}
	return n
}

// Sites is the number of sites.
func (g *Graph) Sites() int { return len(g.SiteNames) }

// Index maps every page name to its page number.
func (g *Graph) Index() map[string]int32 {
	m := make(map[string]int32, len(g.Names))
	for i, name := range g.Names {
		m[name] = int32(i)
	}
	return m
}

// SiteSizes returns the number of pages of each site.
func (g *Graph) SiteSizes() []int {
	n := make([]int, g.Sites())
	for _, s := range g.Site {
		n[s]++
	}
	return n
}

// Validate checks the invariants every reader and generator guarantees:
// one name and one site per page, sites in range, a CSR of the same size,
// distinct in-range targets without self-links, seeds in range and
// distinct.
func (g *Graph) Validate() error {
	n := len(g.Site)
	if len(g.Names) != n {
		return fmt.Errorf("webgraph: %d names for %d pages", len(g.Names), n)
	}
	if g.Links == nil || g.Links.N != n || len(g.Links.Offsets) != n+1 {
		return fmt.Errorf("webgraph: link graph does not have %d nodes", n)
	}
	for p, s := range g.Site {
		if s < 0 || int(s) >= len(g.SiteNames) {
			return fmt.Errorf("webgraph: page %d has site %d of %d", p, s, len(g.SiteNames))
		}
	}
	seen := make(map[uint32]bool)
	for p := 0; p < n; p++ {
		clear(seen)
		for _, t := range g.Links.Out(p) {
			if int(t) >= n || int(t) == p || seen[t] {
				return fmt.Errorf("webgraph: page %d: bad or repeated link to %d", p, t)
			}
			seen[t] = true
		}
	}
	seeds := make(map[int32]bool, len(g.Seeds))
	for _, s := range g.Seeds {
		if s < 0 || int(s) >= n || seeds[s] {
			return fmt.Errorf("webgraph: bad or repeated seed %d", s)
		}
		seeds[s] = true
	}
	return nil
}

// Builder makes a Graph from pages, links and seeds given by name, in
// any order: a link may name pages declared later.
type Builder struct {
	ids       map[string]int32
	names     []string
	site      []int32 // −1 until declared
	siteIDs   map[string]int32
	siteNames []string
	src, dst  []int32
	seeds     []int32
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{ids: map[string]int32{}, siteIDs: map[string]int32{}}
}

// id returns the number of page name, creating it without a site.
func (b *Builder) id(name string) (int32, error) {
	if id, ok := b.ids[name]; ok {
		return id, nil
	}
	if len(b.names) >= MaxPages {
		return 0, fmt.Errorf("webgraph: more than %d pages", MaxPages)
	}
	id := int32(len(b.names))
	b.ids[name] = id
	b.names = append(b.names, name)
	b.site = append(b.site, -1)
	return id, nil
}

// Page declares page name on site; declaring it again on the same site
// is a no-op, on another site an error.
func (b *Builder) Page(name, site string) (int32, error) {
	id, err := b.id(name)
	if err != nil {
		return 0, err
	}
	s, ok := b.siteIDs[site]
	if !ok {
		s = int32(len(b.siteNames))
		b.siteIDs[site] = s
		b.siteNames = append(b.siteNames, site)
	}
	switch b.site[id] {
	case -1:
		b.site[id] = s
	case s:
	default:
		return 0, fmt.Errorf("webgraph: page %q declared on sites %q and %q", name, b.siteNames[b.site[id]], site)
	}
	return id, nil
}

// Link records a link between two pages; repeats and self-links are
// dropped when the graph is built.
func (b *Builder) Link(from, to string) error {
	f, err := b.id(from)
	if err != nil {
		return err
	}
	t, err := b.id(to)
	if err != nil {
		return err
	}
	b.src = append(b.src, f)
	b.dst = append(b.dst, t)
	return nil
}

// Seed marks a page as a starting point; repeats are dropped.
func (b *Builder) Seed(name string) error {
	id, err := b.id(name)
	if err != nil {
		return err
	}
	b.seeds = append(b.seeds, id)
	return nil
}

// Graph builds the graph. Every page must have been declared with its
// site (ErrNoSite otherwise). The Builder must not be used afterwards.
func (b *Builder) Graph() (*Graph, error) {
	for id, s := range b.site {
		if s < 0 {
			return nil, fmt.Errorf("webgraph: %w: %q", ErrNoSite, b.names[id])
		}
	}
	g := &Graph{
		Names:     b.names,
		Site:      b.site,
		SiteNames: b.siteNames,
		Links:     CSR(len(b.names), b.src, b.dst),
		Seeds:     dedupSeeds(b.seeds),
	}
	*b = Builder{}
	return g, nil
}

// dedupSeeds drops repeated seeds, keeping the first occurrence.
func dedupSeeds(seeds []int32) []int32 {
	seen := make(map[int32]bool, len(seeds))
	out := seeds[:0]
	for _, s := range seeds {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// CSR builds the out-link graph of n nodes from edge lists src[i]→dst[i]:
// targets of each node sorted, repeats and self-links dropped. src and
// dst are not modified.
func CSR(n int, src, dst []int32) *pagerank.Graph {
	offsets := make([]int, n+1)
	for _, s := range src {
		offsets[s+1]++
	}
	for i := 0; i < n; i++ {
		offsets[i+1] += offsets[i]
	}
	targets := make([]uint32, len(src))
	next := make([]int, n)
	copy(next, offsets[:n])
	for i, s := range src {
		targets[next[s]] = uint32(dst[i])
		next[s]++
	}
	// Sort and compact each row in place.
	w := 0
	start := 0
	for u := 0; u < n; u++ {
		end := offsets[u+1]
		row := targets[start:end]
		slices.Sort(row)
		offsets[u] = w
		for k, t := range row {
			if int(t) == u || (k > 0 && t == row[k-1]) {
				continue
			}
			targets[w] = t
			w++
		}
		start = end
	}
	offsets[n] = w
	return &pagerank.Graph{N: n, Offsets: offsets, Targets: slices.Clip(targets[:w])}
}

// Subgraph returns the graph induced by the pages keep[p] (numbered in
// their old order), with the sites that still have pages, and the old
// number of each new page.
func (g *Graph) Subgraph(keep []bool) (*Graph, []int32) {
	newID := make([]int32, g.N())
	var old []int32
	for p := range newID {
		newID[p] = -1
		if keep[p] {
			newID[p] = int32(len(old))
			old = append(old, int32(p))
		}
	}
	siteID := make([]int32, g.Sites())
	for i := range siteID {
		siteID[i] = -1
	}
	s := &Graph{Names: make([]string, len(old)), Site: make([]int32, len(old))}
	for i, p := range old {
		os := g.Site[p]
		if siteID[os] < 0 {
			siteID[os] = int32(len(s.SiteNames))
			s.SiteNames = append(s.SiteNames, g.SiteNames[os])
		}
		s.Names[i], s.Site[i] = g.Names[p], siteID[os]
	}
	var src, dst []int32
	for i, p := range old {
		for _, t := range g.Links.Out(int(p)) {
			if nt := newID[t]; nt >= 0 {
				src = append(src, int32(i))
				dst = append(dst, nt)
			}
		}
	}
	s.Links = CSR(len(old), src, dst)
	for _, p := range g.Seeds {
		if newID[p] >= 0 {
			s.Seeds = append(s.Seeds, newID[p])
		}
	}
	return s, old
}

// Stats summarise a graph.
type Stats struct {
	Pages, Sites, Links, Seeds int
	Dangling                   int     // pages without out-links
	Internal                   float64 // fraction of links within a site
	MaxSite                    int     // pages of the largest site
	MedianSite                 int     // pages of the median site
	MaxInDegree                int
}

// Stats computes the summary of g.
func (g *Graph) Stats() Stats {
	st := Stats{Pages: g.N(), Sites: g.Sites(), Links: g.Links.Edges(), Seeds: len(g.Seeds)}
	in := make([]int32, g.N())
	internal := 0
	for p := 0; p < g.N(); p++ {
		out := g.Links.Out(p)
		if len(out) == 0 {
			st.Dangling++
		}
		for _, t := range out {
			in[t]++
			if g.Site[t] == g.Site[p] {
				internal++
			}
		}
	}
	if st.Links > 0 {
		st.Internal = float64(internal) / float64(st.Links)
	}
	for _, c := range in {
		st.MaxInDegree = max(st.MaxInDegree, int(c))
	}
	sizes := g.SiteSizes()
	if len(sizes) > 0 {
		slices.SortFunc(sizes, func(a, b int) int { return cmp.Compare(a, b) })
		st.MaxSite, st.MedianSite = sizes[len(sizes)-1], sizes[len(sizes)/2]
	}
	return st
}
