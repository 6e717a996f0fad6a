package testweb

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is the heterogeneous web (Config.Heterogeneous): response
// times, Crawl-delays, big sites and bare-name aliases. Each part draws
// from its own random stream, so turning it on changes nothing else of
// the model but what the package documentation says.

// responseSigma is the sigma of the log-normal law of ordinary servers'
// response times: with the default median of 2 ms, 90% of them answer
// within 5 ms and 99% within 10 ms.
const responseSigma = 0.7

// aliasLinkChance is the chance that a cross-host link to the home page of
// a site with an alias is written with the bare name.
const aliasLinkChance = 0.3

// pickBigSites marks the Config.BigSites in-scope sites of largest raw
// size as big and gives them between MaxPages/4 and MaxPages pages
// (log-uniform), the biggest exactly MaxPages. scaleSizes leaves big
// sites as they are.
func (w *Web) pickBigSites() {
	k := min(w.cfg.BigSites, w.nIn)
	if k <= 0 {
		return
	}
	idx := make([]int, w.nIn)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return w.sites[idx[a]].raw > w.sites[idx[b]].raw })
	r := newRNG(uint64(w.cfg.Seed), tagBig, 0)
	maxP := w.cfg.MaxPages
	lo := max(maxP/4, 1)
	for rank, si := range idx[:k] {
		s := &w.sites[si]
		s.big = true
		if rank == 0 {
			s.pages = maxP
		} else {
			n := float64(lo) * math.Pow(float64(maxP)/float64(lo), r.float())
			s.pages = min(max(int(math.Round(n)), lo), maxP)
		}
		w.fitRobotsSize(s)
	}
}

// pickCrawlDelays gives round(CrawlDelayFraction * in-scope sites) sites
// (at least one when the fraction is positive) a Crawl-delay of whole
// seconds: the sites in size order are cut into that many strata of
// about equal count and one site of each stratum (not one whose
// robots.txt answers 500) is chosen, so the biggest, medium and small
// sites all have some. A chosen site without robots.txt gets one (with
// the "Disallow: /files/" rule of sites without a private prefix).
// buildRobots writes the delay into every group. With
// Config.CrawlDelayMaxPages the strata cut only the sites of at most that
// many pages (the count stays that of all in-scope sites, but not more
// than those small sites), so the biggest Crawl-delay site is about the
// cap's size; a cap of the largest site's size or more changes nothing.
func (w *Web) pickCrawlDelays() {
	order := w.bySize // biggest first
	if limit := w.cfg.CrawlDelayMaxPages; limit > 0 {
		order = order[sort.Search(len(order), func(i int) bool { return w.sites[order[i]].pages <= limit }):]
	}
	n := len(order)
	if w.cfg.CrawlDelayFraction <= 0 || n == 0 {
		return
	}
	k := min(max(int(math.Round(w.cfg.CrawlDelayFraction*float64(w.nIn))), 1), n)
	r := newRNG(uint64(w.cfg.Seed), tagCrawlDelay, 0)
	lo, hi := int(w.cfg.CrawlDelayMin/time.Second), int(w.cfg.CrawlDelayMax/time.Second)
	for j := 0; j < k; j++ {
		a, b := j*n/k, (j+1)*n/k
		start := r.intn(b - a)
		for t := 0; t < b-a; t++ {
			s := &w.sites[order[a+(start+t)%(b-a)]]
			if s.robots == robotsError {
				continue
			}
			s.robots = robotsRules
			s.crawlDelay = r.between(lo, hi)
			break
		}
	}
}

// drawResponseTimes gives every site (in scope or not) its response
// time: log-normal around ResponseMedian, capped at 20 times the median
// and below SlowMin, rounded to the microsecond; then
// round(SlowFraction * in-scope sites) in-scope sites, chosen at random,
// get a time between SlowMin and SlowMax (log-uniform).
func (w *Web) drawResponseTimes() {
	cfg := w.cfg
	median := float64(cfg.ResponseMedian)
	ceiling := min(fastCapFactor*cfg.ResponseMedian, cfg.SlowMin-time.Microsecond)
	for i := range w.sites {
		r := newRNG(uint64(cfg.Seed), tagTiming, uint64(i)+1)
		d := time.Duration(median * math.Exp(responseSigma*r.normal()))
		w.sites[i].respTime = max(min(d, ceiling), 0).Round(time.Microsecond)
	}
	nSlow := min(int(math.Round(cfg.SlowFraction*float64(w.nIn))), w.nIn)
	if nSlow <= 0 {
		return
	}
	r := newRNG(uint64(cfg.Seed), tagTiming, 0)
	perm := make([]int, w.nIn)
	for i := range perm {
		perm[i] = i
	}
	ratio := float64(cfg.SlowMax) / float64(cfg.SlowMin)
	for j := 0; j < nSlow; j++ {
		k := j + r.intn(w.nIn-j)
		perm[j], perm[k] = perm[k], perm[j]
		d := time.Duration(float64(cfg.SlowMin) * math.Pow(ratio, r.float()))
		w.sites[perm[j]].respTime = min(max(d, cfg.SlowMin), cfg.SlowMax).Round(time.Microsecond)
	}
}

