package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sitemaps (Config.Sitemaps): about a third of the in-scope sites with a
// robots.txt of rules, or none, publish sitemaps. Those with rules name
// two in Sitemap: lines of their robots.txt; those without serve the
// index at /sitemap.xml too, where only a crawler that tries that path
// (seeder.sitemap_probe) finds it (SitemapSites says which are which):
//
//	/sitemap_index.xml      an index of the two below
//	/sitemap-pages.xml.gz   a gzip urlset of the site's HTML pages, with lastmod, changefreq, priority
//	/sitemap-extra.txt      a text sitemap of the site's hidden pages
//
// Hidden pages (/hidden/item-N.html, 2 to 5 per site) are linked from no
// page: a crawler reaches them only through the sitemaps
// (SitemapOnlyURLs). With Config.Hostile too, the first sitemap site's
// robots.txt also names hostile sitemaps (HostileSitemaps): a gzip bomb,
// indexes that loop and nest too deep, entity expansion, 10 million
// entries and 1 GB streamed, a redirect to another host, and a sitemap
// listing another host's pages.
const (
	sitemapIndexPath = "/sitemap_index.xml"
	probePath        = "/sitemap.xml" // the index again, on sites without robots.txt (found only by a probe)
	sitemapPagesPath = "/sitemap-pages.xml.gz"
	sitemapExtraPath = "/sitemap-extra.txt"
	hiddenPrefix     = "/hidden/item-"
	hiddenSuffix     = ".html"
	mimeXML          = "application/xml"
	mimeGzip         = "application/x-gzip"
	tagSitemap       = 1 << 20 // rng tag of the sitemap choices (the enum in rng.go stays below it)
)

// The hostile sitemaps of the first sitemap site (Config.Hostile).
const (
	hostileBomb   = "/sitemap-bomb.xml.gz" // 1.5 MB of gzip that inflates to 1 GB
	hostileLoop   = "/sitemap-loop.xml"    // an index listing itself and loop2
	hostileLoop2  = "/sitemap-loop2.xml"   // an index listing loop
	hostileDeep   = "/sitemap-deep-0.xml"  // indexes nested 10 deep: deep-N lists deep-N+1
	hostileLaughs = "/sitemap-laughs.xml"  // billion laughs
	hostileHuge   = "/sitemap-huge.xml"    // 10 million entries, streamed
	hostileBig    = "/sitemap-big.txt"     // 1 GB, streamed
	hostileAway   = "/sitemap-away.xml"    // 302 to another host's sitemap index
	hostileCross  = "/sitemap-cross.xml"   // lists another host's pages (not cross-submitted)
	deepLevels    = 10                     // deep-0 .. deep-9; deep-9 is a urlset
	hugeEntries   = 10_000_000             // entries of huge.xml
	bigBytes      = 1 << 30                // bytes of big.txt
	bombBytes     = 1 << 30                // bytes the bomb inflates to
	bombMember    = 1 << 20                // one gzip member's inflated size
	streamChunk   = 64 << 10               // bytes written at a time by a stream
	hostileDeepRe = "/sitemap-deep-"       // prefix of the nested indexes
	hiddenMin     = 2                      // hidden pages per sitemap site, at least
	hiddenSpan    = 4                      // ... and at most hiddenMin + hiddenSpan - 1
	sitemapShare  = 3                      // one site in sitemapShare publishes sitemaps
	sitemapToken  = "wirebot"              // the crawler's default product token: its paths must be allowed
	hostileAgents = "*"                    // and everyone else's
	lastModEpoch  = "2026-01-01T00:00:00Z" // pages' lastmod: this plus up to 300 days
	sitemapFreq   = "weekly"               // every page's changefreq
	hiddenTitle   = "Ítem oculto"          // title prefix of the hidden pages
)

// sitemapState is the sitemap part of a Web.
type sitemapState struct {
	sites   []int // in-scope site indices that publish sitemaps, ascending
	hidden  map[int]int
	hostile int // site index of the hostile sitemaps, -1 for none
	once    sync.Once
	bomb    []byte
}

