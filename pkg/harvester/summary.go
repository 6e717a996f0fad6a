package harvester

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/tally"
)

// Summary is what a harvest did. It is written as JSON into the batch's
// harvested.done marker and printed as a paragraph at the end of a run.
// Totals cover the whole fetch log (every run that worked on the batch);
// the Run* fields and the rate cover the last run only.
type Summary struct {
	Version        int            `json:"version"`            // harvest format version
	Batch          int            `json:"batch"`              // batch id
	URLs           int            `json:"urls"`               // URLs in the batch (= fetch log lines)
	Fetched        int            `json:"fetched"`            // responses stored without error, any status
	Bytes          int64          `json:"bytes"`              // body bytes stored for them
	Statuses       map[string]int `json:"statuses"`           // responses by class: "2xx", "3xx", "4xx", "5xx"
	RobotsExcluded int            `json:"robots_excluded"`    // not requested because of robots.txt
	Errors         map[string]int `json:"errors"`             // failures by kind (first word of the error), robots excluded and deferred excluded
	Deferred       int            `json:"deferred,omitempty"` // not requested because the harvester ended the batch (deadline, tail): back to the frontier
	Ended          string         `json:"ended,omitempty"`    // why the last run ended the batch early ("tail", "deadline", "waits"), if it did
	// Holds says that servers.jsonl has a line for every host name the
	// next harvest may not ask yet (docs/format/harvest.md), so that a
	// harvest after this one needs no start floor (harvester.md, "From
	// one batch to the next"). Written by whole-batch runs since
	// 2026-12-07.
	Holds bool `json:"holds,omitempty"`
	// QuietStart says that the last run started without a start floor:
	// the harvests before it left their holds and nothing ran since
	// (harvester.md, "The start floor"). Since 2026-12-07.
	QuietStart bool `json:"quiet_start,omitempty"`
	// Followed says that the last run was taken beside another harvest
	// of the same process (harvester run --follow): it shared that
	// process's politeness state and start floor (harvester.md,
	// "Following the batches"). Since 2026-12-08.
	Followed    bool     `json:"followed,omitempty"`
	Hosts       int      `json:"hosts"`            // host names in the batch
	Sites       int      `json:"sites"`            // sites in the batch
	RobotsFiles int      `json:"robots_files"`     // lines of robots.jsonl
	WARCFiles   []string `json:"warc_files"`       // WARC files of the harvest
	Ranking     string   `json:"ranking"`          // server ranking used
	Shard       string   `json:"shard,omitempty"`  // "i/N" for a shard's marker
	Shards      int      `json:"shards,omitempty"` // N when the batch was harvested in N shards and merged
	Merged      bool     `json:"merged,omitempty"` // this run merged the shards into harvest/
	// ExpectedSeconds is, in a shard's marker, the shard's expected
	// fetch time by the batch's split (Σ over its URLs of max(wait,
	// Crawl-delay, response time), split.go). Since 2026-12-07.
	ExpectedSeconds float64 `json:"expected_seconds,omitempty"`
	// ShardTimes is, in a merged batch's marker, each shard's expected
	// and measured time (from the shards' markers). Since 2026-12-07.
	ShardTimes     []ShardTime `json:"shard_times,omitempty"`
	Resumed        bool        `json:"resumed"`          // the last run continued an interrupted one
	Started        time.Time   `json:"started"`          // start of the last run
	Finished       time.Time   `json:"finished"`         // end of the last run
	ElapsedSeconds float64     `json:"elapsed_seconds"`  // duration of the last run
	RunFetched     int         `json:"run_fetched"`      // pages fetched by the last run
	Requests       int         `json:"requests"`         // requests made by the last run, robots.txt included
	PagesPerSecond float64     `json:"pages_per_second"` // RunFetched / ElapsedSeconds
}

// ShardTime is one shard's part of a merged batch: its expected fetch
// time by the split, the last run's wall time, and its URLs, those it
// fetched and those it deferred (to another shard's address among
// them).
type ShardTime struct {
	Shard           string  `json:"shard"`
	ExpectedSeconds float64 `json:"expected_seconds"`
	ElapsedSeconds  float64 `json:"elapsed_seconds"`
	URLs            int     `json:"urls"`
	Fetched         int     `json:"fetched"`
	Deferred        int     `json:"deferred,omitempty"`
}

