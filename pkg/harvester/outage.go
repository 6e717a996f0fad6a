package harvester

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// A network outage (the DNS resolver does not answer, or no server can
// be reached for lack of a route) must not be taken for a web full of
// failures: the harvester holds the failures that could be the
// network's until it is clear whether the network is up, and stops the
// batch (fetch.ErrNetworkDown, exit code 5) when harvester.outage_hosts
// host names in a row failed that way with nothing succeeding in
// between. Nothing of the outage is logged, so the batch stays
// resumable and a rerun once the network is back fetches it
// (docs/harvester.md, "A network outage").
//
// Two kinds of failure are watched:
//
//   - the lookup of a server before it is scheduled failed for the
//     resolver's fault (fetch.ResolverFailure: refused, no answer,
//     SERVFAIL; NXDOMAIN is an answer). The server's URLs wait, on their
//     connection, until a later lookup is answered (the failure was the
//     name's: they are logged as before), every lookup of the run is
//     done, or the outage is declared (nothing is logged).
//   - a request failed for lack of a route (fetch.NoRoute), or for the
//     resolver's fault when the cached answer had expired. The request
//     is not logged and does not count towards giving the host up; the
//     host goes back to the queue for holdRetry and is tried again. Once
//     the network is shown up after the first such failure, or after
//     holdTries tries, the host's failure is taken as its own and logged
//     as before. What shows the network up depends on the failure: a
//     connection to any server for lack of a route, an answer of the
//     resolver (fetch.ResolverStats.Answered) for the resolver's fault —
//     not a request on a cached address, which goes on succeeding for
//     the answer's TTL after the resolver is gone.

// holdRetry is how long a host whose request failed for lack of a route
// waits before it is tried again.
const holdRetry = time.Second

// minLeft is the shortest run of request failures that declares an
// outage late in a batch, when fewer than harvester.outage_hosts servers
// are left: a couple of dead servers at the end of a batch must not
// stop it for ever.
const minLeft = 3

// holdTries is how many times a host's failure for lack of a route is
// held before it is taken as the host's own.
const holdTries = 3

// errHeld: the request failed in a way that may be the network's; it is
// not logged and the server goes back to the queue (like errIdle).
var errHeld = fmt.Errorf("%w: held while the network may be down", errIdle)

// outage is the outage rule of one run. It is safe for concurrent use.
type outage struct {
	need int // host names in a row; 0: off
	// remaining counts the servers not done yet.
	remaining func() int
	// answered counts the resolver's answers so far
	// (fetch.ResolverStats.Answered); nil: none ever.
	answered func() int
	stop     func(error)        // declares the outage (harvest.fatal)
	mu       sync.Mutex         //
	wake     chan struct{}      // closed and replaced at each change
	down     error              // the outage, once declared
	left     int                // lookups not done yet
	dns      map[string]bool    // hosts of the resolver-failure run (since the last answered lookup)
	run      map[string]failure // hosts of the request-failure run
	conn     int                // requests that reached a server so far
	held     map[string]*holds  // hosts whose request failure is held
	last     map[string]bool    // hosts whose last request was held
	why      string             // the last failure of the run, for the message
}

// holds is the record of a host whose request failures are held.
type holds struct {
	conn    int // outage.conn at the first failure
	answers int // the resolver's answers at the first failure
	tries   int
}

// failure is a request failure of the run: what would show it was the
// host's own and not the network's.
type failure struct {
	resolver bool // the resolver's fault: an answer since shows it up
	answers  int  // the resolver's answers when it failed
}

// newOutage returns the rule for a run of hosts servers: need in a row
// (harvester.outage_hosts), or all of them when there are fewer, but at
// least two (a lone host's failure is its own). Late in a run, when
// fewer servers than that are left (remaining, nil: hosts), a run of
// request failures over all of them, but at least minLeft, is enough.
func newOutage(need, hosts int, remaining, answered func() int, stop func(error)) *outage {
	need = min(need, hosts)
	if need < 2 {
		need = 0
	}
	if remaining == nil {
		remaining = func() int { return hosts }
	}
	if answered == nil {
		answered = func() int { return 0 }
	}
	return &outage{need: need, remaining: remaining, answered: answered, stop: stop, wake: make(chan struct{}), left: hosts,
		dns: map[string]bool{}, run: map[string]failure{}, held: map[string]*holds{}, last: map[string]bool{}}
}

// changed wakes the waiters; called with mu held.
func (o *outage) changed() {
	close(o.wake)
	o.wake = make(chan struct{})
}

// declare stops the run if a run of failures counted as long as long
// is long enough (n is its true length, for the message); called with
// mu held.
func (o *outage) declare(long, n int, what string) {
	if o.down != nil || long < o.need {
		return
	}
	o.down = fmt.Errorf("%w: %d host names in a row %s, nothing succeeding in between (last: %s); nothing was counted against them, run again once the network is back",
		fetch.ErrNetworkDown, n, what, o.why)
	o.changed()
	go o.stop(o.down)
}

