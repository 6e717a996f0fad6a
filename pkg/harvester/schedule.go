package harvester

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Server is one host name's share of a batch: an entry of the server
// queue of the two-level scheduler of Cao, Jiang and Singh (§3.2). Its
// sites, each with its queue of URLs, are the URL level. A server holds at
// most one connection at a time, so the host never sees two connections
// from the harvester; once it holds one it keeps it for its next P URLs
// (non-preemptive, §3.2), then goes back to the server queue.
type Server struct {
	// Host is the host name (lower-case, without port). Sites that share
	// it (http and https, other ports) belong to the same server.
	Host string
	// Sites are the host's sites with their URLs still to be done: best
	// site first and URLs by score (the quality orders), or in batch
	// order (fifo, performance).
	Sites []*SiteQueue
	// First is the batch position of the server's first URL.
	First int
	// Est are the server's estimates (measured, or from the batch's
	// servers.jsonl, or the defaults).
	Est Estimates

	ip        netip.Addr    // the address dialled first, once resolved
	unit      string        // its politeness unit (hostTable), once resolved
	claim     *unit         // that unit, enlisted for the server's batch until it is done (hostTable.enlist)
	site, pos int           // cursor: Sites[site].Entries[pos] is the next URL
	left      int           // URLs not logged yet
	order     int           // FIFO position in the server queue
	heapIdx   int           // index in the ready heap, -1 if not in it
	rank      float64       // priority when it entered the ready heap
	gateNeed  time.Duration // the value ranking's estimate of the time its URLs need (the scheduler's copy)
	notBefore time.Time     // earliest next request to the host
	state     serverState
	// lookupStart is when its DNS lookup started (zero before); the
	// scheduler's goroutine's.
	lookupStart time.Time

	// What the worker keeps between the server's connections.
	rules     map[string]*siteRules // per site, once robots.txt is known
	fails     int                   // consecutive failures
	streak    int                   // page responses in a row cut at the body cap or a time limit (account)
	gaveUp    string                // why the host was given up, or ""
	dnsErr    string                // why the name did not resolve, or ""
	lastDur   time.Duration         // duration of the last response (adaptive wait)
	lastEnd   time.Time             // end of the last request to the host in this run
	pages     int                   // pages stored in this run
	bytes     int64
	errors    int
	requests  int // requests made in this run
	robotsReq int // of which for robots.txt
}

type serverState int

const (
	stateResolving serverState = iota // waiting for its DNS answer
	stateQueued                       // in the server queue (ready or waiting for its turn)
	stateActive                       // holds a connection
	stateDone                         // every URL logged
)

// SiteQueue is the URL queue of one site.
type SiteQueue struct {
	Site    string // scheme://host[:port]
	Entries []batch.Entry
	Best    float64
	First   int
}

// URLs is the number of URLs the server still has to fetch.
func (s *Server) URLs() int { return s.left }

// next returns the server's next URL, or false when its queue is empty.
func (s *Server) next() (batch.Entry, *SiteQueue, bool) {
	for s.site < len(s.Sites) {
		sq := s.Sites[s.site]
		if s.pos < len(sq.Entries) {
			return sq.Entries[s.pos], sq, true
		}
		s.site, s.pos = s.site+1, 0
	}
	return batch.Entry{}, nil, false
}

// pop drops the URL next returned.
func (s *Server) pop() {
	s.pos++
	s.left--
}

// upcoming calls fn with the scores of the next n URLs of the queue.
func (s *Server) upcoming(n int, fn func(score float64)) {
	site, pos := s.site, s.pos
	for n > 0 && site < len(s.Sites) {
		sq := s.Sites[site]
		if pos >= len(sq.Entries) {
			site, pos = site+1, 0
			continue
		}
		fn(sq.Entries[pos].Score)
		pos++
		n--
	}
}

// Estimates are a server's performance as the scheduler sees it (Cao et
// al. §4.2): connection time, response time and requests per connection,
// each an exponentially weighted moving average with Alpha.
type Estimates struct {
	ConnectTime     time.Duration // to open a connection
	ResponseTime    time.Duration // from a request to the end of its response, connection excluded
	RequestsPerConn float64       // requests the server serves on one connection
	// Measured is when an estimate was last updated (zero: defaults).
	Measured time.Time
	// Known tells which estimates hold a measurement rather than a
	// default.
	KnownConnect, KnownResponse, KnownRPC bool
}

// Scheduling constants of Cao et al. §4.2.
const (
	// Alpha is the weight of the old estimate in each moving average.
	Alpha = 0.8
	// Pipelining is the paper's saving factor p for servers that support
	// HTTP pipelining; the harvester does not pipeline, so p = 1.
	Pipelining = 1.0
	// DefaultConnectTime and DefaultResponseTime stand for a server never
	// measured (and not in the batch's servers.jsonl).
	DefaultConnectTime  = 100 * time.Millisecond
	DefaultResponseTime = 500 * time.Millisecond
)

// defaultEstimates are the estimates of an unknown server; rpc is
// harvester.requests_per_connection (the paper's default is 50).
func defaultEstimates(rpc int) Estimates {
	return Estimates{ConnectTime: DefaultConnectTime, ResponseTime: DefaultResponseTime, RequestsPerConn: float64(rpc)}
}

