package linkgraph

import (
	"errors"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// SourceSitemap starts the Source of a URL first found in a sitemap
// ("sitemap URL"), docs/sitemaps.md.
const SourceSitemap = "sitemap "

// SitemapStats count what sitemaps brought (seeder stats, the report).
type SitemapStats struct {
	Sitemaps     int `json:"sitemaps"`     // documents that are sitemaps
	Read         int `json:"read"`         // of them fetched with a 2xx response
	Sites        int `json:"sites"`        // sites with a sitemap fetched with a 2xx response (sites that publish one)
	Found        int `json:"found"`        // URLs first found in a sitemap
	Only         int `json:"only"`         // URLs found in a sitemap that no page links to
	OnlyFetched  int `json:"onlyFetched"`  // of them fetched
	WithLastMod  int `json:"withLastmod"`  // URLs with a sitemap lastmod
	StaleLastMod int `json:"staleLastmod"` // fetched URLs whose sitemap lastmod is after the fetch
}

// SitemapStats counts the sitemaps of the graph: one pass over the
// documents and, for the URLs sitemaps found, their in-links (none in a
// version 1 file opened read-only: Only is then 0).
func (t *Tx) SitemapStats() (SitemapStats, error) {
	var st SitemapStats
	maps := roaring.New()
	var found []uint64
	var fetched []bool
	sites := map[uint64]bool{}
	err := t.ForEachDoc(func(d *Doc) error {
		if d.Sitemap {
			st.Sitemaps++
			maps.Add(uint32(d.ID))
			if d.Status >= 200 && d.Status < 300 {
				st.Read++
				sites[d.Site] = true
			}
		}
		if strings.HasPrefix(d.Source, SourceSitemap) {
			st.Found++
			found = append(found, d.ID)
			fetched = append(fetched, d.Visits > 0)
		}
		if !d.SitemapLastMod.IsZero() {
			st.WithLastMod++
			if !d.Fetched.IsZero() && d.SitemapLastMod.After(d.Fetched) {
				st.StaleLastMod++
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Sites = len(sites)
	for i, id := range found {
		in, err := t.InLinks(id)
		if errors.Is(err, ErrNeedsUpgrade) {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		if in == nil || roaring.AndNot(in, maps).IsEmpty() {
			st.Only++
			if fetched[i] {
				st.OnlyFetched++
			}
		}
	}
	return st, nil
}
