package textstore

import "errors"

// Sentinel errors; test with errors.Is.
var (
	// ErrNotFound means no segment has an entry for the URL or doc id.
	ErrNotFound = errors.New("not in the text store")
	// ErrVersion means a segment was written in a format version this
	// program does not read.
	ErrVersion = errors.New("unsupported text store version")
	// ErrCorrupt means a segment file is truncated or damaged.
	ErrCorrupt = errors.New("corrupt text store segment")
	// ErrCompacted means a segment cannot be written again because
	// Compact merged older batches into it: writing the batch again
	// would drop them.
	ErrCompacted = errors.New("text segment holds compacted batches")
)
