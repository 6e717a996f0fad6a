package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirecrawl/wire/pkg/longtest"
)

// TestBenchPartitions runs scripts/bench-partitions.sh at a small size
// (40 hosts, about 800 pages, six addresses, half the sites subdomains of
// a few registrable domains) for K = 1 and 2, as an operator would: the
// two partitions' crawls side by side until the set is done. The report
// must say that both runs finished, that no URL was fetched by both
// partitions, that no server address was asked by two (the request
// log's audit), that every exchange line was delivered exactly once, and
// that the two partitions fetched as many pages as the one collection.
func TestBenchPartitions(t *testing.T) {
	longtest.Need(t, "scripts/bench-partitions.sh on a small web, K = 1 and 2 (about 5 minutes)")
	bin := stageBinaries(t)
	dir := filepath.Join(t.TempDir(), "bench")
	cmd := exec.Command("bash", "bench-partitions.sh")
	cmd.Env = append(os.Environ(), "WIRE_BIN="+bin, "WIRE_BUILD=0", "BENCH_TOOLS="+t.TempDir(), "BENCH_DIR="+dir,
		"BENCH_HOSTS=40", "BENCH_PAGES=800", "BENCH_MAX_PAGES=60", "BENCH_ADDRESSES=6", "BENCH_K=1 2", "BENCH_LIMIT=900")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench-partitions.sh: %v\n%s", err, out)
	}
	report, err := os.ReadFile(filepath.Join(dir, "partitions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(report)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^== K = 1: .*\n +done after`),
		regexp.MustCompile(`(?m)^== K = 2: .*\n +done after`),
		regexp.MustCompile(`K = 2: \d+ batches, \d+ pages fetched, 0 fetched by two partitions or more`),
		regexp.MustCompile(`server addresses asked by two partitions or more \(request log\): 0 of [1-9]`),
		regexp.MustCompile(`exchange: [1-9]\d* lines taken in by the receivers' intakes, 0 files not taken, 0 taken never published: every line delivered exactly once`),
		regexp.MustCompile(`against K = 1: pages fetched (\d+) / (\d+) = 1\.0000`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the report has no match for %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "NOT") {
		t.Errorf("the report says something is NOT right:\n%s", text)
	}
}
