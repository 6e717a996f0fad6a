package manager

import (
	"math"
	"strings"

	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Sitemap hints (docs/sitemaps.md, "Freshness and value").
const (
	// PriorityWeight is the weight of a sitemap's <priority> p in a
	// page's profit, a factor 1 + PriorityWeight·(p − 0.5): from 0.9 to
	// 1.1. Sites give their own pages priorities, so it orders a site's
	// pages among themselves more than sites among each other.
	PriorityWeight = 0.2
	// ChangeFreqVisits is the number of visits below which a sitemap's
	// <changefreq> moves the change rate: λ becomes the geometric mean of
	// the estimate and the rate changefreq names. From then on the page's
	// own history decides.
	ChangeFreqVisits = 3
)

// changeFreqRates are the rates, in changes per day, that the values of
// <changefreq> name ("always" as hourly: a page fetched more often would
// be no fresher for the crawler's batches), at time scale 1: they are
// read through Clock.ChangeFreqRate.
var changeFreqRates = map[string]float64{
	"always": 24, "hourly": 24, "daily": 1, "weekly": 1.0 / 7, "monthly": 1.0 / 30, "yearly": 1.0 / 365, "never": 1.0 / 3650,
}

// sitemapStale tells whether a sitemap's lastmod says the stored copy of d
// is out of date: it is later than the last fetch.
func sitemapStale(d *linkgraph.Doc) bool {
	return !d.SitemapLastMod.IsZero() && !d.Fetched.IsZero() && d.SitemapLastMod.After(d.Fetched)
}

// hintedRate is λ moved by the sitemap's changefreq (at the clock's time
// scale) while the history is short.
func (c Clock) hintedRate(d *linkgraph.Doc, h History) float64 {
	r, ok := c.ChangeFreqRate(d.ChangeFreq)
	if !ok || h.Visits >= ChangeFreqVisits || h.Lambda <= 0 {
		return h.Lambda
	}
	return math.Sqrt(h.Lambda * r)
}

// priorityFactor is the factor a sitemap's <priority> puts on a page's
// profit (1 without one).
func priorityFactor(d *linkgraph.Doc) float64 {
	p, ok := d.SitemapPriority()
	if !ok {
		return 1
	}
	return 1 + PriorityWeight*(p-0.5)
}

// sitemapSource is the sitemap a URL was found in ("" if it was not).
func sitemapSource(d *linkgraph.Doc) string {
	s, ok := strings.CutPrefix(d.Source, "sitemap ")
	if !ok {
		return ""
	}
	return s
}
