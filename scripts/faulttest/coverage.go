package faulttest

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// Coverage is how much of the reachable, allowed test web a crawl fetched.
type Coverage struct {
	// Reachable counts the pages of the model the crawler may reach from
	// the seeds (testweb.Reachable) that its scope keeps (normalised, in
	// scope: e.g. images are not crawled).
	Reachable int
	// Fetched counts those with a response in some fetch log.
	Fetched int
	// Missed counts the others by what graph.db says of them: "unknown"
	// (never discovered), or the document state, with the reason when
	// there is one (e.g. "excluded: site-cap").
	Missed map[string]int
	// MissedExamples holds a few missed URLs per reason.
	MissedExamples map[string][]string
	// ScriptCapped counts the missed pages with a query whose script (the
	// URL before the '?') already had manager.max_fetches_per_script URLs
	// fetched: left out by the crawl policy (Nakahira et al.), not lost.
	// Their reasons in Missed end in scriptCapSuffix.
	ScriptCapped int
	// Hostile describes the hostile hosts: requests served and URLs
	// fetched per host, and the trap's size against its site cap.
	Hostile []HostileCoverage
	// FetchedURLs counts every URL fetched with a response, hostile and
	// broken links included.
	FetchedURLs int
	// Elapsed is how long the computation took (the walk of the model
	// renders every reachable page once).
	Elapsed time.Duration
}

// HostileCoverage is what the crawl did with one hostile host.
type HostileCoverage struct {
	// Host and Kind name the hostile host.
	Host string
	Kind testweb.HostileKind
	// Fetched counts the host's URLs with a response; Lines its fetch log
	// lines (with or without response).
	Fetched, Lines int
	// Errors counts fetch log lines by error kind.
	Errors map[string]int
}

// scriptCapSuffix marks a Missed reason of a page held back by
// manager.max_fetches_per_script.
const scriptCapSuffix = ", script at max_fetches_per_script"

// Ratio is Fetched/Reachable.
func (c Coverage) Ratio() float64 {
	if c.Reachable == 0 {
		return 0
	}
	return float64(c.Fetched) / float64(c.Reachable)
}

// Print writes the coverage report.
func (c Coverage) Print(w io.Writer) {
	fmt.Fprintf(w, "coverage: %d of %d reachable allowed pages fetched (%.1f%%); %d URLs fetched in all (computed in %v)\n",
		c.Fetched, c.Reachable, 100*c.Ratio(), c.FetchedURLs, c.Elapsed.Round(time.Millisecond))
	var reasons []string
	for r := range c.Missed {
		reasons = append(reasons, r)
	}
	if c.ScriptCapped > 0 && c.Reachable > c.ScriptCapped {
		fmt.Fprintf(w, "  of the pages the crawl policy allows (without %d query URLs of scripts at manager.max_fetches_per_script): %d of %d fetched (%.1f%%)\n",
			c.ScriptCapped, c.Fetched, c.Reachable-c.ScriptCapped, 100*float64(c.Fetched)/float64(c.Reachable-c.ScriptCapped))
	}
	sort.Slice(reasons, func(i, j int) bool { return c.Missed[reasons[i]] > c.Missed[reasons[j]] })
	for _, r := range reasons {
		fmt.Fprintf(w, "  missed %-28s %8d  e.g. %s\n", r, c.Missed[r], strings.Join(c.MissedExamples[r], " "))
	}
	for _, h := range c.Hostile {
		var errs []string
		for k, n := range h.Errors {
			errs = append(errs, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(errs)
		fmt.Fprintf(w, "  hostile %-14s %-32s %6d lines, %6d fetched  %s\n", h.Kind, h.Host, h.Lines, h.Fetched, strings.Join(errs, ", "))
	}
}

// MeasureCoverage compares the fetch logs of a collection with the test
// web's truth: the pages reachable from seeds through allowed in-scope
// pages, normalised and kept in scope as the seeder would (cfg is the
// collection's configuration).
func MeasureCoverage(col string, web *testweb.Web, cfg config.Config, seeds []string) (Coverage, error) {
	start := time.Now()
	c := Coverage{Missed: map[string]int{}, MissedExamples: map[string][]string{}}
	norm := cfg.Scope.Normalizer()
	sc, err := scope.Compile(cfg.Scope)
	if err != nil {
		return Coverage{}, fmt.Errorf("measure coverage: %w", err)
	}
	want := map[string]bool{}
	for _, u := range web.Reachable(seeds, cfg.Crawl.ProductToken) {
		n, err := norm.Normalize(u)
		if err != nil || sc.Check(n) != nil {
			continue
		}
		want[n] = true
	}
	c.Reachable = len(want)

	dirs, err := batchDirs(col)
	if err != nil {
		return c, err
	}
	hostile := map[string]*HostileCoverage{}
	for _, h := range web.HostileHosts() {
		hc := &HostileCoverage{Host: h.Name, Kind: h.Kind, Errors: map[string]int{}}
		hostile[h.Name] = hc
	}
	got := map[string]bool{}
	for _, dir := range dirs {
		recs, err := fetchlog.ReadFile(filepath.Join(dir, collection.HarvestDir, fetchlog.LogFile))
		if err != nil {
			continue // not harvested
		}
		for _, r := range recs {
			if r.OK() {
				got[r.URL] = true
			}
			if u, err := url.Parse(r.URL); err == nil {
				if hc := hostile[u.Hostname()]; hc != nil {
					hc.Lines++
					if r.OK() {
						hc.Fetched++
					}
					if r.Err != "" {
						kind, _, _ := strings.Cut(r.Err, ":")
						kind, _, _ = strings.Cut(kind, " ")
						hc.Errors[kind]++
					}
				}
			}
		}
	}
	c.FetchedURLs = len(got)
	scripts := map[string]int{} // fetched query URLs per script
	for u := range got {
		if script, _, ok := strings.Cut(u, "?"); ok {
			scripts[script]++
		}
	}
	capped := func(u string) bool {
		script, _, ok := strings.Cut(u, "?")
		limit := cfg.Manager.MaxFetchesPerScript
		return ok && limit > 0 && scripts[script] >= limit
	}
	for _, h := range web.HostileHosts() {
		c.Hostile = append(c.Hostile, *hostile[h.Name])
	}
	var missed []string
	for u := range want {
		if got[u] {
			c.Fetched++
		} else {
			missed = append(missed, u)
		}
	}
	sort.Strings(missed)
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 30*time.Second)
	if err != nil {
		return c, fmt.Errorf("open graph of %s: %w", col, err)
	}
	defer g.Close()
	err = g.View(func(tx *linkgraph.Tx) error {
		for _, u := range missed {
			reason := "unknown"
			if id, ok := tx.LookupURL(u); ok {
				d, err := tx.Doc(id)
				if err != nil {
					return fmt.Errorf("read document %d: %w", id, err)
				}
				reason = string(d.State)
				if d.Reason != "" {
					reason += ": " + d.Reason
				}
			}
			if capped(u) {
				reason += scriptCapSuffix
				c.ScriptCapped++
			}
			c.Missed[reason]++
			if len(c.MissedExamples[reason]) < 2 {
				c.MissedExamples[reason] = append(c.MissedExamples[reason], u)
			}
		}
		return nil
	})
	c.Elapsed = time.Since(start)
	return c, err
}
