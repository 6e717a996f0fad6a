package simulate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
)

// smallSetup simulates breadth-first on a generated national web of 400
// pages.
func smallSetup() Setup {
	return Setup{
		Config:         config.Defaults(),
		Generate:       GeneratorNational,
		Generators:     map[string]Generator{GeneratorNational: GenerateNational},
		GenerateParams: GenerateParams{Pages: 400, MaxSitePages: 50, OutDegree: 5, Seed: 1},
		Strategies:     "breadth-first",
		Model:          ModelPaper,
		Robots:         1,
		Wait:           15 * time.Second,
		FetchTime:      time.Second,
		Seed:           1,
		TauSample:      100,
		Points:         20,
	}
}

func TestExecute(t *testing.T) {
	dir := t.TempDir()
	s := smallSetup()
	s.WriteGraph = filepath.Join(dir, "g.graph.gz")
	s.Out = filepath.Join(dir, "out")
	var out bytes.Buffer
	if err := Execute(context.Background(), s, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"graph\tnational web of 400 pages (seed 1): 400 pages", "wrote\t" + s.WriteGraph, "pagerank\t", "history\t", "breadth-first", "wrote\t" + s.Out + "/{"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{FileCurves, FileTable, FilePageRank, FileTime, FileQueue} {
		if fi, err := os.Stat(filepath.Join(s.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// The graph written is read back by LoadGraph and simulated from two
	// of its pages named in a seed file.
	g, err := LoadGraph(context.Background(), s.WriteGraph, false)
	if err != nil || g.N() != 400 {
		t.Fatalf("graph read back: %v", err)
	}
	seeds := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seeds, []byte("# two\n"+g.Names[3]+"\n\n"+g.Names[7]+"\n"+g.Names[3]+"\n"), 0o644)
	s2 := smallSetup()
	s2.Generate, s2.GraphFile, s2.SeedsFile, s2.Strategies = "", s.WriteGraph, seeds, "none"
	out.Reset()
	if err := Execute(context.Background(), s2, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "g.graph.gz: 400 pages") || !strings.Contains(out.String(), ", 2 seeds,") || strings.Contains(out.String(), "pagerank") {
		t.Errorf("seed file, no strategy:\n%s", out.String())
	}
	s2.SeedsFile, s2.RandomSeeds = "", 5
	out.Reset()
	if err := Execute(context.Background(), s2, &out); err != nil || !strings.Contains(out.String(), ", 5 seeds,") {
		t.Errorf("random seeds: %v\n%s", err, out.String())
	}
}

func TestExecuteErrors(t *testing.T) {
	dir := t.TempDir()
	badSeeds := filepath.Join(dir, "seeds.txt")
	os.WriteFile(badSeeds, []byte("http://not.a.page/\n"), 0o644)
	for _, tc := range []struct {
		name  string
		edit  func(*Setup)
		usage bool
		want  string
	}{
		{"model", func(s *Setup) { s.Model = "parallel" }, true, `unknown --model "parallel"`},
		{"strategy", func(s *Setup) { s.Strategies = "depth-first" }, true, "--strategies"},
		{"generator", func(s *Setup) { s.Generate = "moon" }, true, `unknown --generate "moon" (want national)`},
		{"two graphs", func(s *Setup) { s.GraphFile = "x" }, true, "give one of --graph, --graph-db and --generate"},
		{"generator parameters", func(s *Setup) { s.GenerateParams.Pages = -1 }, true, "simulate: "},
		{"seed not a page", func(s *Setup) { s.SeedsFile = badSeeds }, true, "seeds.txt:1: \"http://not.a.page/\" is not a page of the graph"},
		{"no graph.db", func(s *Setup) { s.Generate, s.Collection = "", dir }, false, "no graph"},
		{"graph file missing", func(s *Setup) { s.Generate, s.GraphFile = "", filepath.Join(dir, "nope") }, false, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := smallSetup()
			tc.edit(&s)
			err := Execute(context.Background(), s, &bytes.Buffer{})
			if err == nil || errors.Is(err, ErrUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (usage %v), want %q, usage %v", err, errors.Is(err, ErrUsage), tc.want, tc.usage)
			}
			if err != nil && strings.Contains(err.Error(), ErrUsage.Error()) {
				t.Errorf("error %q carries the sentinel's text", err)
			}
		})
	}
}

func TestGeneratorNames(t *testing.T) {
	gen := Generator(GenerateNational)
	for _, tc := range []struct {
		gens map[string]Generator
		want string
	}{
		{nil, "none is available"},
		{map[string]Generator{"b": gen}, "b"},
		{map[string]Generator{"testweb": gen, GeneratorNational: gen}, "national or testweb"},
		{map[string]Generator{"c": gen, "a": gen, GeneratorNational: gen}, "national, a or c"},
	} {
		if got := generatorNames(tc.gens); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.gens, got, tc.want)
		}
	}
}
