package simweb

import (
	"context"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/simulate"
)

func TestGenerate(t *testing.T) {
	p := simulate.GenerateParams{Hosts: 40, MaxSitePages: 100, Seed: 3}
	src, err := Generate(context.Background(), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if src.Before != nil || src.Graph.N() == 0 || len(src.Graph.Seeds) == 0 || src.Desc != "test web of 40 hosts (seed 3)" {
		t.Fatalf("without history: %d pages, %d seeds, before %v, desc %q", src.Graph.N(), len(src.Graph.Seeds), src.Before != nil, src.Desc)
	}
	again, err := Generate(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if again.Graph.N() != src.Graph.N() {
		t.Errorf("same parameters: %d pages, then %d", src.Graph.N(), again.Graph.N())
	}
	// The previous crawl: 55 % of the hosts by default, fewer pages.
	if again.Before == nil || again.Before.N() == 0 || again.Before.N() >= again.Graph.N() {
		t.Fatalf("history: %v", again.Before)
	}
	p.HistoryHosts = 10
	small, err := Generate(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if small.Before.N() >= again.Before.N() {
		t.Errorf("history of 10 hosts has %d pages, of 22 hosts %d", small.Before.N(), again.Before.N())
	}
}

// The generator plugs into simulate.Execute as `manager simulate
// --generate testweb` does.
func TestExecuteTestWeb(t *testing.T) {
	var out strings.Builder
	err := simulate.Execute(context.Background(), simulate.Setup{
		Config:         config.Defaults(),
		Generate:       Name,
		Generators:     map[string]simulate.Generator{Name: Generate},
		GenerateParams: simulate.GenerateParams{Hosts: 30, MaxSitePages: 100, Seed: 1},
		Strategies:     "historical-parent,omniscient",
		Model:          simulate.ModelPaper,
		Robots:         1,
		Seed:           1,
		TauSample:      100,
		Points:         10,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"test web of 30 hosts", "history\t", "historical-parent", "omniscient"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