// lookup records the outcome of a server's lookup before it is
// scheduled (err nil: answered; stopping: the lookup was cut short). It
// tells whether the failure is held.
func (o *outage) lookup(host string, err error, stopping bool) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	defer o.changed()
	o.left--
	switch {
	case o.need == 0 || stopping:
		return false
	case err != nil && fetch.ResolverFailure(err):
		o.dns[host] = true
		o.why = fetch.Text(err)
		o.declare(len(o.dns), len(o.dns), "failed their DNS lookup for the resolver's fault")
		return true
	case err == nil && isLiteral(host):
		return false // no lookup: it says nothing of the resolver
	}
	clear(o.dns) // the resolver answered: the failures were the names'
	return false
}

// suspected tells whether failures that may be the network's are being
// held (a run of them has begun and not been broken): then the value
// ranking's clock holds no server back, so that the run reaches
// outage_hosts host names, or is broken, before its first hosts run out
// of holdTries (with servers held by the clock, too few hosts tried to
// connect during a resolver outage, and the first ones' failures were
// logged as their own).
func (o *outage) suspected() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.need > 0 && o.down == nil && (len(o.run) > 0 || len(o.dns) > 0)
}

// isLiteral tells whether host is an IP address.
func isLiteral(host string) bool {
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// awaitLookup waits until a held lookup failure of host is settled: nil
// when it is the name's own (a later lookup was answered, or every
// lookup of the run is done), errStopped when the network is down or the
// run stops, errEnded when the batch ends.
func (o *outage) awaitLookup(h *harvest, host string) error {
	for {
		o.mu.Lock()
		// Out of the run: an answered lookup broke it.
		settled := !o.dns[host] || o.left <= 0
		down, wake := o.down, o.wake
		o.mu.Unlock()
		switch {
		case down != nil:
			return errStopped
		case o.need == 0 || settled:
			return nil
		}
		select {
		case <-wake:
		case <-h.end.done():
			return errEnded
		case <-h.startCtx.Done():
			return errStopped
		}
	}
}

// request records the outcome of a request to host (called by account
// for every request). It tells whether a failure is held: then it does
// not count towards giving the host up, and after tells the caller not
// to log it.
func (o *outage) request(host string, resp *fetch.Response, err error) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.need == 0 {
		return false
	}
	if o.down != nil {
		o.last[host] = true
		return true
	}
	ok := resp != nil || reachedServer(err)
	if ok && len(o.run) == 0 {
		o.conn++
		return false // the common case, without asking the resolver's count
	}
	answers := o.answered()
	for h, f := range o.run {
		if f.resolver && answers > f.answers {
			delete(o.run, h) // the resolver answered since
		}
	}
	resolver := fetch.ResolverFailure(err)
	switch {
	case ok:
		o.conn++
		delete(o.run, host) // its own server reached: whatever it failed, it is past
		for h, f := range o.run {
			if !f.resolver {
				delete(o.run, h) // a route since
			}
		}
		return false
	case !fetch.NoRoute(err) && !resolver:
		return false // a timeout proves nothing either way
	}
	hd := o.held[host]
	if hd == nil {
		hd = &holds{conn: o.conn, answers: answers}
		o.held[host] = hd
	}
	up := o.conn > hd.conn
	if resolver {
		up = answers > hd.answers
	}
	if up || hd.tries >= holdTries {
		delete(o.held, host) // the host's own failure
		return false
	}
	hd.tries++
	o.run[host] = failure{resolver: resolver, answers: answers}
	o.last[host] = true
	o.why = fetch.Text(err)
	if n := len(o.run); n >= min(o.need, max(o.remaining(), minLeft)) {
		o.declare(max(n, o.need), n, "failed to connect for lack of a route or of a DNS answer")
	}
	return true
}

// reachedServer tells whether a failed request proves a route to the
// server: it answered, if only with a reset, a refusal or garbage.
func reachedServer(err error) bool {
	switch fetch.Kind(fetch.KindOf(fetch.Text(err))) {
	case fetch.KindReset, fetch.KindProtocol, fetch.KindTLS, fetch.KindDecode:
		return true
	case fetch.KindConnect:
		return !fetch.NoRoute(err) && strings.Contains(fetch.Text(err), "refused")
	}
	return false
}

// after tells the caller of a request to srv's host whether to log its
// outcome: nil, errHeld (the server goes back to the queue and its host
// is tried again after holdRetry) or errStopped (the network is down).
func (o *outage) after(h *harvest, srv *Server) error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	held, down := o.last[srv.Host], o.down
	delete(o.last, srv.Host)
	o.mu.Unlock()
	switch {
	case down != nil:
		return errStopped
	case !held:
		return nil
	}
	h.hosts.later(srv.Host, time.Now().Add(holdRetry))
	return errHeld
}

// awaitDNS is serve's step for a server whose lookup failed: it waits
// until the failure is known to be the name's (see outage.awaitLookup),
// then keeps a robots line for the site as resolve does. A nil outage
// (tests that build a harvest by hand) waits for nothing.
func (h *harvest) awaitDNS(srv *Server, site string) error {
	if h.outage == nil {
		return nil
	}
	if err := h.outage.awaitLookup(h, srv.Host); err != nil {
		return err
	}
	if _, known := h.knownRobots(site); !known {
		rl := fetchlog.Robots{Site: site, Fetched: time.Now().UTC(), Err: srv.dnsErr}
		if err := h.keepRobots(rl); err != nil {
			return err
		}
	}
	return nil
}
