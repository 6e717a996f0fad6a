package harvester

// A run's shared state (harvest, with who owns each field) and the run
// itself (harvest.run): stopping, the background syncs and progress,
// then the scheduler loop (schedule.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// harvest is the shared state of one run.
//
// Who owns what: a run has three phases. Setup (harvestBatch's steps
// startHarvest and h.todo, and the start of h.run) runs on one goroutine
// before any other starts; the scheduling phase runs the scheduler's
// goroutine (h.schedule), the connections' goroutines (h.serve, one per
// active server), the DNS lookups' goroutines, the background goroutine
// of h.run (syncs, flushes, progress) and the stop timer; the end
// (publish) runs on the first goroutine again, after all of those have
// returned. Each field says which of these may touch it, and under which
// lock.
type harvest struct {
	// cfg, log, out, rank, prog, every, accept and hosts are set by
	// newHarvest and only read afterwards, by every goroutine. out and
	// hosts guard their own state (output.mu, hostTable.mu); out is
	// used by every goroutine, hosts by the connections and the
	// scheduler.
	cfg  config.Config
	log  *slog.Logger
	out  *output
	rank Ranking
	// split is a sharded batch's split over its shards and shardI this
	// run's shard (split.go); nil for the whole batch. Set before the
	// run starts, read only.
	split  *split
	shardI int
	// gate is the value ranking's clock (nil for the other rankings),
	// set before the first connection starts.
	gate   *valueGate
	prog   Progress
	every  time.Duration
	accept func(string) bool
	// eng is the process's engine (engine.go), which every harvest of a
	// following harvester shares: hosts is its politeness table, client
	// its HTTP client (a fetch.Client is safe for concurrent use).
	eng    *engine
	hosts  *hostTable
	client *fetch.Client
	// batch is the batch's id, for the connection pool's order and the
	// progress; followed says the harvest was taken beside another of
	// the same process (Follow).
	batch    int
	followed bool
	// norm is the project's URL normaliser (scope.max_url_length,
	// scope.session_params): robots.txt redirect targets are spelt by it.
	norm *urlnorm.Normalizer
	// known holds the robots.txt lines of the batch's robots.jsonl and
	// of an earlier run; kept the sites already in the output. Setup
	// (newHarvest, carryOver, todo, delayOf) uses them without a lock;
	// from the scheduling phase on they are touched only under knownMu
	// (knownRobots, keepRobots).
	known   map[string]fetchlog.Robots
	knownMu sync.Mutex
	kept    map[string]bool
	// held are the other names of the batch's units that the previous
	// harvest holds back (carryOver writes it during setup, run reads
	// it: moved.go).
	held []heldUnit
	// quiet, if quietOK, is when the last harvest before this one ended,
	// every harvest since the carry horizon having left a line for each
	// name it held (quietSince): the run starts without a floor of a
	// whole wait, only the address floor after that end. Set during
	// setup, read by run.
	quiet   time.Time
	quietOK bool
	// est holds the batch's servers.jsonl and an earlier run's: written
	// during setup (newHarvest, carryOver), read by run before the
	// scheduler starts, never written afterwards.
	est map[string]fetchlog.Server
	// finished holds the servers done in this run (and in an earlier run
	// of this harvest): written during setup and then only by the
	// scheduler's goroutine (schedule's done), read at the end
	// (finalServers).
	finished map[string]fetchlog.Server
	// logged holds the fetch log lines this run appended, in order:
	// allocated during setup, appended by counted under the output's
	// lock (output.mu) by whichever goroutine logs, read at the end.
	logged []fetchlog.Record

	// startCtx, fetchCtx and started are set by run before any goroutine
	// of the scheduling phase starts, and only read afterwards. stopAll
	// is guarded by mu (set by run, called by fatal).
	startCtx, fetchCtx context.Context
	stopAll            context.CancelFunc
	started            time.Time

	// end is the decision to end the batch early (deadline, tail),
	// safe for concurrent use (a sync.Once); batchDuration is the batch
	// header's batch_duration (0: none), set during setup and read by
	// the scheduler.
	end           *batchEnd
	batchDuration time.Duration

	// readyTop is the rank of the best server in the scheduler's ready
	// queue, which the scheduler's goroutine publishes each turn of its
	// loop for the connections' (turnOver).
	readyTop rankCell
	// parkedTop is, per address, the best rank of the servers parked on
	// it for its connections_per_ip or their unit (written by the
	// scheduler's goroutine, read by the connections': turnOver).
	parkedTop addrRanks

	// stats are atomic counters, updated by any goroutine.
	// pending counts the URLs left per host for Stats.Holding
	// (progress.go; its own lock).
	pending pendingHosts
	stats   struct {
		total, logged, pages, errors, robots, requests atomic.Int64
		bytes                                          atomic.Int64
		active, waiting, done                          atomic.Int64
	}

	// outage is the network outage rule (outage.go), set by run before
	// the scheduler starts; it guards its own state (outage.mu) and is
	// used by the DNS lookups and the connections.
	outage *outage
	// domains counts the servers not done of each registrable domain,
	// and domainsLeft the domains with any: the outage rule counts its
	// runs against them, as the names of one politeness unit (one
	// domain on one address) are asked one at a time and cannot all
	// fail at once. domains is filled by run before the scheduler
	// starts and then belongs to the scheduler's goroutine;
	// domainsLeft is atomic (the outage rule reads it from any
	// goroutine).
	domains     map[string]int
	domainsLeft atomic.Int64

	// mu guards fatalErr (the first fatal error, see fatal) and stopAll.
	mu       sync.Mutex
	fatalErr error
}

