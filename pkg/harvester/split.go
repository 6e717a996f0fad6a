package harvester

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// A batch shared by N harvesters is split by server (docs/harvester.md,
// "Shards"): the split is a pure function of the batch's files (batch.tsv
// and the servers.jsonl beside it, which carries the address graph.db
// knows for each site), so that every shard, on any machine, computes
// the same one without talking to the others, and a rerun after a kill
// gets the same one.
//
//   - A name whose address the batch carries goes with that address:
//     every name served from one address is fetched by one shard, so the
//     address's units, its floor and connections_per_ip are one
//     harvester's, as without shards.
//   - A name whose address is not known yet goes with its registrable
//     domain (its politeness unit is then whole in one shard, whatever
//     address it resolves to).
//   - The groups are dealt to the shards by their expected fetch time
//     (Σ over their URLs of max(wait, Crawl-delay, response time)),
//     largest first, each to the shard with the least so far (LPT), so
//     that the largest shard's time is at most about 4/3 of the best
//     split's, and never more than the largest group's plus the mean.
//
// Every address has one owner shard: the one the batch gave it, or for an
// address the batch does not know, the hash of the address (Of), which
// every shard computes alike. When a name resolves, at fetch time, to an
// address another shard owns (a name new to the collection, or one that
// moved), its URLs are not requested: they are logged "deferred: shard"
// and go back to the frontier; the harvest's servers.jsonl records the
// address, graph.db keeps it, and the next batch puts the name in that
// address's shard. So no address is ever asked by two shards, whatever
// its names: the cost is a batch's delay for the first URLs of a name
// whose address was not known (in a crawl's first batch, (N-1)/N of
// them).

// ErrShardDeferred is the reason, after "deferred: ", of the URLs of a
// name that resolved to another shard's address; ErrPartitionDeferred of
// a name that resolved to an address of another partition of the web
// (crawl.partition).
const (
	ErrShardDeferred     = "shard"
	ErrPartitionDeferred = "partition"
)

// split is the assignment of a batch's servers to its shards.
type split struct {
	n int
	// byAddr is the shard of each address the batch knows (1..n).
	byAddr map[netip.Addr]int
	// byHost is the shard of each host name of the batch's URLs.
	byHost map[string]int
	// load is each shard's expected fetch time (index 0 is shard 1).
	load []time.Duration
	// largest is the expected fetch time of the largest group.
	largest time.Duration
}

// splitGroup is the names that go to one shard together.
type splitGroup struct {
	key   string // "ip ADDR" or "domain REGISTRABLE"
	addr  netip.Addr
	hosts []string
	cost  time.Duration
}

// planSplit splits the batch's entries over n shards. servers are the
// lines of the batch's servers.jsonl (address, Crawl-delay, response
// time per host); wait and maxCrawlDelay are harvester.wait and
// harvester.max_crawl_delay.
func planSplit(entries []batch.Entry, servers []fetchlog.Server, n int, wait, maxCrawlDelay time.Duration) *split {
	type known struct {
		addr       netip.Addr
		crawlDelay time.Duration
		response   time.Duration
	}
	info := map[string]known{}
	for _, l := range servers {
		host := strings.ToLower(l.Host)
		k := info[host]
		if a, err := netip.ParseAddr(l.IP); err == nil {
			k.addr = a.Unmap()
		}
		if l.CrawlDelay > 0 {
			k.crawlDelay = max(k.crawlDelay, min(time.Duration(l.CrawlDelay*float64(time.Second)), maxCrawlDelay))
		}
		if l.ResponseMs > 0 {
			k.response = time.Duration(l.ResponseMs * float64(time.Millisecond))
		}
		info[host] = k
	}
	groups := map[string]*splitGroup{}
	hostGroup := map[string]*splitGroup{}
	for _, e := range entries {
		host := strings.ToLower(hostOf(e.Site))
		g := hostGroup[host]
		if g == nil {
			k := info[host]
			key := "domain " + urlnorm.Registrable(host)
			if k.addr.IsValid() {
				key = "ip " + k.addr.String()
			}
			if g = groups[key]; g == nil {
				g = &splitGroup{key: key, addr: k.addr}
				groups[key] = g
			}
			g.hosts = append(g.hosts, host)
			hostGroup[host] = g
		}
		k := info[host]
		resp := k.response
		if resp <= 0 {
			resp = DefaultResponseTime
		}
		g.cost += max(wait, k.crawlDelay, resp)
	}
	order := make([]*splitGroup, 0, len(groups))
	for _, g := range groups {
		order = append(order, g)
	}
	slices.SortFunc(order, func(a, b *splitGroup) int {
		if c := cmp.Compare(b.cost, a.cost); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	sp := &split{n: n, byAddr: map[netip.Addr]int{}, byHost: map[string]int{}, load: make([]time.Duration, n)}
	for _, g := range order {
		best := 0
		for i := 1; i < n; i++ {
			if sp.load[i] < sp.load[best] {
				best = i
			}
		}
		sp.load[best] += g.cost
		sp.largest = max(sp.largest, g.cost)
		if g.addr.IsValid() {
			sp.byAddr[g.addr] = best + 1
		}
		for _, h := range g.hosts {
			sp.byHost[h] = best + 1
		}
	}
	return sp
}

// has tells whether shard i fetches the entry e.
func (sp *split) has(i int, e batch.Entry) bool {
	return sp.byHost[strings.ToLower(hostOf(e.Site))] == i
}

// owner returns the shard that owns the address: the one the batch gave
// it, or for an address the batch does not know, its hash's.
func (sp *split) owner(ip netip.Addr) int {
	ip = ip.Unmap()
	if i, ok := sp.byAddr[ip]; ok {
		return i
	}
	return Of(ip.String(), sp.n)
}
