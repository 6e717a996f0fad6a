package harvester

import "errors"

// Sentinel errors; test with errors.Is. The refusals of a batch that is
// missing, not ready, already harvested or locked are the collection's
// (collection.ErrNoBatch, ErrNotReady, ErrAlreadyDone, ErrNothingToDo,
// ErrLocked).
var (
	// ErrInterrupted means the run was stopped (SIGINT, SIGTERM) before
	// the batch was done; harvest.partial is kept and the next run
	// resumes it.
	ErrInterrupted = errors.New("harvest interrupted (run again to resume)")
	// ErrIncomplete means the fetch log does not hold exactly one line
	// per batch URL at the end of a run, which the harvester refuses to
	// publish.
	ErrIncomplete = errors.New("fetch log does not match the batch")
	// ErrShards means the batch's shard outputs do not allow the run: an
	// unsharded run on a batch whose shards are not all done, a shard run
	// on a batch harvested unsharded or in another number of shards.
	ErrShards = errors.New("batch harvested in shards")
)
