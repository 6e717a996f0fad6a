package crawlgraph

import (
	"context"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

func TestLoad(t *testing.T) {
	cfg := testweb.Config{Seed: 4, Hosts: 40, MaxPages: 300}
	g, err := Load(context.Background(), Options{Config: cfg, Seeds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	st := g.Stats()
	t.Logf("%+v", st)
	w, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Every in-scope host whose robots.txt lets a crawler in (one answers
	// 500, which forbids everything).
	open := 0
	for _, h := range w.HostNames() {
		if !w.Disallowed("http://"+h+"/", "wire") {
			open++
		}
	}
	if st.Sites != open || open < 38 || len(g.Seeds) != 5 {
		t.Errorf("%d sites (want the %d open in-scope hosts), %d seeds", st.Sites, open, len(g.Seeds))
	}
	norm := urlnorm.New(0)
	for p, name := range g.Names {
		info, ok := w.Page(name)
		if !ok || info.Status >= 400 || w.Disallowed(name, "wire") || strings.HasPrefix(info.MIME, "image/") {
			t.Fatalf("%s (status %d, in model %v) should not be a page", name, info.Status, ok)
		}
		truth := map[string]bool{}
		for _, l := range append(info.Links, info.Location) {
			if u, err := norm.Normalize(l); err == nil {
				truth[u] = true
			}
		}
		for _, tgt := range g.Links.Out(p) {
			if !truth[g.Names[tgt]] {
				t.Fatalf("%s links %s, which the page does not", name, g.Names[tgt])
			}
		}
	}
	if n := g.Reachable(); n != g.N() {
		t.Errorf("%d of %d pages reachable from the seeds", n, g.N())
	}
}
