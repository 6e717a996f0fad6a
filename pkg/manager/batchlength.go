package manager

import (
	"fmt"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// How long a batch is (docs/manager.md, "How long a batch is").
//
// A batch is a barrier for discovery: the links its pages give reach a
// batch only once it is harvested, gathered and seeded. A page found at
// the start of an hour-long harvest waits the hour, however fast its
// server, while a crawl at a short wait has fetched everything else. A
// batch as short as a few seconds brings links back at once, but each
// cycle costs a gather, a seed and a manager run. The manager therefore
// plans each batch to last batchCycleFactor times what the last cycle
// cost: its other stages (the newest seeded batch, from its harvest's
// end to its seeding's end) and the harvester's start floor (no server
// is asked for max(wait, address_wait) from a harvest's start): that
// cost is then at most that share of the crawl's time, and the batches stay as short as that allows. The
// measure follows the crawl: a small collection on a fast machine plans
// batches of seconds, a large one, whose stages take minutes, of
// minutes, and stages run by hand or by cron an hour apart, of
// batch_duration. Bounds: at least minBatchWaits harvester waits and
// minBatch, at most manager.batch_duration.

// minBatchWaits and minBatch bound an adaptive batch from below: at
// least minBatchWaits harvester waits (a host gets a few URLs a batch),
// and at least minBatch (at a wait near 0, the fixed cost of starting
// each stage, 0.1-0.2 s each on the test webs, is not in the measured
// cycle).
const (
	minBatchWaits = 4
	minBatch      = time.Second
)

// batchLength is the batch_duration of batch id: the configured one, or
// with batch_cycle_factor the adaptive length, and why, for the log.
func batchLength(col *collection.Collection, cfg *config.Config, id int) (time.Duration, string) {
	longest := cfg.Manager.BatchDuration.D()
	f := cfg.Manager.BatchCycleFactor
	if longest <= 0 || f <= 0 {
		return longest, "batch_duration"
	}
	shortest := min(longest, max(minBatchWaits*cfg.Harvester.Wait.D(), minBatch))
	cost, from, quiet, ok := lastCycleCost(col, id)
	if !ok {
		return shortest, "no seeded batch says what its cycle took: the shortest batch"
	}
	// A harvest that cannot start quiet begins with a pause in which no
	// server is asked: the larger of harvester.wait and address_wait (the
	// harvester's start floor, docs/harvester.md). A cycle costs the
	// servers that too. One after a harvest that left its holds starts
	// quiet (as long as no other harvester runs).
	floor := "and the harvester's start floor"
	if quiet {
		floor = "the harvester starting quiet"
	} else {
		cost += max(cfg.Harvester.Wait.D(), cfg.Harvester.AddressWait.D())
	}
	var d time.Duration
	switch x := f * float64(cost); {
	case x <= float64(shortest):
		d = shortest
	case x >= float64(longest): // also a product past time.Duration's range
		d = longest
	default:
		d = time.Duration(x)
	}
	return d.Round(time.Millisecond), fmt.Sprintf("%g x %s (batch %s: harvest end to seeded, %s), within %s..%s",
		f, cost.Round(time.Millisecond), collection.BatchName(from), floor, shortest, longest)
}

// lastCycleCost is what the stages after the harvester took on the
// newest seeded batch before id: from its harvest's end
// (harvested.done's finished) to its seeding's end (seeded.done's
// started plus elapsed), so gathering, seeding and any wait between them.
// quiet is its harvest's "holds" (the next harvest may start without a
// floor). ok is false when no batch before id is seeded or its markers
// do not say.
func lastCycleCost(col *collection.Collection, id int) (cost time.Duration, from int, quiet, ok bool) {
	ids, err := col.BatchIDs()
	if err != nil {
		return 0, 0, false, false
	}
	for i := len(ids) - 1; i >= 0; i-- {
		b := col.Batch(ids[i])
		if ids[i] >= id || !b.Done(collection.StageSeeded) {
			continue
		}
		var h struct {
			Finished time.Time `json:"finished"`
			Holds    bool      `json:"holds"`
		}
		var s struct {
			Started time.Time `json:"started"`
			Elapsed string    `json:"elapsed"`
		}
		if b.Summary(collection.StageHarvested, &h) != nil || b.Summary(collection.StageSeeded, &s) != nil {
			return 0, 0, false, false
		}
		took, err := time.ParseDuration(s.Elapsed)
		if err != nil || h.Finished.IsZero() || s.Started.IsZero() {
			return 0, 0, false, false
		}
		return max(0, s.Started.Add(took).Sub(h.Finished)), ids[i], h.Holds, true
	}
	return 0, 0, false, false
}
