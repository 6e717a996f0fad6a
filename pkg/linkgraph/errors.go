package linkgraph

import "errors"

// Sentinel errors; test with errors.Is.
var (
	// ErrVersion means graph.db was written by an incompatible version.
	ErrVersion = errors.New("unsupported graph.db version")
	// ErrBusy means another process has graph.db open.
	ErrBusy = errors.New("graph.db is in use by another process")
	// ErrTooManyDocs means the 32-bit id space of the roaring bitmaps is full.
	ErrTooManyDocs = errors.New("too many documents for 32-bit ids")
	// ErrNotFound means a document or site id has no record.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt means a record could not be decoded.
	ErrCorrupt = errors.New("corrupt record")
	// ErrNeedsUpgrade means a version 1 graph.db opened read-only lacks
	// what the call needs (in-links, the site graph, the frontier set);
	// opening it once for writing (any seeder or manager run) upgrades it.
	ErrNeedsUpgrade = errors.New("graph.db is version 1: open it for writing once to upgrade it")
)
