// Package seeder takes the crawl's findings into graph.db: it creates
// collections, injects seed lists, and for each gathered batch updates the
// document records, the sites' robots.txt and server estimates, and the
// link graph, giving ids to the new URLs that are in scope within the
// frontier limits (the Sydney strategy and the fixed budget, whose
// parked links it writes to park files and releases later). What it does
// step by step is in docs/seeder.md and docs/frontier.md; the database it
// writes is in docs/format/linkgraph.md.
package seeder

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// DefaultGraphTimeout is how long the seeder waits for graph.db when
// another process (the manager) has it open.
const DefaultGraphTimeout = 5 * time.Second

// LockName is the name of the collection lock the seeder holds while it
// writes graph.db.
const LockName = collection.SeederLock

// Sentinel errors; test with errors.Is.
var (
	// ErrMismatch means a batch's parsed output or batch file does not
	// match graph.db (a doc id that is unknown, or whose URL differs): the
	// batch belongs to another collection or graph.db was replaced.
	// Nothing is written.
	ErrMismatch = errors.New("batch does not match graph.db")
	// ErrForceNeedsBatch means Force was given without naming a batch.
	ErrForceNeedsBatch = errors.New("force needs a batch number")
	// ErrProblems means Check found violated invariants.
	ErrProblems = errors.New("collection check found problems")
)

// busyError is graph.db held by another process. It matches both
// linkgraph.ErrBusy and collection.ErrLocked, so binaries exit with the
// "locked" code.
type busyError struct {
	err     error
	timeout time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("%v (waited %s): the manager or another seeder has it open; run again when it has finished", e.err, e.timeout)
}

func (e *busyError) Unwrap() []error { return []error{e.err, collection.ErrLocked} }

// openGraph opens the collection's graph.db, turning a timeout into an
// error that says who holds it.
func openGraph(col *collection.Collection, readOnly bool, timeout time.Duration) (*linkgraph.Graph, error) {
	if timeout <= 0 {
		timeout = DefaultGraphTimeout
	}
	g, err := linkgraph.OpenExisting(col.GraphPath(), readOnly, timeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, &busyError{err: err, timeout: timeout}
	}
	return g, err
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
