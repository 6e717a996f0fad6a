package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// fixturePartition is one collection of a hand-made partitioned crawl.
type fixturePartition struct {
	fetched []string         // URLs fetched in its one batch
	intake  int              // lines its seeder's intake after the batch counted
	files   map[int][]string // destination partition → lines of its one published file
	taken   map[int][]uint32 // sender partition → file numbers its graph.db records as taken
	logs    string           // its seeder exchange runs' output
}

// writeFixture writes the K collections of parts under dir (p1 ... pK) and
// returns their directories and exchange logs. Partition i publishes its
// file for partition j as number 10*i+j.
func writeFixture(t *testing.T, dir string, parts []fixturePartition) (cols, logs []string) {
	t.Helper()
	k := len(parts)
	for i := range parts {
		cols = append(cols, filepath.Join(dir, fmt.Sprintf("p%d", i+1)))
	}
	for i, p := range parts {
		col := cols[i]
		cfg := config.Defaults()
		if k > 1 {
			cfg.Crawl.Partition = fmt.Sprintf("%d/%d", i+1, k)
		}
		if _, err := seeder.Init(col, cfg); err != nil {
			t.Fatal(err)
		}
		harvest := filepath.Join(col, collection.BatchesDir, collection.BatchName(1), collection.HarvestDir)
		if err := os.MkdirAll(harvest, 0o755); err != nil {
			t.Fatal(err)
		}
		// The batch file only has to exist (collection.BatchIDs).
		if err := os.WriteFile(filepath.Join(col, collection.BatchesDir, collection.BatchName(1), collection.BatchFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var fl strings.Builder
		fl.WriteString(fetchlog.Header())
		for n, u := range p.fetched {
			r := fetchlog.Record{DocID: uint64(n + 1), URL: u, Status: 200, Bytes: 100, MIME: "text/html", Fetched: time.Date(2026, 12, 7, 0, 0, n, 0, time.UTC)}
			fl.WriteString(r.Format())
		}
		if err := os.WriteFile(filepath.Join(harvest, fetchlog.LogFile), []byte(fl.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		seeded := fmt.Sprintf(`{"batch":1,"links":5,"exchange":{"files":1,"lines":%d,"newUrls":0,"known":0,"elapsed":"%dms"}}`, p.intake, 10*(i+1))
		if p.intake < 0 {
			seeded = `{"batch":1}`
		}
		if err := os.WriteFile(filepath.Join(col, collection.BatchesDir, collection.BatchName(1), collection.MarkerFile(collection.StageSeeded)), []byte(seeded), 0o644); err != nil {
			t.Fatal(err)
		}
		for to, lines := range p.files {
			out := seeder.ExchangeOutDir(col, to)
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w := snappy.NewBufferedWriter(&buf)
			fmt.Fprintf(w, "# wire-exchange 1 from %d/%d to %d\n# columns: kind depth batch url anchor\n", i+1, k, to)
			for _, l := range lines {
				fmt.Fprintln(w, l)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("%08d.sz", 10*(i+1)+to)), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), false, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		err = g.Update(func(tx *linkgraph.Tx) error {
			for from, seqs := range p.taken {
				if err := tx.PutExchangeTaken(from, roaring.BitmapOf(seqs...)); err != nil {
					return err
				}
			}
			return nil
		})
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		logPath := filepath.Join(dir, fmt.Sprintf("exchange-%d.log", i+1))
		if err := os.WriteFile(logPath, []byte(p.logs), 0o644); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, logPath)
	}
	return cols, logs
}

// graphSizes masks graph.db's sizes (they follow the system's page size)
// and the fixture's temporary directory.
var graphSizes = regexp.MustCompile(`graph\.db +[0-9.]+ [kM]B|graph\.db: [0-9.]+ [kM]B in all, [0-9]+ bytes|graph\.db [0-9.]+ × \([0-9.]+ [kM]B / [0-9.]+ [kM]B\)`)

// TestExchangeGolden runs `crawlcheck exchange` on hand-made partitioned
// crawls (golden files testdata/exchange-*.golden; go test -update
// rewrites them):
//   - whole: one collection of the whole web, the reference;
//   - exactly-once: two partitions, each file taken once, the lines
//     the intakes counted (after a batch and in seeder exchange runs)
//     equal to the lines sent, compared with whole;
//   - lost-and-twice: a URL fetched by both partitions, a published file
//     not taken, a file taken that was never published, and an intake
//     that counted a file's lines twice: each reported, NOT exactly once.
func TestExchangeGolden(t *testing.T) {
	dir := t.TempDir()
	whole, _ := writeFixture(t, filepath.Join(dir, "whole"), []fixturePartition{{
		fetched: []string{"http://a.cl/", "http://a.cl/x", "http://b.cl/", "http://c.cl/"}, intake: -1,
	}})
	var base bytes.Buffer
	baseJSON := filepath.Join(dir, "whole.json")
	if err := newApp(&base).Run([]string{"crawlcheck", "exchange", "--collection", whole[0], "--json-out", baseJSON}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		parts []fixturePartition
		out   *bytes.Buffer
	}{
		{"whole", nil, &base},
		{"exactly-once", []fixturePartition{
			{
				fetched: []string{"http://a.cl/", "http://a.cl/x"}, intake: 1,
				files: map[int][]string{2: {"link\t0\t1\thttp://b.cl/\tB", "site\t2\t1\thttp://c.cl/\t"}},
				taken: map[int][]uint32{2: {21}},
				logs:  "exchange: nothing new from other partitions\nexchange-run 0.5\n",
			},
			{
				fetched: []string{"http://b.cl/", "http://c.cl/"}, intake: 0,
				files: map[int][]string{1: {"link\t0\t1\thttp://a.cl/x\tX"}},
				taken: map[int][]uint32{1: {12}},
				logs:  "exchange in 3ms\n  exchange    1 files from other partitions, 2 lines: 1 new urls, 1 known, 1 sites adopted, 0 links passed on\nexchange-run 0.25\n",
			},
		}, nil},
		{"lost-and-twice", []fixturePartition{
			{
				fetched: []string{"http://a.cl/", "http://b.cl/"}, intake: 0,
				files: map[int][]string{2: {"link\t0\t1\thttp://b.cl/\tB", "link\t0\t1\thttp://c.cl/\t"}},
				taken: map[int][]uint32{},
				logs:  "exchange-run 0.1\n",
			},
			{
				fetched: []string{"http://b.cl/", "http://c.cl/"}, intake: 2,
				files: map[int][]string{1: {"link\t0\t1\thttp://a.cl/x\tX"}},
				taken: map[int][]uint32{1: {7, 12}},
				logs:  "  exchange    1 files from other partitions, 2 lines: 0 new urls, 2 known, 0 sites adopted, 0 links passed on\nexchange-run 0.2\n",
			},
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := c.out
			if out == nil {
				cols, logs := writeFixture(t, filepath.Join(dir, c.name), c.parts)
				out = &bytes.Buffer{}
				args := []string{"crawlcheck", "exchange", "--base", baseJSON}
				for i := range cols {
					args = append(args, "--collection", cols[i], "--exchange-log", logs[i])
				}
				if err := newApp(out).Run(args); err != nil {
					t.Fatal(err)
				}
			}
			got := graphSizes.ReplaceAllString(strings.ReplaceAll(out.String(), dir, "DIR"), "graph.db SIZE")
			golden := filepath.Join("testdata", "exchange-"+c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("exchange:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

// TestExchangeErrors: bad input is named.
func TestExchangeErrors(t *testing.T) {
	dir := t.TempDir()
	two, logs := writeFixture(t, filepath.Join(dir, "two"), []fixturePartition{{intake: -1}, {intake: -1}})
	badLog := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(badLog, []byte("  exchange    lots of files\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"one partition of two", []string{"--collection", two[0]}, "is partition 1/2: 1 collections were given"},
		{"the same twice", []string{"--collection", two[0], "--collection", two[0]}, "are both partition 1/2"},
		{"logs not one each", []string{"--collection", two[0], "--collection", two[1], "--exchange-log", logs[0]}, "1 --exchange-log for 2 --collection"},
		{"bad log", []string{"--collection", two[0], "--collection", two[1], "--exchange-log", badLog, "--exchange-log", logs[1]}, "bad.log: line 1"},
		{"not a collection", []string{"--collection", dir}, dir},
		{"bad base", []string{"--collection", two[0], "--collection", two[1], "--base", badLog}, "decode " + badLog},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := newApp(&out).Run(append([]string{"crawlcheck", "exchange"}, c.args...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

// TestAuditAddresses: a request is its host's partition's; an address
// whose hosts belong to two partitions is shared; a host no fetch log
// holds is left unassigned.
func TestAuditAddresses(t *testing.T) {
	hosts := map[string]map[int]bool{
		"a.cl": {1: true}, "b.cl": {2: true}, "c.cl": {1: true}, "d.cl": {1: true, 2: true},
	}
	req := func(host, addr string) requestLine { return requestLine{host: host, addr: addr} }
	for _, tc := range []struct {
		name       string
		reqs       []requestLine
		shared     int
		unassigned int
		examples   []string
	}{
		{"apart", []requestLine{req("a.cl", "127.0.0.1"), req("c.cl", "127.0.0.1"), req("b.cl", "127.0.0.2")}, 0, 0, nil},
		{"shared", []requestLine{req("a.cl", "127.0.0.1"), req("B.cl", "127.0.0.1"), req("b.cl", "127.0.0.2")}, 1, 0, []string{"127.0.0.1: p1 p2"}},
		{"split host", []requestLine{req("d.cl", "127.0.0.3")}, 1, 0, []string{"127.0.0.3: p1 p2"}},
		{"unassigned", []requestLine{req("x.cl", "127.0.0.1"), req("a.cl", "127.0.0.1")}, 0, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &partitionSet{K: 2, hosts: hosts}
			s.auditAddresses(tc.reqs)
			a := s.Audit
			if a.Shared != tc.shared || a.Unassigned != tc.unassigned || !slices.Equal(a.Examples, tc.examples) || a.Requests != len(tc.reqs) {
				t.Errorf("%+v, want %d shared %v, %d unassigned", a, tc.shared, tc.examples, tc.unassigned)
			}
		})
	}
}
