package manager

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// buildFromTestWeb writes the link graph of the synthetic test web
// (pkg/testweb, the same generator the demo and the crawl tests serve)
// into a new collection at dir, without crawling: every page the web
// serves becomes a document, every in-scope link an out-link. About half
// the pages (chosen by a hash of the URL) are recorded as fetched once a
// week ago, the others as pending, so that both new pages and revisits
// compete. Depth is the number of path segments (the test web's trees
// grow one segment per level). It writes scale.done with the link count.
//
//	WIRE_SCALE_SOURCE=testweb WIRE_SCALE_PAGES=1000000 go test -run TestScale -v -timeout 0 ./pkg/manager
func buildFromTestWeb(dir string, pages int, log func(string, ...any)) error {
	web, err := testweb.New(testweb.Config{
		Seed: 1, Hosts: max(pages/100, 10), Pages: pages, MaxPages: 25000,
		OutOfScope: -1, HTTPAddr: "127.0.0.1:8080", // a fixed port puts it in URLs; nothing is served
	})
	if err != nil {
		return err
	}
	col, err := collection.Create(dir, config.Render(config.Defaults()))
	if err != nil {
		return err
	}
	g, err := linkgraph.Open(col.GraphPath(), false, time.Minute)
	if err != nil {
		return err
	}
	defer g.Close()
	norm := urlnorm.New(0)
	now := testNow
	sitePages := map[string]int{}

	// Pass 1: one document per page, in chunks of 20,000 per transaction.
	var chunk []testweb.PageInfo
	flushDocs := func() error {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for _, p := range chunk {
				u, err := norm.Normalize(p.URL)
				if err != nil {
					continue
				}
				key := urlnorm.SiteKey(u)
				sid, _, err := tx.AddSite(key)
				if err != nil {
					return err
				}
				path, _, _ := strings.Cut(strings.TrimPrefix(u, key), "?")
				d := &linkgraph.Doc{Site: sid, Depth: min(strings.Count(strings.Trim(path, "/"), "/")+1, 15), State: linkgraph.StatePending}
				if path == "/" {
					d.Depth = 0
				}
				h := fnv.New32a()
				h.Write([]byte(u))
				if p.Status == 200 && h.Sum32()%2 == 0 {
					d.State, d.Visits, d.Status = linkgraph.StateFetched, 1, 200
					d.Fetched = now.Add(-7 * 24 * time.Hour)
					d.FirstFetched = d.Fetched
					d.History = []linkgraph.Visit{{Time: d.Fetched, Status: 200}}
				}
				if _, created, err := tx.AddURLDoc(u, d); err != nil {
					return err
				} else if created {
					sitePages[key]++
				}
			}
			return nil
		})
		chunk = chunk[:0]
		return err
	}
	t0 := time.Now()
	err = web.ForEachPage(func(p testweb.PageInfo) error {
		chunk = append(chunk, testweb.PageInfo{URL: p.URL, Status: p.Status})
		if len(chunk) == 20000 {
			return flushDocs()
		}
		return nil
	})
	if err == nil {
		err = flushDocs()
	}
	if err != nil {
		return fmt.Errorf("build from test web: documents: %w", err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		for key, n := range sitePages {
			sid, _ := tx.SiteID(key)
			s, err := tx.Site(sid)
			if err != nil {
				return err
			}
			s.Pages = n
			if err := tx.PutSite(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	docs := 0
	for _, n := range sitePages {
		docs += n
	}
	log("test web: %d documents on %d sites in %s", docs, len(sitePages), time.Since(t0).Round(time.Second))

	// Pass 2: out-links, resolved to ids.
	type out struct {
		url   string
		links []string
	}
	var outs []out
	var links uint64
	flushLinks := func() error {
		err := g.Update(func(tx *linkgraph.Tx) error {
			for _, o := range outs {
				id, ok := tx.LookupURL(o.url)
				if !ok {
					continue
				}
				bm := roaring.New()
				for _, l := range o.links {
					if tid, ok := tx.LookupURL(l); ok {
						bm.Add(uint32(tid))
					}
				}
				if bm.IsEmpty() {
					continue
				}
				links += bm.GetCardinality()
				if err := tx.SetOutLinks(id, bm); err != nil {
					return err
				}
			}
			return nil
		})
		outs = outs[:0]
		return err
	}
	err = web.ForEachPage(func(p testweb.PageInfo) error {
		u, err := norm.Normalize(p.URL)
		if err != nil || len(p.Links) == 0 {
			return nil
		}
		o := out{url: u}
		for _, l := range p.Links {
			if n, err := norm.Normalize(l); err == nil {
				o.links = append(o.links, n)
			}
		}
		outs = append(outs, o)
		if len(outs) == 20000 {
			return flushLinks()
		}
		return nil
	})
	if err == nil {
		err = flushLinks()
	}
	if err != nil {
		return fmt.Errorf("build from test web: links: %w", err)
	}
	log("test web: %d links in %s", links, time.Since(t0).Round(time.Second))
	return os.WriteFile(filepath.Join(dir, "scale.done"), []byte(fmt.Sprint(links)), 0o644)
}
