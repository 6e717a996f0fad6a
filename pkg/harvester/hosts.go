package harvester

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// hostTable is the politeness state of every server the run talks to, as
// the server sees it rather than by host name.
//
// A politeness unit is the set of host names that resolve to one address
// and share a registrable domain (www.x.cl, x.cl and m.x.cl on one
// address): one site under several names, which a webmaster sees as one
// visitor. A unit has at most one connection open at a time (its server
// holds a slot, or a robots.txt redirect of another site borrowed it),
// and between two requests to any of its names there is at least the
// wait and the largest Crawl-delay the unit's names asked for. Until its
// name is resolved a host is a unit of its own; resolving it joins it to
// its unit, merging what was known of both.
//
// Above the units, an address (shared hosting: many registrable domains
// on one server) sees the starts of two requests at least address_wait
// apart; the scheduler caps its connections (connections_per_ip).
//
// The table is the one place all of this is kept, so that a robots.txt
// redirect to another host never opens a second connection to a unit nor
// asks it before its turn. It is the process's, not a batch's: every
// harvest of a following harvester (engine, follow.go) schedules over
// it, so a unit or an address held by one batch's connection is busy for
// the others, and each pause holds across batches. Safe for concurrent
// use.
type hostTable struct {
	mu    sync.Mutex
	hosts map[string]*unit        // host name -> its unit
	units map[string]*unit        // unit key -> unit, once resolved
	addrs map[netip.Addr]*address // the address floor
	// addrWait is harvester.address_wait: the floor between the starts
	// of two requests to one address.
	addrWait time.Duration
	// subs are the schedulers' wake-up channels (subscribe), one per
	// harvest running over the table: wake signals every one (a
	// borrowed unit given back, a connection asleep for its turn),
	// wakeOthers the others (a unit or an address slot given back by
	// one harvest, which a server of another may be parked on).
	// Copied on write, read without the lock.
	subs atomic.Pointer[[]chan struct{}]
	// subsMu serialises the writers of subs.
	subsMu sync.Mutex
	// waiters counts the waiters registered, for their order.
	waiters uint64
}

// unit is the politeness state of one unit.
type unit struct {
	ip         netip.Addr // its address (invalid before it is resolved)
	active     bool       // one of its servers holds a slot
	borrowed   int        // robots.txt redirects talking to it (0 or 1, unless two units merged while borrowed)
	waitingFor *unit      // the unit this unit's worker waits to borrow
	notBefore  time.Time  // earliest next request to any of its names
	crawlDelay time.Duration
	// wanted counts, per batch of the process, its servers resolved into
	// the unit and not done (enlist, delist): a newer batch's server
	// does not take the unit while an older batch wants it (acquire).
	wanted map[int]int
}

// olderWants tells whether a batch older than batch has a server that
// wants u; called with mu held.
func (u *unit) olderWants(batch int) bool {
	for b, n := range u.wanted {
		if b < batch && n > 0 {
			return true
		}
	}
	return false
}

// address is what the floor of one address needs: the latest request
// started there, and the first byte of its answer once it came; and the
// requests waiting for the floor, so that the best of them goes first.
type address struct {
	// active counts the servers holding a connection whose first
	// address this is (acquire, release), every harvest of the process
	// together: harvester.connections_per_ip caps it. gen counts the
	// slots given back (release), so a scheduler whose server waits for
	// the address can tell that one was (parked, schedule.go).
	active   int
	gen      uint64
	start    time.Time     // when the latest request was sent
	seq      uint64        // its number, to match its answer
	answered time.Time     // its answer's first byte (or its end, if it ended without one), zero until then
	heard    chan struct{} // closed once answered is set
	waiters  []*waiter     // requests waiting for the floor (want), in no order
	changed  chan struct{} // closed (and replaced) when a request starts or a waiter leaves
}