// buildSitemaps picks the sitemap sites (New calls it).
func (w *Web) buildSitemaps() {
	w.sm = &sitemapState{hidden: map[int]int{}, hostile: -1}
	if !w.cfg.Sitemaps {
		return
	}
	paths := []string{sitemapIndexPath, sitemapPagesPath, sitemapExtraPath, hiddenPrefix + "0" + hiddenSuffix}
	for si := 0; si < w.nIn; si++ {
		s := &w.sites[si]
		if (s.robots != robotsRules && s.robots != robotsNone) || s.alias != "" {
			continue
		}
		r := newRNG(s.seed, tagSitemap, 0)
		if r.intn(sitemapShare) != 0 {
			continue
		}
		ok := true
		for _, p := range paths {
			ok = ok && (s.rules == nil || (s.rules.allowed(sitemapToken, p) && s.rules.allowed(hostileAgents, p)))
		}
		if !ok {
			continue
		}
		w.sm.sites = append(w.sm.sites, si)
		w.sm.hidden[si] = hiddenMin + r.intn(hiddenSpan)
	}
	if w.cfg.Hostile && len(w.sm.sites) > 1 {
		for _, si := range w.sm.sites {
			if w.sites[si].robots == robotsRules {
				w.sm.hostile = si
				break
			}
		}
	}
}

// SitemapSites returns the host names of the sites that publish sitemaps:
// named in their robots.txt, and (probe) found only at /sitemap.xml.
func (w *Web) SitemapSites() (named, probe []string) {
	for _, si := range w.sm.sites {
		if w.sites[si].robots == robotsRules {
			named = append(named, w.sites[si].name)
		} else {
			probe = append(probe, w.sites[si].name)
		}
	}
	return named, probe
}

// SitemapOnlyURLs returns the hidden pages of the sitemap sites: pages no
// page links to, listed only in their site's text sitemap. Page knows
// them; URLs does not list them.
func (w *Web) SitemapOnlyURLs() []string {
	var out []string
	for _, si := range w.sm.sites {
		for n := 0; n < w.sm.hidden[si]; n++ {
			out = append(out, w.origin(si)+hiddenPrefix+strconv.Itoa(n)+hiddenSuffix)
		}
	}
	return out
}

// HostileSitemaps returns the URLs of the hostile sitemaps (Config.Hostile
// and Config.Sitemaps), each named by a Sitemap: line of its site's
// robots.txt; none without both.
func (w *Web) HostileSitemaps() []string {
	if w.sm.hostile < 0 {
		return nil
	}
	o := w.origin(w.sm.hostile)
	var out []string
	for _, p := range []string{hostileBomb, hostileLoop, hostileDeep, hostileLaughs, hostileHuge, hostileBig, hostileAway, hostileCross} {
		out = append(out, o+p)
	}
	return out
}

// sitemapLines are the Sitemap: lines a site's robots.txt ends with.
func (w *Web) sitemapLines(si int) string {
	if _, ok := w.sm.hidden[si]; !ok {
		return ""
	}
	o := w.origin(si)
	var b strings.Builder
	b.WriteString("\nSitemap: " + o + sitemapIndexPath + "\nSitemap: " + o + sitemapExtraPath + "\n")
	if si == w.sm.hostile {
		for _, u := range w.HostileSitemaps() {
			b.WriteString("Sitemap: " + u + "\n")
		}
	}
	return b.String()
}