func ewma(old, sample float64, known bool) float64 {
	if !known {
		return sample
	}
	return Alpha*old + (1-Alpha)*sample
}

// observeConnect adds a measured connection time.
func (e *Estimates) observeConnect(d time.Duration, now time.Time) {
	e.ConnectTime = time.Duration(ewma(float64(e.ConnectTime), float64(d), e.KnownConnect))
	e.KnownConnect, e.Measured = true, now
}

// observeResponse adds a measured response time.
func (e *Estimates) observeResponse(d time.Duration, now time.Time) {
	e.ResponseTime = time.Duration(ewma(float64(e.ResponseTime), float64(d), e.KnownResponse))
	e.KnownResponse, e.Measured = true, now
}

// observeRPC adds a number of requests a connection carried before the
// server closed it.
func (e *Estimates) observeRPC(n int, now time.Time) {
	e.RequestsPerConn = ewma(e.RequestsPerConn, float64(n), e.KnownRPC)
	e.KnownRPC, e.Measured = true, now
}

// fromRecord takes the estimates a servers.jsonl line holds (zero
// fields are unknown).
func (e *Estimates) fromRecord(r fetchlog.Server) {
	if r.ConnectMs > 0 {
		e.ConnectTime, e.KnownConnect = msToDuration(r.ConnectMs), true
	}
	if r.ResponseMs > 0 {
		e.ResponseTime, e.KnownResponse = msToDuration(r.ResponseMs), true
	}
	if r.RequestsPerConn >= 1 {
		e.RequestsPerConn, e.KnownRPC = r.RequestsPerConn, true
	}
	if e.KnownConnect || e.KnownResponse || e.KnownRPC {
		e.Measured = r.Measured
	}
}

func msToDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// P is the number of URLs the server fetches over its next connection:
// min(RequestsPerConnection, TaskURLs) (§4.2), at least 1.
func (s *Server) P() int {
	p := int(math.Round(s.Est.RequestsPerConn))
	return max(1, min(p, s.left))
}

// T is the time the server's next connection is expected to take: 2 ·
// ConnectionTime + P · ResponseTime / p (§4.2), in seconds.
func (s *Server) T() float64 {
	return 2*s.Est.ConnectTime.Seconds() + float64(s.P())*s.Est.ResponseTime.Seconds()/Pipelining
}

// AQ is the aggregate quality of the server's next P URLs: the sum of
// their batch scores (§4.4 uses algebraic summation).
func (s *Server) AQ() float64 {
	var q float64
	s.upcoming(s.P(), func(score float64) { q += score })
	return q
}

// Quality is the score of the best URL in the server's queue: the next
// one, since the quality orders sort each site's queue by score.
func (s *Server) Quality() float64 {
	var q float64
	first := true
	s.upcoming(1, func(score float64) {
		if first {
			q, first = score, false
		}
	})
	return q
}

// Ranking orders the server queue (Cao et al. §4): each time a connection
// is free, the harvester gives it to the highest-ranked server that may
// be asked now.
type Ranking interface {
	// Name is the value of harvester.ranking.
	Name() string
	// Rank is the server's priority for its next connection; higher
	// first, ties in FIFO order.
	Rank(s *Server) float64
	// ByScore tells whether each site's URL queue is ordered by score
	// (true) or kept in batch order.
	ByScore() bool
}

// FIFORanking is the paper's breadth-first baseline (§4.1): servers in
// the order they entered the queue (first URL in the batch, then back of
// the queue after each connection), URLs in batch order.
type FIFORanking struct{}

// Name implements Ranking.
func (FIFORanking) Name() string { return "fifo" }

// Rank implements Ranking: every server ties, so the FIFO order decides.
func (FIFORanking) Rank(*Server) float64 { return 0 }

// ByScore implements Ranking.
func (FIFORanking) ByScore() bool { return false }

// PerformanceRanking serves first the server expected to deliver the
// most pages per second: R = P/T (§4.2); URLs in batch order.
type PerformanceRanking struct{}

// Name implements Ranking.
func (PerformanceRanking) Name() string { return "performance" }

// Rank implements Ranking.
func (PerformanceRanking) Rank(s *Server) float64 { return float64(s.P()) / s.T() }

// ByScore implements Ranking.
func (PerformanceRanking) ByScore() bool { return false }

// QualityRanking serves first the server whose best URL has the highest
// score (§4.3, the manager's estimate of its value); URLs by score.
type QualityRanking struct{}

// Name implements Ranking.
func (QualityRanking) Name() string { return "quality" }

// Rank implements Ranking.
func (QualityRanking) Rank(s *Server) float64 { return s.Quality() }

// ByScore implements Ranking.
func (QualityRanking) ByScore() bool { return true }

// CrawlabilityRanking serves first the server expected to deliver the
// most quality per second: C = AQ/T (§4.4); URLs by score. It was the
// default until the value ranking (valuegate.go); it is the right one when
// a batch will be cut by time (docs/harvester.md).
type CrawlabilityRanking struct{}

// Name implements Ranking.
func (CrawlabilityRanking) Name() string { return "crawl-ability" }

// Rank implements Ranking.
func (CrawlabilityRanking) Rank(s *Server) float64 { return s.AQ() / s.T() }