// waiter is a request that waits for its address's floor, with the
// batch score of its URL. When the floor opens, the best-scored waiter
// that is there (or due there within arriveGrace) goes first: where
// address_wait is what limits a shared server, the order of its requests
// is the order of the batch's value across all its sites (the value
// ranking, valuegate.go), not the order in which connections happen to
// wake.
type waiter struct {
	batch   int // its batch: an older batch's request goes first (Follow)
	score   float64
	order   uint64    // registration order: the earlier of two equal scores goes first
	addr    *address  // the address it waits for
	host    string    // its host name, whose unit's turn it waits for
	due     time.Time // when its connection is expected at the floor (its turn when it registered)
	arrived bool      // its request waits in start (claim), ready to be written
}

// arriveGrace is how long a better waiter that is due but not there yet
// (its connection being opened, its goroutine not yet run) holds the
// floor for itself: past it, worse requests that are there go first, so
// a server slow to accept a connection does not stall its address.
const arriveGrace = 20 * time.Millisecond

// ahead tells whether w goes before v (an older batch of the process, a
// better score, or an equal one registered earlier).
func (w *waiter) ahead(v *waiter) bool {
	if w.batch != v.batch {
		return w.batch < v.batch
	}
	if w.score != v.score {
		return w.score > v.score
	}
	return w.order < v.order
}

// blocker returns the waiter of a that goes before w and may go now: its
// unit's turn has come (ready), and it is there or was due less than
// arriveGrace ago; nil if none.
func (a *address) blocker(w *waiter, now time.Time, ready func(host string) bool) *waiter {
	var best *waiter
	for _, v := range a.waiters {
		if v == w || !v.ahead(w) {
			continue
		}
		if !v.arrived && (now.Before(v.due) || !now.Before(v.due.Add(arriveGrace))) {
			continue
		}
		if !ready(v.host) {
			continue
		}
		if best == nil || v.ahead(best) {
			best = v
		}
	}
	return best
}

// change wakes the requests that wait for the waiters of a to change.
func (a *address) change() {
	if a.changed != nil {
		close(a.changed)
	}
	a.changed = make(chan struct{})
}

// unheard tells whether the address's latest request has neither been
// answered nor ended, and a next request must still be held for it
// (see hostTable.start): until unansweredHold past the floor.
func (a *address) unheard(wait time.Duration, now time.Time) bool {
	return a.seq != 0 && a.answered.IsZero() && now.Before(a.start.Add(wait+unansweredHold))
}

// unansweredHold is how long past the floor a request to an address
// waits, at most, for the answer of the address's latest request to
// begin. The server sees a request start some time after it was sent,
// and on a loaded machine that time exceeds any fixed margin: CI saw
// two requests sent 30 ms apart (floor 25 ms and margin 5 ms) start 56
// µs apart at the server. The answer's first byte comes after the server
// began the request, so counting from it bounds what the server sees;
// the hold only ends without it for a server slower than this to answer
// (then the requests are a whole second and the floor apart).
const unansweredHold = time.Second

// next is the earliest start of the address's next request: address_wait
// after the latest request's first byte, or, until that has come, after
// its send plus a margin. The server sees a request start some time
// after it was sent, and that time varies (its own scheduling, the
// network): two requests sent 250 ms apart reached the test web as close
// as 238 ms in a loaded bench run. A first byte comes after the server
// began the request, so counting from it bounds what the server sees;
// before it, the margin (a tenth of the wait, at least minFloorMargin)
// stands for the lag.
func (a *address) next(wait time.Duration) time.Time {
	if a == nil || wait <= 0 {
		return time.Time{}
	}
	if a.answered.IsZero() {
		return a.start.Add(wait + max(wait/10, minFloorMargin))
	}
	return maxTime(a.start, a.answered).Add(wait)
}

