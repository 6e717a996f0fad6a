package harvester

// The process's side of a harvest: what every harvest a harvester
// process runs shares (engine), as opposed to what each batch keeps for
// itself (harvest, run.go). A harvester that follows the batches
// (Follow, follow.go) runs several harvests over one engine; a plain run
// has one of each.

import (
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// engine is the politeness and network state of one harvester process:
//
//   - hosts, the politeness table (units, their turns and Crawl-delays,
//     the address floor, the connections per address);
//   - client, the HTTP client (its DNS cache, its TLS sessions);
//   - pool, the harvester.connections connections;
//   - robots, the robots.txt answers the process obtained, so that a
//     site is not asked for its robots.txt again by the next batch;
//   - the start floor, decided by the process's first harvest.
//
// Every field guards its own state; the engine is safe for concurrent
// use by the harvests and their goroutines.
type engine struct {
	hosts  *hostTable
	client *fetch.Client
	pool   *connPool
	robots *robotsCache
	// parked is, per address, the harvests (by batch id) with a server
	// parked on it for its connections_per_ip: a newer harvest takes no
	// connection there, and its connections there give their turn over
	// (olderWaits), while an older one waits.
	parked parkedBatches
	// order says which batches have each host name's URLs left, so
	// that a host's URLs go in batch order (hostOrder).
	order hostOrder
	// running counts the harvests scheduling over the engine: with one,
	// nothing needs to look at the others (olderWaits).
	running atomic.Int32

	floorMu  sync.Mutex
	floor    time.Time // the process's start floor, once set
	floorSet bool
}

// newEngine makes the engine of a process from its configuration.
func newEngine(cfg config.Config, log *slog.Logger) (*engine, error) {
	fc, err := ClientConfig(cfg)
	if err != nil {
		return nil, err
	}
	hc := cfg.Harvester
	return &engine{
		hosts:  newHostTable(hc.AddressWait.D()),
		client: fetch.New(fc, log),
		pool:   &connPool{size: hc.Connections},
		robots: newRobotsCache(cfg.Manager.RobotsMaxAge.D(), carryHorizon(hc)),
	}, nil
}

// startFloor returns the process's start floor (docs/harvester.md, "The
// start floor"): the first harvest computes it (first), and every later
// harvest of the process keeps the same time, as its servers' state is
// in the shared table from then on. isFirst tells the caller whether it
// decided it.
func (e *engine) startFloor(first func() time.Time) (floor time.Time, isFirst bool) {
	e.floorMu.Lock()
	defer e.floorMu.Unlock()
	if !e.floorSet {
		e.floor, e.floorSet = first(), true
		return e.floor, true
	}
	return e.floor, false
}

// parkedBatches records, per address, the batches with a server parked
// on it. Safe for concurrent use.
type parkedBatches struct {
	mu sync.Mutex
	m  map[netip.Addr]map[int]bool
}

// park records a server of batch parked on ip.
func (p *parkedBatches) park(ip netip.Addr, batch int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[netip.Addr]map[int]bool{}
	}
	if p.m[ip] == nil {
		p.m[ip] = map[int]bool{}
	}
	p.m[ip][batch] = true
}

// unpark records that batch's servers parked on ip went back to its
// queue.
func (p *parkedBatches) unpark(ip netip.Addr, batch int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.m[ip]; b != nil {
		delete(b, batch)
		if len(b) == 0 {
			delete(p.m, ip)
		}
	}
}

// older tells whether a batch older than batch has a server parked on
// ip.
func (p *parkedBatches) older(ip netip.Addr, batch int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for b := range p.m[ip] {
		if b < batch {
			return true
		}
	}
	return false
}

// hostOrder records, per host name, the batches of the process with
// URLs of it left: a newer batch's server of the host waits (parked on
// its address) until every older batch is done with the host, so a
// host's URLs are fetched in the order the manager planned the batches,
// and an older batch's last hosts are never slowed by a newer batch
// taking turns on them (its tail, "Ending a batch", would cut them).
// Safe for concurrent use.
type hostOrder struct {
	mu sync.Mutex
	m  map[string][]int // host -> batches with URLs of it left, in no order
	// gen counts the hosts done (done), so that a scheduler looks again
	// at the servers it holds back for an older batch only when one was.
	gen atomic.Uint64
}

// add records that batch has URLs of each of hosts.
func (o *hostOrder) add(batch int, hosts []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string][]int{}
	}
	for _, h := range hosts {
		o.m[h] = append(o.m[h], batch)
	}
}

// done records that batch has no URL of host left.
func (o *hostOrder) done(batch int, host string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	bs := slices.DeleteFunc(o.m[host], func(b int) bool { return b == batch })
	if len(bs) == 0 {
		delete(o.m, host)
	} else {
		o.m[host] = bs
	}
	o.gen.Add(1)
}

// older tells whether a batch older than batch has URLs of host left.
func (o *hostOrder) older(batch int, host string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range o.m[host] {
		if b < batch {
			return true
		}
	}
	return false
}