// ByScore implements Ranking.
func (CrawlabilityRanking) ByScore() bool { return true }

// RankingByName returns the ranking called name (harvester.ranking).
func RankingByName(name string) (Ranking, error) {
	for _, r := range []Ranking{FIFORanking{}, PerformanceRanking{}, QualityRanking{}, CrawlabilityRanking{}, ValueRanking{}} {
		if r.Name() == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown server ranking %q (want fifo, performance, quality, crawl-ability or value)", name)
}

// hostOf returns the host name of a site ("http://a.cl:8080" → "a.cl").
func hostOf(site string) string {
	if _, auth, ok := plainAuthority(site); ok {
		if i := strings.IndexByte(auth, ':'); i >= 0 {
			auth = auth[:i]
		}
		return strings.ToLower(auth)
	}
	u, err := url.Parse(site)
	if err != nil || u.Hostname() == "" {
		return strings.ToLower(site)
	}
	return strings.ToLower(u.Hostname())
}

// plan groups the entries still to be done (todo[i] true) by host and
// site, in the URL order of the ranking, and returns the servers in batch
// order of their first URL, each with est(host) as its estimates.
func plan(entries []batch.Entry, todo []bool, rank Ranking, est func(host string) Estimates) []*Server {
	servers := map[string]*Server{}
	sites := map[string]*SiteQueue{}
	var order []*Server
	for i, e := range entries {
		if !todo[i] {
			continue
		}
		host := hostOf(e.Site)
		srv := servers[host]
		if srv == nil {
			srv = &Server{Host: host, First: i, order: i, heapIdx: -1, Est: est(host), rules: map[string]*siteRules{}}
			servers[host] = srv
			order = append(order, srv)
		}
		sq := sites[e.Site]
		if sq == nil {
			sq = &SiteQueue{Site: e.Site, Best: e.Score, First: i}
			sites[e.Site] = sq
			srv.Sites = append(srv.Sites, sq)
		}
		sq.Entries = append(sq.Entries, e)
		sq.Best = max(sq.Best, e.Score)
		srv.left++
	}
	if rank.ByScore() {
		for _, srv := range order {
			for _, sq := range srv.Sites {
				sort.SliceStable(sq.Entries, func(i, j int) bool { return sq.Entries[i].Score > sq.Entries[j].Score })
			}
			sort.SliceStable(srv.Sites, func(i, j int) bool {
				a, b := srv.Sites[i], srv.Sites[j]
				if a.Best != b.Best {
					return a.Best > b.Best
				}
				return a.First < b.First
			})
		}
	}
	return order
}

// serverHeap is the ready part of the server queue: servers that may be
// asked now, highest rank first, ties in FIFO order.
type serverHeap []*Server

// better tells whether a comes before b in the server queue.
func better(a, b *Server) bool {
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return a.order < b.order
}

func (h serverHeap) Len() int           { return len(h) }
func (h serverHeap) Less(i, j int) bool { return better(h[i], h[j]) }
func (h serverHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *serverHeap) Push(x any) {
	s := x.(*Server)
	s.heapIdx = len(*h)
	*h = append(*h, s)
}
func (h *serverHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.heapIdx = -1
	return s
}

// rankCell holds a rank, or none, for concurrent reads.
type rankCell struct {
	has  atomic.Bool
	bits atomic.Uint64
}

// set stores rank.
func (c *rankCell) set(rank float64) {
	c.bits.Store(math.Float64bits(rank))
	c.has.Store(true)
}

// clear stores none.
func (c *rankCell) clear() { c.has.Store(false) }

// get returns the rank, and false when there is none.
func (c *rankCell) get() (float64, bool) {
	if !c.has.Load() {
		return 0, false
	}
	return math.Float64frombits(c.bits.Load()), true
}

// addrRanks holds, per address, the best rank of the servers parked on
// it (waiting for its connections_per_ip or for their unit), for
// concurrent reads: the scheduler's goroutine writes it, the
// connections' read it (turnOver).
type addrRanks struct {
	mu sync.Mutex
	m  map[netip.Addr]float64
}

// raise records a server of rank parked on ip.
func (a *addrRanks) raise(ip netip.Addr, rank float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[netip.Addr]float64{}
	}
	if r, ok := a.m[ip]; !ok || rank > r {
		a.m[ip] = rank
	}
}

// drop forgets the servers parked on ip (they went back to the queue).
func (a *addrRanks) drop(ip netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, ip)
}

// get returns the best rank parked on ip, and false when none is.
func (a *addrRanks) get(ip netip.Addr) (float64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.m[ip]
	return r, ok
}

// timeHeap holds the servers waiting for their turn, earliest first.
type timeHeap []*Server

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i].notBefore.Before(h[j].notBefore) }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(*Server)) }
func (h *timeHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}