func newHarvest(opts Options, log *slog.Logger, out *output, res *resumed, b *collection.Batch) (*harvest, error) {
	h := &harvest{
		cfg:      opts.Config,
		log:      log,
		out:      out,
		rank:     opts.Ranking,
		prog:     opts.Progress,
		every:    opts.ProgressEvery,
		accept:   Accept(opts.Config.Harvester.AcceptMIME),
		norm:     opts.Config.Scope.Normalizer(),
		eng:      opts.eng,
		hosts:    opts.eng.hosts,
		client:   opts.eng.client,
		batch:    b.ID,
		followed: opts.followed,
		known:    map[string]fetchlog.Robots{},
		kept:     map[string]bool{},
		est:      map[string]fetchlog.Server{},
		finished: map[string]fetchlog.Server{},
		end:      newBatchEnd(),
	}
	if h.every <= 0 {
		h.every = 250 * time.Millisecond
	}
	if h.rank == nil {
		r, err := RankingByName(opts.Config.Harvester.Ranking)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		h.rank = r
	}
	// The manager's sidecars first, then what an earlier run of this
	// harvest already wrote, which wins.
	if lines, err := fetchlog.ReadRobots(b.RobotsPath()); err == nil {
		for _, l := range lines {
			h.known[l.Site] = l
		}
		log.Info("robots.txt copies from the batch", "sites", len(lines))
	} else if !errors.Is(err, os.ErrNotExist) {
		log.Warn("batch robots.jsonl ignored after a bad line", "err", err, "kept", len(lines))
		for _, l := range lines {
			h.known[l.Site] = l
		}
	}
	if lines, err := fetchlog.ReadServers(b.ServersPath()); err == nil || !errors.Is(err, os.ErrNotExist) {
		if err != nil {
			log.Warn("batch servers.jsonl ignored after a bad line", "err", err, "kept", len(lines))
		}
		maxCD := opts.Config.Harvester.MaxCrawlDelay.D()
		seconds := func(secs float64) time.Duration {
			return min(time.Duration(secs*float64(time.Second)), maxCD)
		}
		for _, l := range lines {
			host := strings.ToLower(l.Host)
			h.est[host] = l
			if ip, err := netip.ParseAddr(l.IP); err == nil && l.CrawlDelay > 0 {
				// A Crawl-delay graph.db stores for a site at an address
				// (the host may not be in this batch): every name of its
				// registrable domain that resolves there keeps it.
				h.hosts.crawlDelayAt(ip, host, seconds(l.CrawlDelay))
			}
			if l.UnitCrawlDelay > 0 {
				// An older manager's guess of the host's unit.
				h.hosts.crawlDelay(host, seconds(l.UnitCrawlDelay))
			}
		}
	}
	for site, l := range res.robots {
		h.known[site] = l
		h.kept[site] = true
	}
	for host, l := range res.servers {
		h.est[host] = l
		h.finished[host] = l
	}
	out.onLine = h.counted
	return h, nil
}

