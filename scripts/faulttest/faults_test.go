package faulttest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/longtest"
	"github.com/wirecrawl/wire/pkg/stagebin"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// testLog is an io.Writer that logs each line through t.Log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.t.Log(line)
	}
	return len(p), nil
}

// stageBuild is the package's one build of the four stages.
var stageBuild = stagebin.Build{Root: filepath.Join("..", "..")}

// TestMain runs the tests and removes the binaries they shared.
func TestMain(m *testing.M) { stageBuild.Main(m) }

// binaries returns a directory with the four stage binaries: the one
// named by WIRE_FAULT_BIN, or the package's build of the working tree.
func binaries(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("WIRE_FAULT_BIN"); dir != "" {
		return dir
	}
	return stageBuild.For(t)
}

// startWeb starts a test web closed at the end of the test.
func startWeb(t *testing.T, cfg testweb.Config) *testweb.Web {
	t.Helper()
	web, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = web.Close() })
	return web
}

// seed returns the kill schedule's seed: WIRE_FAULT_SEED, else 1, so that
// the test is reproducible; scripts/faults.sh draws a new one each run.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("WIRE_FAULT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("WIRE_FAULT_SEED: %v", err)
		}
		return v
	}
	return 1
}

// TestCrawlSurvivesKills is the small version of scripts/faults.sh: a
// crawl of a 100-host web, four serial cycles and then four (or more)
// overlapped ones, in which at least 20 SIGKILLs land, at least two in
// each stage, at least one of a harvester while a seeder runs and one of
// a seeder while a harvester runs, followed by every check of the
// collection and of the server's records.
func TestCrawlSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection skipped in -short mode")
	}
	longtest.Need(t, "the fault run: a crawl of 8 or more cycles with at least 20 SIGKILLs")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := binaries(t)
	// Half the sites are subdomains of a few registrable domains on several
	// addresses (issue 34): the audit judges units where they differ from
	// the domain alone.
	web := startWeb(t, testweb.Config{Seed: 11, Hosts: 100, MaxPages: 150, Addresses: 10, HTTPSShare: 0.85, SubdomainShare: 0.5})
	dir := t.TempDir()
	if keep := os.Getenv("WIRE_FAULT_KEEP"); keep != "" {
		dir = keep // keep the collection for a post-mortem
	}
	ca, err := CAFlags(web, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{Wait: 20 * time.Millisecond, TotalTimeout: 10 * time.Second, AddressWait: 5 * time.Millisecond, BatchSize: 80, Seeds: 5, Extra: ca}
	r := &Runner{Bin: bin, Collection: filepath.Join(dir, "col"), Log: testLog{t}}
	if err := InitCollection(ctx, r, web, s); err != nil {
		t.Fatal(err)
	}
	sd := seed(t)
	t.Logf("kill schedule seed %d (rerun with WIRE_FAULT_SEED=%d)", sd, sd)
	start := time.Now()
	rep, err := CrawlWithKills(ctx, r, KillOptions{Seed: sd, Cycles: 4, OverlapCycles: 4, MinKills: 20, MinPerStage: 2, Log: testLog{t}})
	if err != nil {
		t.Fatalf("crawl with kills (seed %d): %v", sd, err)
	}
	t.Logf("%d serial and %d overlapped cycles, %d runs, %d kills %v (during overlap: %v), %d kill attempts too late, in %v",
		rep.Cycles, rep.OverlapCycles, rep.Runs, len(rep.Kills), rep.KillsByStage(), rep.OverlapKills(), rep.Missed, time.Since(start).Round(time.Millisecond))

	for _, n := range rep.Notes {
		t.Log("note: " + n)
	}
	if rep.Follows == 0 {
		t.Error("no gatherer followed a harvest in flight: the kills did not cover gatherer run --follow")
	}
	t.Logf("%d gatherer runs followed a harvest in flight", rep.Follows)
	check, err := CheckCollection(ctx, r, CheckOptions{Seed: sd})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d batches, %d entries, %d fetched, %d docs, %d texts (%d empty, %d through gatherer cat)",
		check.Batches, check.Entries, check.Fetched, check.Docs, check.Texts, check.EmptyTexts, check.CatChecked)
	for _, p := range check.Problems {
		t.Error(p)
	}
	if check.Fetched < 200 || check.Texts < 100 {
		t.Errorf("too little crawled to tell: %d fetched, %d texts", check.Fetched, check.Texts)
	}
	cfg, err := config.Load(config.Sources{File: filepath.Join(r.Collection, config.FileName), NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	cov, err := MeasureCoverage(r.Collection, web, cfg, web.SeedURLs(s.Seeds))
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	cov.Print(&buf)
	t.Log(strings.TrimSpace(buf.String()))
	if cov.Reachable < check.Fetched/2 || cov.Fetched == 0 || cov.Fetched > cov.Reachable || cov.FetchedURLs > check.Fetched {
		t.Errorf("coverage: %d of %d reachable, %d URLs fetched; the fetch logs have %d", cov.Fetched, cov.Reachable, cov.FetchedURLs, check.Fetched)
	}
	if cov.ScriptCapped > cov.Reachable-cov.Fetched {
		t.Errorf("coverage: %d missed pages held by the script cap, but only %d missed", cov.ScriptCapped, cov.Reachable-cov.Fetched)
	}
	pol := CheckPoliteness(web, cfg.Harvester, rep.Deaths("harvester"))
	t.Logf("politeness: %d requests to %d hosts on %d connections; shortest gap %v (%s); %d URLs requested again after a kill",
		pol.Requests, pol.Hosts, pol.Conns, pol.MinGap, pol.MinGapHost, pol.Refetched)
	for _, p := range pol.Problems {
		t.Error("politeness: " + p)
	}
}

// TestEnvironmentFaults: a full disk, a read-only collection, bad config
// files and truncated batch files make the stages fail cleanly with one
// line naming the problem.
func TestEnvironmentFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("environment faults skipped in -short mode")
	}
	// Beside the package's other crawl: most of its time is waits.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := binaries(t)
	web := startWeb(t, testweb.Config{Seed: 12, Hosts: 40, MaxPages: 150})
	s := Settings{Wait: 10 * time.Millisecond, TotalTimeout: 10 * time.Second, BatchSize: 40, Seeds: 3}
	cases, err := EnvironmentFaults(ctx, bin, t.TempDir(), web, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case c.Skipped != "":
				t.Skip(c.Skipped)
			case c.Problem != "":
				t.Error(c.Problem)
			default:
				t.Log(c)
			}
		})
	}
}
