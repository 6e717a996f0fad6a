package manager

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
)

func TestShow(t *testing.T) {
	var out bytes.Buffer
	path := filepath.Join("testdata", "golden", "pagerank.tsv")
	if err := Show(&out, path, ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"batch 000001",
		"created 2026-11-22T12:00:00Z",
		"strategy pagerank",
		"alpha=1 batch_duration=1h0m0s batch_size=100000",
		"max_fetches_per_script=1 max_pages_per_site=3 max_site_pages=25000",
		"urls 6 sites 3 new 4 revisits 2",
		"score min 0.2117 median 0.5277 max 0.5913",
		"quantiles p1 0.2117 p10 0.2117 p25 0.2957 p50 0.4953 p75 0.5601 p90 0.5913 p99 0.5913",
		"top sites pages http://a.cl 3 http://b.cl 2 https://c.cl 1",
		"pages per site sites 1 1 2-3 2",
		"depth urls 0 3 1 2 2 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSummarize(t *testing.T) {
	var entries []batch.Entry
	add := func(site string, n, depth int, score float64) {
		for i := 0; i < n; i++ {
			entries = append(entries, batch.Entry{DocID: uint64(len(entries) + 1), Site: site, Score: score, Depth: depth, Kind: batch.KindNew, URL: site + "/"})
		}
	}
	add("http://a.cl", 9, 3, 1)
	add("http://b.cl", 4, 0, 0.5)
	add("http://c.cl", 1, 1, 0.25)
	for i := 0; i < 11; i++ {
		add("http://s"+string(rune('a'+i))+".cl", 1, 0, 0.1)
	}
	s := Summarize(batch.Header{Batch: 3, Created: time.Unix(0, 0)}, entries)
	if s.URLs != 25 || s.Sites != 14 || s.New != 25 || s.ScoreMin != 0.1 || s.ScoreMax != 1 || s.ScoreMed != 0.5 {
		t.Errorf("summary %+v", s)
	}
	if len(s.TopSites) != 10 || s.TopSites[0] != (SiteCount{"http://a.cl", 9}) || s.TopSites[1] != (SiteCount{"http://b.cl", 4}) || s.TopSites[2].Site != "http://c.cl" {
		t.Errorf("top sites %v", s.TopSites)
	}
	wantSizes := []Bucket{{1, 1, 12}, {2, 3, 0}, {4, 7, 1}, {8, 15, 1}}
	if len(s.SiteSizes) != len(wantSizes) {
		t.Fatalf("site sizes %v", s.SiteSizes)
	}
	for i, b := range wantSizes {
		if s.SiteSizes[i] != b {
			t.Errorf("site sizes %v, want %v", s.SiteSizes, wantSizes)
		}
	}
	if want := []int{15, 1, 0, 9}; len(s.Depths) != 4 || s.Depths[0] != want[0] || s.Depths[1] != want[1] || s.Depths[3] != want[3] {
		t.Errorf("depths %v, want %v", s.Depths, want)
	}
}

// A damaged batch file is rejected with the reader's line number.
func TestShowRejectsMalformed(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "golden", "backlink.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	tests := []struct {
		name, content, want string
	}{
		{"bad score", strings.Replace(string(good), "\t0.5\t2\t", "\tlots\t2\t", 1), "line 8: score"},
		{"missing field", strings.Replace(string(good), "\tnew\thttp://a.cl/q?p=2", "\thttp://a.cl/q?p=2", 1), "line 8: want 8"},
		{"truncated", strings.Join(lines[:len(lines)-3], ""), "truncated"},
		{"cut mid-line", string(good[:len(good)-30]), "line 13"},
		{"not a batch", "hello\n", "line 1"},
		{"empty", "", "empty"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "batch.tsv")
		if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := Show(&out, path, ShowOptions{})
		if !errors.Is(err, batch.ErrFormat) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want ErrFormat mentioning %q", tt.name, err, tt.want)
		}
	}
}

// Quantiles are nearest-rank: the smallest score with at least that
// share of the entries at or below it.
func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct{ q, want float64 }{{0.01, 1}, {0.1, 1}, {0.25, 3}, {0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10}} {
		if got := quantile(v, tt.q); got != tt.want {
			t.Errorf("quantile %g = %g, want %g", tt.q, got, tt.want)
		}
	}
}

// Rows are printed in batch order, filtered, and counted.
func TestShowRows(t *testing.T) {
	two := 2
	path := filepath.Join("testdata", "golden", "pagerank.tsv")
	tests := []struct {
		name   string
		filter RowFilter
		urls   []string
	}{
		{"all", RowFilter{}, []string{"http://a.cl/q?p=2", "http://a.cl/w", "https://c.cl/", "http://a.cl/", "http://b.cl/1", "http://b.cl/"}},
		{"site", RowFilter{Site: "http://b.cl"}, []string{"http://b.cl/1", "http://b.cl/"}},
		{"revisits", RowFilter{Kind: batch.KindRevisit}, []string{"http://a.cl/", "http://b.cl/"}},
		{"depth 1-2", RowFilter{MinDepth: 1, MaxDepth: &two}, []string{"http://a.cl/q?p=2", "http://a.cl/w", "http://b.cl/1"}},
		{"scores", RowFilter{MinScore: 0.3, MaxScore: 0.561}, []string{"http://a.cl/w", "https://c.cl/", "http://a.cl/"}},
		{"contains, limit", RowFilter{Contains: "a.cl", Limit: 2}, []string{"http://a.cl/q?p=2", "http://a.cl/w"}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := Show(&out, path, ShowOptions{Rows: true, Filter: tt.filter}); err != nil {
			t.Fatal(err)
		}
		_, rows, _ := strings.Cut(out.String(), "# docid\tsite\tscore\tdepth\tkind\turl\n")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
			if f := strings.Split(line, "\t"); len(f) == 6 {
				got = append(got, f[5])
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.urls, " ") {
			t.Errorf("%s: rows %v, want %v\n%s", tt.name, got, tt.urls, out.String())
		}
		if !strings.Contains(rows, "entries match") {
			t.Errorf("%s: no count line", tt.name)
		}
	}
}