// minFloorMargin is the least margin of the address floor before an
// answer: a loaded server took 4-5 ms to accept a new connection and
// start its request in the fault run (at a 5 ms floor, two starts came
// 0.1-0.5 ms apart at the server).
const minFloorMargin = 5 * time.Millisecond

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// unitKey names the unit of a host name resolved to ip: the address and
// the registrable domain (publicsuffix eTLD+1; the name itself when it
// has none, such as an IP literal or a bare public suffix).
func unitKey(ip netip.Addr, host string) string {
	return ip.String() + " " + urlnorm.Registrable(host)
}

func newHostTable(addrWait time.Duration) *hostTable {
	return &hostTable{
		hosts:    map[string]*unit{},
		units:    map[string]*unit{},
		addrs:    map[netip.Addr]*address{},
		addrWait: addrWait,
	}
}

// subscribe returns a new wake-up channel of the table (see subs), for
// one scheduler; unsubscribe drops it when the scheduler returns.
func (t *hostTable) subscribe() chan struct{} {
	c := make(chan struct{}, 1)
	t.subsMu.Lock()
	defer t.subsMu.Unlock()
	var subs []chan struct{}
	if old := t.subs.Load(); old != nil {
		subs = slices.Clone(*old)
	}
	subs = append(subs, c)
	t.subs.Store(&subs)
	return c
}

// unsubscribe drops a channel subscribe returned.
func (t *hostTable) unsubscribe(c chan struct{}) {
	t.subsMu.Lock()
	defer t.subsMu.Unlock()
	old := t.subs.Load()
	if old == nil {
		return
	}
	subs := slices.DeleteFunc(slices.Clone(*old), func(s chan struct{}) bool { return s == c })
	t.subs.Store(&subs)
}

// get returns the host's unit (a unit of its own if it is not resolved).
func (t *hostTable) get(host string) *unit {
	u := t.hosts[host]
	if u == nil {
		u = &unit{}
		t.hosts[host] = u
	}
	return u
}

// join records that host resolved to ip: the host joins the unit of its
// address and registrable domain, which takes the strictest of what each
// knew (the later next request, the longer Crawl-delay). It returns the
// unit's key.
func (t *hostTable) join(host string, ip netip.Addr) string {
	key := unitKey(ip, host)
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.get(host)
	u := t.units[key]
	switch {
	case u == old:
	case u == nil && old.ip.IsValid():
		// The name resolved elsewhere before (its cache entry expired
		// and the answer changed): a new unit, keeping its pause.
		u = &unit{ip: ip, notBefore: old.notBefore, crawlDelay: old.crawlDelay}
		t.units[key] = u
	case u == nil:
		old.ip = ip
		u = old
		t.units[key] = u
	default:
		if old.notBefore.After(u.notBefore) {
			u.notBefore = old.notBefore
		}
		u.crawlDelay = max(u.crawlDelay, old.crawlDelay)
		if !old.ip.IsValid() {
			// A unit of its own name only: its slot and borrows come
			// along. (A borrower that still waits for old — names are
			// joined before they are borrowed — times out rather than
			// deadlocks.)
			u.active = u.active || old.active
			u.borrowed += old.borrowed
			if u.waitingFor == nil {
				u.waitingFor = old.waitingFor
			}
		}
	}
	t.hosts[host] = u
	return key
}

// laterUnit moves the next request to the unit of host on ip (a name
// that may not be in this run: another name of a unit the run's names
// will join) to at least at.
func (t *hostTable) laterUnit(ip netip.Addr, host string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.unitAt(ip, host); at.After(u.notBefore) {
		u.notBefore = at
	}
}

// unitAt returns the unit of host's registrable domain on ip, made if no
// name of the run has joined it yet; called with mu held.
func (t *hostTable) unitAt(ip netip.Addr, host string) *unit {
	key := unitKey(ip, host)
	u := t.units[key]
	if u == nil {
		u = &unit{ip: ip}
		t.units[key] = u
	}
	return u
}

