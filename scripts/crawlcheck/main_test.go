package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBatchFigures reads the markers of a batch of a real crawl
// (testdata/col, copied from a crawl of the test web).
func TestBatchFigures(t *testing.T) {
	var out bytes.Buffer
	if err := newApp(&out).Run([]string{"crawlcheck", "batch", "--collection", "testdata/col", "1"}); err != nil {
		t.Fatal(err)
	}
	want := "urls=1745 fetched=1737 bytes=1671990 links=8796 new_urls=1520\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	for _, args := range [][]string{{"2"}, {"x"}, {}} {
		err := newApp(&out).Run(append([]string{"crawlcheck", "batch", "--collection", "testdata/col"}, args...))
		if err == nil {
			t.Errorf("batch %v: no error", args)
		}
	}
}

// TestFaultsRefusesNonEmptyDir: the scratch directory must be empty, so
// that a rerun never mixes with an old collection.
func TestFaultsRefusesNonEmptyDir(t *testing.T) {
	err := newApp(&bytes.Buffer{}).Run([]string{"crawlcheck", "faults", "--bin", t.TempDir(), "--dir", "testdata"})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("error %v, want a refusal", err)
	}
}