// schedule is the server level of the scheduler. Servers are resolved
// best-ranked first, a bounded distance ahead of the connections
// (feedLookups: harvester.dns_lookups at a time, and no more resolved
// servers ready than the connections can take); each time a
// connection is free it goes to the highest-ranked server whose turn has
// come, whose politeness unit (its site's names on its address, see
// hostTable) has no connection, and whose IP address has fewer than
// harvester.connections_per_ip connections; the server keeps it for its next P URLs and then goes back
// to the queue, re-ranked with what was measured. The steps are the
// scheduler's methods below.
func (h *harvest) schedule(servers []*Server, nextOrder int) {
	sc := h.newScheduler(servers, nextOrder)
	defer sc.stopDNS()
	sc.kick = h.hosts.subscribe()
	defer h.hosts.unsubscribe(sc.kick)
	sc.pool = h.eng.pool
	sc.member = sc.pool.join(h.batch)
	// Once out of the pool, the newer harvests' end rules start (heldByOlder).
	defer h.hosts.wakeOthers(sc.kick)
	defer sc.pool.leave(sc.member)
	hosts := make([]string, len(servers))
	for i, srv := range servers {
		hosts[i] = srv.Host
	}
	h.eng.order.add(h.batch, hosts)
	h.eng.running.Add(1)
	defer h.eng.running.Add(-1)
	defer sc.forgetHosts() // a harvest that stopped early holds no host back
	sc.startLookups()
	h.stats.waiting.Store(int64(sc.remaining))
	sc.timer = time.NewTimer(time.Hour)
	defer sc.timer.Stop()
	sc.loop()
	sc.endLookups()
	sc.dnsWG.Wait()
	if !sc.ending || sc.stopping || h.fatalError() != nil {
		return
	}
	sc.deferUnstarted()
}

// scheduler is the state of one call of harvest.schedule. It belongs to
// the scheduler's goroutine: the DNS lookups' goroutines and the
// connections' goroutines hand servers back only through its channels
// (resolved, finished).
type scheduler struct {
	h  *harvest
	hc config.Harvester
	// ctx is the run's start context; dnsCtx also ends when the batch
	// ends (deadline, tail), by stopDNS.
	ctx     context.Context
	dnsCtx  context.Context
	stopDNS context.CancelFunc
	servers []*Server
	rule    *endRule

	// Lookups go in rank order, a bounded distance ahead of the
	// connections (feedLookups); a free connection waits a little
	// (dnsHold) for a better-ranked server whose lookup is under way,
	// so that the ranking, not the DNS, decides who goes first.
	// byRank[pending:] holds the first server not resolved yet,
	// byRank[fed:] the servers whose lookup has not started.
	byRank      []*Server
	pending     int
	fed         int
	inFlight    int          // lookups started and not handed back yet
	toResolve   chan *Server // to the DNS lookups' goroutines (nil once closed)
	resolvedSet map[*Server]bool
	resolved    chan *Server // from the DNS lookups' goroutines
	dnsWG       sync.WaitGroup

	ready    *serverHeap              // servers whose turn has come, by rank
	waiting  *timeHeap                // servers waiting for their turn (notBefore)
	ipParked map[netip.Addr][]*Server // servers waiting for their address or unit
	// parkGen is, per address with parked servers, the count of its
	// slots given back (hostTable.gen) when the first was parked: once
	// it changes — a connection of another harvest of the process given
	// back (kick) — they go back to the queue (unpark).
	parkGen map[netip.Addr]uint64
	// kick is this scheduler's wake-up from the politeness table
	// (hostTable.subscribe); pool and member are the process's
	// connections and this harvest's place among them (engine.go).
	kick chan struct{}
	// behind are the servers held back for an older batch of the
	// process that has URLs of their host left (hostOrder), and
	// behindGen the count of hosts done when they were last looked at.
	behind    []*Server
	behindGen uint64
	pool      *connPool
	member    *poolMember
	finished  chan *Server     // from the connections' goroutines
	remaining int              // servers not done
	active    int              // servers holding a connection
	activeSet map[*Server]bool // those servers
	nextOrder int              // the order of the next server sent back to the queue
	timer     *time.Timer      // wakes the loop (a turn, a hold, the batch's end)
	gate      *valueGate       // the value ranking's clock, or nil
	gated     []*Server        // servers the value clock holds back
	held      bool             // an older batch of the process ran beside it (heldByOlder)
	stopping  bool             // the run is stopped: no server starts any more
	ending    bool             // the batch ends early: no server starts any more
}

// newScheduler ranks the servers (each waits its host's turn) and sets
// the scheduler up; nothing runs yet.
func (h *harvest) newScheduler(servers []*Server, nextOrder int) *scheduler {
	hc := h.cfg.Harvester
	sc := &scheduler{
		h:           h,
		hc:          hc,
		ctx:         h.startCtx,
		servers:     servers,
		resolvedSet: map[*Server]bool{},
		resolved:    make(chan *Server),
		ready:       &serverHeap{},
		waiting:     &timeHeap{},
		ipParked:    map[netip.Addr][]*Server{},
		parkGen:     map[netip.Addr]uint64{},
		activeSet:   map[*Server]bool{},
		finished:    make(chan *Server),
		remaining:   len(servers),
		nextOrder:   nextOrder,
	}
	// DNS lookups also end when the batch ends (deadline, tail).
	sc.dnsCtx, sc.stopDNS = context.WithCancel(sc.ctx)
	for _, srv := range servers {
		srv.notBefore = h.hosts.notBefore(srv.Host)
		srv.rank = h.rank.Rank(srv)
	}
	sc.rule = newEndRule(hc, h.started, len(servers), h.batchDuration)
	if _, ok := h.rank.(ValueRanking); ok {
		sc.gate = newValueGate(servers, hc.Wait.D(), hc.ConnectionsPerIP, hc.ValueClock, hc.TailFraction, time.Now())
		for _, srv := range servers {
			srv.gateNeed = sc.need(srv)
		}
	}
	h.gate = sc.gate
	sc.byRank = append([]*Server(nil), servers...)
	sort.SliceStable(sc.byRank, func(i, j int) bool { return serverHeap(sc.byRank).Less(i, j) })
	return sc
}

