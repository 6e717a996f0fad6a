package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// exchangeCommand is `crawlcheck exchange`.
func exchangeCommand() *cli.Command {
	return &cli.Command{
		Name:  "exchange",
		Usage: "what a web crawled as K partitioned collections fetched and exchanged (scripts/bench-partitions.sh)",
		Description: `Reads the K collections of one partitioned crawl (each --collection, in
any order; K = 1: one collection of the whole web) and prints:

  per partition: batches, pages fetched (URLs with a response in its
  fetch logs), graph.db bytes, the exchange lines (links and handed-over
  URLs) and bytes it published, and what it took in;
  fetched: the pages of the whole set, and the URLs fetched by two
  partitions or more (must be 0);
  exchange: per sender and receiver, the files published and those the
  receiver's graph.db records as taken (a published file not taken, or
  a file taken that was never published, is listed); the lines sent
  against the lines the receivers' intakes counted (the seeded.done
  markers' exchange summaries, plus the seeder exchange runs of each
  --exchange-log): equal when every line was delivered exactly once;
  bytes per line and per cycle (a cycle: a batch of any partition), and
  the intake's time per batch;
  graph.db: the total and its bytes per page fetched.

--exchange-log FILE (once per partition, in the order of --collection)
is the output of the partition's seeder exchange runs, with a line
"exchange-run SECONDS" after each (bench-partitions.sh writes them).
--timeline T.json (crawlcheck timeline --json-out of the set's requests)
adds the coverage of the reachable pages and the crawl order's
cumulative PageRank; --base B.json (this command's --json-out for the
reference crawl, K = 1) compares with it: coverage and pages fetched as
a ratio, the cumulative PageRank as a difference. --log R.tsv (the test
web's request log of the set's run) audits politeness across partitions
as the server saw it: each request is the partition's whose fetch logs
hold its host (a host fetched by two partitions is counted apart), and
each server address must have been asked by one partition only.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "collection", Required: true, Usage: "a collection of the set (repeat for each partition)"},
			&cli.StringSliceFlag{Name: "exchange-log", Usage: "output of the partition's seeder exchange runs (repeat, in the order of --collection)"},
			&cli.StringFlag{Name: "timeline", Usage: "crawlcheck timeline JSON of the set's requests"},
			&cli.StringFlag{Name: "base", Usage: "this command's JSON for the reference crawl, to compare with"},
			&cli.StringFlag{Name: "json-out", Usage: "also write the figures as JSON to this file"},
			&cli.StringFlag{Name: "log", Usage: "the test web's request log (TSV) of the set's run: audit which partitions asked each server address"},
		},
		Action: func(c *cli.Context) error {
			cols := c.StringSlice("collection")
			logs := c.StringSlice("exchange-log")
			if len(logs) != 0 && len(logs) != len(cols) {
				return fmt.Errorf("%d --exchange-log for %d --collection: give one per collection or none", len(logs), len(cols))
			}
			set, err := measureSet(cols, logs)
			if err != nil {
				return err
			}
			if p := c.String("log"); p != "" {
				reqs, err := readRequestLogFile(p)
				if err != nil {
					return err
				}
				set.auditAddresses(reqs)
			}
			if p := c.String("timeline"); p != "" {
				tl, err := readTimelineJSON(p)
				if err != nil {
					return err
				}
				set.Timeline = &setTimeline{Reachable: tl.Reachable, Fetched: tl.Fetched, PageRank: tl.PageRank, PageRankByTime: tl.PageRankByTime}
			}
			var base *partitionSet
			if p := c.String("base"); p != "" {
				base = &partitionSet{}
				if err := readJSONFile(p, base); err != nil {
					return err
				}
			}
			if p := c.String("json-out"); p != "" {
				data, err := json.MarshalIndent(set, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
					return fmt.Errorf("write %s: %w", p, err)
				}
			}
			set.print(c.App.Writer, base)
			return nil
		},
	}
}

// partitionSet is what `crawlcheck exchange` measures of one crawl.
type partitionSet struct {
	K          int              `json:"k"`
	Partitions []partitionStats `json:"partitions"`
	// Fetched counts the distinct URLs with a response in the set;
	// Duplicates those fetched by two partitions or more, Examples a few.
	Fetched    int      `json:"fetched"`
	Duplicates int      `json:"duplicates"`
	Examples   []string `json:"duplicate_examples,omitempty"`
	Batches    int      `json:"batches"`
	// Links counts the links the seeders read (seeded.done: links of
	// every page, redirects and canonicals).
	Links int64 `json:"links"`
	// Flows are the exchange's sender to receiver pairs.
	Flows []exchangeFlow `json:"flows,omitempty"`
	// SentLines, SentLinks, SentSites, SentBytes and SentFiles total the
	// published exchange files; TakenLines the lines the receivers'
	// intakes counted (nil: not known, an intake without its log).
	SentLines  int   `json:"sent_lines"`
	SentLinks  int   `json:"sent_links"`
	SentSites  int   `json:"sent_sites"`
	SentBytes  int64 `json:"sent_bytes"`
	SentFiles  int   `json:"sent_files"`
	TakenLines *int  `json:"taken_lines,omitempty"`
	// NotTaken and NeverSent count the published files no receiver
	// took and the files taken that were never published.
	NotTaken  int `json:"not_taken"`
	NeverSent int `json:"never_sent"`
	// Intake times: the seeder's intake after each batch (seeded.done),
	// seconds, and the seeder exchange runs' wall seconds.
	IntakeSeconds   []float64 `json:"intake_seconds,omitempty"`
	ExchangeRuns    int       `json:"exchange_runs"`
	ExchangeRunSecs float64   `json:"exchange_run_seconds"`
	GraphBytes      int64     `json:"graph_bytes"`
	// Timeline is from crawlcheck timeline, if given.
	Timeline *setTimeline `json:"timeline,omitempty"`
	// SplitHosts counts the host names fetched by two partitions or more
	// (fetch logs); Audit is the server's view (--log), nil without it.
	SplitHosts int           `json:"split_hosts"`
	Audit      *addressAudit `json:"address_audit,omitempty"`
	// hosts are the partitions whose fetch logs hold each host name.
	hosts map[string]map[int]bool
}

// addressAudit is which partitions asked each server address, from the
// test web's request log.
type addressAudit struct {
	Requests   int `json:"requests"`
	Unassigned int `json:"unassigned"` // requests for a host no fetch log holds
	Addresses  int `json:"addresses"`
	// Shared counts the addresses asked by two partitions or more,
	// Examples names a few ("ADDR: p1 p2").
	Shared   int      `json:"shared"`
	Examples []string `json:"examples,omitempty"`
}

// auditAddresses attributes each request of the log to the partition
// whose fetch logs hold its host, and counts the addresses asked by more
// than one.
func (s *partitionSet) auditAddresses(reqs []requestLine) {
	a := &addressAudit{Requests: len(reqs)}
	byAddr := map[string]map[int]bool{}
	for _, r := range reqs {
		ps := s.hosts[strings.ToLower(r.host)]
		if len(ps) == 0 {
			a.Unassigned++
			continue
		}
		m := byAddr[r.addr]
		if m == nil {
			m = map[int]bool{}
			byAddr[r.addr] = m
		}
		for p := range ps {
			m[p] = true
		}
	}
	a.Addresses = len(byAddr)
	for _, addr := range slices.Sorted(maps.Keys(byAddr)) {
		if ps := byAddr[addr]; len(ps) > 1 {
			a.Shared++
			if len(a.Examples) < 5 {
				var names []string
				for _, p := range slices.Sorted(maps.Keys(ps)) {
					names = append(names, fmt.Sprintf("p%d", p))
				}
				a.Examples = append(a.Examples, addr+": "+strings.Join(names, " "))
			}
		}
	}
	s.Audit = a
}

// partitionStats are one collection's figures.
type partitionStats struct {
	Dir        string `json:"dir"`
	Partition  string `json:"partition"`
	Batches    int    `json:"batches"`
	Fetched    int    `json:"fetched"`
	Links      int64  `json:"links"`
	GraphBytes int64  `json:"graph_bytes"`
	SentLines  int    `json:"sent_lines"`
	SentBytes  int64  `json:"sent_bytes"`
	// TakenFiles counts the files its graph.db records as taken;
	// IntakeLines the lines its intakes counted.
	TakenFiles  int `json:"taken_files"`
	IntakeLines int `json:"intake_lines"`
}

// exchangeFlow is what one partition published for another and what
// that one took of it.
type exchangeFlow struct {
	From, To  int
	Files     int      `json:"files"`
	Lines     int      `json:"lines"`
	Links     int      `json:"links"`
	Sites     int      `json:"sites"`
	Bytes     int64    `json:"bytes"`
	Taken     int      `json:"taken"` // published files the receiver took
	NotTaken  []uint64 `json:"not_taken,omitempty"`
	NeverSent []uint64 `json:"never_sent,omitempty"`
}

// setTimeline is the part of a crawlcheck timeline the comparison uses.
type setTimeline struct {
	Reachable      int     `json:"reachable"`
	Fetched        int     `json:"fetched"`
	PageRank       float64 `json:"pagerank_ratio"`
	PageRankByTime float64 `json:"pagerank_ratio_by_time"`
}

// measureSet reads the collections of one partitioned crawl.
func measureSet(dirs, logs []string) (*partitionSet, error) {
	set := &partitionSet{K: len(dirs), hosts: map[string]map[int]bool{}}
	byPart := make([]string, len(dirs)+1) // partition number → directory
	parts := make([]partition.Partition, len(dirs))
	owners := map[string]int{} // URL → partitions that fetched it
	for n, dir := range dirs {
		cfg, err := config.Load(config.Sources{File: filepath.Join(dir, config.FileName), NoEnv: true})
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		p := cfg.Crawl.PartitionOf()
		if p.Whole() {
			if len(dirs) != 1 {
				return nil, fmt.Errorf("collection %s is not a partition (crawl.partition is not set), and %d collections were given", dir, len(dirs))
			}
			p = partition.Partition{I: 1, K: 1}
		}
		if p.K != len(dirs) {
			return nil, fmt.Errorf("collection %s is partition %s: %d collections were given", dir, p, len(dirs))
		}
		if byPart[p.I] != "" {
			return nil, fmt.Errorf("collections %s and %s are both partition %s", byPart[p.I], dir, p)
		}
		byPart[p.I], parts[n] = dir, p
		st := partitionStats{Dir: dir, Partition: p.String()}
		if p.K == 1 {
			st.Partition = "whole"
		}
		urls, batches, links, intake, err := readPartitionBatches(dir)
		if err != nil {
			return nil, err
		}
		for u := range urls {
			owners[u]++
			pu, err := url.Parse(u)
			if err != nil {
				return nil, fmt.Errorf("collection %s: fetch log url %q: %w", dir, u, err)
			}
			h := strings.ToLower(pu.Hostname())
			if set.hosts[h] == nil {
				set.hosts[h] = map[int]bool{}
			}
			set.hosts[h][p.I] = true
		}
		st.Batches, st.Fetched, st.Links = batches, len(urls), links
		set.Links += links
		for _, s := range intake {
			st.IntakeLines += s.lines
			set.IntakeSeconds = append(set.IntakeSeconds, s.seconds)
		}
		if len(logs) > 0 {
			lines, runs, secs, err := readExchangeLog(logs[n])
			if err != nil {
				return nil, err
			}
			st.IntakeLines += lines
			set.ExchangeRuns += runs
			set.ExchangeRunSecs += secs
		}
		fi, err := os.Stat(filepath.Join(dir, collection.GraphFile))
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		st.GraphBytes = fi.Size()
		set.Partitions = append(set.Partitions, st)
		set.Batches += batches
		set.GraphBytes += st.GraphBytes
	}
	for u, n := range owners {
		if n > 1 {
			set.Duplicates++
			set.Examples = append(set.Examples, u)
		}
	}
	set.Fetched = len(owners)
	for _, ps := range set.hosts {
		if len(ps) > 1 {
			set.SplitHosts++
		}
	}
	slices.Sort(set.Examples)
	if len(set.Examples) > 5 {
		set.Examples = set.Examples[:5]
	}
	if set.K == 1 {
		return set, nil
	}
	// The exchange, sender by sender.
	for n, dir := range dirs {
		taken := map[int]*roaring.Bitmap{}
		g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), true, 30*time.Second)
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		err = g.View(func(tx *linkgraph.Tx) error {
			for from := 1; from <= set.K; from++ {
				if from == parts[n].I {
					continue
				}
				bm, err := tx.ExchangeTaken(from)
				if err != nil {
					return err
				}
				taken[from] = bm
			}
			return nil
		})
		g.Close()
		if err != nil {
			return nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		set.Partitions[n].TakenFiles = 0
		for from, bm := range taken {
			set.Partitions[n].TakenFiles += int(bm.GetCardinality())
			fl, err := measureFlow(byPart[from], from, parts[n], bm)
			if err != nil {
				return nil, err
			}
			set.Flows = append(set.Flows, fl)
			set.Partitions[slices.Index(dirs, byPart[from])].SentLines += fl.Lines
			set.Partitions[slices.Index(dirs, byPart[from])].SentBytes += fl.Bytes
		}
	}
	slices.SortFunc(set.Flows, func(a, b exchangeFlow) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
	taken := 0
	for _, fl := range set.Flows {
		set.SentLines += fl.Lines
		set.SentLinks += fl.Links
		set.SentSites += fl.Sites
		set.SentBytes += fl.Bytes
		set.SentFiles += fl.Files
		set.NotTaken += len(fl.NotTaken)
		set.NeverSent += len(fl.NeverSent)
	}
	for _, p := range set.Partitions {
		taken += p.IntakeLines
	}
	if len(logs) > 0 {
		set.TakenLines = &taken
	}
	return set, nil
}

// measureFlow counts what partition from (collection dir) published for
// partition to, and what of it to's graph.db records as taken.
func measureFlow(dir string, from int, to partition.Partition, taken *roaring.Bitmap) (exchangeFlow, error) {
	fl := exchangeFlow{From: from, To: to.I}
	out := seeder.ExchangeOutDir(dir, to.I)
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fl, fmt.Errorf("exchange files of partition %d: %w", from, err)
	}
	published := roaring.New()
	for _, e := range entries {
		seq, ok := seeder.ParseExchangeName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(out, e.Name())
		fi, err := e.Info()
		if err != nil {
			return fl, fmt.Errorf("exchange file %s: %w", path, err)
		}
		sender, err := seeder.ReadExchangeFile(path, to, func(kind, _ string) error {
			fl.Lines++
			if kind == seeder.ExchangeSite {
				fl.Sites++
			} else {
				fl.Links++
			}
			return nil
		})
		if err != nil {
			return fl, err
		}
		if sender != from {
			return fl, fmt.Errorf("exchange file %s: written by partition %d, found in partition %d's collection", path, sender, from)
		}
		published.Add(uint32(seq))
		fl.Files++
		fl.Bytes += fi.Size()
		if seq <= 1<<32-1 && taken.Contains(uint32(seq)) {
			fl.Taken++
		} else {
			fl.NotTaken = append(fl.NotTaken, seq)
		}
	}
	// Files the receiver reported taken are removed by their sender
	// (docs/format/exchange.md, "Taken files"): the sender's graph.db
	// counts every file and line it published, removed or not.
	var sent *linkgraph.ExchangePeer
	g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), true, 30*time.Second)
	if err != nil {
		return fl, fmt.Errorf("collection %s: %w", dir, err)
	}
	err = g.View(func(tx *linkgraph.Tx) error {
		stats, err := tx.ExchangeStats()
		sent = stats[to.I]
		return err
	})
	g.Close()
	if err != nil {
		return fl, fmt.Errorf("collection %s: %w", dir, err)
	}
	if sent != nil && sent.Removed > 0 {
		// Links and Sites stay the split of the files still there.
		fl.Taken += int(sent.Removed)
		fl.Files, fl.Lines, fl.Bytes = int(sent.Sent.Files), int(sent.Sent.Lines), sent.Sent.Bytes
		if n := int(taken.GetCardinality()); n > fl.Files {
			// More numbers taken than files published: those beyond.
			for _, seq := range roaring.AndNot(taken, published).ToArray()[:n-fl.Files] {
				fl.NeverSent = append(fl.NeverSent, uint64(seq))
			}
		}
		return fl, nil
	}
	for _, seq := range roaring.AndNot(taken, published).ToArray() {
		fl.NeverSent = append(fl.NeverSent, uint64(seq))
	}
	return fl, nil
}

// batchIntake is what the seeder's intake after one batch took in.
type batchIntake struct {
	lines   int
	seconds float64
}

// readPartitionBatches reads a collection's batches: the URLs with a
// response in its fetch logs, the number of batches, the links its
// seeder read, and the intake of exchange files after each seeded batch
// (seeded.done).
func readPartitionBatches(dir string) (map[string]bool, int, int64, []batchIntake, error) {
	col, err := collection.Open(dir)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, 0, 0, nil, err
	}
	var links int64
	urls := map[string]bool{}
	var intake []batchIntake
	for _, id := range ids {
		b := col.Batch(id)
		logPath := filepath.Join(b.HarvestPath(), fetchlog.LogFile)
		recs, err := fetchlog.ReadFile(logPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, 0, 0, nil, fmt.Errorf("collection %s: %w", dir, err)
		}
		for _, r := range recs {
			if r.OK() {
				urls[r.URL] = true
			}
		}
		var s struct {
			Links    int64 `json:"links"`
			Exchange *struct {
				Lines   int    `json:"lines"`
				Elapsed string `json:"elapsed"`
			} `json:"exchange"`
		}
		if b.Summary(collection.StageSeeded, &s) != nil {
			continue
		}
		links += s.Links
		if s.Exchange != nil {
			d, err := time.ParseDuration(s.Exchange.Elapsed)
			if err != nil {
				return nil, 0, 0, nil, fmt.Errorf("collection %s: batch %s: seeded.done: exchange elapsed %q: %w", dir, b.Name(), s.Exchange.Elapsed, err)
			}
			intake = append(intake, batchIntake{lines: s.Exchange.Lines, seconds: d.Seconds()})
		}
	}
	return urls, len(ids), links, intake, nil
}

// readExchangeLog reads the output of a partition's seeder exchange runs:
// the lines its summaries counted, the runs ("exchange-run SECONDS"
// lines) and their seconds.
func readExchangeLog(path string) (lines, runs int, secs float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("exchange log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "exchange-run "):
			var s float64
			if _, err := fmt.Sscanf(text, "exchange-run %g", &s); err != nil {
				return 0, 0, 0, fmt.Errorf("exchange log %s: line %d: %q: want exchange-run SECONDS", path, n, text)
			}
			runs++
			secs += s
		case strings.HasPrefix(text, "exchange in "), strings.HasPrefix(text, "exchange:"):
			// the run's time, or nothing new
		case strings.HasPrefix(text, "exchange "):
			var files, l int
			if _, err := fmt.Sscanf(text, "exchange %d files from other partitions, %d lines:", &files, &l); err != nil {
				return 0, 0, 0, fmt.Errorf("exchange log %s: line %d: %q: want the seeder's exchange summary", path, n, text)
			}
			lines += l
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, 0, fmt.Errorf("exchange log %s: %w", path, err)
	}
	return lines, runs, secs, nil
}

// readTimelineJSON reads a crawlcheck timeline --json-out file.
func readTimelineJSON(path string) (*Timeline, error) {
	tl := &Timeline{}
	return tl, readJSONFile(path, tl)
}

// readJSONFile decodes the JSON file path into v.
func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// mb formats bytes as megabytes, or kilobytes below one megabyte.
func mb(b int64) string {
	if b < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

// print writes the figures, compared with base if given.
func (s *partitionSet) print(w io.Writer, base *partitionSet) {
	fmt.Fprintf(w, "K = %d: %d batches, %d pages fetched, %d fetched by two partitions or more", s.K, s.Batches, s.Fetched, s.Duplicates)
	if len(s.Examples) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(s.Examples, " "))
	}
	fmt.Fprintln(w)
	if s.K > 1 {
		fmt.Fprintf(w, "  host names fetched by two partitions or more: %d of %d\n", s.SplitHosts, len(s.hosts))
	}
	if a := s.Audit; a != nil {
		fmt.Fprintf(w, "  server addresses asked by two partitions or more (request log): %d of %d (%d requests, %d for hosts no fetch log holds)", a.Shared, a.Addresses, a.Requests, a.Unassigned)
		if len(a.Examples) > 0 {
			fmt.Fprintf(w, ": %s", strings.Join(a.Examples, "; "))
		}
		fmt.Fprintln(w)
	}
	for _, p := range s.Partitions {
		fmt.Fprintf(w, "  partition %-5s %4d batches %8d fetched  graph.db %9s", p.Partition, p.Batches, p.Fetched, mb(p.GraphBytes))
		if s.K > 1 {
			fmt.Fprintf(w, "  sent %d lines (%s)  took %d files, %d lines", p.SentLines, mb(p.SentBytes), p.TakenFiles, p.IntakeLines)
		}
		fmt.Fprintln(w)
	}
	if s.K > 1 {
		for _, f := range s.Flows {
			fmt.Fprintf(w, "  %d -> %d: %d files (%d links, %d URLs of sites handed over, %s), %d taken", f.From, f.To, f.Files, f.Links, f.Sites, mb(f.Bytes), f.Taken)
			if len(f.NotTaken) > 0 {
				fmt.Fprintf(w, "; NOT TAKEN %v", f.NotTaken)
			}
			if len(f.NeverSent) > 0 {
				fmt.Fprintf(w, "; TAKEN, NEVER PUBLISHED %v", f.NeverSent)
			}
			fmt.Fprintln(w)
		}
		perLine := 0.0
		if s.SentLines > 0 {
			perLine = float64(s.SentBytes) / float64(s.SentLines)
		}
		fmt.Fprintf(w, "  exchange: %d lines sent (%d links, %d URLs of sites handed over) in %d files, %s: %.1f bytes per line, %s per cycle (%d batches)\n",
			s.SentLines, s.SentLinks, s.SentSites, s.SentFiles, mb(s.SentBytes), perLine, mb(s.SentBytes/int64(max(s.Batches, 1))), s.Batches)
		delivered := "lines taken in: not known (no --exchange-log)"
		if s.TakenLines != nil {
			verdict := "every line delivered exactly once"
			if *s.TakenLines != s.SentLines || s.NotTaken > 0 || s.NeverSent > 0 {
				verdict = "NOT exactly once"
			}
			delivered = fmt.Sprintf("%d lines taken in by the receivers' intakes, %d files not taken, %d taken never published: %s", *s.TakenLines, s.NotTaken, s.NeverSent, verdict)
		}
		fmt.Fprintf(w, "  exchange: %s\n", delivered)
		fmt.Fprintf(w, "  exchange: %.3f lines per page fetched, %.4f per link read (%d links read by the seeders)\n",
			float64(s.SentLines)/float64(max(s.Fetched, 1)), float64(s.SentLines)/float64(max(s.Links, 1)), s.Links)
		med, mx, tot := 0.0, 0.0, 0.0
		if n := len(s.IntakeSeconds); n > 0 {
			v := slices.Clone(s.IntakeSeconds)
			slices.Sort(v)
			med, mx = v[n/2], v[n-1]
			for _, x := range v {
				tot += x
			}
		}
		fmt.Fprintf(w, "  exchange time: intake after a batch median %.3f s, max %.3f s, %.1f s in all over %d batches; %d seeder exchange runs, %.1f s wall in all\n",
			med, mx, tot, len(s.IntakeSeconds), s.ExchangeRuns, s.ExchangeRunSecs)
	}
	perPage := 0.0
	if s.Fetched > 0 {
		perPage = float64(s.GraphBytes) / float64(s.Fetched)
	}
	fmt.Fprintf(w, "  graph.db: %s in all, %.0f bytes per page fetched\n", mb(s.GraphBytes), perPage)
	if t := s.Timeline; t != nil {
		fmt.Fprintf(w, "  crawl: %d of %d reachable pages (%.2f %%); cumulative PageRank / sorted order %.3f by page order, %.3f by time\n",
			t.Fetched, t.Reachable, 100*float64(t.Fetched)/float64(max(t.Reachable, 1)), t.PageRank, t.PageRankByTime)
	}
	if base == nil {
		return
	}
	fmt.Fprintf(w, "  against K = %d: pages fetched %d / %d = %.4f", base.K, s.Fetched, base.Fetched, float64(s.Fetched)/float64(max(base.Fetched, 1)))
	if t, b := s.Timeline, base.Timeline; t != nil && b != nil {
		fmt.Fprintf(w, "; reachable pages %d / %d = %.4f; cumulative PageRank %+.3f by page order, %+.3f by time",
			t.Fetched, b.Fetched, float64(t.Fetched)/float64(max(b.Fetched, 1)), t.PageRank-b.PageRank, t.PageRankByTime-b.PageRankByTime)
	}
	fmt.Fprintln(w)
	if base.GraphBytes > 0 {
		fmt.Fprintf(w, "  against K = %d: graph.db %.3f × (%s / %s)\n", base.K, float64(s.GraphBytes)/float64(base.GraphBytes), mb(s.GraphBytes), mb(base.GraphBytes))
	}
}
