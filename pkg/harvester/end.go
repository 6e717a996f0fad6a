package harvester

import (
	"context"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
)

// Reasons a harvest ends before every URL was requested, as they appear
// after "deferred: " in the fetch log.
const (
	EndDeadline = "deadline" // harvester.batch_deadline (or twice the batch's batch_duration) passed
	EndTail     = "tail"     // the straggling tail rule (harvester.tail_fraction, tail_factor, tail_min)
	EndWaits    = "waits"    // every host left waits for its turn past the batch's length, and none is being asked
)

// batchEnd is the harvester's decision to end a batch early: once made,
// no URL is started any more; requests in flight finish, and every URL
// not requested is logged as deferred. Safe for concurrent use.
type batchEnd struct {
	once sync.Once
	ch   chan struct{}
	why  string // set before ch is closed
	// ctx is cancelled when the batch ends (or when the parent given
	// to start is): for the waits that take a context, such as a
	// robots.txt redirect waiting to borrow another host.
	ctx    context.Context
	cancel context.CancelFunc
}

func newBatchEnd() *batchEnd {
	e := &batchEnd{ch: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e
}

// start ties ctx to parent as well (the run's start context).
func (e *batchEnd) start(parent context.Context) {
	e.ctx, e.cancel = context.WithCancel(parent)
}

// end ends the batch for why; later calls do nothing.
func (e *batchEnd) end(why string) {
	e.once.Do(func() {
		e.why = why
		close(e.ch)
		e.cancel()
	})
}

// done is closed once the batch is ended.
func (e *batchEnd) done() <-chan struct{} { return e.ch }

// ended tells whether the batch is ended.
func (e *batchEnd) ended() bool {
	select {
	case <-e.ch:
		return true
	default:
		return false
	}
}

// reason is why the batch ended ("" if it did not); call it after ended.
func (e *batchEnd) reason() string {
	if !e.ended() {
		return ""
	}
	return e.why
}

// endRule decides when a harvest ends before its URLs are all requested
// (docs/harvester.md, "Ending a batch"):
//
//   - the deadline: harvester.batch_deadline after the start, or, when
//     that is 0, twice the batch's manager.batch_duration (its header);
//     none when neither is set;
//   - the tail: when the hosts that still have URLs left are at most
//     tail_fraction of the hosts the run started with, the tail begins;
//     it lasts tail_factor times the time the run took to reach it, and
//     at least tail_min; then the batch ends.
type endRule struct {
	// start is the run's start, or when the older batches of the
	// process were done (rebase): the deadline and the waits rule count
	// from it; origin is the run's start, from which the tail's length
	// counts (the hosts done while held are the run's progress).
	start    time.Time
	origin   time.Time
	deadline time.Time // zero: none
	hosts    int       // hosts with URLs when the run started
	fraction float64
	factor   float64
	minTail  time.Duration

	tailBegan time.Time // zero until the tail begins
	tailEnds  time.Time
}

// waitsOut tells whether the batch should end now because it would only
// idle: no server is ready, held by the value clock, parked or being
// resolved, no request is in flight, and the next turn of every server
// left (waiting in the queue, or asleep on its connection between two
// requests) comes after the batch's length (its header's batch_duration
// from the run's start) and more than a quarter of that length from now
// (about one cycle of the other stages, whose cost the manager's
// batch_cycle_factor of 4 makes a quarter of a batch): starting the next
// batch then costs less than waiting. Never for a batch without a
// length. A server that politeness makes wait (a Crawl-delay, a pause
// carried from the last batch) thus does not hold the batch, and every
// other server of the crawl, until the deadline: its URLs are deferred,
// and a later batch asks it when its turn has come (the pause is
// carried).
func (sc *scheduler) waitsOut(now time.Time) bool {
	d := sc.h.batchDuration
	if d <= 0 || sc.ending || sc.ready.Len() > 0 || len(sc.gated) > 0 || len(sc.behind) > 0 ||
		len(sc.resolvedSet) < len(sc.servers) || (sc.waiting.Len() == 0 && len(sc.activeSet) == 0) {
		return false
	}
	for _, parked := range sc.ipParked {
		if len(parked) > 0 {
			return false
		}
	}
	after := maxTime(now.Add(d/4), sc.rule.start.Add(d))
	if sc.waiting.Len() > 0 && !(*sc.waiting)[0].notBefore.After(after) {
		return false
	}
	for srv := range sc.activeSet {
		if !sc.h.hosts.notBefore(srv.Host).After(after) {
			return false // a request in flight, or a turn soon
		}
	}
	return true
}

// newEndRule is the rule of a run that starts at start with hosts hosts,
// for a batch whose header gives batchDuration (0 if none).
func newEndRule(hc config.Harvester, start time.Time, hosts int, batchDuration time.Duration) *endRule {
	r := &endRule{start: start, origin: start, hosts: hosts, fraction: hc.TailFraction, factor: hc.TailFactor, minTail: hc.TailMin.D()}
	if d := hc.DeadlineFor(batchDuration); d > 0 {
		r.deadline = start.Add(d)
	}
	return r
}

// rebase starts the rule again at now (heldByOlder): the deadline keeps
// its length from now, and a tail that began is forgotten; a tail that
// begins later lasts tail_factor times the whole run so far (the time
// held included: a longer tail, never a shorter one).
func (r *endRule) rebase(now time.Time) {
	if !r.deadline.IsZero() {
		r.deadline = now.Add(r.deadline.Sub(r.start))
	}
	r.start = now
	r.tailBegan, r.tailEnds = time.Time{}, time.Time{}
}

// observe tells the rule how many hosts still have URLs at now; it
// returns the time the batch ends (zero: not decided) and why.
func (r *endRule) observe(now time.Time, left int) (time.Time, string) {
	if r.tailBegan.IsZero() && r.fraction > 0 && left > 0 && float64(left) <= r.fraction*float64(r.hosts) {
		r.tailBegan = now
		r.tailEnds = now.Add(max(r.minTail, time.Duration(r.factor*float64(now.Sub(r.origin)))))
	}
	switch {
	case r.tailBegan.IsZero():
		return r.deadline, EndDeadline
	case r.deadline.IsZero() || r.tailEnds.Before(r.deadline):
		return r.tailEnds, EndTail
	default:
		return r.deadline, EndDeadline
	}
}

// deferRest logs every URL srv has not logged yet as deferred for why.
func (h *harvest) deferRest(srv *Server, why string) error {
	for {
		e, _, ok := srv.next()
		if !ok {
			return nil
		}
		if err := h.skip(srv, e, ErrDeferred+": "+why); err != nil {
			return err
		}
		srv.pop()
	}
}

// batchDurationParam is the batch header parameter in which the manager
// records manager.batch_duration, the time it sized the batch for.
const batchDurationParam = "batch_duration"
