package harvester

import (
	"testing"

	"github.com/wirecrawl/wire/pkg/internal/leaktest"
)

// TestMain fails the package's tests if a goroutine they started is still
// running when they end (see pkg/internal/leaktest).
func TestMain(m *testing.M) { leaktest.Main(m) }