// summarize counts a complete fetch log.
func summarize(id int, entries []batch.Entry, recs []fetchlog.Record) *Summary {
	s := &Summary{Version: fetchlog.Version, Batch: id, URLs: len(recs), Statuses: map[string]int{}, Errors: map[string]int{}}
	hosts, sites := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		sites[e.Site] = true
		hosts[hostOf(e.Site)] = true
	}
	s.Hosts, s.Sites = len(hosts), len(sites)
	var classes [10]int // statuses by hundreds (1xx to 9xx), counted first
	for _, r := range recs {
		if c := r.Status / 100; r.Status > 0 && c < len(classes) {
			classes[c]++
		} else if r.Status > 0 {
			s.Statuses[fmt.Sprintf("%dxx", c)]++
		}
		switch {
		case r.OK():
			s.Fetched++
			s.Bytes += r.Bytes
		case fetch.KindOf(r.Err) == ErrRobots:
			s.RobotsExcluded++
		case fetch.KindOf(r.Err) == ErrDeferred:
			s.Deferred++
		default:
			s.Errors[fetch.KindOf(r.Err)]++
		}
	}
	for c, n := range classes {
		if n > 0 {
			s.Statuses[fmt.Sprintf("%dxx", c)] += n
		}
	}
	return s
}

// String is the summary as one paragraph.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "batch %06d", s.Batch)
	if s.Shard != "" {
		fmt.Fprintf(&b, " shard %s", s.Shard)
	}
	fmt.Fprintf(&b, ": %d URLs, %d fetched (%s", s.URLs, s.Fetched, tally.Bytes(s.Bytes))
	if len(s.Statuses) > 0 {
		fmt.Fprintf(&b, "; %s", byKey(s.Statuses))
	}
	fmt.Fprintf(&b, "), %d excluded by robots.txt, ", s.RobotsExcluded)
	nerr := 0
	for _, n := range s.Errors {
		nerr += n
	}
	if nerr == 0 {
		b.WriteString("no errors")
	} else {
		fmt.Fprintf(&b, "%d errors (%s)", nerr, counts(s.Errors))
	}
	if s.Deferred > 0 {
		fmt.Fprintf(&b, ", %d deferred to the next batch", s.Deferred)
		if s.Ended != "" {
			fmt.Fprintf(&b, " (ended by its %s)", s.Ended)
		}
	}
	fmt.Fprintf(&b, ", %d hosts (%d sites, %d robots.txt)", s.Hosts, s.Sites, s.RobotsFiles)
	if s.Shards > 0 && s.RunFetched == 0 {
		fmt.Fprintf(&b, "; merged from %d shards", s.Shards)
		for i, st := range s.ShardTimes {
			sep := "; "
			if i == 0 {
				sep = " ("
			}
			fmt.Fprintf(&b, "%s%s: %d URLs, %d deferred, expected %.1f s, took %.1f s", sep, st.Shard, st.URLs, st.Deferred, st.ExpectedSeconds, st.ElapsedSeconds)
		}
		if len(s.ShardTimes) > 0 {
			b.WriteString(")")
		}
		b.WriteString(".")
		return b.String()
	}
	verb := "this run"
	switch {
	case s.Resumed:
		verb = "this run (resumed)"
	case s.QuietStart:
		verb = "this run (started quiet, without a start floor)"
	case s.Followed:
		verb = "this run (taken beside the process's other harvests)"
	}
	fmt.Fprintf(&b, "; %s fetched %d pages in %s, %.1f pages/s", verb, s.RunFetched,
		time.Duration(s.ElapsedSeconds*float64(time.Second)).Round(100*time.Millisecond), s.PagesPerSecond)
	if s.ExpectedSeconds > 0 {
		fmt.Fprintf(&b, " (the split expected %.1f s of fetching for this shard)", s.ExpectedSeconds)
	}
	b.WriteString(".")
	if s.Merged {
		b.WriteString(" All shards done: merged into harvest/.")
	}
	return b.String()
}

// counts formats a map as "a 3, b 1", largest first.
func counts(m map[string]int) string { return tally.Format(m) }

// byKey formats a map as "a 1, b 3", in key order.
func byKey(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func jsonMarshal(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
