package status

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/sitegraph"
)

// Partition is where a collection that is one partition of a web split
// over K collections (crawl.partition) stands in the exchange
// (docs/operations.md, "Partitioned collections").
type Partition struct {
	// Partition is "i/K".
	Partition string `json:"partition"`
	// Peers are the other partitions' collection directories read over
	// a shared file system (crawl.partition_peers); empty: copies only.
	Peers []string `json:"peers"`
	// Exchange is what went to and came from each other partition, in
	// partition order.
	Exchange []PeerExchange `json:"exchange"`
}

// PeerExchange is what this partition sent to and took from one other
// partition, from graph.db's counts (linkgraph.ExchangePeer), its
// exchange directory and the newest site graph seen from it.
type PeerExchange struct {
	Partition int `json:"partition"`
	linkgraph.ExchangePeer
	// Waiting counts the files published to it not reported taken yet
	// (still in exchange/out/to-J/).
	Waiting int `json:"waiting"`
	// SiteGraph is the newest site graph seen from it; nil if none.
	SiteGraph *SiteGraphSeen `json:"siteGraph,omitempty"`
}

// SiteGraphSeen describes a peer's site graph.
type SiteGraphSeen struct {
	Written time.Time `json:"written"`
	Age     string    `json:"age"` // at the time of the status
	Sites   int       `json:"sites"`
	Pairs   int       `json:"pairs"` // linked site pairs
	Bytes   int64     `json:"bytes"`
}

// ReadPartition reads where collection dir, partition crawl.partition,
// stands in the exchange: the counts graph.db keeps (tx; nil when
// graph.db could not be read), the files waiting in its exchange/out/
// and the site graphs of its peers. Nil for a whole-web collection.
func ReadPartition(dir string, crawl config.Crawl, tx *linkgraph.Tx, now time.Time) (*Partition, error) {
	part := crawl.PartitionOf()
	if part.Whole() {
		return nil, nil
	}
	p := &Partition{Partition: part.String(), Peers: slices.Clone(crawl.PartitionPeers)}
	if p.Peers == nil {
		p.Peers = []string{}
	}
	stats := map[int]*linkgraph.ExchangePeer{}
	if tx != nil {
		var err error
		if stats, err = tx.ExchangeStats(); err != nil {
			return nil, err
		}
	}
	graphs, _ := sitegraph.Peers(dir, part, crawl.PartitionPeers) // unreadable ones: as none
	for j := 1; j <= part.K; j++ {
		if j == part.I {
			continue
		}
		e := PeerExchange{Partition: j}
		if st := stats[j]; st != nil {
			e.ExchangePeer = *st
		}
		entries, _ := os.ReadDir(filepath.Join(dir, "exchange", "out", "to-"+strconv.Itoa(j)))
		for _, f := range entries {
			if n, ok := strings.CutSuffix(f.Name(), ".sz"); ok && len(n) >= 8 && f.Type().IsRegular() {
				if _, err := strconv.ParseUint(n, 10, 64); err == nil {
					e.Waiting++
				}
			}
		}
		if g := graphs[j]; g != nil {
			e.SiteGraph = &SiteGraphSeen{Written: g.Written, Age: now.Sub(g.Written).Round(time.Second).String(), Sites: len(g.Sites), Pairs: len(g.Edges), Bytes: g.Bytes}
		}
		p.Exchange = append(p.Exchange, e)
	}
	return p, nil
}

// WriteText prints the partition's lines of the status.
func (p *Partition) WriteText(w io.Writer) error {
	pr := &printer{w: w}
	peers := "none (copies into exchange/in/)"
	if len(p.Peers) > 0 {
		peers = strings.Join(p.Peers, ", ")
	}
	pr.line("partition", "%s; peers %s", p.Partition, peers)
	for _, e := range p.Exchange {
		pr.line("exchange", "%s", e.describe())
	}
	return pr.err
}

// describe is one peer's line.
func (e *PeerExchange) describe() string {
	last := func(c linkgraph.ExchangeCount) string {
		if c.At.IsZero() {
			return "none yet"
		}
		return fmt.Sprintf("%d files, %d lines at %s", c.Files, c.Lines, stamp(c.At))
	}
	text := fmt.Sprintf("partition %d: sent %d files, %d lines (last %s); received %d files, %d lines (last %s); %d waiting to be taken, %d removed once taken; ",
		e.Partition, e.Sent.Files, e.Sent.Lines, last(e.LastSent), e.Received.Files, e.Received.Lines, last(e.LastReceived), e.Waiting, e.Removed)
	if g := e.SiteGraph; g != nil {
		text += fmt.Sprintf("site graph %s old (%d sites, %d linked pairs, %d bytes)", g.Age, g.Sites, g.Pairs, g.Bytes)
	} else {
		text += "no site graph from it yet"
	}
	return text
}
