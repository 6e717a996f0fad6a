package seeder

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/sitegraph"
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

// TestExchangeTakenRemoved: a receiver reports the files it took
// (exchange/out/to-I/taken) only once they are taken, and removes its own
// copies of them; the sender, reading the report over a shared file
// system or as a copy in its exchange/in/, removes exactly the files
// listed, never one not taken yet; a file copied in again after it was
// taken is not taken twice. Both publish their site graph for the other.
func TestExchangeTakenRemoved(t *testing.T) {
	for _, shared := range []bool{true, false} {
		name := "rsync"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) {
			cfg1, cfg2 := testConfig(), testConfig()
			cfg1.Crawl.Partition, cfg2.Crawl.Partition = "1/2", "2/2"
			p1 := newCollection(t, cfg1)
			p2 := newCollection(t, cfg2)
			if shared {
				cfg1.Crawl.PartitionPeers, cfg2.Crawl.PartitionPeers = []string{p2.Dir}, []string{p1.Dir}
			}
			link := func(u string) exchangeLine { return exchangeLine{Kind: ExchangeLink, Batch: 1, URL: u} }
			f4 := writeExchangeFile(t, p1.Dir, 1, 2, 2, 4, link("http://a.cl/"), link("http://b.cl/"))
			copyFiles := func(src, dst string) { // rsync -a src/ dst/, regular files
				t.Helper()
				entries, _ := os.ReadDir(src)
				for _, e := range entries {
					if !e.Type().IsRegular() {
						continue
					}
					data, err := os.ReadFile(filepath.Join(src, e.Name()))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(dst, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			in2 := filepath.Join(p2.Dir, ExchangeDir, "in", "p1")
			in1 := filepath.Join(p1.Dir, ExchangeDir, "in", "p2")
			if !shared {
				copyFiles(outDir(p1.Dir, 2), in2)
			}
			ctx := context.Background()
			s, err := Exchange(ctx, ReleaseOptions{Collection: p2, Config: cfg2})
			if err != nil || s == nil || s.Files != 1 || s.NewURLs != 2 {
				t.Fatalf("partition 2 takes: %+v, %v", s, err)
			}
			report := filepath.Join(outDir(p2.Dir, 1), TakenFile)
			by, bm, err := readTaken(report, partition.Partition{I: 1, K: 2})
			if err != nil || by != 2 || bm.GetCardinality() != 1 || !bm.Contains(4) {
				t.Fatalf("report %v %v, %v", by, bm, err)
			}
			if _, err := os.Stat(filepath.Join(in2, exchangeName(4))); !shared && !os.IsNotExist(err) {
				t.Errorf("the copy taken stayed: %v", err)
			}
			// A file written after the report is not removed with the
			// ones it lists.
			f6 := writeExchangeFile(t, p1.Dir, 1, 2, 2, 6, link("http://c.cl/"))
			if !shared {
				copyFiles(outDir(p2.Dir, 1), in1) // the report travels back with p2's files for p1
			}
			s, err = Exchange(ctx, ReleaseOptions{Collection: p1, Config: cfg1})
			if err != nil || s == nil || s.Removed != 1 {
				t.Fatalf("partition 1 removes: %+v, %v", s, err)
			}
			if _, err := os.Stat(f4); !os.IsNotExist(err) {
				t.Errorf("file 4, taken, stayed: %v", err)
			}
			if _, err := os.Stat(f6); err != nil {
				t.Errorf("file 6, not taken, removed: %v", err)
			}
			// The old copy of file 4 comes again (a late rsync): taken
			// once only; file 6 is taken now.
			if !shared {
				copyFiles(outDir(p1.Dir, 2), in2)
				// file 4 as it was (with a link the taken copy did not
				// have, to tell a second intake)
				w, err := createExchange(filepath.Join(t.TempDir(), "old"), partition.Partition{I: 1, K: 2}, 2, 4)
				if err != nil {
					t.Fatal(err)
				}
				w.Write(link("http://a.cl/"))
				w.Write(link("http://z.cl/"))
				if err := w.Commit(); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(w.path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(in2, exchangeName(4)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err = Exchange(ctx, ReleaseOptions{Collection: p2, Config: cfg2})
			if err != nil || s == nil || s.Files != 1 || s.NewURLs != 1 {
				t.Fatalf("partition 2 takes file 6 only: %+v, %v", s, err)
			}
			if g := readGraph(t, p2); len(g.docs) != 3 {
				t.Errorf("partition 2 knows %d URLs, want 3 (a, b, c)", len(g.docs))
			}
			// Each published its site graph for the other.
			for _, c := range []struct {
				col string
				to  int
			}{{p1.Dir, 2}, {p2.Dir, 1}} {
				g, err := sitegraph.Read(sitegraph.PathFor(c.col, c.to))
				if err != nil || g.From.I == c.to || g.From.K != 2 {
					t.Errorf("site graph of %s for %d: %+v, %v", c.col, c.to, g, err)
				}
			}
			var stats map[int]*linkgraph.ExchangePeer
			g, err := openGraph(p1, true, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := g.View(func(tx *linkgraph.Tx) error {
				stats, err = tx.ExchangeStats()
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if st := stats[2]; st == nil || st.Removed != 1 {
				t.Errorf("partition 1's counts for 2: %+v", st)
			}
		})
	}
}

// TestExchangeFileGone: a file listed and then removed by its sender
// before it is read (the receiver had reported it taken) is skipped, not
// an error of the whole intake.
func TestExchangeFileGone(t *testing.T) {
	cfg := testConfig()
	cfg.Crawl.Partition = "2/2"
	col := newCollection(t, cfg)
	g, err := openGraph(col, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := &ExchangeSummary{Rejected: map[string]int{}}
	gone := filepath.Join(t.TempDir(), exchangeName(9))
	if _, _, err := takeExchangeFiles(context.Background(), g, col, cfg, []string{gone}, s, slog.New(slog.DiscardHandler)); err != nil || s.Files != 0 {
		t.Errorf("a file gone: %+v, %v", s, err)
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
