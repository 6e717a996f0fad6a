package seeder

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
)

// writeExchangeFile writes a committed and published exchange file from
// partition from to partition to (of K) under dir (a collection).
func writeExchangeFile(t *testing.T, dir string, from, to, k int, seq uint64, lines ...exchangeLine) string {
	t.Helper()
	w, err := createExchange(dir, partition.Partition{I: from, K: k}, to, seq)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := w.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := publishExchange(dir, func(s uint64) bool { return s == seq }); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(outDir(dir, to), exchangeName(seq))
}

// TestExchangeFiles: a file round-trips; one for another partition, of
// another K or damaged is refused with ErrExchangeFormat; a pending file
// whose transaction did not commit is removed, not published.
func TestExchangeFiles(t *testing.T) {
	dir := t.TempDir()
	lines := []exchangeLine{
		{Kind: ExchangeLink, Depth: 0, Batch: 3, URL: "http://a.cl/", Anchor: "A  site\t"},
		{Kind: ExchangeSite, Depth: 2, Batch: 3, URL: "http://b.cl/x?y=1"},
	}
	path := writeExchangeFile(t, dir, 1, 2, 3, 7, lines...)
	var got []exchangeLine
	from, err := readExchange(path, partition.Partition{I: 2, K: 3}, func(l exchangeLine) error {
		got = append(got, l)
		return nil
	})
	if err != nil || from != 1 || len(got) != 2 || got[0].Anchor != "A site" || got[1] != lines[1] || got[0].URL != lines[0].URL {
		t.Fatalf("read back from %d: %+v, %v", from, got, err)
	}
	for _, p := range []partition.Partition{{I: 3, K: 3}, {I: 2, K: 4}, {I: 1, K: 3}} {
		if _, err := readExchange(path, p, func(exchangeLine) error { return nil }); !errors.Is(err, ErrExchangeFormat) {
			t.Errorf("read as partition %s: %v", p, err)
		}
	}
	// Not committed: removed by the next publish.
	w, err := createExchange(dir, partition.Partition{I: 1, K: 3}, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := publishExchange(dir, func(uint64) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outDir(dir, 2), "pending", exchangeName(8))); !os.IsNotExist(err) {
		t.Errorf("an uncommitted file stayed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outDir(dir, 2), exchangeName(8))); !os.IsNotExist(err) {
		t.Errorf("an uncommitted file was published: %v", err)
	}
	if err := (&exchangeWriter{}).Write(exchangeLine{URL: "http://a.cl/\tx"}); err == nil {
		t.Error("a URL with a tab written")
	}
}

// TestExchangeTakenOnce: partition 2 of 2 takes in the file partition 1
// wrote for it (on a shared file system, crawl.partition_peers) and the
// same file copied into its exchange/in/: the links become URLs once;
// taking in again, as after a kill, takes nothing; a link to a site of
// partition 1's (by its registrable domain) is refused at the seeds.
func TestExchangeTakenOnce(t *testing.T) {
	peer := t.TempDir()
	var lines []exchangeLine
	for _, u := range []string{"http://a.cl/", "http://b.cl/", "http://c.cl/", "http://d.cl/", "http://e.cl/"} {
		lines = append(lines, exchangeLine{Kind: ExchangeLink, Batch: 1, URL: u, Anchor: "x"})
	}
	path := writeExchangeFile(t, peer, 1, 2, 2, 4, lines...)
	cfg := testConfig()
	cfg.Crawl.Partition = "2/2"
	cfg.Crawl.PartitionPeers = []string{peer}
	col := newCollection(t, cfg)
	copyTo := filepath.Join(col.Dir, ExchangeDir, "in", "from-1")
	if err := os.MkdirAll(copyTo, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copyTo, exchangeName(4)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := ReleaseOptions{Collection: col, Config: cfg}
	s, err := Exchange(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Files != 1 || s.Lines != 5 || s.NewURLs != 5 {
		t.Fatalf("first exchange %+v", s)
	}
	if s, err := Exchange(context.Background(), opts); err != nil || s != nil {
		t.Errorf("second exchange %+v, %v: want nothing new", s, err)
	}
	g := readGraph(t, col)
	for _, l := range lines {
		if d, ok := g.docs[l.URL]; !ok || d.State != linkgraph.StatePending || len(d.Anchors) != 1 {
			t.Errorf("%s: %+v", l.URL, d)
		}
	}
	cfg.Crawl.Partition = ""
	if _, err := Exchange(context.Background(), ReleaseOptions{Collection: col, Config: cfg}); !errors.Is(err, ErrNotPartitioned) {
		t.Errorf("exchange outside a partition: %v", err)
	}
}

// FuzzReadExchange: no exchange file crashes the reader; what it refuses
// it refuses as ErrExchangeFormat.
func FuzzReadExchange(f *testing.F) {
	f.Add([]byte("# wire-exchange 1 from 1/2 to 2\n# columns: kind depth batch url anchor\nlink\t0\t1\thttp://a.cl/\tA\n"))
	f.Add([]byte("# wire-exchange 1 from 1/2 to 2\nsite\t-1\t1\thttp://a.cl/\t\n"))
	f.Add([]byte("# wire-exchange 2 from 2/2 to 2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, text []byte) {
		dir := t.TempDir()
		var b bytes.Buffer
		w := snappy.NewBufferedWriter(&b)
		w.Write(text)
		w.Close()
		path := filepath.Join(dir, "00000001.sz")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readExchange(path, partition.Partition{I: 2, K: 2}, func(l exchangeLine) error {
			if l.URL == "" || l.Depth < 0 || (l.Kind != ExchangeLink && l.Kind != ExchangeSite) {
				t.Fatalf("line %+v passed", l)
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrExchangeFormat) {
			t.Fatalf("error %v is not ErrExchangeFormat", err)
		}
	})
}
