package status

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/partition"
	"github.com/wirecrawl/wire/pkg/sitegraph"
)

// TestCollectPartition: partition 1 of 3 shows its peers and, for each
// other partition, graph.db's counts of what went each way, the files
// still waiting in exchange/out/to-J/ (not the site graph or a report)
// and the age of the newest site graph seen from it; with --no-graph the
// counts are zero and the rest is still shown; a whole-web collection
// shows no partition.
func TestCollectPartition(t *testing.T) {
	col := newCollection(t)
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Hour)
	g, err := linkgraph.Open(col.GraphPath(), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		return tx.PutExchangeStats(map[int]*linkgraph.ExchangePeer{2: {
			Sent:         linkgraph.ExchangeCount{Files: 5, Lines: 120},
			Received:     linkgraph.ExchangeCount{Files: 4, Lines: 80},
			LastSent:     linkgraph.ExchangeCount{Files: 1, Lines: 20, At: at},
			LastReceived: linkgraph.ExchangeCount{Files: 2, Lines: 30, At: at},
			Removed:      3,
		}})
	})
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(col.Dir, "exchange", "out", "to-2")
	if err := os.MkdirAll(out2, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"00000011.sz", "00000012.sz", "taken", ".00000013.sz.tmp-1"} {
		if err := os.WriteFile(filepath.Join(out2, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	peer := t.TempDir()
	sg := &sitegraph.Graph{From: partition.Partition{I: 2, K: 3}, Written: now.Add(-90 * time.Second), Sites: []string{"http://a.cl", "http://b.cl"},
		Edges: []sitegraph.Edge{{Src: 0, Dst: 1, Links: 4}}}
	if err := sitegraph.Publish(peer, sg); err != nil {
		t.Fatal(err)
	}
	crawl := config.Defaults().Crawl
	crawl.Partition, crawl.PartitionPeers = "1/3", []string{peer}
	for _, noGraph := range []bool{false, true} {
		s, err := Collect(col, Options{Crawl: &crawl, Now: now, NoGraph: noGraph})
		if err != nil {
			t.Fatal(err)
		}
		p := s.Partition
		if p == nil || p.Partition != "1/3" || len(p.Exchange) != 2 || p.Exchange[0].Partition != 2 || p.Exchange[1].Partition != 3 {
			t.Fatalf("no graph %v: partition %+v", noGraph, p)
		}
		var out bytes.Buffer
		if err := s.WriteText(&out); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"partition   1/3; peers " + peer + "\n",
			"exchange    partition 2: sent 5 files, 120 lines (last 1 files, 20 lines at 2026-12-07T11:00:00Z); received 4 files, 80 lines (last 2 files, 30 lines at 2026-12-07T11:00:00Z); 2 waiting to be taken, 3 removed once taken; site graph 1m30s old (2 sites, 1 linked pairs, ",
			"exchange    partition 3: sent 0 files, 0 lines (last none yet); received 0 files, 0 lines (last none yet); 0 waiting to be taken, 0 removed once taken; no site graph from it yet\n",
		}
		if noGraph {
			want[1] = "exchange    partition 2: sent 0 files, 0 lines (last none yet); received 0 files, 0 lines (last none yet); 2 waiting to be taken, 0 removed once taken; site graph 1m30s old"
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("no graph %v: status lacks %q:\n%s", noGraph, w, out.String())
			}
		}
	}
	whole := config.Defaults().Crawl
	if s, err := Collect(col, Options{Crawl: &whole, Now: now}); err != nil || s.Partition != nil {
		t.Errorf("whole web: %+v, %v", s.Partition, err)
	}
}
