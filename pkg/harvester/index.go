package harvester

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
)

// IndexBatch writes the CDXJ index of every WARC file of a harvested
// batch that has none (every one with force): what a harvest publishes
// since issue 37, for a batch harvested before, or an index lost or
// damaged. It holds the batch directory's harvester lock meanwhile (a
// forced harvest would replace harvest/), so it is ErrLocked while a
// harvester works on the batch; a batch not harvested is refused.
func IndexBatch(b *collection.Batch, force bool, log *slog.Logger) (cdxj.Stats, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !b.Done(collection.StageHarvested) {
		return cdxj.Stats{}, fmt.Errorf("index batch %s: not harvested (no %s)", b.Dir, collection.MarkerFile(collection.StageHarvested))
	}
	lock, err := collection.LockPath(filepath.Join(b.Dir, LockFile))
	if err != nil {
		return cdxj.Stats{}, fmt.Errorf("index batch %s: %w", b.Dir, err)
	}
	defer lock.Release()
	st, err := cdxj.IndexDir(b.HarvestPath(), force, log)
	if err != nil {
		return st, fmt.Errorf("index batch %s: %w", b.Dir, err)
	}
	log.Debug("indexed", "batch", b.Dir, "warc_files", st.Files, "written", st.Indexed, "lines", st.Lines)
	return st, nil
}