// crawlDelayAt records a Crawl-delay (already capped) that a site of
// host's registrable domain on ip asked for, known before any name of the
// run resolves there (the manager's servers.jsonl): the unit of that
// domain on ip keeps the longest, and every name that joins it (join)
// waits it from its first request. Names of the domain on other
// addresses are other units and do not.
func (t *hostTable) crawlDelayAt(ip netip.Addr, host string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.unitAt(ip, host)
	u.crawlDelay = max(u.crawlDelay, d)
}

// sameUnit tells whether two host names are in one unit.
func (t *hostTable) sameUnit(a, b string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(a) == t.get(b)
}

// later moves the next request to the host's unit to at least at.
func (t *hostTable) later(host string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.get(host); at.After(u.notBefore) {
		u.notBefore = at
	}
}

// after moves the next request to the host's unit to at least end plus
// the longer of d and the unit's Crawl-delay: the pause after a request
// that ended at end.
func (t *hostTable) after(host string, end time.Time, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	if at := end.Add(max(d, u.crawlDelay)); at.After(u.notBefore) {
		u.notBefore = at
	}
}

// crawlDelay records a Crawl-delay one of the host's sites asked for
// (already capped at max_crawl_delay): the unit keeps the longest.
func (t *hostTable) crawlDelay(host string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	u.crawlDelay = max(u.crawlDelay, d)
}

// unitCrawlDelay is the longest Crawl-delay the host's unit asked for.
func (t *hostTable) unitCrawlDelay(host string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(host).crawlDelay
}

// hold is a host name the next harvest must not ask before notBefore.
type hold struct {
	host       string
	ip         netip.Addr // invalid if never resolved
	notBefore  time.Time
	crawlDelay time.Duration
}

// holds returns every host name in the table whose next request may not
// start before a time after now (its unit's turn or its address's
// floor): the names the run asked or held back, the batch's servers and
// any other (a redirect's target, a robots.txt redirect's host).
func (t *hostTable) holds(now time.Time) []hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []hold
	for host, u := range t.hosts {
		if at := t.turn(u); at.After(now) {
			out = append(out, hold{host: host, ip: u.ip, notBefore: at, crawlDelay: u.crawlDelay})
		}
	}
	return out
}

// notBefore is the earliest time of the next request to the host: its
// unit's turn, and its address's floor.
func (t *hostTable) notBefore(host string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.turn(t.get(host))
}

// turn is the earliest start of u's next request: its own turn and its
// address's floor; called with mu held.
func (t *hostTable) turn(u *unit) time.Time {
	at := u.notBefore
	if u.ip.IsValid() {
		if next := t.addrs[u.ip].next(t.addrWait); next.After(at) {
			at = next
		}
	}
	return at
}

// start claims the host's address for a request starting now: it
// succeeds if the unit's turn and the address's floor have come, the
// address's latest request has been answered (or has ended, or was sent
// longer than the floor and unansweredHold ago), and no better request
// waits for the address (w, the request's waiter from want, or nil: see
// waiter); the request becomes the address's latest, and start returns
// its number for answered. Otherwise it returns when to try again, and a
// channel closed when the address's latest answer comes or its waiters
// change (nil if start does not wait for either).
func (t *hostTable) start(host string, now time.Time, w *waiter) (bool, uint64, time.Time, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	if w != nil {
		w.arrived = true
	}
	if at := t.turn(u); at.After(now) {
		return false, 0, at, nil
	}
	if !u.ip.IsValid() || t.addrWait <= 0 {
		return true, 0, time.Time{}, nil
	}
	a := t.address(u.ip)
	if a.unheard(t.addrWait, now) {
		return false, 0, a.start.Add(t.addrWait + unansweredHold), a.heard
	}
	if w != nil && w.addr == a {
		ready := func(host string) bool { return !t.get(host).notBefore.After(now) }
		if b := a.blocker(w, now, ready); b != nil {
			at := now.Add(unansweredHold)
			if !b.arrived {
				at = b.due.Add(arriveGrace)
			}
			return false, 0, at, a.changed
		}
	}
	a.seq++
	a.start, a.answered = now, time.Time{}
	a.heard = make(chan struct{})
	if w != nil {
		a.remove(w) // it no longer waits (leave will find nothing)
	}
	a.change()
	return true, a.seq, time.Time{}, nil
}

