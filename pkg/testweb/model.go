package testweb

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// robotsMode says what a host serves for /robots.txt.
type robotsMode uint8

const (
	robotsNone  robotsMode = iota // 404
	robotsRules                   // 200 with rules
	robotsError                   // 500
)

// charsetMode says how a host labels and encodes its HTML.
type charsetMode uint8

const (
	csUTF8Header      charsetMode = iota // Content-Type charset=utf-8 (meta sometimes)
	csUTF8Meta                           // Content-Type text/html, <meta charset="utf-8">
	csLatin1Header                       // Content-Type charset=iso-8859-1
	csLatin1Meta                         // Content-Type text/html, <meta http-equiv> iso-8859-1
	csUTF8HeaderUpper                    // Content-Type charset=UTF-8 and <meta charset="utf-8">
)

// contentType returns the Content-Type header for HTML pages.
func (c charsetMode) contentType() string {
	switch c {
	case csUTF8Header:
		return "text/html; charset=utf-8"
	case csLatin1Header:
		return "text/html; charset=iso-8859-1"
	case csUTF8HeaderUpper:
		return "text/html; charset=UTF-8"
	default:
		return "text/html"
	}
}

// latin1 reports whether bodies are encoded in ISO-8859-1.
func (c charsetMode) latin1() bool { return c == csLatin1Header || c == csLatin1Meta }

// site is the model of one host. Pages are not stored: everything about
// page i is recomputed from (seed, i).
type site struct {
	name       string
	label      string // human name shown in titles
	seed       uint64
	pages      int
	branch     int // page j links to children j*branch+1 .. j*branch+branch
	inScope    bool
	sections   []string
	robots     robotsMode
	rules      *robotsFile // when robots == robotsRules
	privPrefix string      // disallowed prefix with private pages, or ""
	openPrefix bool        // privPrefix+"open-" is re-allowed
	charset    charsetMode
	hasLogo    bool
	metaUTF8   bool    // csUTF8Header sites that also declare <meta charset>
	raw        float64 // unscaled Pareto size, before rounding and caps

	// The heterogeneous web (Config.Heterogeneous) only.
	big        bool          // one of the Config.BigSites: size set by pickBigSites
	respTime   time.Duration // slept before every response
	crawlDelay int           // Crawl-delay in seconds of every robots.txt group, or 0
	alias      string        // bare name answering with redirects to name, or ""

	// How the site serves (serve.go): Config.Change, HonestShare,
	// LyingShare, CompressShare, ChunkedShare.
	validators ValidatorPolicy
	codings    codingSet
	chunked    bool
}

// pageKind classifies a page of the model.
type pageKind uint8

const (
	kindHome pageKind = iota
	kindHTML
	kindPrivate // HTML under the robots-disallowed prefix
	kindPDF
	kindRedirect
	kindGone  // 404 that exists in the model
	kindError // 500
	kindFrames
)

// pageMeta is the metadata of one page.
type pageMeta struct {
	kind   pageKind
	path   string // request URI
	status int
	// Redirects only.
	targetSite  int
	targetPage  int
	relLocation bool
}

// buildSites generates host names, sizes and per-host features.
func (w *Web) buildSites() {
	cfg := w.cfg
	r := newRNG(uint64(cfg.Seed), tagHosts, 0)
	used := make(map[string]bool, cfg.Hosts+cfg.OutOfScope)
	var regs []string
	w.sites = make([]site, 0, cfg.Hosts+cfg.OutOfScope)
	for i := 0; i < cfg.Hosts; i++ {
		name, reg, word := w.inScopeName(&r, i, used, regs)
		used[name] = true
		if reg != "" {
			regs = append(regs, reg)
		}
		w.sites = append(w.sites, w.newSite(i, name, word, true))
	}
	for j := 0; j < cfg.OutOfScope; j++ {
		name, word := w.outOfScopeName(&r, j, used)
		used[name] = true
		w.sites = append(w.sites, w.newSite(cfg.Hosts+j, name, word, false))
	}
	w.nIn = cfg.Hosts
	if cfg.Heterogeneous {
		w.pickBigSites()
	}
	if cfg.Pages > 0 {
		w.scaleSizes(cfg.Pages)
	}

	w.bySize = make([]int, w.nIn)
	for i := range w.bySize {
		w.bySize[i] = i
	}
	sort.SliceStable(w.bySize, func(a, b int) bool {
		return w.sites[w.bySize[a]].pages > w.sites[w.bySize[b]].pages
	})
	if w.nIn > 0 {
		w.sites[w.bySize[0]].pages = cfg.MaxPages
	}

	// One or two hosts answer 500 for robots.txt; never the largest ones.
	if w.nIn >= 10 {
		n := 1
		if w.nIn >= 100 {
			n = 2
		}
		er := newRNG(uint64(cfg.Seed), tagRobotsErr, 0)
		for k := 0; k < n; k++ {
			si := w.bySize[5+er.intn(w.nIn-5)]
			s := &w.sites[si]
			s.robots = robotsError
			s.rules = nil
			s.privPrefix = ""
			s.openPrefix = false
		}
	}
	if cfg.Heterogeneous {
		w.pickCrawlDelays()
		w.drawResponseTimes()
	}
	for i := range w.sites {
		s := &w.sites[i]
		if s.robots == robotsRules {
			s.rules = w.buildRobots(i)
		}
	}
	w.buildSubdomains() // subdomains.go
	w.byName = make(map[string]int, len(w.sites))
	for i := range w.sites {
		w.byName[w.sites[i].name] = i
	}
}

