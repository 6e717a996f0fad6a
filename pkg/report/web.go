package report

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/langid"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
	"github.com/wirecrawl/wire/pkg/timescale"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Mirror detection thresholds (docs/report.md, "The national web").
const (
	// MirrorMinPages is the fewest pages with text a site needs to be
	// called a mirror.
	MirrorMinPages = 3
	// MirrorMinShare is the share of a site's pages that must have a
	// near-duplicate on the other site.
	MirrorMinShare = 0.5
)

// Web is what the crawl learned about the national web's pages: the
// sections of the studies of national webs (languages, duplication,
// mirrors, charsets, sizes, ages, links abroad), from every gathered
// batch's document records, the newest record of each URL.
type Web struct {
	// Pages are the 2xx HTML pages; WithText those with any text.
	Pages    int `json:"pages"`
	WithText int `json:"withText"`
	// Languages count pages and sites by detected language (a site's
	// language is that of most of its pages); Declared counts pages by
	// the language they declare (its primary subtag, lower case).
	Languages []LangRow `json:"languages"`
	Declared  []Count   `json:"declared"`
	// ExactDuplicates are pages whose text another page has (the
	// gatherer's duplicateOf, or the same text hash as a page seen
	// before); NearDuplicates those whose simhash is within
	// simhash.Distance of another page's and not an exact duplicate.
	ExactDuplicates int `json:"exactDuplicates"`
	NearDuplicates  int `json:"nearDuplicates"`
	// NearGroups is the number of groups of two or more near-duplicates.
	NearGroups int              `json:"nearGroups"`
	Mirrors    []simhash.Mirror `json:"mirrors"`
	// Charsets count pages by the encoding they were decoded from.
	Charsets []Count `json:"charsets"`
	// Sizes count 2xx responses of any type by body size class.
	Sizes []Count `json:"sizes"`
	// Ages count pages by the age their Last-Modified header gives at
	// the time of the fetch ("unknown" without one).
	Ages []Count `json:"ages"`
	// TimeScale is manager.time_scale when it is not 1 (0 when it is):
	// the age classes are then scaled days, weeks, months and years.
	TimeScale float64 `json:"timeScale,omitempty"`
	// LinkTLDs count links to other registrable domains by the target's
	// top-level domain; LinksOut is their total.
	LinkTLDs []Count `json:"linkTLDs"`
	LinksOut int     `json:"linksOut"`
}

// LangRow is one language of the languages table.
type LangRow struct {
	Lang  string `json:"lang"`
	Pages int    `json:"pages"`
	Sites int    `json:"sites"`
}

// webPage is what readWeb keeps of one page.
type webPage struct {
	site    string
	lang    string
	simhash uint64
	simV    int // the simhash's version (parsed.Doc.SimhashVersion)
	hash    string
	dupOf   bool
}

// sizeClasses are the page size classes, upper bounds in bytes.
var sizeClasses = []struct {
	max   int64
	label string
}{{1 << 10, "< 1 KB"}, {4 << 10, "1–4 KB"}, {16 << 10, "4–16 KB"}, {64 << 10, "16–64 KB"}, {256 << 10, "64–256 KB"}, {1 << 20, "256 KB–1 MB"}, {1 << 62, "≥ 1 MB"}}

// ageClasses are the page age classes, upper bounds at time scale 1;
// ageClass scales them.
var ageClasses = []struct {
	max   time.Duration
	label string
}{{24 * time.Hour, "< 1 day"}, {7 * 24 * time.Hour, "1 day–1 week"}, {30 * 24 * time.Hour, "1 week–1 month"}, {365 * 24 * time.Hour, "1 month–1 year"}, {3 * 365 * 24 * time.Hour, "1–3 years"}, {1 << 62, "≥ 3 years"}}

