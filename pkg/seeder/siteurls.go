package seeder

import (
	"errors"
	"strings"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
)

// Loading a site's URLs: a worker looks a site's URLs up one by one in
// graph.db until it has looked up siteLoadAfter of them; then it reads
// all of them at once (a range of the urls bucket), provided they are at
// most siteLoadFactor times the lookups done so far, and answers the
// site's later links from memory. A site with more waits for four times
// as many lookups before the next try. So the reading never costs much
// more than the lookups it replaces, even for a site of millions of URLs
// of which a batch links a few.
const (
	siteLoadAfter  = 16
	siteLoadFactor = 8
)

// maxSiteURLs bounds the URLs one worker holds in memory (about 100
// bytes each for URLs of 50 bytes, measured: 50 MiB); past it, sites are
// looked up one URL at a time.
const maxSiteURLs = 1 << 19

// siteURLs is what a preparing worker knows of one site: the scope's
// verdict on it, and what graph.db knew of it before the batch.
type siteURLs struct {
	scopeErr error  // scope.CheckSite's verdict; if not nil, the rest is unset
	id       uint64 // 0: graph.db does not know the site, so none of its URLs
	upgrade  string // the https site key the site redirects to (linkgraph.Site.Upgrade), or ""
	// urls maps the path (and query) of each of the site's URLs to its
	// id, once read (nil before).
	urls     map[string]uint64
	lookups  int // lookups in graph.db since the site was last tried
	loadNext int // lookups before the next try
}

// siteSet is a worker's siteURLs by site key, with the number of URLs
// they hold and the most they may hold.
type siteSet struct {
	sites  map[string]*siteURLs
	loaded int
	max    int
}

func newSiteSet() *siteSet { return &siteSet{sites: map[string]*siteURLs{}, max: maxSiteURLs} }

// errTooMany stops the reading of a site's URLs past its bound.
var errTooMany = errors.New("too many urls")

// site returns what the worker knows of the site key: sc's verdict on it
// and, for a site in scope, its id in graph.db as tx (a read transaction
// begun before the batch's; nil for none) sees it.
func (s *siteSet) site(tx *linkgraph.Tx, key string, sc *scope.Scope) *siteURLs {
	st, ok := s.sites[key]
	if !ok {
		st = &siteURLs{loadNext: siteLoadAfter, scopeErr: sc.CheckSite(key)}
		if st.scopeErr == nil && tx != nil {
			st.id, _ = tx.SiteID(key)
			if st.id != 0 && strings.HasPrefix(key, "http://") {
				if rec, err := tx.Site(st.id); err == nil {
					st.upgrade = rec.Upgrade
				}
			}
		}
		s.sites[string([]byte(key))] = st // key may share a record's line
	}
	return st
}

// lookup returns the id and site id of the normal URL u of site st (key)
// in graph.db as tx sees it, from memory where it can; 0, 0 for a URL
// graph.db does not know.
func (s *siteSet) lookup(tx *linkgraph.Tx, st *siteURLs, key, u string) (id, site uint64) {
	if st.id == 0 {
		return 0, 0
	}
	if st.urls != nil {
		id = st.urls[u[len(key):]]
	} else {
		id, _ = tx.LookupURL(u)
		st.lookups++
		if st.lookups >= st.loadNext {
			s.load(tx, key, st)
		}
	}
	if id == 0 {
		return 0, 0
	}
	return id, st.id
}

// load reads the URLs of a site into memory, unless they are more than
// its bound.
func (s *siteSet) load(tx *linkgraph.Tx, key string, st *siteURLs) {
	limit := min(siteLoadFactor*st.lookups, s.max-s.loaded)
	st.lookups = 0
	st.loadNext *= 4
	urls := map[string]uint64{}
	err := tx.ForEachSiteURL(key, func(url string, id uint64) error {
		if len(urls) >= limit {
			return errTooMany
		}
		urls[url[len(key):]] = id
		return nil
	})
	if err != nil {
		return // too many for now, or unreadable: one at a time
	}
	st.urls = urls
	s.loaded += len(urls)
}