// startLookups starts the DNS lookups' goroutines
// (harvester.dns_lookups of them): each resolves the servers feedLookups
// hands it and hands each back to the loop (resolved) until dnsCtx ends
// or endLookups closes their queue.
func (sc *scheduler) startLookups() {
	n := min(sc.hc.DNSLookups, len(sc.servers))
	// Room for every lookup in flight: feedLookups never blocks.
	queue := make(chan *Server, max(n, 1))
	sc.toResolve = queue // the loop's; the goroutines keep their own copy
	for i := 0; i < n; i++ {
		sc.dnsWG.Add(1)
		go func() {
			defer sc.dnsWG.Done()
			for srv := range queue {
				sc.h.resolve(sc.dnsCtx, srv)
				select {
				case sc.resolved <- srv:
				case <-sc.dnsCtx.Done():
					return
				}
			}
		}()
	}
	sc.feedLookups()
}

// feedLookups starts the lookups of the next servers in rank order while
// fewer than harvester.dns_lookups are under way and the servers
// resolved ahead of the connections are fewer than lookupsAhead says.
// Resolving every name at the start made its lookups compete with the
// first connections for the CPU (about 100 µs each: docs/harvester.md,
// "DNS a bounded distance ahead"); a lookup ahead is made when a connection will soon want
// its server. A server counts as ahead while its lookup is under way or
// it waits in the ready queue for a connection; one that waits for its
// turn (wait, Crawl-delay), its address (connections_per_ip) or its unit,
// or that the value clock holds back, does not: a free connection is
// never left idle while the servers resolved ahead wait for a busy
// address.
func (sc *scheduler) feedLookups() {
	if sc.toResolve == nil || sc.stopping || sc.ending {
		return
	}
	for sc.fed < len(sc.byRank) && sc.inFlight < cap(sc.toResolve) &&
		sc.inFlight+sc.ready.Len() < sc.lookupsAhead() {
		srv := sc.byRank[sc.fed]
		sc.fed++
		srv.lookupStart = time.Now()
		sc.inFlight++
		sc.toResolve <- srv // never blocks: inFlight < its capacity
	}
	if sc.fed == len(sc.byRank) {
		sc.endLookups()
	}
}

// lookupsAhead is how many servers may be resolved ahead of the
// connections (under way or ready, see feedLookups): one for each free
// connection, and harvester.dns_lookups more, so that a connection that
// frees finds its next server resolved while the lookup of the one after
// it is under way.
func (sc *scheduler) lookupsAhead() int {
	return max(sc.pool.idle(), 0) + sc.hc.DNSLookups
}

// endLookups closes the lookups' queue (once): their goroutines return
// when it is empty.
func (sc *scheduler) endLookups() {
	if sc.toResolve != nil {
		close(sc.toResolve)
		sc.toResolve = nil
	}
}

// loop runs until every server is done, or until the run stops or the
// batch ends and no connection is left: each turn it ends the batch if
// its end is due, gives the free connections out, and waits for a server
// resolved or given back, a host's turn, a hold's end, or a stop.
func (sc *scheduler) loop() {
	for sc.remaining > 0 && !((sc.stopping || sc.ending) && sc.active == 0) {
		now := time.Now()
		var endAt time.Time
		var why string
		if !sc.heldByOlder(now) {
			endAt, why = sc.rule.observe(now, sc.remaining)
			if sc.waitsOut(now) {
				endAt, why = now, EndWaits
			}
		}
		if sc.endIfDue(now, endAt, why) {
			break
		}
		sc.promoteWaiting(now)
		sc.tickGate(now, endAt)
		for sc.pending < len(sc.byRank) && sc.resolvedSet[sc.byRank[sc.pending]] {
			sc.pending++
		}
		sc.feedLookups()
		holdUntil := sc.startServers(now)
		if sc.pool.setDemand(sc.member, sc.demand()) {
			sc.h.hosts.wakeOthers(sc.kick) // newer harvests may take the connections
		}
		sc.feedLookups() // the servers started made room
		sc.publishTop()
		if sc.gate != nil && len(sc.gated) > 0 && !sc.stopping && !sc.ending {
			if t := sc.gate.last.Add(valueTick); holdUntil.IsZero() || t.Before(holdUntil) {
				holdUntil = t
			}
		}
		wake := sc.wakeAt(holdUntil, endAt)
		var stop <-chan struct{}
		if !sc.stopping {
			stop = sc.ctx.Done()
		}
		select {
		case srv := <-sc.resolved:
			sc.onResolved(srv)
		case srv := <-sc.finished:
			sc.onFinished(srv)
		case <-sc.kick:
			sc.unpark()
		case <-wake:
		case <-stop:
			sc.stopping = true
		}
		sc.timer.Stop()
	}
}

