package seeder

import (
	"net/http"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// dateSlack is how close to the last visit a date may be and say
// nothing: HTTP dates have a resolution of one second, so a change in
// the same second as the visit cannot be placed on either side of it.
const dateSlack = time.Second

// checkValidators counts, in the site record, whether the dates a
// revisit brought said what the text hash says (changed: the text of
// this visit differs from the last one's): Last-Modified after the
// visit at prev says the page changed since, before it that it did not;
// a sitemap lastmod after prev (and not after this visit) says it
// changed (a lastmod before prev may be an old sitemap's, so it is not
// counted). The manager's estimator stops reading the dates of a site
// whose checks disagree (linkgraph.Validators.Trusted; docs/seeder.md,
// "Validators the site can be trusted with"). It is called for a
// response that brought a text (not a 304) of a page visited before,
// with both hashes known, and for a 2xx with the stored payload (changed
// false).
func (r *batchRun) checkValidators(siteKey string, prev, sitemapLM time.Time, pd *parsed.Doc, changed bool) error {
	if prev.IsZero() {
		return nil
	}
	var claims []bool // what each date says: the page changed since prev
	if pd.LastModified != "" {
		if lm, err := http.ParseTime(strings.TrimSpace(pd.LastModified)); err == nil && !near(lm, prev) {
			claims = append(claims, lm.After(prev))
		}
	}
	if !sitemapLM.IsZero() && sitemapLM.After(prev) && !near(sitemapLM, prev) && !sitemapLM.After(pd.Fetched) {
		claims = append(claims, true)
	}
	if len(claims) == 0 {
		return nil
	}
	s, err := r.in.site(siteKey, false)
	if err != nil || s == nil {
		return err
	}
	if s.rec.Validators == nil {
		s.rec.Validators = &linkgraph.Validators{}
	}
	was := s.rec.Validators.Trusted()
	for _, c := range claims {
		s.rec.Validators.Add(c == changed)
	}
	if was && !s.rec.Validators.Trusted() {
		r.s.Untrusted++
	}
	s.dirty = true
	return nil
}

// near tells whether a and b are within dateSlack of each other.
func near(a, b time.Time) bool {
	d := a.Sub(b)
	return d < dateSlack && d > -dateSlack
}
