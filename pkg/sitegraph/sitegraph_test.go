package sitegraph

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/partition"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func graph(i, k int, at time.Time, sites []string, edges ...Edge) *Graph {
	return &Graph{From: partition.Partition{I: i, K: k}, Written: at, Sites: sites, Edges: edges}
}

// TestWriteRead: a graph round-trips through its file, the copies for
// every other partition (Publish) are the same file, and damaged files
// are refused with ErrFormat.
func TestWriteRead(t *testing.T) {
	col := t.TempDir()
	g := graph(2, 3, t0, []string{"http://a.cl", "https://b.cl:8443"}, Edge{0, 1, 7}, Edge{1, 0, 1})
	if err := Publish(col, g); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{Path(col), PathFor(col, 1), PathFor(col, 3)} {
		got, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Bytes == 0 || got.Bytes != g.Bytes {
			t.Errorf("%s: %d bytes, written %d", path, got.Bytes, g.Bytes)
		}
		got.Bytes = g.Bytes
		if !reflect.DeepEqual(got, g) {
			t.Errorf("%s: read %+v, wrote %+v", path, got, g)
		}
	}
	if _, err := os.Stat(PathFor(col, 2)); !os.IsNotExist(err) {
		t.Errorf("a copy for the sender itself: %v", err)
	}
	for name, text := range map[string]string{
		"version":     "# wire-sitegraph 2 from 1/2 written 2026-12-07T12:00:00Z\n",
		"whole":       "# wire-sitegraph 1 from 1/1 written 2026-12-07T12:00:00Z\n",
		"time":        "# wire-sitegraph 1 from 1/2 written yesterday\n",
		"index":       "# wire-sitegraph 1 from 1/2 written 2026-12-07T12:00:00Z\nsite\thttp://a.cl\nlink\t0\t1\t3\n",
		"kind":        "# wire-sitegraph 1 from 1/2 written 2026-12-07T12:00:00Z\nnode\thttp://a.cl\n",
		"count":       "# wire-sitegraph 1 from 1/2 written 2026-12-07T12:00:00Z\nsite\thttp://a.cl\nsite\thttp://b.cl\nlink\t0\t1\t-3\n",
		"empty":       "",
		"not snappy!": "plain",
	} {
		path := filepath.Join(t.TempDir(), FileName)
		var b bytes.Buffer
		if name == "not snappy!" {
			b.WriteString(text)
		} else {
			w := snappy.NewBufferedWriter(&b)
			w.Write([]byte(text))
			w.Close()
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// TestPeers: the newest graph of each other partition wins, whether
// read from a peer's collection or from a copy; the partition's own and
// another K's are not taken.
func TestPeers(t *testing.T) {
	me := partition.Partition{I: 1, K: 3}
	col, peer2, peer3 := t.TempDir(), t.TempDir(), t.TempDir()
	sites := []string{"http://a.cl"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(Publish(peer2, graph(2, 3, t0, sites)))
	must(graph(2, 3, t0.Add(time.Hour), sites).Write(filepath.Join(col, "exchange", "in", "p2", FileName)))    // newer copy
	must(graph(3, 3, t0.Add(time.Hour), sites).Write(filepath.Join(col, "exchange", "in", "p3", FileName)))    // newer copy
	must(Publish(peer3, graph(3, 3, t0.Add(2*time.Hour), sites)))                                              // newer on the peer
	must(graph(1, 3, t0.Add(5*time.Hour), sites).Write(filepath.Join(col, "exchange", "in", "me", FileName)))  // its own
	must(graph(2, 4, t0.Add(5*time.Hour), sites).Write(filepath.Join(col, "exchange", "in", "old", FileName))) // another K
	got, warn := Peers(col, me, []string{peer2, peer3, t.TempDir()})
	if len(got) != 2 || !got[2].Written.Equal(t0.Add(time.Hour)) || !got[3].Written.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("peers %+v", got)
	}
	if len(warn) != 2 {
		t.Errorf("warnings %v, want 2 (its own, another K)", warn)
	}
}

// TestRank: site PageRank by link counts; the union of two partitions'
// graphs ranks as the graph of all their links; ranks sum to 1.
func TestRank(t *testing.T) {
	sites := []string{"a", "b", "c", "d"}
	for _, c := range []struct {
		name   string
		graphs []*Graph
		order  []string // highest first
		equal  [][2]string
	}{
		{"cycle", []*Graph{graph(1, 2, t0, sites, Edge{0, 1, 1}, Edge{1, 2, 1}, Edge{2, 3, 1}, Edge{3, 0, 1})}, nil, [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}}},
		{"star", []*Graph{graph(1, 2, t0, sites, Edge{1, 0, 1}, Edge{2, 0, 1}, Edge{3, 0, 1})}, []string{"a", "b"}, [][2]string{{"b", "c"}, {"c", "d"}}},
		{"weights", []*Graph{graph(1, 2, t0, sites, Edge{0, 1, 9}, Edge{0, 2, 1})}, []string{"b", "c", "d"}, [][2]string{{"a", "d"}}},
		{"union", []*Graph{graph(1, 2, t0, []string{"a", "b"}, Edge{0, 1, 9}), graph(2, 2, t0, []string{"d", "c", "a"}, Edge{2, 1, 1})}, []string{"b", "c", "d"}, [][2]string{{"a", "d"}}},
		{"loops ignored", []*Graph{graph(1, 2, t0, sites, Edge{0, 0, 100}, Edge{1, 1, 1})}, nil, [][2]string{{"a", "b"}, {"b", "c"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Rank(c.graphs, 0.85)
			sum := 0.0
			for _, s := range sites {
				sum += r.Of(s)
			}
			if math.Abs(sum-1) > 1e-6 {
				t.Errorf("ranks sum to %g", sum)
			}
			for i := 1; i < len(c.order); i++ {
				if r.Of(c.order[i-1]) <= r.Of(c.order[i]) {
					t.Errorf("%s %g not above %s %g", c.order[i-1], r.Of(c.order[i-1]), c.order[i], r.Of(c.order[i]))
				}
			}
			for _, e := range c.equal {
				if math.Abs(r.Of(e[0])-r.Of(e[1])) > 1e-9 {
					t.Errorf("%s %g, %s %g: want equal", e[0], r.Of(e[0]), e[1], r.Of(e[1]))
				}
			}
			if again := Rank(c.graphs, 0.85); !reflect.DeepEqual(again.rank, r.rank) {
				t.Error("not the same ranks twice")
			}
		})
	}
}

// FuzzRead: no file crashes the reader; what it refuses it refuses as
// ErrFormat, and what it accepts names only listed sites.
func FuzzRead(f *testing.F) {
	f.Add([]byte("# wire-sitegraph 1 from 1/2 written 2026-12-07T12:00:00Z\nsite\thttp://a.cl\nsite\thttp://b.cl\nlink\t0\t1\t3\n"))
	f.Add([]byte("# wire-sitegraph 1 from 2/2 written 2026-12-07T12:00:00Z\nlink\t0\t0\t1\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		path := filepath.Join(t.TempDir(), FileName)
		var b bytes.Buffer
		w := snappy.NewBufferedWriter(&b)
		w.Write(text)
		w.Close()
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := Read(path)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is not ErrFormat", err)
			}
			return
		}
		for _, e := range g.Edges {
			if int(e.Src) >= len(g.Sites) || int(e.Dst) >= len(g.Sites) {
				t.Fatalf("edge %+v beyond %d sites", e, len(g.Sites))
			}
		}
		Rank([]*Graph{g}, 0.85)
	})
}

// BenchmarkRank: the site rank of a synthetic graph of 20,000 sites and
// 400,000 linked pairs (a national web's sites split over partitions),
// and the size of its file.
func BenchmarkRank(b *testing.B) {
	const sites, pairs = 20000, 400000
	g := graph(1, 2, t0, nil)
	for i := range sites {
		g.Sites = append(g.Sites, "http://www.site"+strconv.Itoa(i)+".cl")
	}
	x := uint64(1)
	for range pairs {
		x = x*6364136223846793005 + 1442695040888963407
		src := uint32(x>>33) % sites
		dst := uint32(x>>13) % sites
		if dst%7 == 0 {
			dst %= 100 // a few sites many link to
		}
		g.Edges = append(g.Edges, Edge{Src: src, Dst: dst, Links: uint32(x>>50)%20 + 1})
	}
	path := filepath.Join(b.TempDir(), FileName)
	if err := g.Write(path); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Rank([]*Graph{g}, 0.85)
	}
	b.ReportMetric(float64(g.Bytes), "file-bytes")
}
