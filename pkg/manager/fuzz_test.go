package manager

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// FuzzReadPageRankFile checks that a PageRank file, outside input, never
// makes the reader panic; that every failure wraps ErrHistorySource; and
// that what it accepts comes out in strictly ascending URL order with
// values that are numbers ≥ 0. Seeded from testdata/pagerank.
func FuzzReadPageRankFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pagerank", "*.tsv"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("http://a.cl/\t1e-3\nhttp://A.CL:80/\t2\n"))
	f.Add([]byte("http://a.cl/\tNaN\n"))
	f.Add([]byte("no tab here\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in.tsv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		prev := ""
		err := readPageRankFile(path, urlnorm.New(2048), func(u string, v float64) error {
			if u <= prev && prev != "" {
				t.Fatalf("%q after %q", u, prev)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("value %g for %s", v, u)
			}
			prev = u
			return nil
		})
		if err != nil && !errors.Is(err, ErrHistorySource) {
			t.Fatalf("error %v does not wrap ErrHistorySource", err)
		}
	})
}

// testdata/pagerank/smallweb.tsv is the export of smallWeb's PageRank
// (go test -run TestExportFixture -update rewrites it); it must keep
// importing.
func TestExportFixture(t *testing.T) {
	f := smallWebFixture(t, StrategyPageRank)
	path := filepath.Join("testdata", "pagerank", "smallweb.tsv")
	var buf bytes.Buffer
	if _, err := ExportPageRank(context.Background(), f.col, &buf, HistoryOptions{Config: f.cfg}); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("export differs from %s (go test -update rewrites it):\n%s", path, buf.Bytes())
	}
	res := f.importHistory(string(want))
	if res.Pages != 13 || res.Matched != 13 {
		t.Errorf("import of the fixture: %+v", res)
	}
}

// TestReadPageRankFileNormaliser: the imported URLs go through the
// normaliser the caller gives (the collection's, with its session
// parameters), so that they match the URLs of graph.db.
func TestReadPageRankFileNormaliser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pr.tsv")
	if err := os.WriteFile(path, []byte("http://a.cl/?zzsid=9\t0.25\nhttp://A.cl/\t0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	err := readPageRankFile(path, urlnorm.NewWithParams(0, []string{"zzsid"}), func(u string, v float64) error {
		got[u] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["http://a.cl/"] != 0.75 {
		t.Errorf("with zzsid a session parameter: %v, want http://a.cl/ 0.75", got)
	}
}
