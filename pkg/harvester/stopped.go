package harvester

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetch"
)

// StoppedFile is written into a partial harvest directory by a run that
// stopped before the batch was done for a reason a rerun fixes (a
// signal, a network outage), so that `manager status` can say so; the
// next run removes it (docs/format/harvest.md).
const StoppedFile = "stopped.json"

// Stopped is the content of StoppedFile.
type Stopped struct {
	// Why is "interrupted" (SIGINT, SIGTERM), "network-down" or
	// "disk-full" (collection.min_free reached).
	Why string `json:"why"`
	// Error is the run's error message.
	Error string `json:"error"`
	// At is when the run stopped.
	At time.Time `json:"at"`
}

// The values of Stopped.Why.
const (
	StoppedInterrupted = "interrupted"
	StoppedNetworkDown = "network-down"
	StoppedDiskFull    = "disk-full"
)

// recordStopped writes StoppedFile into dir when runErr is an
// interruption, a network outage or a full disk; other errors leave
// nothing.
func recordStopped(dir string, runErr error) error {
	st := Stopped{Error: runErr.Error(), At: time.Now().UTC()}
	switch {
	case errors.Is(runErr, fetch.ErrNetworkDown):
		st.Why = StoppedNetworkDown
	case errors.Is(runErr, collection.ErrDiskFull):
		st.Why = StoppedDiskFull
	case errors.Is(runErr, ErrInterrupted):
		st.Why = StoppedInterrupted
	default:
		return nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := collection.WriteFileAtomic(filepath.Join(dir, StoppedFile), append(data, '\n')); err != nil {
		return fmt.Errorf("record the stop: %w", err)
	}
	return nil
}

// clearStopped removes the StoppedFile of an earlier run.
func clearStopped(dir string) error {
	if err := os.Remove(filepath.Join(dir, StoppedFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", StoppedFile, err)
	}
	return nil
}
