package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareGolden runs `crawlcheck compare` on two hand-made
// bench-timeline.sh directories (testdata/compare): the runs both have
// (crawl, polite; the harvester run only the new one has is left out),
// the quantile ratios, the coverage points both measured, and the peak
// memory per stage with GNU time's own lines skipped and the harvester
// marked over the limit (testdata/compare.golden; go test -update
// rewrites it).
func TestCompareGolden(t *testing.T) {
	var out bytes.Buffer
	err := newApp(&out).Run([]string{"crawlcheck", "compare", "--base", "testdata/compare/base", "--new", "testdata/compare/new"})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "compare.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("compare:\n%s\nwant (%s):\n%s", out.Bytes(), golden, want)
	}
}

// TestCompareErrors: bad input is named.
func TestCompareErrors(t *testing.T) {
	bad := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bad, "crawl"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/compare/base/crawl/timeline.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "crawl", "timeline.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "crawl", "stages.time"), []byte("manager 0.1 lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, c := range []struct {
		name, base, want string
	}{
		{"bad peak memory", bad, `stages.time:1: peak memory "lots"`},
		{"no runs", empty, "no run with a timeline.json in both"},
	} {
		err := newApp(&bytes.Buffer{}).Run([]string{"crawlcheck", "compare", "--base", c.base, "--new", "testdata/compare/new"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