// counted updates the statistics for a logged line and keeps the line
// (called under the output lock, so in the fetch log's order).
func (h *harvest) counted(r fetchlog.Record) {
	h.logged = append(h.logged, r)
	h.stats.logged.Add(1)
	h.pending.logged(r.URL, fetch.KindOf(r.Err))
	switch {
	case r.OK():
		h.stats.pages.Add(1)
		h.stats.bytes.Add(r.Bytes)
	case fetch.KindOf(r.Err) == ErrRobots:
		h.stats.robots.Add(1)
	default:
		h.stats.errors.Add(1)
	}
}

// snapshot returns the run's statistics now.
func (h *harvest) snapshot() Stats {
	return Stats{
		Total:          int(h.stats.total.Load()),
		Logged:         int(h.stats.logged.Load()),
		Pages:          int(h.stats.pages.Load()),
		Bytes:          h.stats.bytes.Load(),
		Errors:         int(h.stats.errors.Load()),
		RobotsExcluded: int(h.stats.robots.Load()),
		Requests:       int(h.stats.requests.Load()),
		HostsActive:    int(h.stats.active.Load()),
		HostsWaiting:   int(h.stats.waiting.Load()),
		HostsDone:      int(h.stats.done.Load()),
		Holding:        h.pending.top(HoldingHosts),
		HostsGivenUp:   h.pending.givenUp(),
		Elapsed:        time.Since(h.started),
		Batch:          h.batch,
	}
}

// estimates returns the starting estimates of a host.
func (h *harvest) estimates(host string) Estimates {
	e := defaultEstimates(h.cfg.Harvester.RequestsPerConnection)
	if r, ok := h.est[host]; ok {
		e.fromRecord(r)
	}
	return e
}

// todo marks the entries that still need a line, and sets each host's
// earliest next request from what the log says it was last asked.
func (h *harvest) todo(entries []batch.Entry, recs []fetchlog.Record) ([]bool, int) {
	logged := make(map[entryKey]int, len(recs))
	for _, r := range recs {
		logged[key(r.DocID, r.URL)]++
		if !requested(r) {
			continue
		}
		site := siteOf(r.URL)
		end := r.Fetched.Add(time.Duration(r.Millis) * time.Millisecond)
		h.hosts.later(hostOf(site), end.Add(h.delayOf(site)))
	}
	for site, rl := range h.known {
		// Every name of a unit waits the longest Crawl-delay of the
		// unit's sites, from its first request on.
		cd := min(h.rulesOf(rl).CrawlDelay(), h.cfg.Harvester.MaxCrawlDelay.D())
		h.hosts.crawlDelay(hostOf(site), cd)
		if h.kept[site] {
			h.hosts.later(hostOf(site), rl.Fetched.Add(max(h.cfg.Harvester.Wait.D(), cd)))
		}
	}
	todo := make([]bool, len(entries))
	pending := 0
	for i, e := range entries {
		k := key(e.DocID, e.URL)
		if logged[k] > 0 {
			logged[k]--
			continue
		}
		todo[i] = true
		pending++
	}
	return todo, pending
}