// heldByOlder tells whether an older batch's harvest runs in the process
// beside this one (Follow). It goes first where the two compete (units,
// addresses, connections, hosts), so while it runs this batch's end rules
// (deadline, tail, waits) do not apply: the batch would be cut for the
// time the older one held it, not for its own servers' slowness. Once
// the older ones are done, the rules start from then (endRule.rebase).
func (sc *scheduler) heldByOlder(now time.Time) bool {
	if sc.h.eng.running.Load() > 1 && sc.pool.older(sc.member) {
		sc.held = true
		return true
	}
	if sc.held {
		sc.held = false
		sc.rule.rebase(now)
		sc.h.log.Info("the older batches of the process are done: this batch's end rules start now", "batch", sc.h.batch)
	}
	return false
}

// publishTop tells the connections (turnOver) the rank of the best
// server that wants a connection: the best of the ready queue, or the
// best-ranked server whose lookup is under way if it ranks higher (a
// free connection waits for it, holdFor; past dnsHold it no longer does,
// but a turn that ended for it costs no more than every turn did before
// 2026-12-07, and the ranking, not the DNS, decides).
func (sc *scheduler) publishTop() {
	top, ok := 0.0, false
	if sc.ready.Len() > 0 {
		top, ok = (*sc.ready)[0].rank, true
	}
	if sc.pending < len(sc.byRank) {
		s := sc.byRank[sc.pending]
		if !s.lookupStart.IsZero() && (!ok || s.rank > top) {
			top, ok = s.rank, true
		}
	}
	if ok {
		sc.h.readyTop.set(top)
	} else {
		sc.h.readyTop.clear()
	}
}

// endIfDue ends the batch once the end rule's time (endAt) has come: no
// URL is started any more; the requests in flight finish and the rest is
// deferred to the next batch. It tells the loop to stop at once when no
// connection is active.
func (sc *scheduler) endIfDue(now, endAt time.Time, why string) bool {
	if sc.ending || endAt.IsZero() || now.Before(endAt) {
		return false
	}
	sc.ending = true
	sc.h.end.end(why)
	sc.stopDNS()
	sc.h.log.Info("ending the batch", "why", why, "hosts_left", sc.remaining, "active", sc.active, "elapsed", now.Sub(sc.h.started).Round(time.Millisecond))
	return sc.active == 0
}

// promoteWaiting moves the servers whose turn has come to the ready
// queue, re-ranked.
func (sc *scheduler) promoteWaiting(now time.Time) {
	for sc.waiting.Len() > 0 && !(*sc.waiting)[0].notBefore.After(now) {
		srv := heap.Pop(sc.waiting).(*Server)
		srv.rank = sc.h.rank.Rank(srv)
		heap.Push(sc.ready, srv)
	}
}

// startServers gives the free connections to the best-ranked ready
// servers. A server whose politeness unit holds a connection, or whose
// address has connections_per_ip, is parked on its address; one whose
// host refuses it now waits for its turn. It returns when a connection
// is held for a better-ranked server being resolved (holdUntil, see
// holdFor), or zero.
func (sc *scheduler) startServers(now time.Time) (holdUntil time.Time) {
	for !sc.stopping && !sc.ending && sc.ready.Len() > 0 && sc.pool.free(sc.member) > 0 {
		if until, hold := sc.holdFor(now); hold {
			return until
		}
		srv := heap.Pop(sc.ready).(*Server)
		if sc.gate != nil && !sc.gate.allows(srv.Quality(), srv.gateNeed) {
			sc.gated = append(sc.gated, srv) // its next URL waits for the value clock
			continue
		}
		// One connection per politeness unit (another name of its
		// site holds it), at most connections_per_ip per address,
		// whichever harvest of the process holds them: the server
		// waits on its address until one is given back.
		if sc.holdBehind(srv) {
			continue
		}
		var ok bool
		var retry time.Time
		busy, gen := notBusy, uint64(0)
		if sc.h.eng.running.Load() > 1 && sc.h.eng.parked.older(srv.ip, sc.h.batch) {
			// An older batch of the process waits for a connection
			// to this address: it goes first.
			busy, gen = busyAddress, sc.h.hosts.gen(srv.ip)
		} else {
			ok, retry, busy, gen = sc.h.hosts.acquire(srv.Host, srv.ip, sc.hc.ConnectionsPerIP, sc.h.batch, now)
		}
		switch {
		case busy != notBusy:
			if len(sc.ipParked[srv.ip]) == 0 {
				sc.parkGen[srv.ip] = gen
			}
			sc.ipParked[srv.ip] = append(sc.ipParked[srv.ip], srv)
			sc.h.parkedTop.raise(srv.ip, srv.rank)
			if busy == busyAddress {
				sc.h.eng.parked.park(srv.ip, sc.h.batch)
			}
		case !ok:
			srv.notBefore = retry
			heap.Push(sc.waiting, srv)
		default:
			sc.start(srv)
		}
	}
	return time.Time{}
}

