package seeder

import (
	"slices"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/sitemap"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Rejection reasons of sitemap entries and sitemap URLs (docs/sitemaps.md).
const (
	// ReasonSitemapScope: an entry outside its sitemap's host and
	// directory whose site's robots.txt does not name the sitemap.
	ReasonSitemapScope = "sitemap-scope"
	// ReasonSitemapDepth: a sitemap listed by an index nested
	// sitemap.MaxDepth deep.
	ReasonSitemapDepth = "sitemap-depth"
	// ReasonSitemapRedirect: a sitemap that redirects to another site.
	ReasonSitemapRedirect = "sitemap-redirect"
	// ReasonSitemapLines: Sitemap: lines of one robots.txt past
	// MaxRobotsSitemaps.
	ReasonSitemapLines = "sitemap-lines"
)

// MaxRobotsSitemaps is the most Sitemap: lines taken from one robots.txt.
const MaxRobotsSitemaps = 100

// ProbePath is the sitemap tried on every site with seeder.sitemap_probe.
const ProbePath = "/sitemap.xml"

// Sources of a URL that was not found as a page's link (linkgraph.Doc.Source).
const (
	SourceSitemap = "sitemap" // "sitemap URL": listed by that sitemap
	SourceRobots  = "robots"  // "robots URL": a Sitemap: line of that robots.txt
	SourceProbe   = "probe"   // /sitemap.xml tried by seeder.sitemap_probe
	SourceSeed    = "seed"    // "seed FILE|URL": given to seeder add --sitemap
)

// sitemapHint is what sitemaps say of a known URL, applied at the end of
// the batch.
type sitemapHint struct {
	flag       bool // the URL is a sitemap
	lastMod    time.Time
	changeFreq string
	priority   float64 // +1; 0 none
}

func (h *sitemapHint) merge(o sitemapHint) {
	h.flag = h.flag || o.flag
	if o.lastMod.After(h.lastMod) {
		h.lastMod = o.lastMod
	}
	if o.changeFreq != "" {
		h.changeFreq = o.changeFreq
	}
	if o.priority != 0 {
		h.priority = o.priority
	}
}

// apply writes the hint into d; false when nothing changed.
func (h sitemapHint) apply(d *linkgraph.Doc) bool {
	dirty := false
	if h.flag && !d.Sitemap {
		d.Sitemap, dirty = true, true
	}
	if h.lastMod.After(d.SitemapLastMod) {
		d.SitemapLastMod, dirty = h.lastMod, true
	}
	if h.changeFreq != "" && h.changeFreq != d.ChangeFreq {
		d.ChangeFreq, dirty = h.changeFreq, true
	}
	if h.priority != 0 && h.priority != d.Priority {
		d.Priority, dirty = h.priority, true
	}
	return dirty
}

func hintOf(l *parsed.Link) sitemapHint {
	h := sitemapHint{changeFreq: l.ChangeFreq}
	if l.LastMod != "" {
		h.lastMod, _ = time.Parse(time.RFC3339, l.LastMod)
	}
	if l.Priority != nil && *l.Priority >= 0 && *l.Priority <= 1 {
		h.priority = *l.Priority + 1
	}
	return h
}

// resolveSitemap normalises a sitemap URL and checks it against the scope,
// but for scope.exclude_extensions: sitemap.xml.gz is a sitemap, not an
// archive.
func (r resolver) resolveSitemap(raw string) (string, *rejection) {
	u, err := r.norm.Normalize(raw)
	if err == nil {
		err = r.scope.Check(u)
		if scope.ReasonOf(err) == scope.ReasonExtension {
			err = nil
		}
	}
	if err != nil {
		return "", &rejection{reason: reasonOf(err), err: err}
	}
	return u, nil
}

// addSitemap makes sure the normalised sitemap URL u is known and flagged
// as a sitemap: a new one gets depth depth (its index nesting) and source;
// a known document is flagged at the end of the batch (or at once when
// now is set, before the batch's records are read).
func (r *batchRun) addSitemap(u string, depth int, source string, now bool) error {
	in := r.in
	if id, ok := in.tx.LookupURL(u); ok {
		if now {
			d, err := in.tx.Doc(id)
			if err != nil {
				return err
			}
			if !d.Sitemap {
				d.Sitemap = true
				r.rewritten.Add(uint32(id))
				return in.tx.PutDoc(d)
			}
			return nil
		}
		r.hint(id, sitemapHint{flag: true})
		return nil
	}
	in.decorate = func(_ string, d *linkgraph.Doc) { d.Sitemap, d.Source = true, source }
	_, _, rej, err := in.create(u, depth, "")
	in.decorate = nil
	if rej != nil {
		in.reject(rej)
		return nil
	}
	if err == nil {
		r.s.SitemapsFound++
	}
	return err
}

// hint records a sitemap hint for a known document.
func (r *batchRun) hint(id uint64, h sitemapHint) {
	if r.hints == nil {
		r.hints = map[uint64]sitemapHint{}
	}
	old := r.hints[id]
	old.merge(h)
	r.hints[id] = old
}

// applyHints writes the hints of the batch into their documents.
func (r *batchRun) applyHints() (int, error) {
	if len(r.hints) == 0 {
		return 0, nil
	}
	ids := make([]uint64, 0, len(r.hints))
	for id := range r.hints {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return r.in.tx.UpdateDocs(ids, func(i int, d *linkgraph.Doc) bool { return r.hints[ids[i]].apply(d) })
}

// robotsSitemaps takes the Sitemap: lines of a site's robots.txt (or, with
// seeder.sitemap_probe and none, the site's /sitemap.xml) as sitemaps.
func (r *batchRun) robotsSitemaps(key string, rec fetchlog.Robots, rules bool) error {
	var lines []string
	if rules {
		lines = robots.Sitemaps(rec.Body)
	}
	if len(lines) > 0 {
		r.s.SitemapSites++
	}
	source := SourceRobots + " " + key + robots.Path
	if len(lines) == 0 && r.probe {
		lines, source = []string{key + ProbePath}, SourceProbe
	}
	for i, l := range lines {
		if i >= MaxRobotsSitemaps {
			r.in.reject(&rejection{reason: ReasonSitemapLines})
			continue
		}
		u, rej := r.in.resolveSitemap(strings.TrimSpace(l))
		if rej != nil {
			r.in.reject(rej)
			continue
		}
		if err := r.addSitemap(u, 0, source, true); err != nil {
			return err
		}
	}
	return nil
}

// crossSubmitted tells whether the robots.txt graph.db holds for the site
// of u names the sitemap sm (sitemaps.org, "Sitemaps & Cross Submits").
func (r *batchRun) crossSubmitted(u, sm string) (bool, error) {
	key := urlnorm.SiteKey(u)
	list, ok := r.robotsMaps[key]
	if !ok {
		s, err := r.in.site(key, false)
		if err != nil {
			return false, err
		}
		if s != nil {
			for _, l := range robots.Sitemaps(s.rec.RobotsBody) {
				if n, err := r.in.norm.Normalize(strings.TrimSpace(l)); err == nil {
					list = append(list, n)
				}
			}
		}
		if r.robotsMaps == nil {
			r.robotsMaps = map[string][]string{}
		}
		r.robotsMaps[key] = list
	}
	for _, l := range list {
		if l == sm {
			return true, nil
		}
	}
	return false, nil
}

// sitemapLinks takes in the entries of a sitemap's record: page entries go
// through the frontier as the links of a page do, with the sitemap as
// their source and their lastmod, changefreq and priority kept; the
// sitemaps an index lists become sitemaps one level deeper; a redirect to
// the same site is a sitemap too, one to another site is refused.
func (r *batchRun) sitemapLinks(d *linkgraph.Doc, p *preparedDoc) error {
	pd := p.doc
	in := r.in
	if pd.Sitemap != nil {
		r.s.SitemapsRead++
		if pd.Sitemap.Reason != "" {
			r.s.SitemapErrors++
		}
	}
	pages := make([]preparedLink, 0, len(p.links))
	newHints := map[string]sitemapHint{}
	for i := range pd.Links {
		l := &pd.Links[i]
		pl := p.links[i]
		r.s.SitemapEntries++
		if l.Cross {
			ok, err := r.crossSubmitted(l.URL, d.URL)
			if err != nil {
				return err
			}
			if !ok {
				in.reject(&rejection{reason: ReasonSitemapScope})
				continue
			}
		}
		if l.Sitemap {
			if d.Depth+1 > sitemap.MaxDepth {
				in.reject(&rejection{reason: ReasonSitemapDepth})
				continue
			}
			u, rej := in.resolveSitemap(l.URL)
			if rej != nil {
				in.reject(rej)
				continue
			}
			if err := r.addSitemap(u, d.Depth+1, SourceSitemap+" "+d.URL, false); err != nil {
				return err
			}
			continue
		}
		if pl.rej == nil {
			h := hintOf(l)
			if pl.known != 0 {
				r.hint(pl.known, h)
			} else {
				old := newHints[pl.url]
				old.merge(h)
				newHints[pl.url] = old
			}
		}
		pages = append(pages, pl)
	}
	if pd.Redirect != "" {
		if u, rej := in.resolveSitemap(pd.Redirect); rej != nil {
			in.reject(rej)
		} else if urlnorm.SiteKey(u) != urlnorm.SiteKey(d.URL) {
			in.reject(&rejection{reason: ReasonSitemapRedirect})
		} else if err := r.addSitemap(u, d.Depth, SourceSitemap+" "+d.URL, false); err != nil {
			return err
		}
	}
	source := SourceSitemap + " " + d.URL
	in.decorate = func(_ string, nd *linkgraph.Doc) { nd.Source = source }
	err := r.links(d, pages)
	in.decorate = nil
	if err != nil {
		return err
	}
	// The entries' hints go to the URLs they created, or that earlier
	// records of the batch created, at the end of the batch.
	for _, pl := range pages {
		if pl.rej != nil || pl.known != 0 {
			continue
		}
		var id uint64
		var ok bool
		if r.snapshot {
			id, ok = in.tx.CreatedURLKey(pl.key)
		} else {
			id, ok = in.tx.LookupURL(pl.url)
		}
		if h := newHints[pl.url]; ok && (h != sitemapHint{}) {
			r.hint(id, h)
		}
	}
	return nil
}