// inScopeName draws a unique in-scope host name. It returns the name, its
// registrable domain (or "" when it must not be reused for subdomains) and
// the main word.
func (w *Web) inScopeName(r *rng, i int, used map[string]bool, regs []string) (name, reg, word string) {
	v, sfx := w.voc, w.cfg.Suffix
	for attempt := 0; attempt < 8; attempt++ {
		word = r.pick(v.host)
		num := ""
		if r.chance(0.75) {
			num = strconv.Itoa(r.between(1, 999))
		}
		x := r.float()
		switch {
		case x < 0.40:
			reg = word + num + "." + sfx
			name = "www." + reg
		case x < 0.55:
			reg = word + num + "." + sfx
			name = reg
		case x < 0.60:
			reg = word + "-" + r.pick(v.host) + "." + sfx
			name = reg
			if r.chance(0.5) {
				name = "www." + reg
			}
		case x < 0.67:
			reg = word + ".gob." + sfx
			name = reg
			if r.chance(0.5) {
				name = "www." + reg
			}
		case x < 0.75:
			reg = "u" + word + "." + sfx
			name = r.pick(v.depts) + "." + reg
		default:
			if len(regs) == 0 {
				reg = word + num + "." + sfx
				name = "www." + reg
				break
			}
			reg = regs[r.intn(len(regs))]
			name = r.pick(v.subs) + "." + reg
			reg = "" // do not weight this domain twice
		}
		if !used[name] {
			return name, reg, word
		}
	}
	reg = word + strconv.Itoa(1000+i) + "." + sfx
	return "www." + reg, reg, word
}

// outOfScopeName draws a unique out-of-scope host name.
func (w *Web) outOfScopeName(r *rng, j int, used map[string]bool) (name, word string) {
	sfx := w.cfg.Suffix
	var tlds []string
	for _, t := range w.voc.tlds {
		if t != sfx && !strings.HasSuffix(t, "."+sfx) {
			tlds = append(tlds, t)
		}
	}
	if len(tlds) == 0 {
		tlds = []string{"example"}
	}
	for attempt := 0; attempt < 8; attempt++ {
		word = r.pick(w.voc.host)
		name = word + "." + r.pick(tlds)
		if r.chance(0.5) {
			name = "www." + name
		}
		if !used[name] {
			return name, word
		}
	}
	return fmt.Sprintf("www.%s%d.%s", word, 1000+j, tlds[0]), word
}

// newSite draws the size and features of host number idx.
func (w *Web) newSite(idx int, name, word string, inScope bool) site {
	tag := tagSite
	if !inScope {
		tag = tagOOS
	}
	r := newRNG(uint64(w.cfg.Seed), tag, uint64(idx))
	s := site{
		name:    name,
		seed:    r.next(),
		inScope: inScope,
		branch:  r.between(2, 7),
		hasLogo: r.chance(0.5),
	}
	// Heavy-tailed (Pareto, alpha 1.1) size, capped at MaxPages.
	u := 1 - r.float()
	s.raw = 2.5 * math.Pow(u, -1/1.1)
	n := int(s.raw)
	if !inScope {
		n = r.between(3, 30)
		s.raw = float64(n)
	}
	s.pages = min(max(n, 1), w.cfg.MaxPages)

	s.label = capitalize(word)
	if r.chance(0.06) {
		s.label = capitalize(r.pick(w.voc.text)) + " & " + capitalize(r.pick(w.voc.text))
	}
	nsec := r.between(2, 6)
	for k := 0; k < nsec; k++ {
		s.sections = append(s.sections, r.pick(w.voc.sections))
	}

	x := r.float()
	switch {
	case !inScope || x < 0.55:
		s.charset = csUTF8Header
	case x < 0.70:
		s.charset = csUTF8Meta
	case x < 0.88:
		s.charset = csLatin1Header
	case x < 0.93:
		s.charset = csLatin1Meta
	default:
		s.charset = csUTF8HeaderUpper
	}
	s.metaUTF8 = r.chance(0.5)

	if inScope && r.chance(0.30) {
		s.robots = robotsRules
		s.privPrefix = r.pick(w.voc.priv)
		s.openPrefix = r.chance(0.25)
		w.fitRobotsSize(&s)
	}
	return s
}

// fitRobotsSize gives a site with robots rules the three pages its
// private prefix needs, or drops the prefix when the site cannot have
// them.
func (w *Web) fitRobotsSize(s *site) {
	if s.robots != robotsRules {
		return
	}
	if s.pages < 3 && w.cfg.MaxPages >= 3 {
		s.pages = 3
	}
	if s.pages < 2 {
		s.privPrefix = ""
	}
}

