package webgraph

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// makeDB writes a graph.db: a seed home page of a.cl (fetched) linking to
// a fetched page, a 404 page, a page never fetched and b.cl's home page
// (fetched, a redirect), which links back.
func makeDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	g, err := linkgraph.Open(path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	type page struct {
		url    string
		state  linkgraph.State
		status int
		found  int
	}
	pages := []page{
		{"http://a.cl/", linkgraph.StateFetched, 200, 0},
		{"http://a.cl/ok", linkgraph.StateFetched, 200, 1},
		{"http://a.cl/gone", linkgraph.StateFetched, 404, 1},
		{"http://a.cl/later", linkgraph.StatePending, 0, 1},
		{"http://b.cl/", linkgraph.StateFetched, 301, 1},
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		ids := map[string]uint64{}
		for _, p := range pages {
			site, _, err := tx.AddSite(urlnorm.SiteKey(p.url))
			if err != nil {
				return err
			}
			id, _, err := tx.AddURL(p.url, site, 0, p.found)
			if err != nil {
				return err
			}
			ids[p.url] = id
			d, err := tx.Doc(id)
			if err != nil {
				return err
			}
			d.State, d.Status = p.state, p.status
			if err := tx.PutDoc(d); err != nil {
				return err
			}
		}
		bm := roaring.New()
		for _, u := range []string{"http://a.cl/ok", "http://a.cl/gone", "http://a.cl/later", "http://b.cl/"} {
			bm.Add(uint32(ids[u]))
		}
		if err := tx.SetOutLinks(ids["http://a.cl/"], bm); err != nil {
			return err
		}
		return tx.SetOutLinks(ids["http://b.cl/"], roaring.BitmapOf(uint32(ids["http://a.cl/"])))
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadLinkGraph(t *testing.T) {
	path := makeDB(t)
	g, err := LoadLinkGraph(context.Background(), path, DBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// Fetched with a status below 400: a.cl/, a.cl/ok, b.cl/ (a redirect).
	if want := []string{"http://a.cl/", "http://a.cl/ok", "http://b.cl/"}; !slices.Equal(g.Names, want) {
		t.Fatalf("pages %q, want %q", g.Names, want)
	}
	if g.Links.Edges() != 3 || g.Sites() != 2 {
		t.Errorf("links %d, sites %d, want 3 and 2", g.Links.Edges(), g.Sites())
	}
	if len(g.Seeds) != 1 || g.Names[g.Seeds[0]] != "http://a.cl/" {
		t.Errorf("seeds %v", g.Seeds)
	}
	all, err := LoadLinkGraph(context.Background(), path, DBOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if all.N() != 5 || all.Links.Edges() != 5 {
		t.Errorf("with All: %d pages, %d links, want 5 and 5", all.N(), all.Links.Edges())
	}
}
