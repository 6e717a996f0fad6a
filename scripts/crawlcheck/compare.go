package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// compareCommand is `crawlcheck compare`.
func compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare two bench-timeline.sh runs of one web: another build's (--base) and this one's (--new)",
		Description: `Reads, for each of the runs crawl, harvester and polite present in both
directories (a BENCH_DIR of scripts/bench-timeline.sh), the run's
timeline.json and its stages.time (one "stage wall-seconds peak-KB" line
per stage run, GNU time's), and prints side by side:

  - the times to 50, 90, 99 and 100 % of the reachable pages, and new / base;
  - the coverage against the polite bound at each time measured;
  - the crawl order's cumulative PageRank over the sorted bound;
  - per stage, the peak memory (the largest maximum resident set of its
    runs) and new / base, marked "over" past --memory-limit (issue 34:
    peak memory per stage within 10 % of main's in the same run).

bench-timeline.sh runs it when BENCH_BASE names a revision to compare
with.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "base", Required: true, Usage: "BENCH_DIR of the base build's run"},
			&cli.StringFlag{Name: "new", Required: true, Usage: "BENCH_DIR of this build's run"},
			&cli.Float64Flag{Name: "memory-limit", Value: 1.10, Usage: "largest new / base peak memory per stage that is not marked over"},
		},
		Action: func(c *cli.Context) error {
			base, err := readBenchDir(c.String("base"))
			if err != nil {
				return err
			}
			cur, err := readBenchDir(c.String("new"))
			if err != nil {
				return err
			}
			if len(base) == 0 || len(cur) == 0 {
				return fmt.Errorf("compare %s and %s: no run with a timeline.json in both", c.String("base"), c.String("new"))
			}
			printComparison(c.App.Writer, base, cur, c.Float64("memory-limit"))
			return nil
		},
	}
}

// benchRuns are the runs of bench-timeline.sh, in its order.
var benchRuns = []string{"crawl", "harvester", "polite"}

// benchRun is what one run of bench-timeline.sh left in its directory.
type benchRun struct {
	timeline Timeline
	// peakKB is each stage's largest maximum resident set, in KB.
	peakKB map[string]int64
}

// readBenchDir reads the runs of a bench-timeline.sh directory that have
// a timeline.json; a run without one was not made.
func readBenchDir(dir string) (map[string]*benchRun, error) {
	out := map[string]*benchRun{}
	for _, r := range benchRuns {
		data, err := os.ReadFile(filepath.Join(dir, r, "timeline.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read timeline: %w", err)
		}
		run := &benchRun{}
		if err := json.Unmarshal(data, &run.timeline); err != nil {
			return nil, fmt.Errorf("decode timeline %s: %w", filepath.Join(dir, r, "timeline.json"), err)
		}
		if run.peakKB, err = readStageTimes(filepath.Join(dir, r, "stages.time")); err != nil {
			return nil, err
		}
		out[r] = run
	}
	return out, nil
}

// readStageTimes reads a stages.time file: "stage wall-seconds peak-KB"
// lines, among GNU time's own ("Command exited with non-zero status
// N"), which are skipped. A missing file gives no stages.
func readStageTimes(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stage times: %w", err)
	}
	defer f.Close()
	peak := map[string]int64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[0] == "Command" {
			continue
		}
		if _, err := strconv.ParseFloat(fields[1], 64); err != nil {
			return nil, fmt.Errorf("%s:%d: wall time %q: %w", path, n, fields[1], err)
		}
		kb, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || kb < 0 {
			return nil, fmt.Errorf("%s:%d: peak memory %q is not a count of KB", path, n, fields[2])
		}
		peak[fields[0]] = max(peak[fields[0]], kb)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return peak, nil
}

// printComparison writes the runs both sides made, base against new.
func printComparison(w io.Writer, base, cur map[string]*benchRun, memLimit float64) {
	for _, r := range benchRuns {
		b, n := base[r], cur[r]
		if b == nil || n == nil {
			continue
		}
		fmt.Fprintf(w, "%s (base | new | new / base):\n", r)
		for _, pc := range []int{50, 90, 99, 100} {
			bq, nq := b.timeline.quantile(pc), n.timeline.quantile(pc)
			fmt.Fprintf(w, "  time to %3d %%  %9s | %9s | %s\n", pc, seconds(bq), seconds(nq), ratioOf(nq, bq))
		}
		for _, bc := range b.timeline.Coverage {
			i := slices.IndexFunc(n.timeline.Coverage, func(c CoverageAt) bool { return c.At == bc.At })
			if i < 0 {
				continue
			}
			nc := n.timeline.Coverage[i]
			note := ""
			if bc.AfterEnd || nc.AfterEnd {
				note = ", after a run ended"
			}
			fmt.Fprintf(w, "  coverage / polite bound at %.0f s  %.3f | %.3f (pages %d | %d%s)\n", bc.At, bc.Ratio, nc.Ratio, bc.Fetched, nc.Fetched, note)
		}
		fmt.Fprintf(w, "  cumulative PageRank / sorted bound  %.3f | %.3f\n", b.timeline.PageRank, n.timeline.PageRank)
		stages := make([]string, 0, len(n.peakKB))
		for s := range n.peakKB {
			if _, ok := b.peakKB[s]; ok {
				stages = append(stages, s)
			}
		}
		slices.Sort(stages)
		for _, s := range stages {
			bk, nk := b.peakKB[s], n.peakKB[s]
			note := ""
			if bk > 0 && float64(nk) > memLimit*float64(bk) {
				note = fmt.Sprintf("  over %.2f", memLimit)
			}
			fmt.Fprintf(w, "  peak memory %-9s %6.0f MB | %6.0f MB | %s%s\n", s, float64(bk)/1024, float64(nk)/1024, ratioOfInts(nk, bk), note)
		}
	}
}

// ratioOf is new / base of two times, or "-" when either is missing.
func ratioOf(n, b *float64) string {
	if n == nil || b == nil || *b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", *n / *b)
}

// ratioOfInts is n / b, or "-" when b is 0.
func ratioOfInts(n, b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(b))
}