// origin returns "http://name:port" (without the port before Start), or
// "https://name:port" (the HTTPS port) for a site served over TLS.
func (w *Web) origin(si int) string {
	if w.isHTTPS(si) {
		return originWith("https", w.sites[si].name, w.httpsPort())
	}
	p := w.port.Load()
	if p == 0 {
		return "http://" + w.sites[si].name
	}
	return "http://" + w.sites[si].name + ":" + strconv.FormatInt(p, 10)
}

// isLeaf reports whether page i has no tree children.
func (s *site) isLeaf(i int) bool {
	return i*s.branch+1 >= s.pages
}

// kindOf returns the kind of page i of site s.
func (s *site) kindOf(i int) pageKind {
	if i == 0 {
		return kindHome
	}
	if !s.isLeaf(i) {
		return kindHTML
	}
	if s.privPrefix != "" && i == s.pages-1 {
		return kindPrivate
	}
	r := newRNG(s.seed, uint64(i), tagKind)
	x := r.float()
	switch {
	case x < 0.10:
		if s.privPrefix != "" {
			return kindPrivate
		}
		return kindHTML
	case x < 0.15:
		return kindPDF
	case x < 0.21:
		return kindRedirect
	case x < 0.24:
		return kindGone
	case x < 0.255:
		return kindError
	case x < 0.27:
		return kindFrames
	}
	return kindHTML
}

// pathOf returns the request URI of page i of site s, whose kind is k.
// Every path except "/" contains i as a decimal number, which is how
// lookups stay O(1) without an index.
func (w *Web) pathOf(s *site, i int, k pageKind) string {
	if i == 0 {
		return "/"
	}
	r := newRNG(s.seed, uint64(i), tagPath)
	n := strconv.Itoa(i)
	switch k {
	case kindPrivate:
		// The last page is always under the disallowed prefix proper.
		if s.openPrefix && i != s.pages-1 && r.chance(0.4) {
			return s.privPrefix + "open-" + n + ".html"
		}
		return s.privPrefix + "doc-" + n + ".html"
	case kindPDF:
		return "/files/" + r.pick(w.voc.docs) + "-" + n + ".pdf"
	}
	x := r.float()
	switch {
	case x < 0.40:
		return "/" + r.pick(s.sections) + "/page-" + n + ".html"
	case x < 0.58:
		return "/news/" + strconv.Itoa(r.between(2010, 2024)) + "/item-" + n + ".html"
	case x < 0.73:
		return "/catalog.php?id=" + n + "&cat=" + strconv.Itoa(r.between(1, 9))
	case x < 0.88:
		return "/index.php?page=" + n
	}
	return "/" + r.pick(s.sections) + "/" + n + "/"
}

// meta returns the metadata of page i of site si.
func (w *Web) meta(si, i int) pageMeta {
	s := &w.sites[si]
	k := s.kindOf(i)
	m := pageMeta{kind: k, path: w.pathOf(s, i, k), status: 200}
	switch k {
	case kindGone:
		m.status = 404
	case kindError:
		m.status = 500
	case kindRedirect:
		r := newRNG(s.seed, uint64(i), tagRedirect)
		m.status = 301
		if r.chance(0.4) {
			m.status = 302
		}
		m.relLocation = r.chance(0.4)
		m.targetSite, m.targetPage = si, 0
		if s.inScope && w.nIn > 1 && r.chance(0.05) {
			m.targetSite = w.otherHost(&r, si)
			m.relLocation = false
			break
		}
		for try := 0; try < 8; try++ {
			j := r.intn(s.pages)
			if kj := s.kindOf(j); j != i && (kj == kindHTML || kj == kindHome) {
				m.targetPage = j
				break
			}
		}
	}
	return m
}

// otherHost picks an in-scope host other than si, biased towards big sites.
func (w *Web) otherHost(r *rng, si int) int {
	var t int
	if r.chance(0.5) {
		t = r.intn(w.nIn)
	} else {
		u := r.float()
		t = w.bySize[int(float64(w.nIn)*u*u*u)]
	}
	if t == si {
		t = (t + 1) % w.nIn
	}
	return t
}

// lookupPath maps a request URI to a page index of site s (-1 if none).
func (w *Web) lookupPath(s *site, uri string) int {
	if uri == "/" {
		return 0
	}
	for start, runs := 0, 0; start < len(uri) && runs < 4; {
		if uri[start] < '0' || uri[start] > '9' {
			start++
			continue
		}
		end := start
		for end < len(uri) && uri[end] >= '0' && uri[end] <= '9' {
			end++
		}
		runs++
		if end-start <= 9 && uri[start] != '0' {
			i, err := strconv.Atoi(uri[start:end])
			if err == nil && i > 0 && i < s.pages && w.pathOf(s, i, s.kindOf(i)) == uri {
				return i
			}
		}
		start = end
	}
	return -1
}
