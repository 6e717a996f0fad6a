package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/refresh"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// update rewrites the golden files of testdata/.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// tinyFreshness is a window [10, 20] over four pages, worked by hand:
//
//	A honest, changes at 5 and 15, rate 0.1: 200 at 2 (version 0,
//	  stale from 5), 200 at 12 conditional (version 1, fresh to 15).
//	  Fresh 3 of 10 s; age ∫10..12 (t−5) + ∫15..20 (t−15) = 12 + 12.5.
//	B none, never changes: 200 at 1, 200 at 14 (unchanged, whole).
//	C lying, changes at 11: first fetched at 13 (version 1): fresh 7 of
//	  10 s; no copy before, age ∫10..13 t dt = 34.5.
//	D honest, never changes: 200 at 3, 304 at 16 conditional, 200 at 17
//	  unconditional (unchanged, whole).
//
// Each page is a site of its own; A's unit may be revisited every 20 s.
func tinyFreshness() freshnessInput {
	return freshnessInput{
		start: 10, end: 20,
		pages: []freshPage{
			{site: "a.cl", unit: "a", kind: "honest", rate: 0.1, changes: []float64{5, 15}, weight: 0.4},
			{site: "b.cl", unit: "b", kind: "none", weight: 0.1},
			{site: "c.cl", unit: "c", kind: "lying", rate: 0.1, changes: []float64{11}, weight: 0.2},
			{site: "d.cl", unit: "d", kind: "honest", weight: 0.3},
		},
		fetches: [][]freshFetch{
			{{at: 2, status: 200}, {at: 12, status: 200, conditional: true}},
			{{at: 1, status: 200}, {at: 14, status: 200}},
			{{at: 13, status: 200}},
			{{at: 3, status: 200}, {at: 16, status: 304, conditional: true}, {at: 17, status: 200}, {at: 25, status: 200}},
		},
		unitCap: map[string]float64{"a": 0.05, "b": 1, "c": 1, "d": 1},
	}
}

