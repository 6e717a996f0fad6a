package seeder

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/robots"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Rejection reasons of the seeder itself, next to those of urlnorm
// (unparsable, scheme, too-long, no-host, bad-host, bad-port) and scope
// (ip-host, out-of-scope, extension).
const (
	// ReasonSiteCap: the URL's site already holds scope.max_pages_per_site
	// URLs.
	ReasonSiteCap = "site-cap"
	// ReasonNoFollow: a new URL seen only through a nofollow link.
	ReasonNoFollow = "nofollow"
)

// Anchor texts kept per document (representational quality).
const (
	MaxAnchors     = 5
	MaxAnchorBytes = 100
)

// ExcludedRobots is the Reason of documents that robots.txt forbids.
const ExcludedRobots = "robots"

// intake is the part of a graph.db transaction that takes URLs in: it
// normalises them, checks the scope, caches the sites it has seen and
// applies their stored robots.txt rules. One intake lives for one
// transaction.
type intake struct {
	resolver
	tx     *linkgraph.Tx
	token  string
	cap    int
	batch  int
	sites  map[string]*siteEntry
	byID   map[uint64]*siteEntry
	counts intakeCounts
}

// intakeCounts are the counters an intake keeps.
type intakeCounts struct {
	newURLs     int
	newSites    int
	newExcluded int
	rejected    map[string]int
}

// siteEntry is a cached site record.
type siteEntry struct {
	rec   *linkgraph.Site
	dirty bool
	rules *robots.Rules // parsed lazily from rec.RobotsBody
}

func newIntake(tx *linkgraph.Tx, cfg config.Config, batch int, res resolver) *intake {
	return &intake{
		tx:       tx,
		resolver: res,
		token:    cfg.Crawl.ProductToken,
		cap:      cfg.Scope.MaxPagesPerSite,
		batch:    batch,
		sites:    map[string]*siteEntry{},
		byID:     map[uint64]*siteEntry{},
		counts:   intakeCounts{rejected: map[string]int{}},
	}
}

// reasonOf names the reason of a urlnorm or scope rejection.
func reasonOf(err error) string {
	if r := urlnorm.ReasonOf(err); r != "" {
		return string(r)
	}
	if r := scope.ReasonOf(err); r != "" {
		return string(r)
	}
	return "unparsable"
}

// rejection is a URL kept out of the crawl, with its reason.
type rejection struct {
	reason string
	err    error
}

func (r *rejection) Error() string {
	if r.err != nil {
		return r.err.Error()
	}
	return r.reason
}

// resolver normalises URLs and checks them against the scope. It needs
// no database and is safe for concurrent use.
type resolver struct {
	norm  *urlnorm.Normalizer
	scope *scope.Scope
}

func newResolver(cfg config.Config) resolver {
	return resolver{norm: urlnorm.New(cfg.Scope.MaxURLLength), scope: scope.New(cfg.Scope)}
}

// resolve normalises raw and checks it against the scope.
func (r resolver) resolve(raw string) (string, *rejection) {
	u, err := r.norm.Normalize(raw)
	if err != nil {
		return "", &rejection{reason: reasonOf(err), err: err}
	}
	if err := r.scope.Check(u); err != nil {
		return "", &rejection{reason: reasonOf(err), err: err}
	}
	return u, nil
}

// reject counts a rejection.
func (in *intake) reject(r *rejection) { in.counts.rejected[r.reason]++ }

// site returns the cached record of a site key, creating the site if
// create is set and it is new; nil if it does not exist and create is not
// set.
func (in *intake) site(key string, create bool) (*siteEntry, error) {
	if s, ok := in.sites[key]; ok {
		return s, nil
	}
	id, ok := in.tx.SiteID(key)
	if !ok {
		if !create {
			return nil, nil
		}
		var err error
		if id, _, err = in.tx.AddSite(key); err != nil {
			return nil, err
		}
		in.counts.newSites++
	}
	rec, err := in.tx.Site(id)
	if err != nil {
		return nil, err
	}
	s := &siteEntry{rec: rec}
	in.sites[key] = s
	in.byID[id] = s
	return s, nil
}

// rules returns the site's known robots.txt rules: those of the body of
// its last 2xx robots.txt, or allow-all when there is none (never
// fetched, 3xx, 4xx or an empty file).
func (in *intake) rules(s *siteEntry) *robots.Rules {
	if s.rules == nil {
		s.rules = knownRules(s.rec.RobotsBody, in.token)
	}
	return s.rules
}

