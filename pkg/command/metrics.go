package command

import (
	"log/slog"
	"path/filepath"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/metrics"
)

// StageMetrics is the metrics of one stage run and where they go.
// A nil *StageMetrics (metrics.dir empty) does nothing.
type StageMetrics struct {
	*metrics.Run
	Dir      string // directory of the STAGE.prom file
	DiskRoot string // directory whose disk use is measured: the collection (or the bare batch directory)
	Keep     config.FreeSpace
}

// MetricsDir is metrics.dir resolved against the collection directory
// dir ("" when metrics are off).
func MetricsDir(cfg config.Config, dir string) string {
	d := cfg.Metrics.Dir
	if d == "" || filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(dir, d)
}

// NewStageMetrics starts the metrics of a run of stage on the collection
// (or bare batch directory) dir, or returns nil when metrics.dir is
// empty and serve is false (serve: the run serves them live on
// metrics.listen even without a file).
func NewStageMetrics(stage, dir string, cfg config.Config, serve bool) *StageMetrics {
	out := MetricsDir(cfg, dir)
	if out == "" && !serve {
		return nil
	}
	keep, _ := config.ParseFreeSpace(cfg.Collection.MinFree) // checked when loaded
	return &StageMetrics{Run: metrics.New(stage, dir), Dir: out, DiskRoot: dir, Keep: keep}
}

// Finish records the collection's disk use and the end of the run
// (err: its error, nil for a success) and writes STAGE.prom. A failure
// to write the metrics is logged, never the run's failure.
func (m *StageMetrics) Finish(err error, log *slog.Logger) {
	if m == nil || m.Dir == "" {
		return
	}
	if derr := m.Disk(m.DiskRoot, m.Keep); derr != nil && log != nil {
		log.Warn("metrics: disk use", "err", derr)
	}
	if werr := m.Run.Finish(m.Dir, err == nil, ExitCode(err)); werr != nil && log != nil {
		log.Warn("metrics not written", "err", werr)
	}
}

// CheckDisk fails with a collection.DiskFull error (exit code 7) when
// writing need more bytes into dir would leave less free space than
// collection.min_free keeps; hint says what to do besides freeing space.
func CheckDisk(dir string, cfg config.Config, need int64, hint string) error {
	keep, err := config.ParseFreeSpace(cfg.Collection.MinFree)
	if err != nil {
		return Usage("collection.min_free: %v", err)
	}
	if hint == "" {
		hint = collection.DiskFullHint
	}
	return collection.CheckFree(dir, keep, need, hint)
}