// readWeb reads the document records of every gathered batch, newest
// batch first, so that each URL counts once, as last fetched; page ages
// are classed at time scale s.
func readWeb(col *collection.Collection, s timescale.Scale) (*Web, error) {
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	w := &Web{}
	if f := s.Factor(); f != 1 {
		w.TimeScale = f
	}
	seen := map[string]bool{}
	var chunks [][]webPage // per batch, newest batch first; each in file order
	langs, declared, charsets, sizes, ages, tlds := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for k := len(ids) - 1; k >= 0; k-- {
		b := col.Batch(ids[k])
		if !b.Done(collection.StageGathered) {
			continue
		}
		path := filepath.Join(b.ParsedPath(), parsed.DocsFile)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		r := parsed.NewReader(f, path)
		var pages []webPage
		for {
			d, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, err
			}
			if seen[d.URL] || d.Status < 200 || d.Status >= 300 {
				continue
			}
			seen[d.URL] = true
			sizes[sizeClass(d.Bytes)]++
			if d.Hash == "" { // not HTML
				continue
			}
			w.Pages++
			host := hostOf(d.URL)
			p := webPage{site: host, lang: d.DetectedLang, hash: d.Hash, dupOf: d.DuplicateOf != ""}
			if p.lang == "" {
				p.lang = langid.Unknown
			}
			langs[p.lang]++
			if l := langid.Declared(d.Lang); l != "" {
				declared[l]++
			} else {
				declared["(none)"]++
			}
			if d.Charset != "" {
				charsets[d.Charset]++
			}
			ages[ageClass(d.LastModified, d.Fetched, s)]++
			if d.Simhash != "" {
				p.simhash, _ = strconv.ParseUint(d.Simhash, 16, 64)
				p.simV = d.SimhashVersion()
			}
			if d.TextBytes > 0 {
				w.WithText++
			}
			from := urlnorm.Registrable(host)
			for _, l := range d.Links {
				h := hostOf(l.URL)
				if h == "" || h == host || urlnorm.Registrable(h) == from {
					continue
				}
				w.LinksOut++
				tlds[tld(h)]++
			}
			pages = append(pages, p)
		}
		f.Close()
		chunks = append(chunks, pages)
	}
	// Oldest batch first, each in fetch order, so that a group's first
	// member is the page fetched first.
	var pages []webPage
	for k := len(chunks) - 1; k >= 0; k-- {
		pages = append(pages, chunks[k]...)
	}
	w.duplicates(pages)
	w.siteLanguages(pages, langs)
	w.Declared = topCounts(declared, 12)
	w.Charsets = topCounts(charsets, 10)
	w.Sizes = ordered(sizes, len(sizeClasses), func(i int) string { return sizeClasses[i].label })
	ages2 := ordered(ages, len(ageClasses), func(i int) string { return ageClasses[i].label })
	if n := ages["unknown"]; n > 0 {
		ages2 = append(ages2, Count{"unknown", n})
	}
	w.Ages = ages2
	w.LinkTLDs = topCounts(tlds, 15)
	return w, nil
}

// duplicates counts exact and near-duplicates and finds mirrors.
func (w *Web) duplicates(pages []webPage) {
	hashes := map[string]bool{}
	exact := make([]bool, len(pages))
	var fps []uint64
	var sites []string
	for i, p := range pages {
		if p.dupOf || hashes[p.hash] {
			exact[i] = true
			w.ExactDuplicates++
		}
		hashes[p.hash] = true
		fps = append(fps, p.simhash)
		sites = append(sites, p.site)
	}
	groups := groupByVersion(pages, fps)
	for i, g := range groups {
		if g != i && !exact[i] {
			w.NearDuplicates++
		}
	}
	w.NearGroups = len(simhash.Members(groups))
	var withText []int
	for i, p := range pages {
		if p.simhash != 0 {
			withText = append(withText, i)
		}
	}
	ts, tg := make([]string, len(withText)), make([]int, len(withText))
	for k, i := range withText {
		ts[k], tg[k] = sites[i], groups[i]
	}
	w.Mirrors = simhash.Mirrors(ts, tg, MirrorMinPages, MirrorMinShare)
}