// holdBehind holds srv back while an older batch of the process has URLs
// of its host left (hostOrder): they go first. It goes back to the
// queue once the older batch is done with the host (unpark).
func (sc *scheduler) holdBehind(srv *Server) bool {
	if sc.h.eng.running.Load() < 2 {
		return false
	}
	if len(sc.behind) == 0 {
		sc.behindGen = sc.h.eng.order.gen.Load() // before the check: a host done meanwhile is seen
	}
	if !sc.h.eng.order.older(sc.h.batch, srv.Host) {
		return false
	}
	sc.behind = append(sc.behind, srv)
	return true
}

// demand is what this harvest wants of the process's connections now
// (connPool): its ready servers, when none is free for them.
func (sc *scheduler) demand() int {
	if sc.stopping || sc.ending || sc.ready.Len() == 0 || sc.pool.free(sc.member) > 0 {
		return 0
	}
	return sc.ready.Len()
}

// unparked puts the servers parked on ip back in the ready queue,
// re-ranked: a connection of the address (or of their unit) was given
// back.
func (sc *scheduler) unparked(ip netip.Addr) {
	for _, p := range sc.ipParked[ip] {
		p.rank = sc.h.rank.Rank(p)
		heap.Push(sc.ready, p)
	}
	delete(sc.ipParked, ip)
	delete(sc.parkGen, ip)
	sc.h.parkedTop.drop(ip)
	sc.h.eng.parked.unpark(ip, sc.h.batch)
}

// unpark puts back in the queue the servers parked on an address that
// another harvest of the process gave a connection back to since they
// were parked (its count changed, hostTable.gen).
func (sc *scheduler) unpark() {
	for ip := range sc.ipParked {
		if sc.h.hosts.gen(ip) != sc.parkGen[ip] {
			sc.unparked(ip)
		}
	}
	if len(sc.behind) == 0 {
		return
	}
	if g := sc.h.eng.order.gen.Load(); g != sc.behindGen {
		sc.behindGen = g
		kept := sc.behind[:0]
		for _, srv := range sc.behind {
			if sc.h.eng.order.older(sc.h.batch, srv.Host) {
				kept = append(kept, srv)
				continue
			}
			srv.rank = sc.h.rank.Rank(srv)
			heap.Push(sc.ready, srv)
		}
		clear(sc.behind[len(kept):])
		sc.behind = kept
	}
}

// holdFor tells whether the free connection should wait for the
// best-ranked server not resolved yet, which ranks above the best ready
// one, and until when (dnsHold from the start of its lookup).
func (sc *scheduler) holdFor(now time.Time) (time.Time, bool) {
	if sc.pending >= len(sc.byRank) {
		return time.Time{}, false
	}
	best := sc.byRank[sc.pending]
	if !better(best, (*sc.ready)[0]) {
		return time.Time{}, false
	}
	// Every better-ranked server is resolved, so best is next in line
	// for a lookup. One whose lookup has not started is not waited
	// for: feedLookups starts the lookups in rank order, so it is kept
	// back by the bound on the servers resolved ahead, which the ready
	// servers fill.
	if best.lookupStart.IsZero() {
		return time.Time{}, false
	}
	if until := best.lookupStart.Add(dnsHold); until.After(now) {
		return until, true
	}
	return time.Time{}, false
}

// start gives srv a connection: its goroutine serves its next URLs
// (harvest.serve) and hands it back on finished.
func (sc *scheduler) start(srv *Server) {
	h := sc.h
	srv.state = stateActive
	sc.active++
	sc.activeSet[srv] = true
	sc.pool.take()
	h.stats.active.Add(1)
	h.stats.waiting.Add(-1)
	finished := sc.finished
	go func() {
		if err := h.serve(srv); err != nil && !errors.Is(err, errStopped) {
			h.fatal(err)
		}
		finished <- srv
	}()
}

// wakeAt is the timer the loop also waits for: the first of the next
// server's turn, the end of a hold and the batch's end; nil when none,
// or once the run stops or the batch ends.
func (sc *scheduler) wakeAt(holdUntil, endAt time.Time) <-chan time.Time {
	if sc.stopping || sc.ending || !(sc.waiting.Len() > 0 || !holdUntil.IsZero() || !endAt.IsZero()) {
		return nil
	}
	at := holdUntil
	if sc.waiting.Len() > 0 && (at.IsZero() || (*sc.waiting)[0].notBefore.Before(at)) {
		at = (*sc.waiting)[0].notBefore
	}
	if !endAt.IsZero() && (at.IsZero() || endAt.Before(at)) {
		at = endAt
	}
	sc.timer.Reset(time.Until(at))
	return sc.timer.C
}

// onResolved takes a server whose lookup is done: done if nothing is
// left (its URLs were logged, e.g. it does not resolve), queued unless
// the batch is ending.
func (sc *scheduler) onResolved(srv *Server) {
	sc.resolvedSet[srv] = true
	sc.inFlight--
	if sc.gate != nil {
		srv.gateNeed = sc.need(srv)
	}
	switch {
	case srv.left == 0:
		sc.done(srv)
	case !sc.ending:
		sc.enqueue(srv, time.Now())
	}
}

