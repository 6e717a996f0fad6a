package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/simulate"
	"github.com/wirecrawl/wire/pkg/webgraph"
)

func TestSimulateGenerated(t *testing.T) {
	out := t.TempDir()
	graph := filepath.Join(out, "g.graph.gz")
	code, stdout, stderr := runApp(t, "simulate", "-q", "--generate", "national", "--pages", "3000", "--max-site-pages", "500",
		"--out", out, "--write-graph", graph, "--points", "50")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range append([]string{"graph", "3000 pages", "history", "avg PR"}, simulate.Strategies()...) {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{simulate.FileCurves, simulate.FileTable, simulate.FilePageRank, simulate.FileTime, simulate.FileQueue} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	f, err := os.Open(filepath.Join(out, simulate.FileCurves))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	strategies := map[string]bool{}
	for _, r := range recs[1:] {
		strategies[r[1]] = true
	}
	if len(strategies) != len(simulate.Strategies()) {
		t.Errorf("curves of %d strategies, want %d", len(strategies), len(simulate.Strategies()))
	}

	// The graph written is read back, and simulated from a seed list.
	g, err := webgraph.ReadFile(graph)
	if err != nil {
		t.Fatal(err)
	}
	if g.N() != 3000 {
		t.Fatalf("written graph has %d pages", g.N())
	}
	seeds := filepath.Join(out, "seeds.txt")
	os.WriteFile(seeds, []byte("# two seeds\n"+g.Names[g.Seeds[0]]+"\n"+g.Names[g.Seeds[1]]+"\n"), 0o644)
	code, stdout, stderr = runApp(t, "simulate", "-q", "--graph", graph, "--seeds", seeds, "--strategies", "breadth-first,opic",
		"--robots", "10", "--wait", "5s", "--sydney-t", "8")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 seeds") || !strings.Contains(stdout, "opic") || strings.Contains(stdout, "omniscient") {
		t.Errorf("output:\n%s", stdout)
	}

	// A previous crawl given as a file: here the same graph, so every
	// page is known and historical-omniscient is omniscient.
	code, stdout, stderr = runApp(t, "simulate", "-q", "--graph", graph, "--history", graph, "--strategies", "history")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "history\t3000 pages (100%) were in the previous crawl and hold 100% of the PageRank") || !strings.Contains(stdout, "historical-random") {
		t.Errorf("output:\n%s", stdout)
	}
}

func TestSimulateBatchModel(t *testing.T) {
	dir := newCollection(t)
	code, stdout, stderr := runApp(t, "simulate", "-q", "-c", dir, "--all-docs", "--model", "batch",
		"--strategies", "breadth-first,backlink,omniscient", "--manager-batch-size", "2")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"4 pages", "1 seeds", "breadth-first  batch", "backlink  batch", "4/4"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestSimulateTestWeb(t *testing.T) {
	code, stdout, stderr := runApp(t, "simulate", "-q", "--generate", "testweb", "--hosts", "60", "--max-site-pages", "200",
		"--strategies", "history,omniscient")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"test web of 60 hosts", "history", "historical-parent", "omniscient"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestSimulateUsage(t *testing.T) {
	dir := newCollection(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--generate", "national", "--pages", "100", "--strategies", "depth-first"}, command.ExitUsage, "unknown strategy"},
		{[]string{"--generate", "national", "--model", "parallel"}, command.ExitUsage, "unknown --model"},
		{[]string{"--generate", "moon"}, command.ExitUsage, "unknown --generate"},
		{[]string{"--generate", "national", "--graph", "x"}, command.ExitUsage, "give one of"},
		{[]string{"-c", dir, "--strategies", "historical-zero", "--all-docs"}, command.ExitUsage, "need --history"},
		// The collection's pages were never fetched: no seed is left.
		{[]string{"-c", dir}, command.ExitUsage, "no seeds"},
		{[]string{"--graph", filepath.Join(dir, "nope")}, command.ExitFailure, "no such file"},
		{[]string{"extra"}, command.ExitUsage, "takes no arguments"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runApp(t, append([]string{"simulate", "-q"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
		}
	}
	// With "all" and no history, the historical strategies are left out.
	code, stdout, stderr := runApp(t, "simulate", "-c", dir, "--all-docs", "--strategies", "all")
	if code != command.ExitOK || strings.Contains(stdout, "historical") || !strings.Contains(stderr, "historical strategies left out") {
		t.Errorf("all without history: exit %d\n%s%s", code, stdout, stderr)
	}
}
