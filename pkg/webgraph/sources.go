package webgraph

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// DBOptions configure LoadLinkGraph.
type DBOptions struct {
	// All keeps every document of graph.db (pending, failed and excluded
	// ones too). By default the graph holds the documents that were
	// fetched with a status below 400: the pages a crawl of the same web
	// can download again. Links to error pages and to pages never fetched
	// are dropped, as in the paper (§3.2).
	All bool
	// Timeout is how long to wait for graph.db if another process holds
	// it; 0 means 5 s.
	Timeout time.Duration
}

// LoadLinkGraph reads the graph of a collection's graph.db, opened
// read-only. Page names are the documents' URLs, sites their site keys,
// seeds the kept documents found in batch 0 (the seed list).
func LoadLinkGraph(ctx context.Context, path string, opt DBOptions) (*Graph, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	db, err := linkgraph.Open(path, true, opt.Timeout)
	if err != nil {
		return nil, fmt.Errorf("load graph %s: %w", path, err)
	}
	defer db.Close()
	g := &Graph{}
	err = db.View(func(tx *linkgraph.Tx) error {
		siteIdx := map[uint64]int32{}
		if err := tx.ForEachSite(func(s *linkgraph.Site) error {
			siteIdx[s.ID] = int32(len(g.SiteNames))
			g.SiteNames = append(g.SiteNames, s.Key)
			return nil
		}); err != nil {
			return err
		}
		pos := map[uint64]int32{}
		if err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if len(g.Names)%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if !opt.All && (d.State != linkgraph.StateFetched || d.Status >= 400 || d.Status == 0) {
				return nil
			}
			s, ok := siteIdx[d.Site]
			if !ok {
				return fmt.Errorf("doc %d (%s): unknown site %d", d.ID, d.URL, d.Site)
			}
			if len(g.Names) >= MaxPages {
				return fmt.Errorf("more than %d documents", MaxPages)
			}
			pos[d.ID] = int32(len(g.Names))
			g.Names = append(g.Names, d.URL)
			g.Site = append(g.Site, s)
			if d.Found == 0 {
				g.Seeds = append(g.Seeds, pos[d.ID])
			}
			return nil
		}); err != nil {
			return err
		}
		var src, dst []int32
		err := tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
			a, ok := pos[id]
			if !ok {
				return nil
			}
			it := bm.Iterator()
			for it.HasNext() {
				if b, ok := pos[uint64(it.Next())]; ok {
					src = append(src, a)
					dst = append(dst, b)
				}
			}
			return nil
		})
		g.Links = CSR(len(g.Names), src, dst)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load graph %s: %w", path, err)
	}
	return compactSites(g), nil
}

// compactSites drops the sites without pages and renumbers the others.
func compactSites(g *Graph) *Graph {
	used := make([]int32, len(g.SiteNames))
	for i := range used {
		used[i] = -1
	}
	var names []string
	for p, s := range g.Site {
		if used[s] < 0 {
			used[s] = int32(len(names))
			names = append(names, g.SiteNames[s])
		}
		g.Site[p] = used[s]
	}
	g.SiteNames = names
	return g
}

// TestWebOptions configure LoadTestWeb.
type TestWebOptions struct {
	Config testweb.Config // the web (its listen addresses are not used)
	Seeds  int            // the home pages of the largest sites; 0 means 100
	// ProductToken is the robots.txt token whose rules decide which pages
	// a polite crawl can fetch; "" means "wire".
	ProductToken string
}

// LoadTestWeb builds the graph a complete, polite crawl of the test web
// finds, straight from its model (no server is started): the in-scope
// URLs that answer 200 with HTML or PDF, or a redirect, and that
// robots.txt allows, with their links (a redirect's only link is its
// target) between such pages. Images (the sites' logos) are left out, as
// the crawler's scope leaves them out. Names are normalised URLs. It uses
// every core.
func LoadTestWeb(ctx context.Context, opt TestWebOptions) (*Graph, error) {
	if opt.Seeds <= 0 {
		opt.Seeds = 100
	}
	if opt.ProductToken == "" {
		opt.ProductToken = "wire"
	}
	w, err := testweb.New(opt.Config)
	if err != nil {
		return nil, fmt.Errorf("load test web: %w", err)
	}
	norm := urlnorm.New(0)
	inScope := map[string]bool{}
	for _, h := range w.HostNames() {
		inScope[h] = true
	}
	var raw, names []string
	ids := map[string]int32{}
	b := NewBuilder()
	for _, u := range w.URLs() {
		nu, err := norm.Normalize(u)
		if err != nil || !inScope[urlnorm.Host(nu)] {
			continue
		}
		if _, dup := ids[nu]; dup {
			continue
		}
		id, err := b.Page(nu, urlnorm.SiteKey(nu))
		if err != nil {
			return nil, fmt.Errorf("load test web: %w", err)
		}
		ids[nu] = id
		raw = append(raw, u)
		names = append(names, nu)
	}
	n := len(names)
	keep := make([]bool, n)
	const chunkSize = 2048
	chunks := (n + chunkSize - 1) / chunkSize
	type edges struct{ src, dst []int32 }
	out := make([]edges, chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(chunks, 1)) {
		wg.Go(func() {
			for c := int(next.Add(1) - 1); c < chunks; c = int(next.Add(1) - 1) {
				if ctx.Err() != nil {
					return
				}
				var e edges
				for i := c * chunkSize; i < min((c+1)*chunkSize, n); i++ {
					info, ok := w.Page(raw[i])
					if !ok || info.Status >= 400 || w.Disallowed(raw[i], opt.ProductToken) || !isDocument(info) {
						continue
					}
					keep[i] = true
					links := info.Links
					if info.Location != "" {
						links = []string{info.Location}
					}
					for _, l := range links {
						nl, err := norm.Normalize(l)
						if err != nil {
							continue
						}
						if t, ok := ids[nl]; ok {
							e.src = append(e.src, int32(i))
							e.dst = append(e.dst, t)
						}
					}
				}
				out[c] = e
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load test web: %w", err)
	}
	all, err := b.Graph()
	if err != nil {
		return nil, fmt.Errorf("load test web: %w", err)
	}
	var src, dst []int32
	for _, e := range out {
		src = append(src, e.src...)
		dst = append(dst, e.dst...)
	}
	all.Links = CSR(n, src, dst)
	for _, s := range w.SeedURLs(opt.Seeds) {
		if ns, err := norm.Normalize(s); err == nil {
			if id, ok := ids[ns]; ok {
				all.Seeds = append(all.Seeds, id)
			}
		}
	}
	g, _ := all.Subgraph(keep)
	return g, nil
}

// isDocument tells the pages a crawl keeps: redirects, HTML and PDF.
func isDocument(info testweb.PageInfo) bool {
	if info.Status >= 300 {
		return true
	}
	m := strings.ToLower(info.MIME)
	return strings.HasPrefix(m, "text/html") || strings.HasPrefix(m, "application/pdf")
}
