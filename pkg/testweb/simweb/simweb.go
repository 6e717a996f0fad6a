// Package simweb lets the simulator (pkg/simulate) generate its graph
// from the test web's model: the graph a complete crawl of the test web
// would find (pkg/testweb/crawlgraph), and for the historical strategies
// the same web with fewer hosts as the previous crawl. It lives under
// pkg/testweb because pkg/layers_test.go lets no library import the test
// web; `manager simulate --generate testweb` passes Generate to
// simulate.Execute.
package simweb

import (
	"context"
	"fmt"
	"math"

	"github.com/wirecrawl/wire/pkg/simulate"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/testweb/crawlgraph"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

// Name is the generator's name (`manager simulate --generate testweb`).
const Name = "testweb"

// Generate is a simulate.Generator: the test web of p.Hosts in-scope
// hosts (seed p.Seed, largest site p.MaxSitePages pages) and, when
// history is true, the test web of p.HistoryHosts hosts (0 means 55 % of
// p.Hosts, rounded) as the previous crawl.
func Generate(ctx context.Context, p simulate.GenerateParams, history bool) (*simulate.Source, error) {
	load := func(hosts int) (*webgraph.Graph, error) {
		return crawlgraph.Load(ctx, crawlgraph.Options{Config: testweb.Config{Seed: int64(p.Seed), Hosts: hosts, MaxPages: p.MaxSitePages}})
	}
	g, err := load(p.Hosts)
	if err != nil {
		return nil, err
	}
	src := &simulate.Source{Graph: g, Desc: fmt.Sprintf("test web of %d hosts (seed %d)", p.Hosts, p.Seed)}
	if history {
		old := p.HistoryHosts
		if old <= 0 {
			old = int(math.Round(0.55 * float64(p.Hosts)))
		}
		if src.Before, err = load(old); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	return src, nil
}