// olderWaits tells whether a server of a batch older than batch wants
// srv's unit (hostTable.enlist), or is parked on its address for the
// address's connections_per_ip: a newer batch's connection there ends
// its turn after its current URL rather than after its P (serve), so the
// older batch's server, which may be of the same unit under another name
// (www.x.cl and x.cl, or another subdomain on that server), gets it at
// once.
// One atomic load when the process runs one harvest.
func (e *engine) olderWaits(srv *Server, batch int) bool {
	return e.running.Load() > 1 && (e.hosts.olderWants(srv.Host, batch) || e.parked.older(srv.ip, batch))
}

// connPool is the process's harvester.connections: a scheduler gives a
// server a connection only while the pool has one free. Harvests go in
// batch order: a harvest may take a connection only while more are free
// than the older harvests want right now (their demand: servers ready
// for a connection that found none), so an older batch, whose pages the
// manager planned first and whose harvest the next stages wait for, is
// never slowed by a newer one. Safe for concurrent use.
type connPool struct {
	mu      sync.Mutex
	size    int           // harvester.connections
	used    int           // connections held
	members []*poolMember // the harvests, by batch id
}

// poolMember is one harvest's place in the pool.
type poolMember struct {
	batch  int
	demand int // servers ready for a connection that found none
}

// join adds a harvest of batch id to the pool.
func (p *connPool) join(batch int) *poolMember {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &poolMember{batch: batch}
	i, _ := slices.BinarySearchFunc(p.members, batch, func(a *poolMember, b int) int { return a.batch - b })
	p.members = slices.Insert(p.members, i, m)
	return m
}

// leave removes a harvest from the pool.
func (p *connPool) leave(m *poolMember) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.members = slices.DeleteFunc(p.members, func(o *poolMember) bool { return o == m })
}

// free is the number of connections m may take now: those free, less
// what the older harvests want.
func (p *connPool) free(m *poolMember) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.size - p.used
	for _, o := range p.members {
		if o == m {
			break
		}
		n -= o.demand
	}
	return n
}

// idle is the number of connections nobody holds.
func (p *connPool) idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size - p.used
}

// older tells whether a harvest of a batch older than m's is in the
// pool (scheduling).
func (p *connPool) older(m *poolMember) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.members) > 0 && p.members[0] != m
}

// take counts a connection held; give counts it given back.
func (p *connPool) take() {
	p.mu.Lock()
	p.used++
	p.mu.Unlock()
}

func (p *connPool) give() {
	p.mu.Lock()
	p.used--
	p.mu.Unlock()
}

// setDemand records m's demand and tells whether it fell while
// connections are free (the newer harvests may now take them).
func (p *connPool) setDemand(m *poolMember, n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	fell := n < m.demand && p.used < p.size
	m.demand = n
	return fell
}

// robotsCache holds the robots.txt answers the harvests of a process
// kept (fetched, or copied from a batch's robots.jsonl), so that the
// next batch of the same process reuses them instead of asking the site
// again (keepRobots, knownRobots). It reuses exactly what a harvester run
// after this one would take from this harvest's robots.jsonl (carryFrom):
// a definite answer (definiteRobots) younger than manager.robots_max_age;
// an unreachable robots.txt is asked again, in its unit's turn. An entry
// is kept for the carry horizon after it was added: by then the manager
// has the answer from graph.db and copies it into the batch. Safe for
// concurrent use.
type robotsCache struct {
	mu     sync.Mutex
	m      map[string]cachedRobots
	maxAge time.Duration // manager.robots_max_age (0: nothing is reused)
	keep   time.Duration // how long an entry is kept
	pruned time.Time
}

type cachedRobots struct {
	rl    fetchlog.Robots
	added time.Time
}

func newRobotsCache(maxAge, keep time.Duration) *robotsCache {
	return &robotsCache{m: map[string]cachedRobots{}, maxAge: maxAge, keep: keep}
}

// add keeps rl if it is definite, unless a newer answer is kept.
func (c *robotsCache) add(rl fetchlog.Robots, now time.Time) {
	if c.maxAge <= 0 || !definiteRobots(rl) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[rl.Site]; ok && old.rl.Fetched.After(rl.Fetched) {
		return
	}
	c.m[rl.Site] = cachedRobots{rl: rl, added: now}
	if now.Sub(c.pruned) > c.keep {
		for site, e := range c.m {
			if now.Sub(e.added) > c.keep {
				delete(c.m, site)
			}
		}
		c.pruned = now
	}
}

// get returns the answer kept for site, if it is younger than
// robots_max_age.
func (c *robotsCache) get(site string, now time.Time) (fetchlog.Robots, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[site]
	if !ok || now.Sub(e.rl.Fetched) >= c.maxAge {
		return fetchlog.Robots{}, false
	}
	return e.rl, true
}

// definiteRobots tells whether a robots.txt answer decides the site's
// rules for longer than one batch: a 2xx, or a 4xx other than 429
// (RFC 9309: allow all). An unreachable one (5xx, 429, no answer) is
// asked again.
func definiteRobots(l fetchlog.Robots) bool {
	return l.Err == "" && (l.Status >= 200 && l.Status < 300 || l.Status >= 400 && l.Status < 500 && l.Status != 429)
}