// sitemapRespond answers the sitemap paths of a sitemap site; handled is
// false for any other path (and site).
func (w *Web) sitemapRespond(si int, uri string, at time.Time) (resp response, info PageInfo, handled bool) {
	hidden, ok := w.sm.hidden[si]
	if !ok {
		return resp, info, false
	}
	o := w.origin(si)
	info = PageInfo{URL: o + uri, Status: 200}
	xmlResp := func(body string) (response, PageInfo, bool) {
		info.MIME = mimeXML
		return response{status: 200, ctype: mimeXML, body: []byte(body)}, info, true
	}
	switch {
	case uri == sitemapIndexPath || (uri == probePath && w.sites[si].robots == robotsNone):
		return xmlResp(index(o+sitemapPagesPath, o+sitemapExtraPath))
	case uri == sitemapPagesPath:
		info.MIME = mimeGzip
		text, modified := w.pagesSitemap(si, at)
		return response{status: 200, ctype: mimeGzip, body: gzipBytes([]byte(text)), modified: modified}, info, true
	case uri == sitemapExtraPath:
		var b strings.Builder
		for n := 0; n < hidden; n++ {
			b.WriteString(o + hiddenPrefix + strconv.Itoa(n) + hiddenSuffix + "\n")
		}
		info.MIME = mimeText
		return response{status: 200, ctype: mimeText, body: []byte(b.String())}, info, true
	case strings.HasPrefix(uri, hiddenPrefix) && strings.HasSuffix(uri, hiddenSuffix):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(uri, hiddenPrefix), hiddenSuffix))
		if err != nil || n < 0 || n >= hidden || strconv.Itoa(n) != strings.TrimSuffix(strings.TrimPrefix(uri, hiddenPrefix), hiddenSuffix) {
			return resp, info, false
		}
		title := fmt.Sprintf("%s %d — %s", hiddenTitle, n, w.sites[si].label)
		body := fmt.Sprintf("<!DOCTYPE html>\n<html lang=\"es\"><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body><h1>%s</h1>\n<p>%s</p>\n<p><a href=\"/\">%s</a></p>\n</body></html>\n",
			html.EscapeString(title), html.EscapeString(title), html.EscapeString(w.hiddenText(si, n)), html.EscapeString(w.sites[si].label))
		info.MIME, info.Title = mimeHTMLUTF8, title
		info.Links, info.Anchors = []string{o + "/"}, []string{w.sites[si].label}
		return response{status: 200, ctype: mimeHTMLUTF8, body: []byte(body)}, info, true
	}
	if si != w.sm.hostile {
		return resp, info, false
	}
	switch {
	case uri == hostileBomb:
		info.MIME = mimeGzip
		return response{status: 200, ctype: mimeGzip, body: w.sitemapBomb()}, info, true
	case uri == hostileLoop:
		return xmlResp(index(o+hostileLoop, o+hostileLoop2))
	case uri == hostileLoop2:
		return xmlResp(index(o + hostileLoop))
	case strings.HasPrefix(uri, hostileDeepRe) && strings.HasSuffix(uri, ".xml"):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(uri, hostileDeepRe), ".xml"))
		if err != nil || n < 0 || n >= deepLevels {
			return resp, info, false
		}
		if n == deepLevels-1 {
			return xmlResp(`<urlset><url><loc>` + o + `/</loc></url></urlset>`)
		}
		return xmlResp(index(o + hostileDeepRe + strconv.Itoa(n+1) + ".xml"))
	case uri == hostileLaughs:
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?>` + "\n" + `<!DOCTYPE urlset [<!ENTITY a0 "lol">`)
		for i := 1; i < 10; i++ {
			fmt.Fprintf(&b, `<!ENTITY a%d "%s">`, i, strings.Repeat(fmt.Sprintf("&a%d;", i-1), 10))
		}
		b.WriteString(`]><urlset><url><loc>` + o + `/&a9;</loc></url></urlset>`)
		return xmlResp(b.String())
	case uri == hostileAway:
		other := w.sm.sites[1]
		resp, info = errorResponse(http.StatusFound)
		resp.location = w.origin(other) + sitemapIndexPath
		info.URL, info.Location = o+uri, resp.location
		return resp, info, true
	case uri == hostileCross:
		other := w.origin(w.sm.sites[1])
		return xmlResp(`<urlset><url><loc>` + other + `/</loc></url><url><loc>` + o + `/</loc></url></urlset>`)
	case uri == hostileHuge || uri == hostileBig:
		// Streamed by serveSitemapStream; Page tells the truth.
		info.MIME = mimeXML
		if uri == hostileBig {
			info.MIME = mimeText
		}
		return response{status: 200, ctype: info.MIME}, info, true
	}
	return resp, info, false
}

// sitemapStreamed says whether uri on site si is one of the two streamed
// hostile sitemaps, whose bodies are never held in memory.
func (w *Web) sitemapStreamed(si int, uri string) bool {
	return si == w.sm.hostile && (uri == hostileHuge || uri == hostileBig)
}

// serveSitemapStream writes the two streamed hostile sitemaps, a chunk at
// a time, until their end, the client goes away or the web closes; ok is
// false for any other request.
func (w *Web) serveSitemapStream(rw http.ResponseWriter, req *http.Request, si int, uri string) (status int, ok bool) {
	if !w.sitemapStreamed(si, uri) {
		return 0, false
	}
	o := w.origin(si)
	ctype, total := mimeXML, int64(0)
	var head, tail string
	var rec func(i int) string
	if uri == hostileHuge {
		head, tail = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n", "</urlset>\n"
		rec = func(i int) string { return "<url><loc>" + o + "/huge/" + strconv.Itoa(i) + "</loc></url>\n" }
		total = hugeEntries
	} else {
		ctype = mimeText
		line := o + "/" + strings.Repeat("x", 4000) + "\n" // too long to be a URL: every line invalid
		rec = func(int) string { return line }
		total = bigBytes / int64(len(line))
	}
	h := rw.Header()
	h["Date"] = nil
	h.Set("Content-Type", ctype)
	rw.WriteHeader(http.StatusOK)
	if req.Method == http.MethodHead {
		return http.StatusOK, true
	}
	buf := make([]byte, 0, streamChunk+8192)
	buf = append(buf, head...)
	flush := func() bool {
		if _, err := rw.Write(buf); err != nil {
			return false
		}
		buf = buf[:0]
		select {
		case <-req.Context().Done():
			return false
		case <-w.quit:
			return false
		default:
			return true
		}
	}
	for i := int64(0); i < total; i++ {
		buf = append(buf, rec(int(i))...)
		if len(buf) >= streamChunk && !flush() {
			return http.StatusOK, true
		}
	}
	buf = append(buf, tail...)
	flush()
	return http.StatusOK, true
}

// index is a sitemap index of locs.
func index(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		b.WriteString("<sitemap><loc>" + html.EscapeString(l) + "</loc></sitemap>\n")
	}
	b.WriteString("</sitemapindex>\n")
	return b.String()
}

// pagesSitemap is the urlset of a site's HTML pages (not its private
// ones) at time at, each with a lastmod, changefreq and priority, and the
// time its content last changed (zero: never). The lastmod is a date
// between lastModEpoch and 300 days later drawn per page, or with
// validators (Config.Change, HonestShare, LyingShare) what the site's
// policy tells (lastMod).
func (w *Web) pagesSitemap(si int, at time.Time) (string, time.Time) {
	s := &w.sites[si]
	o := w.origin(si)
	epoch, _ := time.Parse(time.RFC3339, lastModEpoch)
	var modified time.Time
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := 0; i < s.pages; i++ {
		k := s.kindOf(i)
		if k != kindHome && k != kindHTML {
			continue
		}
		r := newRNG(s.seed, tagSitemap, uint64(i)+1)
		lm := epoch.Add(time.Duration(r.intn(300)) * 24 * time.Hour).Format("2006-01-02")
		if s.validators != ValidatorsOff {
			var since time.Time
			lm, since = w.lastMod(si, i, at)
			if since.After(modified) {
				modified = since
			}
		}
		if lm != "" {
			lm = "<lastmod>" + lm + "</lastmod>"
		}
		prio := "0.5"
		if k == kindHome {
			prio = "1.0"
		}
		fmt.Fprintf(&b, "<url><loc>%s</loc>%s<changefreq>%s</changefreq><priority>%s</priority></url>\n",
			html.EscapeString(o+w.pathOf(s, i, k)), lm, sitemapFreq, prio)
	}
	b.WriteString("</urlset>\n")
	return b.String(), modified
}

// hiddenText is the paragraph of a hidden page.
func (w *Web) hiddenText(si, n int) string {
	r := newRNG(w.sites[si].seed, tagSitemap, uint64(1<<32+n))
	words := make([]string, 12+r.intn(20))
	for i := range words {
		words[i] = r.pick(w.voc.text)
	}
	return capitalize(strings.Join(words, " ")) + "."
}

// sitemapBomb is a gzip file of bombBytes/bombMember members, each a
// megabyte of XML comments, after a first member opening a urlset: 1.5 MB
// that inflate to 1 GB. Built once.
func (w *Web) sitemapBomb() []byte {
	w.sm.once.Do(func() {
		var member bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
		zw.Write(bytes.Repeat([]byte("<!---->"), bombMember/7)) //nolint:errcheck // bytes.Buffer
		zw.Close()                                              //nolint:errcheck // bytes.Buffer
		var b bytes.Buffer
		b.Write(gzipBytes([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)))
		for range bombBytes / bombMember {
			b.Write(member.Bytes())
		}
		w.sm.bomb = b.Bytes()
	})
	return w.sm.bomb
}

// gzipBytes compresses b (deterministic: no name, no time in the header).
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b) //nolint:errcheck // bytes.Buffer
	zw.Close()  //nolint:errcheck // bytes.Buffer
	return out.Bytes()
}
