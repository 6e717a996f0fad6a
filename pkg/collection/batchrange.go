package collection

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// BatchRange is a range of batch ids, both ends included; Last 0 means
// no upper end. The zero value is every batch.
type BatchRange struct {
	First, Last int
}

// maxBatchID bounds the ids a range names (a batch directory name has
// six digits and more; a billion batches is past any crawl).
const maxBatchID = 999_999_999

// ParseBatchRange reads a range of batches as a command line gives it:
// "N" (batch N alone), "N-M" (N to M, N ≤ M) or "N-" (N and after), with
// 1 ≤ N, M ≤ 999,999,999.
func ParseBatchRange(s string) (BatchRange, error) {
	bad := func(why string) (BatchRange, error) {
		return BatchRange{}, fmt.Errorf("batch range %s: %s (want N, N-M or N-, e.g. 3-7)", excerpt.Quote(s), why)
	}
	num := func(t string) (int, bool) {
		if t == "" || len(t) > 9 || strings.Trim(t, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(t)
		return n, err == nil && n >= 1 && n <= maxBatchID
	}
	a, b, dash := strings.Cut(strings.TrimSpace(s), "-")
	first, ok := num(a)
	if !ok {
		return bad("the first batch is not a batch number")
	}
	switch {
	case !dash:
		return BatchRange{First: first, Last: first}, nil
	case b == "":
		return BatchRange{First: first}, nil
	}
	last, ok := num(b)
	if !ok {
		return bad("the last batch is not a batch number")
	}
	if last < first {
		return bad("the last batch comes before the first")
	}
	return BatchRange{First: first, Last: last}, nil
}

// Has tells whether batch id is in the range.
func (r BatchRange) Has(id int) bool {
	return id >= r.First && (r.Last == 0 || id <= r.Last)
}

// String is the range as ParseBatchRange reads it ("all" for every
// batch).
func (r BatchRange) String() string {
	switch {
	case r.First <= 1 && r.Last == 0:
		return "all"
	case r.Last == 0:
		return fmt.Sprintf("%d-", r.First)
	case r.First == r.Last:
		return strconv.Itoa(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// Harvested returns the batches of the range that are harvested
// (harvested.done), in id order.
func (c *Collection) Harvested(r BatchRange) ([]*Batch, error) {
	ids, err := c.BatchIDs()
	if err != nil {
		return nil, err
	}
	var out []*Batch
	for _, id := range ids {
		if b := c.Batch(id); r.Has(id) && b.Done(StageHarvested) {
			out = append(out, b)
		}
	}
	return out, nil
}
