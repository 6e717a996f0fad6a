package manager

import "errors"

// Sentinel errors; test with errors.Is. The manager also returns errors
// wrapping collection.ErrNothingToDo (empty frontier, nothing to cancel),
// collection.ErrAlreadyDone (cancel of a harvested batch) and
// collection.ErrLocked (another manager runs), which the binaries map to
// their exit codes.
var (
	// ErrHarvestStarted means a batch cannot be cancelled because its
	// harvest has begun (partial or unmarked harvest output); --force
	// cancels it anyway.
	ErrHarvestStarted = errors.New("harvest of the batch has started")
	// ErrBatchMismatch means a batch file does not agree with graph.db
	// (wrong batch id, unknown documents), so the manager will not act on
	// it without a person looking.
	ErrBatchMismatch = errors.New("batch file does not match graph.db")
	// ErrThinBatch means the batch the frontier allows now has fewer
	// sites than Options.MinSites (manager run --min-sites): nothing is
	// written; it also wraps collection.ErrNothingToDo (exit code 3).
	ErrThinBatch = errors.New("batch too thin to write now")
)