// requested tells whether a logged URL was actually requested from its
// host (as opposed to skipped for robots.txt, a given-up host, or an
// address that was never dialled).
func requested(r fetchlog.Record) bool {
	if r.Status > 0 {
		return true
	}
	switch fetch.KindOf(r.Err) {
	case ErrRobots, ErrGaveUp, ErrDeferred, string(fetch.KindDNS), string(fetch.KindBlocked), string(fetch.KindBadURL), string(fetch.KindCancelled):
		return false
	}
	return true
}

// siteOf is scheme://host[:port] of a URL. A plain absolute URL (lower-
// case scheme, a host name or IPv4 address and maybe a port) is cut
// where its authority ends, without parsing; anything else goes through
// url.Parse.
func siteOf(rawURL string) string {
	if scheme, auth, ok := plainAuthority(rawURL); ok {
		return rawURL[:len(scheme)+3+len(auth)]
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return u.Scheme + "://" + u.Host
}

// plainAuthority splits a URL of the form scheme://authority[/?#...]
// whose scheme is lower-case letters, digits, '+', '-' or '.' (a letter
// first) and whose authority is a host name or IPv4 address of letters,
// digits, '.', '-' and '_', maybe followed by ':' and a decimal port. ok
// is false for anything else (user info, IPv6 literals, escapes, no
// scheme), which callers leave to url.Parse.
func plainAuthority(raw string) (scheme, auth string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", "", false
	}
	for k := 0; k < i; k++ {
		c := raw[k]
		if !('a' <= c && c <= 'z' || k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", false
		}
	}
	rest := raw[i+3:]
	end, colon := len(rest), -1
	for k := 0; k < len(rest); k++ {
		c := rest[k]
		switch {
		case c == '/' || c == '?' || c == '#':
			end = k
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-' || c == '_':
			if colon >= 0 {
				return "", "", false
			}
			continue
		case '0' <= c && c <= '9':
			continue
		case c == ':' && colon < 0:
			colon = k
			continue
		default:
			return "", "", false
		}
		break
	}
	if end == 0 || colon == 0 {
		return "", "", false
	}
	return raw[:i], rest[:end], true
}

// delayOf is the pause between two requests to a site whose robots.txt is
// known from an earlier run; harvester.wait otherwise.
func (h *harvest) delayOf(site string) time.Duration {
	d := h.cfg.Harvester.Wait.D()
	if rl, ok := h.known[site]; ok {
		d = max(d, min(h.rulesOf(rl).CrawlDelay(), h.cfg.Harvester.MaxCrawlDelay.D()))
	}
	return d
}

// knownRobots returns the robots.txt of a site that the batch carries or
// an earlier run logged, or that another harvest of the process kept
// (robotsCache): the site is not asked again.
func (h *harvest) knownRobots(site string) (fetchlog.Robots, bool) {
	h.knownMu.Lock()
	rl, ok := h.known[site]
	h.knownMu.Unlock()
	if !ok {
		rl, ok = h.eng.robots.get(site, time.Now())
	}
	return rl, ok
}

// keepRobots appends the site's robots.txt to the output's robots file,
// once per site.
func (h *harvest) keepRobots(rl fetchlog.Robots) error {
	h.knownMu.Lock()
	if h.kept[rl.Site] {
		h.knownMu.Unlock()
		return nil
	}
	h.kept[rl.Site] = true
	h.known[rl.Site] = rl
	h.knownMu.Unlock()
	h.eng.robots.add(rl, time.Now())
	if err := h.out.robots(rl); err != nil {
		return h.fatal(err)
	}
	return nil
}

// rulesOf turns a robots file line into rules.
func (h *harvest) rulesOf(rl fetchlog.Robots) *robots.Rules {
	return robots.ForFetch(rl.Status, rl.Body, rl.Err, h.cfg.Crawl.ProductToken)
}