// remove takes w off the waiters of a, reporting whether it was there.
func (a *address) remove(w *waiter) bool {
	for i, v := range a.waiters {
		if v == w {
			last := len(a.waiters) - 1
			a.waiters[i] = a.waiters[last]
			a.waiters[last] = nil
			a.waiters = a.waiters[:last]
			return true
		}
	}
	return false
}

// address returns the floor's record of ip, made on first use; called
// with mu held.
func (t *hostTable) address(ip netip.Addr) *address {
	a := t.addrs[ip]
	if a == nil {
		a = &address{changed: make(chan struct{})}
		t.addrs[ip] = a
	}
	return a
}

// want registers a request to host, for a URL of score, that will wait
// for its address's floor once its turn has come (see waiter), until it
// starts (start) or leaves; nil when
// there is no floor to wait for (no address_wait, or the host is not
// resolved). It is due at its turn, or now if that has come. The caller
// passes it to start and calls leave once the request is sent or given
// up.
func (t *hostTable) want(host string, batch int, score float64, now time.Time) *waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	if !u.ip.IsValid() || t.addrWait <= 0 {
		return nil
	}
	a := t.address(u.ip)
	t.waiters++
	w := &waiter{batch: batch, score: score, order: t.waiters, addr: a, host: host, due: maxTime(t.turn(u), now)}
	a.waiters = append(a.waiters, w)
	return w
}

// leave removes w (nil: nothing) from its address's waiters.
func (t *hostTable) leave(w *waiter) {
	if w == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.addr.remove(w) {
		w.addr.change()
	}
}

// answered records the first byte (at) of the answer to request seq of
// host's address (start's number), or the request's end if it ended
// without an answer: if it is still the address's latest, and nothing
// was recorded for it yet, the floor counts from there on (see
// address.next) and the requests held for it (start) may go.
func (t *hostTable) answered(host string, seq uint64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	if !u.ip.IsValid() {
		return
	}
	if a := t.addrs[u.ip]; a != nil && a.seq == seq && seq != 0 && a.answered.IsZero() {
		a.answered = at
		close(a.heard)
	}
}

// acquire marks the host's unit active for its server, and counts the
// connection on the server's first address ip (invalid: none), unless
// the unit is busy — another server of it holds a connection (in this
// harvest or another of the process) — or the address has perIP
// connections (connections_per_ip; 0: no cap): then busy is true and gen
// is the address's count of slots given back, for the scheduler to park
// the server on the address until it changes (parked, schedule.go). It
// also refuses, with the earliest time to try again, while a redirect
// has borrowed the unit or its turn has not come.
func (t *hostTable) acquire(host string, ip netip.Addr, perIP, batch int, now time.Time) (ok bool, retry time.Time, busy busyFor, gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	var a *address
	if ip.IsValid() {
		a = t.address(ip)
		gen = a.gen
	}
	switch {
	case u.active || u.olderWants(batch):
		return false, time.Time{}, busyUnit, gen
	case a != nil && perIP > 0 && a.active >= perIP:
		return false, time.Time{}, busyAddress, gen
	case u.borrowed > 0:
		return false, now.Add(borrowPoll), notBusy, 0
	case u.notBefore.After(now):
		return false, u.notBefore, notBusy, 0
	}
	u.active = true
	if a != nil {
		a.active++
	}
	return true, time.Time{}, notBusy, 0
}

// busyFor is why acquire parks a server: its unit is busy (held, or
// wanted by an older batch of the process), or its address has
// connections_per_ip connections.
type busyFor int

