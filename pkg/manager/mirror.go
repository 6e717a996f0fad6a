package manager

import (
	"fmt"
	"math"

	"github.com/wirecrawl/wire/pkg/config"
)

// mirrorSites multiplies by manager.near_duplicate_weight the profit of
// the candidates of sites the seeder found to mirror another
// (linkgraph.Site.MirrorOf), fetched or not, unless their own profit
// already has it (a near-duplicate page): a mirror's pages copy pages the
// crawl has (docs/manager.md, "Profit in each case").
func mirrorSites(v *graphView, m *config.Manager) error {
	if m.NearDuplicateWeight >= 1 {
		return nil
	}
	w := math.Log(m.NearDuplicateWeight)
	for i := range v.cands {
		c := &v.cands[i]
		s, err := v.sites.site(c.site)
		if err != nil {
			return fmt.Errorf("mirror sites: %w", err)
		}
		if s.mirror && !c.near {
			c.logProfit += w
		}
	}
	return nil
}
