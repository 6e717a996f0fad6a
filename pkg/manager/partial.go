package manager

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Names of the partial-pagerank state in the scores bucket.
const (
	partialVector = "partial-pagerank" // doc id → PageRank at the last computation (0: not known then)
	partialMeta   = "partial-pagerank" // partialState as JSON
)

// partialState describes the stored PageRank of partial-pagerank.
type partialState struct {
	Fetched    int `json:"fetched"`    // documents with a visit when it was computed
	Docs       int `json:"docs"`       // documents then
	Iterations int `json:"iterations"` // power iterations it took
}

// partialPageRankIQ is batch PageRank computed only every
// manager.pagerank_interval fetched pages (Baeza-Yates et al. §4.1,
// "partial pagerank"). Between computations, pages known at the last
// computation keep their PageRank and a page found since gets the
// temporary value Σ PR(x)/|out(x)| over the pages x linking to it that
// have one, or (1−d)/N, the value of a page nobody links to, if none do.
func partialPageRankIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView, m *config.Manager) (*estimate, error) {
	var st partialState
	stored, err := tx.ScoreVector(partialVector)
	if err != nil {
		return nil, err
	}
	if raw := tx.ScoreMeta(partialMeta); raw != nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("partial-pagerank state: %w", err)
		}
	}
	if stored == nil || st.Docs == 0 || v.fetched-st.Fetched >= m.PageRankInterval {
		pr, err := v.pageRank(ctx, tx, m.Damping, v.byPosition(stored))
		if err != nil {
			return nil, err
		}
		e := pageRankIQ(pr)
		st = partialState{Fetched: v.fetched, Docs: len(v.ids), Iterations: v.stats.Iterations}
		e.notes = append(e.notes, fmt.Sprintf("PageRank computed (%d pages fetched, %d iterations); next after %d more fetches", v.fetched, st.Iterations, m.PageRankInterval))
		e.save = func(tx *linkgraph.Tx) error {
			raw, _ := json.Marshal(st)
			if err := tx.PutScoreVector(partialVector, v.byID(pr)); err != nil {
				return err
			}
			return tx.PutScoreMeta(partialMeta, raw)
		}
		return e, nil
	}

	known := func(p int32) float64 {
		if id := v.ids[p]; int(id) < len(stored) {
			return stored[id]
		}
		return 0
	}
	temp, err := v.parentShares(ctx, tx, known, func(p int32) bool { return known(p) <= 0 })
	if err != nil {
		return nil, err
	}
	base := (1 - m.Damping) / float64(st.Docs)
	e := &estimate{val: temp}
	kinds := make([]uint8, len(temp)) // 0 computed, 1 from parents, 2 base
	for p := range temp {
		switch x := known(int32(p)); {
		case x > 0:
			temp[p] = x
		case temp[p] > 0:
			kinds[p] = 1
		default:
			temp[p], kinds[p] = base, 2
		}
	}
	e.scaleToMax()
	e.notes = append(e.notes, fmt.Sprintf("PageRank of %d pages reused (computed with %d pages fetched, now %d; interval %d)", st.Docs, st.Fetched, v.fetched, m.PageRankInterval))
	e.describe = func(p int32) string {
		switch kinds[p] {
		case 1:
			return fmt.Sprintf("temporary PageRank %s = Σ PR(parent)/outdegree (found since the last computation; the highest is %s)", g4(temp[p]), g4(e.scale))
		case 2:
			return fmt.Sprintf("temporary PageRank %s = (1−d)/N (found since the last computation, no parent with a PageRank)", g4(temp[p]))
		}
		return fmt.Sprintf("PageRank %s at the last computation (the highest is %s)", g4(temp[p]), g4(e.scale))
	}
	return e, nil
}
