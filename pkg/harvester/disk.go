package harvester

import (
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
)

// checkDisk stops the run, resumably, when the file system of the
// harvest output has no more free space than collection.min_free: like
// a network outage, it abandons the requests in flight without logging
// them, and the run ends with a collection.DiskFull error (exit code 7)
// and harvest.partial/stopped.json saying "disk-full". One statfs call:
// run makes it at the start and every syncEvery (docs/operations.md, "A
// full disk").
func (h *harvest) checkDisk() {
	keep, err := config.ParseFreeSpace(h.cfg.Collection.MinFree)
	if err != nil || h.out == nil {
		return // checked when the config was loaded
	}
	if err := collection.CheckFree(h.out.dir, keep, 0, collection.DiskFullHint); err != nil {
		h.fatal(err)
	}
}
