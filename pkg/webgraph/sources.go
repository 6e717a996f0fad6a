package webgraph

import (
	"context"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/linkgraph"
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
