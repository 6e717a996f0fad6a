package manager

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Totals are the collection's totals as the manager sees them (manager
// stats).
type Totals struct {
	Docs       int            `json:"docs"`       // known URLs
	Fetched    int            `json:"fetched"`    // URLs with at least one response
	Pending    int            `json:"pending"`    // URLs never attempted, waiting
	Dynamic    int            `json:"dynamic"`    // dynamic URLs (manager.dynamic_extensions, query)
	Sites      int            `json:"sites"`      // sites
	Links      uint64         `json:"links"`      // out-links stored
	Batches    int            `json:"batches"`    // batch directories with a batch file
	ByState    map[string]int `json:"byState"`    // documents by state
	ByStatus   map[string]int `json:"byStatus"`   // documents with a response by last HTTP status
	ByDepth    map[string]int `json:"byDepth"`    // documents by depth
	Candidates int            `json:"candidates"` // documents the next run may schedule (before the batch limits)
	Estimators []string       `json:"estimators"` // estimator state kept in the scores bucket
}

// CollectionTotals counts what the collection holds, reading graph.db
// read-only (it can run beside the harvester and the gatherer, and waits
// for the seeder).
func CollectionTotals(ctx context.Context, col *collection.Collection, cfg config.Config, timeout time.Duration) (*Totals, error) {
	if timeout <= 0 {
		timeout = DefaultGraphTimeout
	}
	g, err := linkgraph.Open(col.GraphPath(), true, timeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	t := &Totals{Batches: len(ids), ByState: map[string]int{}, ByStatus: map[string]int{}, ByDepth: map[string]int{}}
	m := &cfg.Manager
	rules := newLimits(m)
	now := time.Now()
	sites := map[uint64]bool{}
	err = g.View(func(tx *linkgraph.Tx) error {
		err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if t.Docs%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			t.Docs++
			sites[d.Site] = true
			t.ByState[string(d.State)]++
			if d.Visits > 0 {
				t.Fetched++
				t.ByStatus[strconv.Itoa(d.Status)]++
			}
			if d.State == linkgraph.StatePending {
				t.Pending++
			}
			if rules.dynamic(d.URL) {
				t.Dynamic++
			}
			t.ByDepth[strconv.Itoa(d.Depth)]++
			if assess(d, m, rules, now).skip == candidate {
				t.Candidates++
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.ForEachSite(func(*linkgraph.Site) error { t.Sites++; return nil })
		if err != nil {
			return err
		}
		err = tx.ForEachOutLinks(func(_ uint64, bm *roaring.Bitmap) error {
			t.Links += bm.GetCardinality()
			return nil
		})
		if err != nil {
			return err
		}
		t.Estimators = estimatorStates(tx)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count collection: %w", err)
	}
	return t, nil
}

// estimatorStates describes the estimator state in the scores bucket.
func estimatorStates(tx *linkgraph.Tx) []string {
	var out []string
	var o opicState
	if raw := tx.ScoreMeta(opicMeta); raw != nil && json.Unmarshal(raw, &o) == nil {
		out = append(out, fmt.Sprintf("opic: %d runs, %d pages distributed in the last", o.Runs, o.Distributed))
	}
	if v, err := tx.ScoreVector(pagerankVector); err == nil && len(v) > 0 {
		var st pagerankState
		if raw := tx.ScoreMeta(pagerankMeta); raw != nil && json.Unmarshal(raw, &st) == nil && st.Docs > 0 {
			out = append(out, fmt.Sprintf("pagerank: computed over %d pages with %d fetched (%d iterations), reused by %d runs since; computed again at %d pages, %d fetched or %d runs",
				st.Docs, st.Fetched, st.Iterations, st.Reused, int((1+pagerankGrowth)*float64(st.Docs)), int((1+pagerankGrowth)*float64(max(st.Fetched, 1))), pagerankRuns))
		} else {
			out = append(out, fmt.Sprintf("pagerank: ranks up to doc id %d, where the next computation starts", len(v)-1))
		}
	}
	var p partialState
	if raw := tx.ScoreMeta(partialMeta); raw != nil && json.Unmarshal(raw, &p) == nil {
		out = append(out, fmt.Sprintf("partial-pagerank: computed over %d pages with %d fetched", p.Docs, p.Fetched))
	}
	if h, err := readHistoryState(tx); err == nil && h != nil {
		out = append(out, fmt.Sprintf("historical: %d pages from %s, imported %s", h.Pages, h.Source, h.Imported.Format(time.RFC3339)))
	}
	return out
}

// Print writes the totals as aligned text.
func (t *Totals) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "known\t%d\n", t.Docs)
	fmt.Fprintf(tw, "fetched\t%d\n", t.Fetched)
	fmt.Fprintf(tw, "pending\t%d\n", t.Pending)
	fmt.Fprintf(tw, "dynamic\t%d\n", t.Dynamic)
	fmt.Fprintf(tw, "candidates\t%d\n", t.Candidates)
	fmt.Fprintf(tw, "sites\t%d\n", t.Sites)
	fmt.Fprintf(tw, "links\t%d\n", t.Links)
	fmt.Fprintf(tw, "batches\t%d\n", t.Batches)
	section := func(title string, m map[string]int, numeric bool) {
		fmt.Fprintf(tw, "\n%s\tdocs\n", title)
		keys := slices.Collect(maps.Keys(m))
		slices.SortFunc(keys, func(a, b string) int {
			if numeric {
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				return cmp.Compare(x, y)
			}
			return cmp.Compare(a, b)
		})
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%d\n", k, m[k])
		}
	}
	section("state", t.ByState, false)
	section("http status", t.ByStatus, true)
	section("depth", t.ByDepth, true)
	if len(t.Estimators) > 0 {
		fmt.Fprintf(tw, "\n")
		for _, e := range t.Estimators {
			fmt.Fprintf(tw, "estimator\t%s\n", e)
		}
	}
	return tw.Flush()
}

// MemoryLimit is the heap limit the manager binary sets when GOMEMLIMIT
// is not set: three quarters of the machine's memory (MemTotal of
// /proc/meminfo), or 0 if it cannot be read.
func MemoryLimit() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10 / 4 * 3
		}
	}
	return 0
}