// groupByVersion groups fps (the fingerprints of pages) as
// simhash.Groups does, comparing only fingerprints of one version of the
// scheme: a collection crawled partly before the scheme changed has its
// pages of each version grouped among themselves.
func groupByVersion(pages []webPage, fps []uint64) []int {
	versions := map[int]bool{}
	for _, p := range pages {
		if p.simhash != 0 {
			versions[p.simV] = true
		}
	}
	if len(versions) <= 1 {
		return simhash.Groups(fps)
	}
	groups := make([]int, len(fps))
	for i := range groups {
		groups[i] = i
	}
	of := make([]uint64, len(fps))
	for v := range versions {
		for i, p := range pages {
			of[i] = 0
			if p.simV == v {
				of[i] = fps[i]
			}
		}
		for i, g := range simhash.Groups(of) {
			if of[i] != 0 {
				groups[i] = g
			}
		}
	}
	return groups
}

// siteLanguages fills Languages: pages per language, and sites whose
// most frequent page language it is (ties to the smaller code).
func (w *Web) siteLanguages(pages []webPage, langs map[string]int) {
	perSite := map[string]map[string]int{}
	for _, p := range pages {
		if perSite[p.site] == nil {
			perSite[p.site] = map[string]int{}
		}
		perSite[p.site][p.lang]++
	}
	sites := map[string]int{}
	for _, m := range perSite {
		best, n := "", -1
		for l, c := range m {
			if c > n || c == n && l < best {
				best, n = l, c
			}
		}
		sites[best]++
	}
	for l, n := range langs {
		w.Languages = append(w.Languages, LangRow{Lang: l, Pages: n, Sites: sites[l]})
	}
	sort.Slice(w.Languages, func(i, j int) bool {
		a, b := w.Languages[i], w.Languages[j]
		if a.Pages != b.Pages {
			return a.Pages > b.Pages
		}
		return a.Lang < b.Lang
	})
}

// ordered lists the counts of m in class order, leaving out empty classes.
func ordered(m map[string]int, n int, label func(int) string) []Count {
	var out []Count
	for i := 0; i < n; i++ {
		if c := m[label(i)]; c > 0 {
			out = append(out, Count{label(i), c})
		}
	}
	return out
}

func sizeClass(n int64) string {
	for _, c := range sizeClasses {
		if n < c.max {
			return c.label
		}
	}
	return sizeClasses[len(sizeClasses)-1].label
}

// ageClass is the age class of a page from its Last-Modified header at
// its fetch time, the classes and their hour of tolerance for a date after
// the fetch scaled by s; "unknown" without a valid one (or one in the
// future).
func ageClass(lastModified string, fetched time.Time, s timescale.Scale) string {
	if lastModified == "" {
		return "unknown"
	}
	t, err := http.ParseTime(lastModified)
	if err != nil || t.After(fetched.Add(s.D(time.Hour))) {
		return "unknown"
	}
	age := fetched.Sub(t)
	for _, c := range ageClasses {
		if age < s.D(c.max) {
			return c.label
		}
	}
	return ageClasses[len(ageClasses)-1].label
}

// hostOf is the host of an absolute, normalised URL (lower case, no
// port), or "".
func hostOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	h := u[i+3:]
	if j := strings.IndexAny(h, "/?#"); j >= 0 {
		h = h[:j]
	}
	if j := strings.LastIndexByte(h, '@'); j >= 0 {
		h = h[j+1:]
	}
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j >= 0 {
			return h[:j+1]
		}
	}
	if j := strings.LastIndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	return strings.ToLower(h)
}

// tld is a host's top-level domain: its last label, "(IP address)" for
// an address.
func tld(host string) string {
	if strings.HasPrefix(host, "[") {
		return "(IP address)"
	}
	l := host[strings.LastIndexByte(host, '.')+1:]
	if l == "" || l[0] >= '0' && l[0] <= '9' {
		return "(IP address)"
	}
	return l
}
