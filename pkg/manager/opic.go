package manager

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Names of the OPIC state in the scores bucket: three vectors indexed by
// doc id and one metadata record.
const (
	opicCash    = "opic.cash"    // cash − uniform (see opicState.Uniform)
	opicHistory = "opic.history" // cash the page has distributed in all
	opicVisits  = "opic.visits"  // Doc.Visits when it last distributed
	opicMeta    = "opic"         // opicState as JSON
)

// opicState is the OPIC record kept across batches.
type opicState struct {
	// Uniform is the cash every page received from the virtual page
	// (Abiteboul et al.'s page linked from and to every page, which takes
	// the cash of pages without out-links): a page's cash is its stored
	// value plus Uniform, so spreading cash evenly writes nothing per page.
	Uniform     float64 `json:"uniform"`
	Runs        int     `json:"runs"`        // manager runs that updated it
	Distributed int     `json:"distributed"` // pages that distributed their cash in the last run
}

// InitialCash is the cash a page has when the manager first sees it.
const InitialCash = 1.0

// opicIQ is OPIC (Abiteboul et al., "Adaptive on-line page importance
// computation", 2003, as compared by Baeza-Yates et al. §4.1): every page
// starts with InitialCash; when a page is fetched its cash is added to
// its history and split equally among the pages it links to (a page
// without out-links gives it to all pages). In batches: every page
// fetched since the last run (Doc.Visits above the visits recorded when
// it last distributed) distributes the cash it had at the start of the
// run. IQ = (history + cash) / max: for a page never fetched, the cash it
// has received, as in the paper. The state is written with the batch.
func opicIQ(ctx context.Context, tx *linkgraph.Tx, v *graphView) (*estimate, error) {
	var st opicState
	if raw := tx.ScoreMeta(opicMeta); raw != nil {
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("opic state: %w", err)
		}
	}
	vec := map[string][]float64{}
	for _, name := range []string{opicCash, opicHistory, opicVisits} {
		x, err := tx.ScoreVector(name)
		if err != nil {
			return nil, err
		}
		vec[name] = x
	}
	n := int(v.maxID()) + 1
	old := min(len(vec[opicCash]), len(vec[opicHistory]), len(vec[opicVisits]))
	cash, hist, seen := grow(vec[opicCash], old, n), grow(vec[opicHistory], old, n), grow(vec[opicVisits], old, n)
	for id := old; id < n; id++ {
		cash[id] = InitialCash - st.Uniform
	}

	// Who distributes, and how much: the cash at the start of the run.
	type giver struct {
		id   uint32
		cash float64
	}
	var givers []giver
	for p, id := range v.ids {
		if float64(v.visits[p]) > seen[id] {
			givers = append(givers, giver{id, cash[id] + st.Uniform})
			hist[id] += cash[id] + st.Uniform
			cash[id] = -st.Uniform
			seen[id] = float64(v.visits[p])
		}
	}
	pool := 0.0
	var targets []uint32
	for i, g := range givers {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		bm, err := tx.OutLinks(uint64(g.id))
		if err != nil {
			return nil, err
		}
		targets = targets[:0]
		it := bm.Iterator()
		for it.HasNext() {
			t := it.Next()
			if t != g.id && v.position(uint64(t)) >= 0 {
				targets = append(targets, t)
			}
		}
		if len(targets) == 0 {
			pool += g.cash
			continue
		}
		share := g.cash / float64(len(targets))
		for _, t := range targets {
			cash[t] += share
		}
	}
	if len(v.ids) > 0 {
		st.Uniform += pool / float64(len(v.ids))
	}
	st.Runs++
	st.Distributed = len(givers)

	e := &estimate{val: make([]float64, len(v.ids))}
	for p, id := range v.ids {
		e.val[p] = hist[id] + cash[id] + st.Uniform
	}
	e.scaleToMax()
	e.notes = append(e.notes, fmt.Sprintf("OPIC: %d pages distributed their cash (run %d)", len(givers), st.Runs))
	e.describe = func(p int32) string {
		id := v.ids[p]
		return fmt.Sprintf("OPIC history %s + cash %s = %s (the highest is %s)", g4(hist[id]), g4(cash[id]+st.Uniform), g4(e.val[p]), g4(e.scale))
	}
	e.save = func(tx *linkgraph.Tx) error {
		for name, x := range map[string][]float64{opicCash: cash, opicHistory: hist, opicVisits: seen} {
			if err := tx.PutScoreVector(name, x); err != nil {
				return err
			}
		}
		raw, _ := json.Marshal(st)
		return tx.PutScoreMeta(opicMeta, raw)
	}
	return e, nil
}

// grow returns x[:keep] extended with zeros to length n (a new slice if x
// is too short).
func grow(x []float64, keep, n int) []float64 {
	if keep > n {
		keep = n
	}
	if cap(x) >= n {
		x = x[:n]
		clear(x[keep:])
		return x
	}
	y := make([]float64, n)
	copy(y, x[:keep])
	return y
}
