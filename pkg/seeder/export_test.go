package seeder

import (
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
)

// CheckWithoutTexts is Check without its completeness check, for the
// external tests whose collections (benchgen's) hold no text store.
func CheckWithoutTexts(col *collection.Collection, timeout time.Duration) ([]string, error) {
	return check(col, timeout, 0, false)
}