func knownRules(body, token string) *robots.Rules {
	if body == "" {
		return robots.AllowAll()
	}
	return robots.Parse([]byte(body), token)
}

// take makes sure the normalised, in-scope URL u has an id. A new URL gets
// depth depth, state pending (excluded if its site's known robots rules
// forbid it) and counts against its site's cap. With follow false a new
// URL is not created (nofollow links). It returns the id, whether the URL
// was created, and the rejection if it was refused.
func (in *intake) take(u string, depth int, follow bool) (uint64, bool, *rejection, error) {
	if id, ok := in.tx.LookupURL(u); ok {
		return id, false, nil, nil
	}
	if !follow {
		return 0, false, &rejection{reason: ReasonNoFollow}, nil
	}
	s, err := in.site(urlnorm.SiteKey(u), true)
	if err != nil {
		return 0, false, nil, err
	}
	if in.cap > 0 && s.rec.Pages >= in.cap {
		return 0, false, &rejection{reason: ReasonSiteCap, err: fmt.Errorf("site %s already has %d urls (scope.max_pages_per_site)", s.rec.Key, s.rec.Pages)}, nil
	}
	id, _, err := in.tx.AddURL(u, s.rec.ID, depth, in.batch)
	if err != nil {
		return 0, false, nil, err
	}
	s.rec.Pages++
	s.dirty = true
	in.counts.newURLs++
	if !in.rules(s).Allowed(u) {
		d, err := in.tx.Doc(id)
		if err != nil {
			return 0, false, nil, err
		}
		d.State, d.Reason = linkgraph.StateExcluded, ExcludedRobots
		if err := in.tx.PutDoc(d); err != nil {
			return 0, false, nil, err
		}
		in.counts.newExcluded++
	}
	return id, true, nil, nil
}

// flushSites writes the site records changed during the transaction.
func (in *intake) flushSites() error {
	keys := make([]uint64, 0, len(in.byID))
	for id, s := range in.byID {
		if s.dirty {
			keys = append(keys, id)
		}
	}
	slices.Sort(keys)
	for _, id := range keys {
		if err := in.tx.PutSite(in.byID[id].rec); err != nil {
			return err
		}
		in.byID[id].dirty = false
	}
	return nil
}

// targetUpdate is what the links of a batch propose for one target
// document: a smaller depth and anchor texts. Updates are collected while
// the batch is read and applied grouped by target at the end, so each
// target's record is decoded once, not once per in-link.
type targetUpdate struct {
	depth   int // smallest depth proposed; -1 if none
	anchors []string
}

type targetUpdates map[uint64]*targetUpdate

func (m targetUpdates) get(id uint64) *targetUpdate {
	t, ok := m[id]
	if !ok {
		t = &targetUpdate{depth: -1}
		m[id] = t
	}
	return t
}

func (m targetUpdates) proposeDepth(id uint64, depth int) {
	t := m.get(id)
	if t.depth < 0 || depth < t.depth {
		t.depth = depth
	}
}

// addAnchor records an anchor text for a target, keeping at most
// MaxAnchors distinct texts per target in this batch.
func (m targetUpdates) addAnchor(id uint64, text string) {
	text = cleanAnchor(text)
	if text == "" {
		return
	}
	t := m.get(id)
	if len(t.anchors) >= MaxAnchors || slices.Contains(t.anchors, text) {
		return
	}
	t.anchors = append(t.anchors, text)
}

// cleanAnchor collapses white space and cuts the text at MaxAnchorBytes on
// a character boundary.
func cleanAnchor(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxAnchorBytes {
		return s
	}
	cut := MaxAnchorBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}

// apply writes the collected updates, in id order. A depth only ever
// decreases; anchors are merged with the stored ones, the stored first,
// at most MaxAnchors distinct.
func (m targetUpdates) apply(tx *linkgraph.Tx) (int, error) {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	changed := 0
	for _, id := range ids {
		t := m[id]
		d, err := tx.Doc(id)
		if err != nil {
			return changed, err
		}
		dirty := false
		if t.depth >= 0 && t.depth < d.Depth {
			d.Depth = t.depth
			dirty = true
		}
		for _, a := range t.anchors {
			if len(d.Anchors) >= MaxAnchors {
				break
			}
			if !slices.Contains(d.Anchors, a) {
				d.Anchors = append(d.Anchors, a)
				dirty = true
			}
		}
		if dirty {
			if err := tx.PutDoc(d); err != nil {
				return changed, err
			}
			changed++
		}
	}
	return changed, nil
}
