package seeder

import (
	"net/url"
	"sort"
	"strings"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// ExcludedHTTPS is the Reason of the pending documents of an http site
// that redirects to https: their https twins take their place in the
// frontier.
const ExcludedHTTPS = "https"

// upgrade learns from a response of an http site whether the site
// sends everything to https: a permanent redirect (301 or 308) of a page
// to the same URL on https (same host, path and query; the port may
// differ) sets the site's Upgrade to the https site's key, so that the
// seeder writes the site's later links on https directly (prepare) and
// the redirect is not fetched for every page; any other answer of a page
// of the site (a 200, a redirect elsewhere) clears it.
func (r *batchRun) upgrade(siteKey, pageURL string, pd *parsed.Doc) error {
	if !strings.HasPrefix(siteKey, "http://") || pd.NotModified() {
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
	if r.upgrades == nil {
		r.upgrades = map[string]string{}
	}
	r.upgrades[strings.Clone(siteKey)] = target
	return nil
}

// foldUpgrades folds the sites whose Upgrade the batch changed, once all
// its records are in (the batch's own links to them included), in site
// key order.
func (r *batchRun) foldUpgrades() error {
	keys := make([]string, 0, len(r.upgrades))
	for k := range r.upgrades {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := r.fold(k, r.upgrades[k]); err != nil {
			return err
		}
	}
	return nil
}

// fold moves the frontier of the http site siteKey to its https twin
// target when the site upgrades: each pending document of the site gets
// its https URL (created pending, at its depth, with its first anchor
// text, unless the https site is full) and becomes excluded, reason
// ExcludedHTTPS, so that the redirect is not fetched for each page. With
// target "" (the site serves pages again) the documents it excluded so
// come back.
func (r *batchRun) fold(siteKey, target string) error {
	tx := r.in.tx
	type doc struct {
		u  string
		id uint64
	}
	var docs []doc
	err := tx.ForEachSiteURL(siteKey, func(u string, id uint64) error {
		docs = append(docs, doc{strings.Clone(u), id})
		return nil
	})
	if err != nil {
		return err
	}
	for _, x := range docs {
		d, err := tx.Doc(x.id)
		if err != nil {
			return err
		}
		switch {
		case target != "" && d.State == linkgraph.StatePending:
			anchor := ""
			if len(d.Anchors) > 0 {
				anchor = d.Anchors[0]
			}
			_, _, rej, err := r.in.create(target+x.u[len(siteKey):], d.Depth, anchor)
			if err != nil {
				return err
			}
			if rej != nil {
				continue // the https site is full: the http URL stays
			}
			d.State, d.Reason = linkgraph.StateExcluded, ExcludedHTTPS
			r.s.Folded++
		case target == "" && d.State == linkgraph.StateExcluded && d.Reason == ExcludedHTTPS:
			rest(d)
		default:
			continue
		}
		r.rewritten.Add(uint32(x.id))
		if err := tx.PutDoc(d); err != nil {
			return err
		}
	}
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
