// Command manager is the crawler's long-term scheduler: it scores the
// pages of the link graph and writes the next batch for the harvester.
// See docs/manager.md.
package main

import (
	"os"
	"runtime/debug"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/manager"
)

func main() {
	// Unless GOMEMLIMIT says otherwise, keep the heap under 3/4 of the
	// machine's memory: on a country-sized graph the collector then works
	// harder instead of letting garbage double the live heap
	// (docs/manager.md, "Scale").
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit := manager.MemoryLimit(); limit > 0 {
			debug.SetMemoryLimit(limit)
		}
	}
	command.Main(newApp())
}
