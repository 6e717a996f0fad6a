package gatherer

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target percentage (GOGC) the
// gatherer command runs with unless GOGC is set. The stage's live heap is
// small and bounded by its queues (the responses in flight, at most
// Options.InflightBytes, and a few hundred bytes per URL of the batch),
// but it allocates several times the bytes it reads (texts, links,
// records): with Go's default of 100 it collects about five times per
// 11 MB of pages, and each collection stops every worker. At 400 it
// collects about once per 11 MB, and the peak memory of a 440 MB batch
// goes from about 70 MB to about 130 MB (docs/gatherer.md, 2026-11-25,
// second round).
const GCPercent = 400

// TuneGC sets the garbage collector's target percentage to GCPercent,
// unless the GOGC environment variable is set (the operator's choice
// wins), and returns a function that restores the previous setting. The
// gatherer command calls it before Run; BenchmarkGather does too, so that
// it measures the stage as the command runs it.
func TuneGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(old) }
}