const (
	notBusy busyFor = iota
	busyUnit
	busyAddress
)

// enlist records that a server of batch, of host, wants its unit (it
// resolved and has URLs left), and returns the unit for delist.
func (t *hostTable) enlist(host string, batch int) *unit {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	if u.wanted == nil {
		u.wanted = map[int]int{}
	}
	u.wanted[batch]++
	return u
}

// delist ends an enlist (u nil: nothing): when it was batch's last
// server of the unit, the unit's address counts a change, so that a
// newer batch's server parked on it looks again (unpark).
func (t *hostTable) delist(u *unit, batch int) {
	if u == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if u.wanted[batch]--; u.wanted[batch] <= 0 {
		delete(u.wanted, batch)
		if u.ip.IsValid() {
			t.address(u.ip).gen++
		}
	}
}

// olderWants tells whether a batch older than batch has a server that
// wants host's unit.
func (t *hostTable) olderWants(host string, batch int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(host).olderWants(batch)
}

// release ends the slot of the host's unit and the connection counted on
// ip (acquire's), and returns the unit's next turn.
func (t *hostTable) release(host string, ip netip.Addr) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.get(host)
	u.active = false
	if ip.IsValid() {
		a := t.address(ip)
		a.active--
		a.gen++
	}
	return u.notBefore
}

// gen is the count of connection slots given back on ip (release).
func (t *hostTable) gen(ip netip.Addr) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.addrs[ip]; a != nil {
		return a.gen
	}
	return 0
}

// wake signals every scheduler over the table (subs) to look at its
// servers again.
func (t *hostTable) wake() { t.wakeOthers(nil) }

// wakeOthers signals every scheduler over the table but the one whose
// channel is me.
func (t *hostTable) wakeOthers(me chan struct{}) {
	subs := t.subs.Load()
	if subs == nil {
		return
	}
	for _, c := range *subs {
		if c == me {
			continue
		}
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// borrowPoll is how often a robots.txt redirect checks whether the unit
// it waits for is free.
const borrowPoll = 20 * time.Millisecond

// borrow waits until the unit of host has no connection open and its
// turn (and its address's floor) has come, then marks it borrowed by me
// (a robots.txt redirect of one of my sites); the request claims the
// address when it is sent (start). It gives up after limit, at once if the other unit's
// worker waits to borrow mine (each would wait for the other), and when
// ctx ends.
func (t *hostTable) borrow(ctx context.Context, host, me string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	t.mu.Lock()
	mine := t.get(me)
	mine.waitingFor = t.get(host)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.get(me).waitingFor = nil
		t.mu.Unlock()
	}()
	for {
		now := time.Now()
		t.mu.Lock()
		u := t.get(host)
		busy := u.active || u.borrowed > 0
		if busy && u.waitingFor == t.get(me) {
			t.mu.Unlock()
			return fmt.Errorf("redirect to %s, which waits for %s", host, me)
		}
		at := t.turn(u)
		if !busy && !at.After(now) {
			u.borrowed++
			t.mu.Unlock()
			return nil
		}
		wake := now.Add(borrowPoll)
		if !busy && at.Before(wake) {
			wake = at
		}
		t.mu.Unlock()
		if now.After(deadline) {
			return fmt.Errorf("redirect to %s, busy for more than %s", host, limit)
		}
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// giveBack ends a borrow of host's unit, whose request ended at end; its
// next request is not before end plus the longer of d and its
// Crawl-delay.
func (t *hostTable) giveBack(host string, end time.Time, d time.Duration) {
	t.mu.Lock()
	u := t.get(host)
	if u.borrowed > 0 {
		u.borrowed--
	}
	if at := end.Add(max(d, u.crawlDelay)); at.After(u.notBefore) {
		u.notBefore = at
	}
	t.mu.Unlock()
	t.wake()
}
