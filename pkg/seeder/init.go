package seeder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Init creates a blank collection in dir with cfg as its wire.toml and an
// empty graph.db. It refuses a directory that already holds a collection
// (collection.ErrExists). A wire.toml already in dir (such as the sample
// committed in the repository's collection/) is kept: keptConfig tells
// so, and cfg is then what that file said.
func Init(dir string, cfg config.Config) (keptConfig bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, collection.FormatFile)); err == nil {
		return false, fmt.Errorf("create collection %s: %w", dir, collection.ErrExists)
	}
	if _, err := os.Stat(filepath.Join(dir, collection.ConfigFile)); err == nil {
		keptConfig = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create collection %s: %w", dir, err)
	}
	// graph.db before FORMAT: the collection exists only once complete.
	g, err := linkgraph.Open(filepath.Join(dir, collection.GraphFile), false, time.Second)
	if errors.Is(err, linkgraph.ErrBusy) {
		return false, &busyError{err: err, timeout: time.Second}
	}
	if err != nil {
		return false, fmt.Errorf("create collection %s: %w", dir, err)
	}
	if err := g.Close(); err != nil {
		return false, fmt.Errorf("create collection %s: close graph: %w", dir, err)
	}
	if _, err := collection.Create(dir, config.Render(cfg)); err != nil {
		return false, err
	}
	return keptConfig, nil
}
