package seeder

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/harvester"
)

// A new site of a partitioned collection belongs to the partition of its
// server's address (docs/operations.md, "Partitioned collections"). Routed
// by its registrable domain instead, as it was while no stage had resolved
// the name, it went to the wrong partition (K−1)/K of the time, whose
// harvester resolved the name, did not ask it ("deferred: partition") and
// whose seeder then handed the site over: the site's first pages came a
// cycle of both partitions late (at 100,000 pages and K = 2, half the
// sites, holding most of the order's loss: docs/scale.md, "Partitions").
// So the seeder looks a new name up itself, with the harvester's resolver
// settings (harvester.dns_server, dns_timeout, the address policy), before
// it routes it (crawl.partition_lookup).

// maxLookups bounds the lookups a locator has under way at once.
const maxLookups = 32

// locator looks up the addresses of names in the background: start
// begins a lookup (prepare calls it for the names of a batch's links that
// graph.db did not know, ahead of the transaction), addr waits for one.
// Each name is looked up once per locator.
type locator struct {
	client *fetch.Client
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	hosts  map[string]*located
	// lookups and failures count the names looked up and those that
	// gave no address the policy allows (routed by their name then);
	// waited is the time addr spent waiting for lookups under way, in
	// nanoseconds (what the lookups cost the batch's transaction).
	lookups, failures, waited atomic.Int64
}

// located is one name's lookup.
type located struct {
	done chan struct{}
	addr netip.Addr // invalid when the lookup failed
}

// newLocator returns the locator of a partitioned collection with
// crawl.partition_lookup on, nil otherwise (a nil locator locates
// nothing).
func newLocator(cfg config.Config) (*locator, error) {
	if cfg.Crawl.PartitionOf().Whole() || !cfg.Crawl.PartitionLookup {
		return nil, nil
	}
	fc, err := harvester.ClientConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &locator{
		client: fetch.New(fc, slog.New(slog.DiscardHandler)),
		ctx:    ctx,
		cancel: cancel,
		sem:    make(chan struct{}, maxLookups),
		hosts:  map[string]*located{},
	}, nil
}

// start begins looking host up, unless it was already.
func (l *locator) start(host string) *located {
	if l == nil {
		return nil
	}
	host = strings.ToLower(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	if x, ok := l.hosts[host]; ok {
		return x
	}
	x := &located{done: make(chan struct{})}
	l.hosts[host] = x
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(x.done)
		select {
		case l.sem <- struct{}{}:
		case <-l.ctx.Done():
			return
		}
		defer func() { <-l.sem }()
		l.lookups.Add(1)
		ip, err := l.client.Resolve(l.ctx, host)
		if err != nil {
			l.failures.Add(1)
			return
		}
		x.addr = ip.Unmap()
	}()
	return x
}

// addr returns host's address, looking it up if no lookup was started
// (each lookup is bounded by harvester.dns_timeout); false when it has
// none the address policy allows, or the lookup failed.
func (l *locator) addr(host string) (netip.Addr, bool) {
	x := l.start(host)
	if x == nil {
		return netip.Addr{}, false
	}
	select {
	case <-x.done:
	default:
		t0 := time.Now()
		select {
		case <-x.done:
		case <-l.ctx.Done():
			return netip.Addr{}, false
		}
		l.waited.Add(int64(time.Since(t0)))
	}
	return x.addr, x.addr.IsValid()
}

// close stops the lookups under way and waits for them.
func (l *locator) close() {
	if l == nil {
		return
	}
	l.cancel()
	l.wg.Wait()
}
