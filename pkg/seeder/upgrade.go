package seeder

import (
	"net/url"
	"strings"

	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// upgrade learns from a response of an http site whether the site
// sends everything to https: a permanent redirect (301 or 308) of a page
// to the same URL on https (same host, path and query; the port may
// differ) sets the site's Upgrade to the https site's key, so that the
// seeder writes the site's later links on https directly (prepare) and
// the redirect is not fetched for every page; any other answer of a page
// of the site (a 200, a redirect elsewhere) clears it.
func (r *batchRun) upgrade(siteKey, pageURL string, pd *parsed.Doc) error {
	if !strings.HasPrefix(siteKey, "http://") || pd.Status == 304 {
		return nil
	}
	target := ""
	if pd.Status == 301 || pd.Status == 308 {
		if n, err := r.in.resolver.norm.Normalize(pd.Redirect); err == nil && sameButHTTPS(pageURL, n) {
			target = urlnorm.SiteKey(n)
		}
	}
	s, err := r.in.site(siteKey, false)
	if err != nil || s == nil || s.rec.Upgrade == target {
		return err
	}
	if target == "" && (pd.Status/100 == 3 || pd.Status >= 400) {
		// A redirect elsewhere or an error says nothing of the scheme.
		return nil
	}
	if target == "" {
		r.s.Downgraded++
	} else {
		r.s.Upgraded++
	}
	s.rec.Upgrade, s.dirty = target, true
	return nil
}

// sameButHTTPS tells whether to is from on https: the same host, path
// and query, from's scheme http and to's https.
func sameButHTTPS(from, to string) bool {
	f, err1 := url.Parse(from)
	t, err2 := url.Parse(to)
	return err1 == nil && err2 == nil && f.Scheme == "http" && t.Scheme == "https" &&
		strings.EqualFold(f.Hostname(), t.Hostname()) && f.RequestURI() == t.RequestURI()
}
