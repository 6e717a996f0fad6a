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
	start    time.Time
	deadline time.Time // zero: none
	hosts    int       // hosts with URLs when the run started
	fraction float64
	factor   float64
	minTail  time.Duration

	tailBegan time.Time // zero until the tail begins
	tailEnds  time.Time
}

// newEndRule is the rule of a run that starts at start with hosts hosts,
// for a batch whose header gives batchDuration (0 if none).
func newEndRule(hc config.Harvester, start time.Time, hosts int, batchDuration time.Duration) *endRule {
	r := &endRule{start: start, hosts: hosts, fraction: hc.TailFraction, factor: hc.TailFactor, minTail: hc.TailMin.D()}
	if d := hc.DeadlineFor(batchDuration); d > 0 {
		r.deadline = start.Add(d)
	}
	return r
}

// observe tells the rule how many hosts still have URLs at now; it
// returns the time the batch ends (zero: not decided) and why.
func (r *endRule) observe(now time.Time, left int) (time.Time, string) {
	if r.tailBegan.IsZero() && r.fraction > 0 && left > 0 && float64(left) <= r.fraction*float64(r.hosts) {
		r.tailBegan = now
		r.tailEnds = now.Add(max(r.minTail, time.Duration(r.factor*float64(now.Sub(r.start)))))
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
