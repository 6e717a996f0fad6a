// Package frontiersim simulates crawls over a known link graph to measure
// how the frontier grows under the Sydney strategy and the fixed budget
// (Castillo, Nelli, Panconesi, "Crawling the Web with Limited Memory",
// Tables 1 and 2), with the seeder's own sample (internal/sample). It
// simulates a page at a time, as the paper does; docs/frontier.md shows
// its tables for the test web.
package frontiersim

import (
	"fmt"
	"sort"

	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/seeder/internal/sample"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Graph is a link graph: node i has URL URLs[i] and links to Out[i]
// (distinct targets, page order).
type Graph struct {
	URLs  []string
	Out   [][]int32
	Seeds []int32
	Links int // total of len(Out[i])
}

// Pages answers, for a URL, the URLs it links to (absolute, as found in
// the page) and whether it is a page at all.
type Pages func(url string) (links []string, ok bool)

// Build explores the graph from seeds through pages, normalising every
// URL and keeping those in scope: nodes are the in-scope URLs reachable
// from the seeds (pages that do not exist are nodes without links, as a
// crawler meets them).
func Build(seeds []string, pages Pages, norm *urlnorm.Normalizer, sc *scope.Scope) (*Graph, error) {
	g := &Graph{}
	ids := map[string]int32{}
	node := func(raw string) (int32, bool) {
		u, err := norm.Normalize(raw)
		if err != nil || sc.Check(u) != nil {
			return 0, false
		}
		if id, ok := ids[u]; ok {
			return id, true
		}
		id := int32(len(g.URLs))
		ids[u] = id
		g.URLs = append(g.URLs, u)
		g.Out = append(g.Out, nil)
		return id, true
	}
	for _, s := range seeds {
		id, ok := node(s)
		if !ok {
			return nil, fmt.Errorf("seed %s is out of scope", s)
		}
		g.Seeds = append(g.Seeds, id)
	}
	for i := 0; i < len(g.URLs); i++ {
		links, _ := pages(g.URLs[i])
		seen := map[int32]bool{}
		for _, l := range links {
			if id, ok := node(l); ok && !seen[id] {
				seen[id] = true
				g.Out[i] = append(g.Out[i], id)
			}
		}
		g.Links += len(g.Out[i])
	}
	return g, nil
}

// Variant says where the Sydney strategy keeps what it does not take now.
type Variant int

const (
	// Disk is the seeder's way (the paper's §3.2 alternative): the links
	// to the new URLs not sampled are stored sequentially on disk and the
	// URLs get no id; when the frontier is empty they are released.
	Disk Variant = iota
	// Revisit is the paper's Figure 2: the page goes to a secondary queue
	// S and is visited again, when P is empty, for its remaining links.
	Revisit
)

// Strategy is one simulated crawl.
type Strategy struct {
	Variant Variant
	T       int  // new URLs taken per page; 0 = all (breadth-first)
	Budget  int  // most URLs in memory (Disk: |P|; Revisit: |P|+|S|); 0 = no limit
	Drop    bool // Disk with a budget: forget the URLs over it (else park them)
}

// Result is what a simulated crawl did.
type Result struct {
	Visited   int // distinct pages fetched
	Revisits  int // second and later fetches of a page (Revisit)
	MaxQueue  int // largest pending set: |P| (Disk), |P|+|S| (Revisit)
	MaxParked int // most links parked on disk at once (Disk)
	Parked    int // links parked in all
}

// fifo is a queue of node ids.
type fifo struct {
	buf  []int32
	head int
}

func (q *fifo) push(v int32) { q.buf = append(q.buf, v) }
func (q *fifo) len() int     { return len(q.buf) - q.head }
func (q *fifo) pop() int32 {
	v := q.buf[q.head]
	q.head++
	if q.head > 1<<16 && q.head*2 > len(q.buf) {
		q.buf = append(q.buf[:0], q.buf[q.head:]...)
		q.head = 0
	}
	return v
}

// Simulate crawls g from its seeds with strategy s, breadth-first.
func Simulate(g *Graph, s Strategy) Result {
	if s.Variant == Revisit {
		return simulateRevisit(g, s)
	}
	var r Result
	seen := make([]bool, len(g.URLs)) // has an id: pending or visited
	var p fifo
	type link struct{ src, dst int32 }
	var parked []link
	admit := func(w int32) bool {
		if s.Budget > 0 && p.len() >= s.Budget {
			return false
		}
		seen[w] = true
		p.push(w)
		return true
	}
	for _, v := range g.Seeds {
		if !seen[v] {
			seen[v] = true
			p.push(v)
		}
	}
	var fresh []int32
	var urls []string
	for {
		if p.len() == 0 {
			if len(parked) == 0 {
				break
			}
			// Release, oldest first: what the budget does not take is
			// parked again (or forgotten).
			var rest []link
			for _, l := range parked {
				if seen[l.dst] {
					continue
				}
				if !admit(l.dst) && !s.Drop {
					rest = append(rest, l)
				}
			}
			parked = rest
			continue
		}
		v := p.pop()
		r.Visited++
		fresh, urls = fresh[:0], urls[:0]
		for _, w := range g.Out[v] {
			if !seen[w] {
				fresh = append(fresh, w)
				urls = append(urls, g.URLs[w])
			}
		}
		chosen := sample.Choose(uint64(v), urls, s.T)
		for i, w := range fresh {
			if chosen[i] && admit(w) {
				continue
			}
			if chosen[i] && s.Drop {
				continue // over the budget, forgotten
			}
			parked = append(parked, link{v, w})
			r.Parked++
		}
		r.MaxQueue = max(r.MaxQueue, p.len())
		r.MaxParked = max(r.MaxParked, len(parked))
	}
	return r
}

// simulateRevisit is the paper's Figure 2, with its fixed budget (§3.3:
// once the limit is reached, no link enters either queue until there is
// room).
func simulateRevisit(g *Graph, s Strategy) Result {
	var r Result
	seen := make([]bool, len(g.URLs))
	visited := make([]bool, len(g.URLs))
	var p, sq fifo
	room := func() bool { return s.Budget <= 0 || p.len()+sq.len() < s.Budget }
	for _, v := range g.Seeds {
		if !seen[v] {
			seen[v] = true
			p.push(v)
		}
	}
	var fresh []int32
	var urls []string
	for {
		if p.len() == 0 {
			if sq.len() == 0 {
				break
			}
			p, sq = sq, fifo{}
		}
		v := p.pop()
		if visited[v] {
			r.Revisits++
		} else {
			visited[v] = true
			r.Visited++
		}
		fresh, urls = fresh[:0], urls[:0]
		for _, w := range g.Out[v] {
			if !seen[w] {
				fresh = append(fresh, w)
				urls = append(urls, g.URLs[w])
			}
		}
		chosen := sample.Choose(uint64(v), urls, s.T)
		for i, w := range fresh {
			if chosen[i] && room() {
				seen[w] = true
				p.push(w)
			}
		}
		if s.T > 0 && len(fresh) > s.T && room() {
			sq.push(v)
		}
		r.MaxQueue = max(r.MaxQueue, p.len()+sq.len())
	}
	return r
}

// Table1 is the paper's Table 1 for g: for each t, the largest pending set
// relative to the collection and to breadth-first, the revisits of the
// paper's variant, and for the seeder's variant the largest pending set,
// the most links on disk and the coverage.
func Table1(g *Graph, ts []int) string {
	bfs := Simulate(g, Strategy{})
	n := float64(bfs.Visited)
	out := fmt.Sprintf("| t | paper (revisit): max \\|P\\|+\\|S\\| | vs BFS | re-visited pages | seeder (disk): max pending | vs BFS | max links parked | coverage |\n|---|---|---|---|---|---|---|---|\n")
	for _, t := range ts {
		rv := Simulate(g, Strategy{Variant: Revisit, T: t})
		dk := Simulate(g, Strategy{Variant: Disk, T: t})
		name := fmt.Sprint(t)
		if t == 0 {
			name = "all (BFS)"
		}
		out += fmt.Sprintf("| %s | %.3f | %.2f | %.1f %% | %.3f | %.2f | %d (%.2f per page) | %.1f %% |\n", name,
			float64(rv.MaxQueue)/n, float64(rv.MaxQueue)/float64(bfs.MaxQueue), 100*float64(rv.Revisits)/n,
			float64(dk.MaxQueue)/n, float64(dk.MaxQueue)/float64(bfs.MaxQueue), dk.MaxParked, float64(dk.MaxParked)/n,
			100*float64(dk.Visited)/n)
	}
	return out
}

// Table2 is the paper's Table 2 for g: the coverage of the fixed-budget
// strategy for each t and each budget (a fraction of the pages reachable),
// for the paper's variant and for the seeder with
// seeder.frontier_overflow = "drop"; with "park" the coverage is always
// full, and the table gives the most links parked instead.
func Table2(g *Graph, ts []int, budgets []float64) string {
	n := Simulate(g, Strategy{}).Visited
	head := "| t | variant |"
	sep := "|---|---|"
	for _, b := range budgets {
		head += fmt.Sprintf(" budget %.0f %% |", 100*b)
		sep += "---|"
	}
	out := head + "\n" + sep + "\n"
	for _, t := range ts {
		rows := []struct {
			name string
			s    Strategy
		}{
			{"paper (revisit)", Strategy{Variant: Revisit, T: t}},
			{"seeder, drop", Strategy{Variant: Disk, T: t, Drop: true}},
			{"seeder, park", Strategy{Variant: Disk, T: t}},
		}
		for _, row := range rows {
			line := fmt.Sprintf("| %d | %s |", t, row.name)
			for _, b := range budgets {
				s := row.s
				s.Budget = max(1, int(b*float64(n)))
				r := Simulate(g, s)
				cov := 100 * float64(r.Visited) / float64(n)
				if row.name == "seeder, park" {
					line += fmt.Sprintf(" %.1f %% (%d parked at most) |", cov, r.MaxParked)
				} else {
					line += fmt.Sprintf(" %.1f %% |", cov)
				}
			}
			out += line + "\n"
		}
	}
	return out
}

// Degrees describes the out-degree distribution of g as the paper's
// Figure 5 does: the fraction of pages with more than t out-links.
func Degrees(g *Graph, ts []int) string {
	out := fmt.Sprintf("%d pages, %d links (%.1f per page); pages with more than", len(g.URLs), g.Links, float64(g.Links)/float64(len(g.URLs)))
	deg := make([]int, len(g.Out))
	for i, o := range g.Out {
		deg[i] = len(o)
	}
	sort.Ints(deg)
	for _, t := range ts {
		k := sort.SearchInts(deg, t+1)
		out += fmt.Sprintf(" %d links: %.1f %%;", t, 100*float64(len(deg)-k)/float64(len(deg)))
	}
	return out
}
