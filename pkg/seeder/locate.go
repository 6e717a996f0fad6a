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

// maxLookups is the number of lookups a locator has under way at once
// (its workers).
const maxLookups = 32

// locator looks up the addresses of names in the background: start
// queues a lookup (prepare calls it for the names of a batch's links that
// graph.db did not know, ahead of the transaction), addr waits for one.
// Each name is looked up once per locator, by maxLookups workers started
// with the first lookup; the queue holds the names not yet taken (a name
// costs its record, not a goroutine, however many a batch brings).
type locator struct {
	client *fetch.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	more   *sync.Cond // signalled when queue grows or ctx ends
	hosts  map[string]*located
	queue  []string // names waiting for a worker
	// started tells whether the workers run.
	started bool
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
	l := &locator{
		client: fetch.New(fc, slog.New(slog.DiscardHandler)),
		ctx:    ctx,
		cancel: cancel,
		hosts:  map[string]*located{},
	}
	l.more = sync.NewCond(&l.mu)
	return l, nil
}

// start queues host's lookup, unless it was already.
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
	l.queue = append(l.queue, host)
	if !l.started {
		l.started = true
		for range maxLookups {
			l.wg.Go(l.work)
		}
		// Wake the workers when the locator closes.
		l.wg.Go(func() {
			<-l.ctx.Done()
			l.mu.Lock()
			l.more.Broadcast()
			l.mu.Unlock()
		})
	}
	l.more.Signal()
	return x
}

// work looks up queued names until the locator closes; the names left
// in the queue then are closed unanswered.
func (l *locator) work() {
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && l.ctx.Err() == nil {
			l.more.Wait()
		}
		if l.ctx.Err() != nil {
			for _, h := range l.queue {
				close(l.hosts[h].done)
			}
			l.queue = nil
			l.mu.Unlock()
			return
		}
		host := l.queue[0]
		l.queue = l.queue[1:]
		x := l.hosts[host]
		l.mu.Unlock()
		l.lookups.Add(1)
		ip, err := l.client.Resolve(l.ctx, host)
		if err != nil {
			l.failures.Add(1)
		} else {
			x.addr = ip.Unmap()
		}
		close(x.done)
	}
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