// skip logs a URL that is not requested.
func (h *harvest) skip(srv *Server, e batch.Entry, why string) error {
	rec := fetchlog.Record{DocID: e.DocID, URL: e.URL, Fetched: time.Now().UTC(), Err: why}
	if err := h.out.page(nil, nil, rec, capture.Capture{}); err != nil {
		return h.fatal(err)
	}
	return nil
}

// fatal records the first error that must stop the run (a disk error)
// and stops everything at once.
func (h *harvest) fatal(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fatalErr == nil {
		h.fatalErr = err
		if h.stopAll != nil {
			h.stopAll()
		}
	}
	return err
}

func (h *harvest) fatalError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fatalErr
}

// resolve looks the server's host up before it is scheduled; a name that
// does not resolve, or only to refused addresses, has every URL logged
// with that error (and a robots line per site), without a connection. A
// failure that may be the resolver's is held (outage.go).
func (h *harvest) resolve(ctx context.Context, srv *Server) {
	ip, err := h.client.Resolve(ctx, srv.Host)
	held := h.outage.lookup(srv.Host, err, ctx.Err() != nil)
	if err == nil {
		srv.ip = ip
		if why := h.elsewhere(ip); why != "" {
			h.log.Debug("host resolved to an address of another "+why, "host", srv.Host, "ip", ip)
			_ = h.deferRest(srv, why) // a line that fails is the run's fatal error (skip)
			return
		}
		srv.unit = h.hosts.join(srv.Host, ip)
		srv.claim = h.hosts.enlist(srv.Host, h.batch)
		return
	}
	var fe *fetch.Error
	if !errors.As(err, &fe) || ctx.Err() != nil {
		return // stopping
	}
	srv.dnsErr = fe.Text()
	if held {
		return // serve logs the URLs once the network is known up (outage.go)
	}
	h.log.Debug("host does not resolve", "host", srv.Host, "err", srv.dnsErr)
	now := time.Now().UTC()
	for {
		e, sq, ok := srv.next()
		if !ok {
			return
		}
		if _, known := h.knownRobots(sq.Site); !known {
			if err := h.keepRobots(fetchlog.Robots{Site: sq.Site, Fetched: now, Err: srv.dnsErr}); err != nil {
				return
			}
		}
		if err := h.skip(srv, e, srv.dnsErr); err != nil {
			return
		}
		srv.pop()
	}
}

// elsewhere says whether ip belongs to another harvester: to another
// partition of the web (crawl.partition: its URLs are logged "deferred:
// partition" and the seeder hands the site over, docs/operations.md) or
// to another shard of the batch (split.go: "deferred: shard"). It
// returns that reason, or "" when this run may ask the address.
func (h *harvest) elsewhere(ip netip.Addr) string {
	if p := h.cfg.Crawl.PartitionOf(); !p.Mine(p.OfAddress(ip)) {
		return ErrPartitionDeferred
	}
	if h.split != nil && h.split.owner(ip) != h.shardI {
		return ErrShardDeferred
	}
	return ""
}

