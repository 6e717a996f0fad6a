package harvester

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// hostTable is the politeness state of every host name the run talks to:
// whether a connection to it is open (its server holds a slot, or a
// robots.txt redirect of another site borrowed it) and the earliest time
// of its next request. It is the one place both are kept, so that a
// robots.txt redirect to another host of the batch never opens a second
// connection to it nor asks it before its turn. Safe for concurrent use.
type hostTable struct {
	mu sync.Mutex
	m  map[string]*hostState
	// kick is signalled when a borrowed host is given back, so the
	// scheduler looks again at a server it had to put off.
	kick chan struct{}
}

type hostState struct {
	active     bool      // its server holds a slot
	borrowed   bool      // a robots.txt redirect is talking to it
	waitingFor string    // the host this host's worker waits to borrow
	notBefore  time.Time // earliest next request
}

func newHostTable() *hostTable {
	return &hostTable{m: map[string]*hostState{}, kick: make(chan struct{}, 1)}
}

func (t *hostTable) get(host string) *hostState {
	st := t.m[host]
	if st == nil {
		st = &hostState{}
		t.m[host] = st
	}
	return st
}

// later moves the host's next request to at least at.
func (t *hostTable) later(host string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.get(host); at.After(st.notBefore) {
		st.notBefore = at
	}
}

// notBefore is the earliest time of the host's next request.
func (t *hostTable) notBefore(host string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.get(host).notBefore
}

// acquire marks the host active for its server, unless a redirect has
// borrowed it or its turn has not come; it returns the earliest time to
// try again otherwise.
func (t *hostTable) acquire(host string, now time.Time) (bool, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.get(host)
	switch {
	case st.borrowed:
		return false, now.Add(borrowPoll)
	case st.notBefore.After(now):
		return false, st.notBefore
	}
	st.active = true
	return true, time.Time{}
}

// release ends the host's slot and returns its next turn.
func (t *hostTable) release(host string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.get(host)
	st.active = false
	return st.notBefore
}

// borrowPoll is how often a robots.txt redirect checks whether the host it
// waits for is free.
const borrowPoll = 20 * time.Millisecond

// borrow waits until host has no connection open and its turn has come,
// then marks it borrowed by me (a robots.txt redirect of one of my
// sites). It gives up after limit, at once if the host's own worker waits
// to borrow me (each would wait for the other), and when ctx ends.
func (t *hostTable) borrow(ctx context.Context, host, me string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	t.mu.Lock()
	t.get(me).waitingFor = host
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.get(me).waitingFor = ""
		t.mu.Unlock()
	}()
	for {
		now := time.Now()
		t.mu.Lock()
		st := t.get(host)
		busy := st.active || st.borrowed
		if busy && st.waitingFor == me {
			t.mu.Unlock()
			return fmt.Errorf("redirect to %s, which waits for %s", host, me)
		}
		if !busy && !st.notBefore.After(now) {
			st.borrowed = true
			t.mu.Unlock()
			return nil
		}
		wake := now.Add(borrowPoll)
		if !busy && st.notBefore.Before(wake) {
			wake = st.notBefore
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

// giveBack ends a borrow; the host's next request is not before at.
func (t *hostTable) giveBack(host string, at time.Time) {
	t.mu.Lock()
	st := t.get(host)
	st.borrowed = false
	if at.After(st.notBefore) {
		st.notBefore = at
	}
	t.mu.Unlock()
	select {
	case t.kick <- struct{}{}:
	default:
	}
}