// onFinished takes back a server's connection: the servers parked on its
// address go back to the ready queue, and the server is done or, unless
// the run stops or the batch ends, queued again, behind the others of
// its rank (order).
func (sc *scheduler) onFinished(srv *Server) {
	h := sc.h
	sc.active--
	delete(sc.activeSet, srv)
	h.stats.active.Add(-1)
	h.stats.waiting.Add(1)
	sc.unparked(srv.ip)
	srv.notBefore = h.hosts.release(srv.Host, srv.ip)
	sc.pool.give()
	// A server of another harvest of the process may wait for this
	// unit, this address or a connection.
	h.hosts.wakeOthers(sc.kick)
	if sc.gate != nil {
		srv.gateNeed = sc.need(srv)
	}
	switch {
	case srv.left == 0:
		sc.done(srv)
	case !sc.stopping && !sc.ending:
		srv.order = sc.nextOrder
		sc.nextOrder++
		sc.enqueue(srv, time.Now())
	}
}

// enqueue puts srv in the ready queue (re-ranked) or, if its turn has
// not come, in the waiting queue.
func (sc *scheduler) enqueue(srv *Server, now time.Time) {
	srv.state = stateQueued
	if srv.notBefore.After(now) {
		heap.Push(sc.waiting, srv)
		return
	}
	srv.rank = sc.h.rank.Rank(srv)
	heap.Push(sc.ready, srv)
}

// done marks srv done: it is counted off its domain (the outage rule's
// count) and its line is written to the servers file.
func (sc *scheduler) done(srv *Server) {
	h := sc.h
	srv.state = stateDone
	sc.remaining--
	if d := urlnorm.Registrable(srv.Host); h.domains[d] > 0 {
		if h.domains[d]--; h.domains[d] == 0 {
			h.domainsLeft.Add(-1)
		}
	}
	h.stats.done.Add(1)
	h.stats.waiting.Add(-1)
	l := serverLine(srv)
	if nb := h.hosts.notBefore(srv.Host); nb.After(time.Now()) {
		l.NotBefore = nb.UTC()
	}
	if cd := h.hosts.unitCrawlDelay(srv.Host); cd > 0 && l.IP != "" {
		l.CrawlDelay = cd.Seconds() // for the next harvest's names of the unit (carryFrom)
	}
	h.finished[srv.Host] = l
	if err := h.out.server(l); err != nil {
		h.fatal(err)
	}
	sc.hostDone(srv)
}

// hostDone tells the newer harvests of the process that this one has
// no URL of srv's host left (hostOrder): their servers of it, parked on
// its address, go back to their queues.
func (sc *scheduler) hostDone(srv *Server) {
	sc.h.eng.order.done(sc.h.batch, srv.Host)
	sc.h.hosts.delist(srv.claim, sc.h.batch)
	srv.claim = nil
	sc.h.hosts.wakeOthers(sc.kick)
}

// forgetHosts, when the scheduler returns, drops the hosts of the
// servers not done (a harvest stopped or failed) from the process's
// order, so that they hold no newer batch back.
func (sc *scheduler) forgetHosts() {
	for _, srv := range sc.servers {
		if srv.state != stateDone {
			sc.hostDone(srv)
		}
	}
}

// deferUnstarted ends a batch that ended early: every URL not requested
// is logged deferred, and each server's line is written as for a
// finished one.
func (sc *scheduler) deferUnstarted() {
	why := sc.h.end.reason()
	for _, srv := range sc.servers {
		if srv.state == stateDone {
			continue
		}
		if err := sc.h.deferRest(srv, why); err != nil {
			return
		}
		sc.done(srv)
	}
}

// dnsHold is how long a free connection waits for a better-ranked server
// whose DNS lookup is under way before going to a lesser one.
const dnsHold = 100 * time.Millisecond

// need is the value ranking's estimate of the time srv's remaining URLs
// need (valueGate.need), with its unit's Crawl-delay.
func (sc *scheduler) need(srv *Server) time.Duration {
	return sc.gate.need(srv, sc.h.hosts.unitCrawlDelay(srv.Host))
}

// tickGate moves the value clock (valueGate.tick; endAt is when the end
// rule would end the batch) and gives the held
// servers it now allows back to the queue. When nothing else is left to
// run (no connection, no server ready or waiting for its turn), the best
// held server is released at once: the clock never leaves the harvester
// idle.
func (sc *scheduler) tickGate(now, endAt time.Time) {
	g := sc.gate
	if g == nil || !g.tick(now, endAt, func(yield func(time.Duration, netip.Addr)) {
		for _, s := range sc.servers {
			if s.state == stateDone {
				continue
			}
			var ip netip.Addr
			if sc.resolvedSet[s] {
				ip = s.ip
			}
			yield(s.gateNeed, ip)
		}
	}) {
		return
	}
	g.open.Store(sc.h.outage.suspected())
	if len(sc.gated) > 0 && sc.active == 0 && sc.ready.Len() == 0 && sc.waiting.Len() == 0 {
		best := sc.gated[0].Quality()
		for _, s := range sc.gated[1:] {
			best = max(best, s.Quality())
		}
		g.releaseTo(best)
	}
	kept := sc.gated[:0]
	for _, s := range sc.gated {
		if g.allows(s.Quality(), s.gateNeed) {
			sc.enqueue(s, now)
		} else {
			kept = append(kept, s)
		}
	}
	clear(sc.gated[len(kept):])
	sc.gated = kept
}
