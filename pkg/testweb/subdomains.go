package testweb

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"golang.org/x/net/publicsuffix"
)

// This file is the subdomain web (Config.SubdomainShare): many sites
// under a few registrable domains, as universities, hosting providers and
// agencies have, on several addresses. It draws from its own random
// stream, so that without it the web is what it was.

// tagSubdomain is the random stream of the subdomain web (apart from
// the enum of rng.go, as the HTTPS and sitemap tags are).
const tagSubdomain uint64 = 0x5d5d_0001

// subdomainKinds name the registrable domains of the subdomain web in
// turn: uni1, hosting1, uni2, hosting2 ... under the suffix. A university
// names its subdomains after departments, a hosting provider after its
// customers.
var subdomainKinds = []string{"uni", "hosting"}

// DefaultSubdomainDomains is the number of registrable domains holding
// the subdomain sites for a web of hosts in-scope hosts, unless
// Config.SubdomainDomains says otherwise.
func DefaultSubdomainDomains(hosts int) int { return max(2, hosts/100) }

// subdomainDefaults fills and validates the fields of the subdomain web.
func (c Config) subdomainDefaults() (Config, error) {
	if math.IsNaN(c.SubdomainShare) || c.SubdomainShare < 0 || c.SubdomainShare > 1 {
		return c, fmt.Errorf("testweb: SubdomainShare must be between 0 and 1, got %v", c.SubdomainShare)
	}
	if c.SubdomainShare == 0 {
		if c.SubdomainDomains != 0 {
			return c, errors.New("testweb: SubdomainDomains needs SubdomainShare")
		}
		return c, nil
	}
	if c.Addresses < 2 {
		return c, fmt.Errorf("testweb: SubdomainShare needs Addresses of at least 2 (its domains are on several addresses), got %d", c.Addresses)
	}
	switch {
	case c.SubdomainDomains < 0:
		return c, fmt.Errorf("testweb: SubdomainDomains must not be negative, got %d", c.SubdomainDomains)
	case c.SubdomainDomains == 0:
		c.SubdomainDomains = DefaultSubdomainDomains(c.Hosts)
	}
	for _, kind := range subdomainKinds {
		// A suffix under a wildcard rule of the public suffix list
		// would make every subdomain a registrable domain of its own.
		dom := kind + "1." + c.Suffix
		if reg, err := publicsuffix.EffectiveTLDPlusOne("x." + dom); err != nil || reg != dom {
			return c, fmt.Errorf("testweb: with suffix %q the subdomains of %s would not be under one registrable domain (the public suffix list gives %q)", c.Suffix, dom, reg)
		}
	}
	return c, nil
}

// subdomainGroup is one registrable domain of the subdomain web.
type subdomainGroup struct {
	domain  string
	members []int // site indices, in the order drawn
}

// buildSubdomains renames round(SubdomainShare * in-scope sites) sites
// (at least two), drawn at random, as subdomains of
// Config.SubdomainDomains registrable domains (fewer when there are not
// two sites for each) and places them on the web's addresses (see
// placeGroup). The first two sites drawn go to each domain in turn and
// the others to domain int(D*u*u), so the first domains hold the most.
// Call it once the sites' Crawl-delays and robots.txt are drawn, before
// byName is built: it renames sites and rebuilds their robots.txt (which
// names the host).
func (w *Web) buildSubdomains() {
	cfg := w.cfg
	if cfg.SubdomainShare <= 0 || w.nIn < 2 {
		return
	}
	r := newRNG(uint64(cfg.Seed), tagSubdomain, 0)
	n := min(max(int(math.Round(cfg.SubdomainShare*float64(w.nIn))), 2), w.nIn)
	perm := make([]int, w.nIn)
	for i := range perm {
		perm[i] = i
	}
	for j := 0; j < n; j++ {
		k := j + r.intn(w.nIn-j)
		perm[j], perm[k] = perm[k], perm[j]
	}
	chosen := perm[:n]
	d := max(min(cfg.SubdomainDomains, n/2), 1)
	groups := make([]subdomainGroup, d)
	for j, si := range chosen {
		g := j % d
		if j >= 2*d {
			u := r.float()
			g = int(float64(d) * u * u)
		}
		groups[g].members = append(groups[g].members, si)
	}

	taken := map[string]bool{}
	for si := range w.sites {
		if reg, err := publicsuffix.EffectiveTLDPlusOne(w.sites[si].name); err == nil {
			taken[reg] = true
		}
	}
	count := map[string]int{}
	w.subAddr = make(map[int]int, n)
	for g := range groups {
		gr := &groups[g]
		kind := subdomainKinds[g%len(subdomainKinds)]
		for gr.domain == "" || taken[gr.domain] {
			count[kind]++
			gr.domain = kind + strconv.Itoa(count[kind]) + "." + cfg.Suffix
		}
		taken[gr.domain] = true
		w.nameGroup(&r, gr, kind)
		if cfg.Heterogeneous && cfg.CrawlDelayFraction > 0 && g%2 == 0 {
			w.ensureCrawlDelay(&r, gr)
		}
		w.placeGroup(&r, gr)
		for _, si := range gr.members {
			if w.sites[si].robots == robotsRules {
				w.sites[si].rules = w.buildRobots(si)
			}
		}
	}
	w.subGroups = groups
}