// run serves the servers with up to harvester.connections connections.
func (h *harvest) run(parent context.Context, b *collection.Batch, entries []batch.Entry, todo []bool, pending int, resuming bool) error {
	hc := h.cfg.Harvester
	servers := plan(entries, todo, h.rank, h.estimates)
	for _, srv := range servers {
		srv.streak = h.est[srv.Host].Streak // the count goes on across batches
	}
	h.started = time.Now()
	h.stats.total.Store(int64(pending))
	h.pending.init(servers)
	// progress.json for manager status, beside the caller's display.
	h.prog = append(progressTee{newProgressFile(h.out.dir)}, nonNil(h.prog)...)

	// Stopping: a cancelled parent stops new requests at once and lets
	// the ones in flight finish for up to stop_timeout; a fatal error
	// stops everything at once.
	startCtx, stopStart := context.WithCancel(parent)
	defer stopStart()
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(parent))
	defer stopFetch()
	h.startCtx, h.fetchCtx = startCtx, fetchCtx
	h.end.start(startCtx)
	defer h.end.cancel()
	h.mu.Lock()
	h.stopAll = func() { stopStart(); stopFetch() }
	h.mu.Unlock()
	h.domains = map[string]int{}
	for _, srv := range servers {
		h.domains[urlnorm.Registrable(srv.Host)]++
	}
	h.domainsLeft.Store(int64(len(h.domains)))
	h.outage = newOutage(hc.OutageHosts, len(h.domains), func() int { return int(h.domainsLeft.Load()) },
		func() int { return h.client.Resolver().Stats().Answered }, func(err error) { h.fatal(err) })
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-parent.Done():
		case <-runDone:
			return
		}
		t := time.NewTimer(hc.StopTimeout.D())
		defer t.Stop()
		select {
		case <-t.C:
			stopFetch()
		case <-runDone:
		}
	}()
	h.followMoves(startCtx) // moved.go

	// No host is asked before a full wait from now: a killed run may have
	// had requests in flight that it never logged, and the run of the
	// previous batch (or shard) may have asked the same host a moment ago,
	// from another process this one knows nothing of. The same holds for
	// an address (its floor, address_wait, is not carried over). Unless
	// the run starts quiet (quietSince): then the previous harvests'
	// holds, carried, say all that. The floor is the process's: a
	// harvest taken beside another (Follow) keeps the first one's, as
	// everything the process asked since is in the shared table.
	floor, first := h.eng.startFloor(func() time.Time {
		if h.quietOK {
			// Nothing ran since the previous harvest ended, and its holds
			// (and older ones') are carried: only an address it asked last
			// just before its end may need address_wait.
			floor := h.quiet.Add(hc.AddressWait.D())
			h.log.Info("no start floor: the previous harvests left every hold", "since", h.quiet, "floor", floor)
			return floor
		}
		return time.Now().Add(max(hc.Wait.D(), hc.AddressWait.D()))
	})
	if !first {
		h.quietOK = false
		h.log.Info("taken beside the process's running harvests: the process's start floor and politeness state", "batch", b.Name(), "floor", floor)
	}
	for _, srv := range servers {
		h.hosts.later(srv.Host, floor)
	}
	h.log.Info("harvesting", "batch", b.Name(), "urls", len(entries), "left", pending, "hosts", len(servers),
		"connections", hc.Connections, "per_ip", hc.ConnectionsPerIP, "ranking", h.rank.Name(), "wait", hc.Wait)
	if h.prog != nil {
		h.prog.Start(pending)
	}
	h.checkDisk() // and every syncEvery (disk.go)
	background := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		syncT := time.NewTicker(syncEvery)
		defer syncT.Stop()
		flushT := time.NewTicker(flushEvery)
		defer flushT.Stop()
		var progress <-chan time.Time
		if h.prog != nil {
			t := time.NewTicker(h.every)
			defer t.Stop()
			progress = t.C
		}
		for {
			select {
			case <-syncT.C:
				if err := h.out.tick(); err != nil {
					h.fatal(err)
				}
				h.checkDisk()
			case <-flushT.C:
				if err := h.out.flush(); err != nil {
					h.fatal(err)
				}
			case <-progress:
				h.prog.Update(h.snapshot())
			case <-background:
				return
			}
		}
	}()

	h.schedule(servers, len(entries))

	close(background)
	bg.Wait()
	if h.prog != nil {
		h.prog.Done(h.snapshot())
	}
	switch fatal := h.fatalError(); {
	case fatal != nil:
		return fmt.Errorf("harvest batch %s: %w", b.Name(), fatal)
	case parent.Err() != nil:
		return fmt.Errorf("harvest batch %s: %w: %w", b.Name(), ErrInterrupted, context.Cause(parent))
	}
	return nil
}
