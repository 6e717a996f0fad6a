package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Names of the historical state in the scores bucket.
const (
	historyMeta   = "historical"        // historyState as JSON
	historySample = "historical.sample" // quantiles of the imported values, ascending
	// The imported table is one of two, so that an import written in many
	// transactions replaces the old one at once (historyState.Table).
	historyTableA = "historical.a"
	historyTableB = "historical.b"
	// SampleSize is the number of quantiles of the imported PageRank kept
	// for the "random" rule.
	SampleSize = 4096
)

// historyState describes the imported PageRank of a previous crawl.
type historyState struct {
	Table    string    `json:"table"`    // score table holding URL → PageRank
	Source   string    `json:"source"`   // where it came from
	Kind     string    `json:"kind"`     // "graph" (computed from a graph.db) or "file"
	Imported time.Time `json:"imported"` // when
	Pages    int       `json:"pages"`    // entries
	Max      float64   `json:"max"`      // largest value
	Min      float64   `json:"min"`      // smallest positive value
	Damping  float64   `json:"damping,omitempty"`
}

// ErrNoHistory means the historical strategy has nothing to use: no
// PageRank of a previous crawl was imported.
var ErrNoHistory = errors.New("no historical PageRank imported (run manager history import SOURCE)")

func readHistoryState(tx *linkgraph.Tx) (*historyState, error) {
	raw := tx.ScoreMeta(historyMeta)
	if raw == nil {
		return nil, nil
	}
	var st historyState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("historical state: %w", err)
	}
	return &st, nil
}

// historicalIQ is the PageRank of the previous crawl of the same web
// (Baeza-Yates et al. §4.2), imported with manager history import. A page
// the previous crawl did not have gets, by manager.historical_new_pages:
//
//	zero    a thousandth of the smallest imported value: every old page
//	        first, then the new ones in the order they were found;
//	random  an imported value chosen at random (fixed per doc id, so the
//	        same graph gives the same batch);
//	parent  Σ PR(x)/|out(x)| over the old pages x linking to it, or the
//	        zero value if none does.
func historicalIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	st, err := readHistoryState(tx)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrNoHistory
	}
	val := make([]float64, len(v.ids))
	matched := 0
	err = tx.JoinURLScores(st.Table, func(id uint64, x float64) error {
		if p := v.position(id); p >= 0 && x > 0 {
			val[p] = x
			matched++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read historical pagerank: %w", err)
	}
	zero := st.Min / 1000
	if zero <= 0 {
		zero = 1e-12
	}
	kinds := make([]uint8, len(val)) // 0 old, 1 parent, 2 random, 3 zero
	switch m.HistoricalNewPages {
	case "random":
		sample, err := tx.ScoreVector(historySample)
		if err != nil {
			return nil, err
		}
		for p := range val {
			if val[p] > 0 {
				continue
			}
			kinds[p] = 3
			val[p] = zero
			if len(sample) > 0 {
				kinds[p] = 2
				val[p] = sample[mix64(uint64(v.ids[p]))%uint64(len(sample))]
			}
		}
	case "parent":
		share, err := v.parentShares(ctx, tx, func(p int32) float64 {
			if kinds[p] == 0 {
				return val[p]
			}
			return 0
		}, func(p int32) bool { return val[p] <= 0 })
		if err != nil {
			return nil, err
		}
		for p := range val {
			if val[p] > 0 {
				continue
			}
			if share[p] > 0 {
				val[p], kinds[p] = share[p], 1
			} else {
				val[p], kinds[p] = zero, 3
			}
		}
	default:
		for p := range val {
			if val[p] <= 0 {
				val[p], kinds[p] = zero, 3
			}
		}
	}
	e := &estimate{val: val}
	e.scaleToMax()
	e.scale = max(e.scale, st.Max)
	e.notes = append(e.notes, fmt.Sprintf("historical PageRank of %d pages from %s (%s); %d of %d known pages have one, new pages: %s",
		st.Pages, st.Source, st.Imported.Format(time.RFC3339), matched, len(val), m.HistoricalNewPages))
	e.describe = func(p int32) string {
		switch kinds[p] {
		case 1:
			return fmt.Sprintf("new page: Σ PR(parent)/outdegree over old parents = %s (the highest imported is %s)", g4(val[p]), g4(st.Max))
		case 2:
			return fmt.Sprintf("new page: an imported PageRank drawn at random, %s (the highest is %s)", g4(val[p]), g4(st.Max))
		case 3:
			return fmt.Sprintf("new page: %s, a thousandth of the smallest imported PageRank", g4(val[p]))
		}
		return fmt.Sprintf("PageRank %s in the previous crawl (the highest is %s)", g4(val[p]), g4(st.Max))
	}
	return e, nil
}

// mix64 is SplitMix64's finaliser: a fixed pseudo-random function of x.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