// nameGroup renames the members of a domain <label><k>.<domain>, k the
// member's rank in the domain (1, 2 ...): a department for a university
// (fisica3.uni1.cl), a customer's word for a hosting provider
// (volcan7.hosting1.cl).
func (w *Web) nameGroup(r *rng, gr *subdomainGroup, kind string) {
	words := w.voc.depts
	if kind != "uni" {
		words = w.voc.host
	}
	for k, si := range gr.members {
		w.sites[si].name = r.pick(words) + strconv.Itoa(k+1) + "." + gr.domain
	}
}

// ensureCrawlDelay gives a site of a domain of three sites or more a
// Crawl-delay (between CrawlDelayMin and CrawlDelayMax, and a robots.txt
// if it had none) when none of them has one of the heterogeneous web's
// (the "Crawl-delay: 1" of small sites aside), so that every other domain
// of the heterogeneous web has a slow server among fast ones. The site
// is the smallest of the domain (the first drawn of equals) whose
// robots.txt does not answer 500; with Config.CrawlDelayMaxPages, none
// when that site has more pages than the cap (no random number is drawn
// then).
func (w *Web) ensureCrawlDelay(r *rng, gr *subdomainGroup) {
	if len(gr.members) < 3 {
		return
	}
	for _, si := range gr.members {
		if w.sites[si].crawlDelay > 0 {
			return
		}
	}
	pick := -1
	for _, si := range gr.members {
		if w.sites[si].robots != robotsError && (pick < 0 || w.sites[si].pages < w.sites[pick].pages) {
			pick = si
		}
	}
	if pick < 0 {
		return
	}
	if limit := w.cfg.CrawlDelayMaxPages; limit > 0 && w.sites[pick].pages > limit {
		return
	}
	lo, hi := int(w.cfg.CrawlDelayMin/time.Second), int(w.cfg.CrawlDelayMax/time.Second)
	w.sites[pick].robots = robotsRules
	w.sites[pick].crawlDelay = r.between(lo, hi)
}

// hasCrawlDelay reports whether the robots.txt of site si asks for a
// Crawl-delay (the heterogeneous web's, or the "Crawl-delay: 1" of some
// small sites).
func (w *Web) hasCrawlDelay(si int) bool {
	s := &w.sites[si]
	if s.robots != robotsRules {
		return false
	}
	if s.crawlDelay > 0 || s.rules == nil {
		return s.crawlDelay > 0
	}
	for _, g := range s.rules.groups {
		if g.crawlDelay != "" {
			return true
		}
	}
	return false
}

// placeGroup puts the sites of a domain of m sites on k distinct
// addresses of the web, drawn at random: k = ceil(m/3)+1, at least 2 and
// at most m and Config.Addresses, so that a domain has sites on several
// servers and some servers hold several of its sites (one politeness
// unit). The sites with a Crawl-delay all go to the first address with
// one site without, which so waits for its sibling's delay; the first
// sites without a delay take the other addresses one each, and the rest
// go to any of the k, so the other addresses serve no Crawl-delay site.
func (w *Web) placeGroup(r *rng, gr *subdomainGroup) {
	m := len(gr.members)
	k := min(max((m+2)/3+1, 2), m, w.cfg.Addresses)
	addrs := make([]int, 0, k)
	used := map[int]bool{}
	for len(addrs) < k {
		a := r.intn(w.cfg.Addresses)
		if !used[a] {
			used[a] = true
			addrs = append(addrs, a)
		}
	}
	var delayed, fast []int
	for _, si := range gr.members {
		if w.hasCrawlDelay(si) {
			delayed = append(delayed, si)
		} else {
			fast = append(fast, si)
		}
	}
	for _, si := range delayed {
		w.subAddr[si] = addrs[0]
	}
	next := 1 // the next address a site without a delay has alone
	for j, si := range fast {
		switch {
		case j == 0:
			w.subAddr[si] = addrs[0]
		case next < k:
			w.subAddr[si] = addrs[next]
			next++
		default:
			w.subAddr[si] = addrs[r.intn(k)]
		}
	}
}

// subdomainAddress returns the index of the address (0 the HTTP listen
// address, i the extra address i) of in-scope site si when the subdomain
// web placed it.
func (w *Web) subdomainAddress(si int) (int, bool) {
	a, ok := w.subAddr[si]
	return a, ok
}

// Subdomains returns the registrable domains of the subdomain web (see
// Config.SubdomainShare), each mapped to the names of its sites, sorted;
// empty without it. A site's address is AddressOf its name, and whether
// it asks for a Crawl-delay, CrawlDelay.
func (w *Web) Subdomains() map[string][]string {
	out := make(map[string][]string, len(w.subGroups))
	for _, gr := range w.subGroups {
		names := make([]string, 0, len(gr.members))
		for _, si := range gr.members {
			names = append(names, w.sites[si].name)
		}
		sort.Strings(names)
		out[gr.domain] = names
	}
	return out
}