// TestComputeFreshness checks the tiny window's figures against the hand
// computation.
func TestComputeFreshness(t *testing.T) {
	f := computeFreshness(tinyFreshness())
	counts := []struct {
		name      string
		got, want int
	}{
		{"fetches", f.Fetches, 5},
		{"new version", f.NewVersion, 1},
		{"first fetches", f.FirstFetches, 1},
		{"unchanged whole", f.UnchangedWhole, 2},
		{"304", f.NotModified, 1},
		{"honest revisits", f.HonestRevisits, 3},
		{"honest conditional", f.HonestConditional, 2},
		{"known pages", f.Known.Pages, 3},
		{"all pages", f.All.Pages, 4},
		{"known budget", f.Known.Budget, 4},
		{"all budget", f.All.Budget, 5},
	}
	for _, c := range counts {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	// Known: A, B, D. Budget 4 in 10 s: 0.4 a second.
	uniformA := refresh.Freshness(0.1, 0.4/3) // 0.703511
	figures := []struct {
		name      string
		got, want float64
	}{
		{"conditional share", f.ConditionalShare, 2.0 / 3},
		{"known freshness", f.Known.Freshness, (0.3 + 1 + 1) / 3},
		{"all freshness", f.All.Freshness, (0.3 + 1 + 0.7 + 1) / 4},
		{"known weighted", f.Known.Weighted, (0.4*0.3 + 0.1 + 0.3) / 0.8},
		{"all weighted", f.All.Weighted, 0.4*0.3 + 0.1 + 0.2*0.7 + 0.3},
		{"known age", f.Known.MeanAge, 2.45 / 3},
		{"all age", f.All.MeanAge, (2.45 + 3.45) / 4},
		{"uniform", f.Known.Uniform, (uniformA + 2) / 3},
		// Optimal: all of it on A, the only changing page: F(0.1, 0.4).
		{"optimal", f.Known.Optimal, (4*(1-math.Exp(-0.25)) + 2) / 3},
		// Per site: A's site spends its own 1 fetch in 10 s: F(0.1, 0.1).
		{"per site", f.Known.PerSite, (1 - math.Exp(-1) + 2) / 3},
		// Polite: A's unit at most every 20 s: F(0.1, 0.05).
		{"polite", f.Known.Polite, (0.5*(1-math.Exp(-2)) + 2) / 3},
		{"honest freshness", f.ByKind["honest"].Freshness, (0.3 + 1) / 2},
		{"none freshness", f.ByKind["none"].Freshness, 1},
	}
	for _, c := range figures {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s: %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	if _, ok := f.ByKind["lying"]; ok {
		t.Error("the lying page was not known before the window, yet has a group")
	}
}

// TestFreshnessGolden: the text report of the tiny window
// (testdata/freshness.golden; go test -update rewrites it).
func TestFreshnessGolden(t *testing.T) {
	var b bytes.Buffer
	f := computeFreshness(tinyFreshness())
	f.Print(&b)
	f.PrintTargets(&b)
	golden := filepath.Join("testdata", "freshness.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("report:\n%s\nwant (%s):\n%s", b.Bytes(), golden, want)
	}
}

// TestFreshnessCommand runs `crawlcheck freshness` on the model of a
// small changing web with a log that fetches every reachable page in
// URL order at 10 s after the origin and again at 600 s (conditionally
// on honest sites, and then a 304 where the page did not change, as an
// honest site answers): the second round's new versions are the pages
// whose version changed between the two times (Web.VersionAt).
func TestFreshnessCommand(t *testing.T) {
	dir := t.TempDir()
	// The web renders its pages at the time of the test (Web.Page): an
	// origin years back would make it draw years of changes per page.
	origin := time.Now().Add(-time.Hour).Truncate(time.Second)
	wc := testweb.Config{Seed: 5, Hosts: 12, MaxPages: 30, HTTPAddr: "127.0.0.1:18080", DNSAddr: "127.0.0.1:18053",
		Change: true, ChangeIntervalMin: 30 * time.Second, ChangeIntervalMax: 20 * time.Minute, TimeOrigin: origin}
	web, err := testweb.New(wc)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wc)
	webPath, seedPath := filepath.Join(dir, "web.json"), filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(webPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedPath, []byte(strings.Join(web.SeedURLs(3), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := newApp(&out).Run([]string{"crawlcheck", "reachable", "--web", webPath, "--seeds", seedPath}); err != nil {
		t.Fatal(err)
	}
	urls := strings.Fields(out.String())
	status := map[string]int{}
	if err := web.ForEachPage(func(info testweb.PageInfo) error {
		status[info.URL] = info.Status
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	shift := origin.Sub(t0) // logLineAt counts from t0
	var log strings.Builder
	pages, changed, revisits, conditional := 0, 0, 0, 0
	var firstEnds []float64 // seconds from the origin
	for round, at := range []time.Duration{10 * time.Second, 600 * time.Second} {
		for i, u := range urls {
			if status[u] != 200 {
				continue
			}
			hostPort, path, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
			host, _, _ := strings.Cut(hostPort, ":")
			start := at + time.Duration(i)*time.Millisecond
			line, code := logLineAt(1, host, "/"+path, 200, shift+start, shift+start+time.Microsecond, "127.0.0.1"), 200
			if round == 0 {
				pages++
				firstEnds = append(firstEnds, (start + time.Microsecond).Seconds())
			} else {
				v0, _ := web.VersionAt(u, origin.Add(10*time.Second+time.Duration(i)*time.Millisecond))
				v1, _ := web.VersionAt(u, origin.Add(start))
				if v1 != v0 {
					changed++
				}
				if web.Validators(host) == testweb.ValidatorsHonest {
					revisits++
					conditional++
					if v1 == v0 {
						code = 304
					}
					line = strings.TrimSuffix(logLineAt(1, host, "/"+path, code, shift+start, shift+start+time.Microsecond, "127.0.0.1"), "\n") + "\tcond\n"
				}
			}
			log.WriteString(line)
		}
	}
	logPath, jsonPath := filepath.Join(dir, "requests.tsv"), filepath.Join(dir, "freshness.json")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = newApp(&out).Run([]string{"crawlcheck", "freshness", "--web", webPath, "--seeds", seedPath, "--log", logPath,
		"--window-start", origin.Add(100 * time.Second).Format(time.RFC3339Nano), "--window-end", origin.Add(700 * time.Second).Format(time.RFC3339Nano), "--start", origin.Format(time.RFC3339Nano),
		"--wait", "1s", "--json-out", jsonPath})
	if err != nil {
		t.Fatal(err)
	}
	var f Freshness
	if data, err = os.ReadFile(jsonPath); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if pages < 10 || changed == 0 || revisits == 0 {
		t.Fatalf("the web is too small to test: %d pages, %d changed, %d honest revisits", pages, changed, revisits)
	}
	if f.Known.Pages != pages || f.All.Pages != pages || f.Fetches != pages || f.NewVersion != changed ||
		f.HonestRevisits != revisits || f.HonestConditional != conditional || f.FirstFetches != 0 {
		t.Errorf("%d pages, %d changed, %d honest revisits: %+v", pages, changed, revisits, f)
	}
	if f.NotModified+f.UnchangedWhole != pages-changed {
		t.Errorf("304 %d + unchanged %d, want %d", f.NotModified, f.UnchangedWhole, pages-changed)
	}
	if !(f.Known.Freshness > 0 && f.Known.Freshness < 1 && f.Known.Optimal >= f.Known.Uniform-1e-9 && f.Known.Optimal >= f.Known.Polite-1e-9) {
		t.Errorf("figures out of order: %+v", f.Known)
	}
	// 90 % of the reachable pages (redirects and errors count, but only
	// the 200s were fetched) is the first round's page ceil(0.9 n).
	out.Reset()
	err = newApp(&out).Run([]string{"crawlcheck", "freshness", "--web", webPath, "--seeds", seedPath, "--log", logPath,
		"--window-start", "90%", "--start", origin.Format(time.RFC3339Nano), "--json"})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if want := firstEnds[int(math.Ceil(0.9*float64(len(urls))))-1]; math.Abs(f.WindowStart-want) > 1e-6 {
		t.Errorf("window starts at %g s, want %g", f.WindowStart, want)
	}
	for _, bad := range []string{"0%", "101%", "x%", "yesterday"} {
		err := newApp(&out).Run([]string{"crawlcheck", "freshness", "--web", webPath, "--seeds", seedPath, "--log", logPath, "--window-start", bad})
		if err == nil || !strings.Contains(err.Error(), "--window-start") {
			t.Errorf("--window-start %s: %v", bad, err)
		}
	}
}
