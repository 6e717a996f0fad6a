// Package crawlgraph is the link graph a complete, polite crawl of the
// test web (pkg/testweb) finds, built from the web's model without
// starting a server: the simulator's "testweb" graph (manager simulate
// --graph testweb). It lives beside the test web, so that the graph
// library (pkg/webgraph) does not import the test web server.
package crawlgraph

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// Options configure Load.
type Options struct {
	Config testweb.Config // the web (its listen addresses are not used)
	Seeds  int            // the home pages of the largest sites; 0 means 100
	// ProductToken is the robots.txt token whose rules decide which pages
	// a polite crawl can fetch; "" means "wire".
	ProductToken string
}

// Load builds the graph a complete, polite crawl of the test web
// finds, straight from its model (no server is started): the in-scope
// URLs that answer 200 with HTML or PDF, or a redirect, and that
// robots.txt allows, with their links (a redirect's only link is its
// target) between such pages. Images (the sites' logos) are left out, as
// the crawler's scope leaves them out. Names are normalised URLs. It uses
// every core.
func Load(ctx context.Context, opt Options) (*webgraph.Graph, error) {
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
	b := webgraph.NewBuilder()
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
	all.Links = webgraph.CSR(n, src, dst)
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