// pickAliases gives about AliasFraction of the in-scope sites named
// www.X their bare name X as an alias, unless X is a host of the web
// already or the site's robots.txt answers 500 (so that the alias's
// robots.txt, a redirect to the site's, gives what the site's gives).
// Each alias is linked from the home page of another in-scope site.
// Call it once the hostile hosts exist.
func (w *Web) pickAliases() {
	if !w.cfg.Heterogeneous || w.cfg.AliasFraction <= 0 {
		return
	}
	w.aliasOf = make(map[string]int)
	w.aliasFrom = make(map[int][]int)
	for si := 0; si < w.nIn; si++ {
		s := &w.sites[si]
		bare, ok := strings.CutPrefix(s.name, "www.")
		if !ok || s.robots == robotsError {
			continue
		}
		r := newRNG(uint64(w.cfg.Seed), tagAlias, uint64(si))
		if !r.chance(w.cfg.AliasFraction) {
			continue
		}
		if _, taken := w.byName[bare]; taken {
			continue
		}
		if _, taken := w.hostileByName[bare]; taken {
			continue
		}
		if _, taken := w.aliasOf[bare]; taken {
			continue
		}
		s.alias = bare
		w.aliasOf[bare] = si
		if w.nIn > 1 {
			from := w.otherHost(&r, si)
			w.aliasFrom[from] = append(w.aliasFrom[from], si)
		}
	}
}

// aliasOrigin returns "http://X:port" for the alias of site si.
func (w *Web) aliasOrigin(si int) string {
	p := w.port.Load()
	if p == 0 {
		return "http://" + w.sites[si].alias
	}
	return "http://" + w.sites[si].alias + ":" + strconv.FormatInt(p, 10)
}

// aliasResponse is the answer of the alias of site si to any request
// for uri: a 301 to the same URI on the site's own name.
func (w *Web) aliasResponse(si int, uri string) (response, PageInfo) {
	resp, info := errorResponse(301)
	resp.location = w.origin(si) + uri
	info.URL = w.aliasOrigin(si) + uri
	info.Location = resp.location
	return resp, info
}

// siteOf returns the site a host name (canonical) names, its own or as an
// alias.
func (w *Web) siteOf(host string) (si int, alias, ok bool) {
	if si, ok := w.byName[host]; ok {
		return si, false, true
	}
	if si, ok := w.aliasOf[host]; ok {
		return si, true, true
	}
	return 0, false, false
}

// writeAliasLinks writes, on the home page of a site, links to the home
// pages of the aliases assigned to it. Like the hostile links, they do
// not draw from the page's random stream, so the rest of the page is as
// without them.
func (w *Web) writeAliasLinks(p *pageWriter) {
	as := w.aliasFrom[p.si]
	if len(as) == 0 {
		return
	}
	b := &p.b
	b.WriteString("<p>También en:")
	for _, si := range as {
		abs := w.aliasOrigin(si) + "/"
		text := w.sites[si].alias
		p.add(abs, text)
		b.WriteString(" <a href=\"" + abs + "\">" + text + "</a>")
	}
	b.WriteString("</p>\n")
}

// aliasHref rewrites href, a cross-host reference written by hrefTo to
// the home page of site t, to use t's bare name, on about
// aliasLinkChance of such links (drawn from the page's alias stream, not
// its main one).
func (p *pageWriter) aliasHref(t int, href string) string {
	s := &p.w.sites[t]
	if s.alias == "" || !p.w.cfg.Heterogeneous {
		return href
	}
	if !p.aliasR.chance(aliasLinkChance) {
		return href
	}
	if p.w.isHTTPS(t) {
		// The bare name answers on plain HTTP (a 301 to the site's
		// https home page): the link says http://, whatever the page.
		frag := ""
		if k := strings.IndexByte(href, '#'); k >= 0 {
			frag = href[k:]
		}
		return p.w.aliasOrigin(t) + "/" + frag
	}
	return strings.Replace(href, "//"+s.name, "//"+s.alias, 1)
}

// ResponseTime returns how long host (a host name of the web, or an
// alias) waits before each response, on top of Config.Latency: 0 without
// Config.Heterogeneous, for hostile hosts and for names that are not
// part of the web. An alias has its site's time.
func (w *Web) ResponseTime(host string) time.Duration {
	si, _, ok := w.siteOf(canonicalHost(host))
	if !ok {
		return 0
	}
	return w.sites[si].respTime
}

// Aliases returns the bare names that answer for a site (see
// Config.AliasFraction), mapped to the site's www name; empty without
// Config.Heterogeneous. The map is a copy.
func (w *Web) Aliases() map[string]string {
	out := make(map[string]string, len(w.aliasOf))
	for bare, si := range w.aliasOf {
		out[bare] = w.sites[si].name
	}
	return out
}

// BigSites returns the names of the big sites of the heterogeneous web
// (Config.BigSites), biggest first; nil without Config.Heterogeneous.
func (w *Web) BigSites() []string {
	var out []string
	for _, si := range w.bySize {
		if w.sites[si].big {
			out = append(out, w.sites[si].name)
		}
	}
	return out
}
