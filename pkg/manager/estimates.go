package manager

import (
	"context"
	"fmt"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// ChangeEstimate is the change-rate estimate of one fetched page, as the
// next run would compute it.
type ChangeEstimate struct {
	URL   string
	Site  string // its site key
	Depth int
	// Fetched is its last fetch; Revisits the visits after the first of
	// those the seeder keeps (linkgraph.MaxHistory), and FoundChanged
	// those of them that found the text changed.
	Fetched      time.Time
	Revisits     int
	FoundChanged int
	// History is the estimate: Lambda in changes per day (a day of the
	// clock's: at manager.time_scale s a history lived s times faster
	// gives a rate 1/s times larger), moved by a sitemap's changefreq
	// while the history is short.
	History
	// DatesTrusted tells whether the estimate read the site's dates
	// (linkgraph.Validators.Trusted).
	DatesTrusted bool
	// Evidence is what the visits say about the rate, the likelihood
	// behind Lambda.
	Evidence Evidence
}

// ChangeEstimates calls fn, in doc id order, with the change-rate
// estimate of every page of graph.db with a fetched copy: the visit
// history at manager.time_scale, the dates of the sites whose validators
// are not trusted left out (docs/manager.md, "F, freshness"). It opens
// graph.db read-only; `crawlcheck freshness` compares the estimates with
// the test web's true rates.
func ChangeEstimates(ctx context.Context, col *collection.Collection, m *config.Manager, fn func(e ChangeEstimate) error) error {
	g, err := linkgraph.Open(col.GraphPath(), true, DefaultGraphTimeout)
	if err != nil {
		return err
	}
	defer g.Close()
	return g.View(func(tx *linkgraph.Tx) error {
		clock := NewClock(m)
		var err error
		if clock.untrusted, err = untrustedSites(tx); err != nil {
			return err
		}
		n := 0
		return tx.ForEachDoc(func(d *linkgraph.Doc) error {
			if n++; n%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if !d.HasFetchedCopy() {
				return nil
			}
			h, ev := clock.history(d, clock.trustsDates(d), nil)
			h.Lambda = clock.hintedRate(d, h)
			e := ChangeEstimate{URL: d.URL, Site: urlnorm.SiteKey(d.URL), Depth: d.Depth, Fetched: d.Fetched, History: h, DatesTrusted: clock.trustsDates(d), Evidence: ev}
			for i, v := range d.History {
				if i > 0 {
					e.Revisits++
					if v.Changed {
						e.FoundChanged++
					}
				}
			}
			if err := fn(e); err != nil {
				return fmt.Errorf("change estimate of %s: %w", d.URL, err)
			}
			return nil
		})
	})
}
