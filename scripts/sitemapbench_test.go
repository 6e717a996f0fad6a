package scripts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestBenchSitemaps is scripts/bench-sitemaps.sh's crawl part, run only
// with WIRE_BENCH_SITEMAPS=1 (it crawls a whole test web twice): the test
// web with sitemaps (Config.Sitemaps), crawled from the same seeds with
// sitemaps (seeder.sitemaps and seeder.sitemap_probe on) and without
// (seeder.sitemaps off), each to the end or BENCH_LIMIT. It prints, from
// each web's request log, the coverage of the pages only sitemaps list,
// and the time to 50, 90 and 99 % of the pages links reach (the test web's
// URLs) from the first request.
func TestBenchSitemaps(t *testing.T) {
	if os.Getenv("WIRE_BENCH_SITEMAPS") != "1" {
		t.Skip("set WIRE_BENCH_SITEMAPS=1 (scripts/bench-sitemaps.sh)")
	}
	hosts := envInt("BENCH_HOSTS", 100)
	maxPages := envInt("BENCH_MAX_PAGES", 200)
	limit := time.Duration(envInt("BENCH_LIMIT", 300)) * time.Second
	bin := stageBinaries(t)
	type result struct {
		name               string
		only, onlyN        int
		linked, linkedN    int
		t50, t90, t99, end time.Duration
	}
	var results []result
	var gathered string
	runs := []bool{true, false}
	switch os.Getenv("BENCH_ONLY") {
	case "with":
		runs = runs[:1]
	case "without":
		runs = runs[1:]
	}
	for _, withSitemaps := range runs {
		web, err := testweb.New(testweb.Config{Seed: 11, Hosts: hosts, MaxPages: maxPages, Sitemaps: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := web.Start(); err != nil {
			t.Fatal(err)
		}
		col := filepath.Join(t.TempDir(), "col")
		seeds := filepath.Join(t.TempDir(), "seeds.txt")
		if err := os.WriteFile(seeds, []byte(strings.Join(web.SeedURLs(10), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"WIRE_BIN=" + bin, "WIRE_OVERLAP=1"}
		run(t, env, filepath.Join(bin, "seeder"), "init", "--collection", col,
			"--harvester-allow-private", "--harvester-dns-server", web.DNSAddr(),
			"--harvester-wait", "0s", "--harvester-connections", "200", "--harvester-connections-per-ip", "0", "--harvester-address-wait", "0s",
			"--manager-batch-duration", "5s", "--manager-max-fetches-per-script", "0", "--scope-domains", "cl",
			fmt.Sprintf("--seeder-sitemaps=%v", withSitemaps), fmt.Sprintf("--seeder-sitemap-probe=%v", withSitemaps))
		run(t, env, filepath.Join(bin, "seeder"), "add", "--collection", col, seeds)
		done := make(chan struct{})
		go func() {
			defer close(done)
			runLimited(t, env, limit, "bash", "crawl.sh", col, "1000")
		}()
		<-done
		reqs := web.Requests()
		web.Close()
		if withSitemaps {
			// The gatherer's own account of reading the sitemaps.
			var n, entries int
			var bytes int64
			var secs float64
			markers, _ := filepath.Glob(filepath.Join(col, "batches", "*", "gathered.done"))
			for _, m := range markers {
				var sum struct {
					Sitemaps, SitemapEntries int
					SitemapBytes             int64
					SitemapSeconds           float64
				}
				if data, err := os.ReadFile(m); err == nil && json.Unmarshal(data, &sum) == nil {
					n, entries, bytes, secs = n+sum.Sitemaps, entries+sum.SitemapEntries, bytes+sum.SitemapBytes, secs+sum.SitemapSeconds
				}
			}
			gathered = fmt.Sprintf("gatherer: %d sitemaps read, %d entries, %.2f MB (as fetched) in %.3f s", n, entries, float64(bytes)/1e6, secs)
		}
		start := reqs[0].Start
		firstAt := map[string]time.Duration{}
		for _, r := range reqs {
			if r.Status == 0 {
				continue
			}
			u := "http://" + r.Host + ":" + strconv.Itoa(web.Port()) + r.Path
			if _, ok := firstAt[u]; !ok {
				firstAt[u] = r.Start.Sub(start)
			}
		}
		res := result{name: map[bool]string{true: "with sitemaps", false: "without sitemaps"}[withSitemaps]}
		only := web.SitemapOnlyURLs()
		res.onlyN = len(only)
		for _, u := range only {
			if _, ok := firstAt[canon(u)]; ok {
				res.only++
			}
		}
		// The pages links reach: the model's URLs on in-scope hosts that
		// robots.txt allows, but the logos (out of the crawl's scope).
		inScope := map[string]bool{}
		for _, h := range web.HostNames() {
			inScope[h] = true
		}
		var all []string
		for _, u := range web.URLs() {
			p, _ := url.Parse(u)
			if inScope[p.Hostname()] && !web.Disallowed(u, "wirebot") && !strings.HasSuffix(p.Path, ".png") {
				all = append(all, u)
			}
		}
		var times []time.Duration
		for _, u := range all {
			if at, ok := firstAt[canon(u)]; ok {
				times = append(times, at)
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		res.linked, res.linkedN = len(times), len(all)
		at := func(f float64) time.Duration {
			n := int(f*float64(len(all)) + 0.999999)
			if n == 0 || n > len(times) {
				return -1
			}
			return times[n-1]
		}
		res.t50, res.t90, res.t99 = at(0.5), at(0.9), at(0.99)
		res.end = reqs[len(reqs)-1].End.Sub(start)
		t.Logf("%s: %d of %d pages links reach fetched, %d of %d sitemap-only", res.name, res.linked, len(all), res.only, res.onlyN)
		// Requests per 2 s, to see where a crawl waits.
		var buckets []int
		for _, r := range reqs {
			b := int(r.Start.Sub(start) / (2 * time.Second))
			for len(buckets) <= b {
				buckets = append(buckets, 0)
			}
			buckets[b]++
		}
		t.Logf("%s: requests per 2 s: %v", res.name, buckets)
		results = append(results, res)
	}
	fmt.Println(gathered)
	fmt.Printf("test web: %d hosts, largest site %d pages, seed 11, 10 seed URLs; harvester.wait 0\n", hosts, maxPages)
	fmt.Printf("%-18s %-22s %-26s %-9s %-9s %-9s %s\n", "run", "sitemap-only pages", "pages links reach", "50 %", "90 %", "99 %", "last request")
	d := func(x time.Duration) string {
		if x < 0 {
			return "never"
		}
		return x.Round(10 * time.Millisecond).String()
	}
	for _, r := range results {
		fmt.Printf("%-18s %-22s %-26s %-9s %-9s %-9s %s\n", r.name,
			fmt.Sprintf("%d/%d (%.0f %%)", r.only, r.onlyN, 100*float64(r.only)/float64(max(r.onlyN, 1))),
			fmt.Sprintf("%d/%d (%.1f %%)", r.linked, r.linkedN, 100*float64(r.linked)/float64(max(r.linkedN, 1))), d(r.t50), d(r.t90), d(r.t99), d(r.end))
	}
}

// canon is a URL as the request log spells it: host lower case, path as sent.
func canon(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return "http://" + strings.ToLower(p.Host) + p.RequestURI()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// runLimited runs a command and stops it with SIGINT after limit.
func runLimited(t *testing.T, env []string, limit time.Duration, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Signal(os.Interrupt) })
	defer timer.Stop()
	if err := cmd.Wait(); err != nil {
		t.Logf("%s: %v (time limit %v)\n%s", name, err, limit, tail(out.String(), 2000))
	} else if os.Getenv("BENCH_SHOW_CRAWL") == "1" {
		t.Logf("%s:\n%s", name, out.String())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
