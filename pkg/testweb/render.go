package testweb

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// response is what the server sends for one request.
type response struct {
	status   int
	ctype    string
	location string // Location header as sent (may be relative)
	body     []byte

	// What the changing web and the validators (change.go, serve.go) add.
	version  int       // the version of a changing page served
	modified time.Time // when the content last changed; zero: it never did (the origin)
	header   extraHeader
}

const (
	mimeHTMLUTF8 = "text/html; charset=utf-8"
	mimeText     = "text/plain; charset=utf-8"
	mimePDF      = "application/pdf"
	mimePNG      = "image/png"
	logoPath     = "/img/logo.png"
)

// respond computes the response for uri on site si now together with
// the truth about it. inModel is false for URLs that are not pages of the
// model (unknown paths, /robots.txt). Without truth the links and anchors
// of info are left out, which saves resolving every link when serving.
func (w *Web) respond(si int, uri string, truth bool) (resp response, info PageInfo, inModel bool) {
	return w.respondAt(si, w.origin(si), uri, truth, w.now())
}

// respondAt is respond at time at (which version of a changing page is
// live) on the side of site si whose origin is origin: its own, or the
// plain-HTTP side of a site that serves its pages on both schemes
// (relative links and Locations resolve there).
func (w *Web) respondAt(si int, origin, uri string, truth bool, at time.Time) (resp response, info PageInfo, inModel bool) {
	s := &w.sites[si]
	if uri == "/robots.txt" {
		resp = w.robotsResponse(si)
		return resp, PageInfo{URL: origin + uri, Status: resp.status, MIME: resp.ctype}, false
	}
	if resp, info, ok := w.sitemapRespond(si, uri, at); ok {
		return resp, info, true
	}
	if s.hasLogo && uri == logoPath {
		resp = response{status: 200, ctype: mimePNG, body: w.logo}
		return resp, PageInfo{URL: origin + uri, Status: 200, MIME: mimePNG}, true
	}
	i := w.lookupPath(s, uri)
	if i < 0 {
		resp, info = errorResponse(404)
		info.URL = origin + uri
		return resp, info, false
	}
	m := w.meta(si, i)
	pageURL := origin + m.path
	switch m.kind {
	case kindHome, kindHTML, kindPrivate, kindFrames:
		pc := w.changeOf(si, i)
		v, since := w.versionAt(pc, at)
		body, info := w.renderHTML(si, i, m, truth, origin, pc, v)
		info.URL = pageURL
		info.Status = 200
		info.Version = v
		info.MIME = s.charset.contentType()
		if s.charset.latin1() {
			enc, err := charmap.ISO8859_1.NewEncoder().Bytes(body)
			if err != nil {
				// Cannot happen: the vocabulary is Latin-1. Serve UTF-8
				// and say so rather than lie about the bytes.
				info.MIME = mimeHTMLUTF8
			} else {
				body = enc
			}
		}
		resp = response{status: 200, ctype: info.MIME, body: body, version: v}
		if v > 0 {
			resp.modified = since
		}
		return resp, info, true
	case kindPDF:
		body := w.pdfBody(si, i)
		return response{status: 200, ctype: mimePDF, body: body},
			PageInfo{URL: pageURL, Status: 200, MIME: mimePDF}, true
	case kindRedirect:
		target := w.pathOf(&w.sites[m.targetSite], m.targetPage, w.sites[m.targetSite].kindOf(m.targetPage))
		abs := w.origin(m.targetSite) + target
		resp, info = errorResponse(m.status)
		resp.location = abs
		if m.relLocation {
			resp.location = target
		}
		if m.relLocation && m.targetSite == si {
			abs = origin + target
		}
		info.URL, info.Location = pageURL, abs
		return resp, info, true
	case kindGone, kindError:
		resp, info = errorResponse(m.status)
		info.URL = pageURL
		return resp, info, true
	}
	resp, info = errorResponse(500)
	info.URL = pageURL
	return resp, info, false
}

// statusTitles are the titles of the small HTML bodies of non-200 answers.
func statusTitle(status int) string {
	switch status {
	case 301:
		return "301 Movido permanentemente"
	case 302:
		return "302 Movido temporalmente"
	case 404:
		return "404 No encontrado"
	case 405:
		return "405 Método no permitido"
	case 421:
		return "421 Misdirected Request"
	case 500:
		return "500 Error interno del servidor"
	}
	return strconv.Itoa(status)
}

// errorResponse builds the small UTF-8 HTML body (without links) used for
// redirects and errors.
func errorResponse(status int) (response, PageInfo) {
	t := statusTitle(status)
	body := "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(t) +
		"</title></head>\n<body><h1>" + html.EscapeString(t) + "</h1>\n<p>Servidor de pruebas.</p></body></html>\n"
	return response{status: status, ctype: mimeHTMLUTF8, body: []byte(body)},
		PageInfo{Status: status, MIME: mimeHTMLUTF8, Title: t}
}

// robotsResponse is the answer for /robots.txt of site si.
func (w *Web) robotsResponse(si int) response {
	s := &w.sites[si]
	switch s.robots {
	case robotsRules:
		return response{status: 200, ctype: mimeText, body: []byte(s.rules.text + w.sitemapLines(si))}
	case robotsError:
		r, _ := errorResponse(500)
		return r
	}
	r, _ := errorResponse(404)
	return r
}

// pdfBody is a small PDF-like document.
func (w *Web) pdfBody(si, i int) []byte {
	r := newRNG(w.sites[si].seed, uint64(i), tagBody)
	var b strings.Builder
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	b.WriteString("2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n")
	fmt.Fprintf(&b, "3 0 obj\n<< /Title (%s %d) >>\nendobj\n", w.sites[si].name, i)
	n := r.between(20, 200)
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, "%% %016x %016x\n", r.next(), r.next())
	}
	b.WriteString("trailer\n<< /Root 1 0 R /Info 3 0 R >>\n%%EOF\n")
	return []byte(b.String())
}

// shortTitle is the headline of page j, also used as anchor text.
func (w *Web) shortTitle(si, j int) string {
	s := &w.sites[si]
	if j == 0 {
		return s.label
	}
	r := newRNG(s.seed, uint64(j), tagTitle)
	n := r.between(2, 5)
	words := make([]string, n)
	for k := range words {
		words[k] = r.pick(w.voc.text)
	}
	return capitalize(strings.Join(words, " "))
}

// fullTitle is the <title> of page j.
func (w *Web) fullTitle(si, j int, k pageKind) string {
	s := &w.sites[si]
	switch k {
	case kindHome:
		r := newRNG(s.seed, 0, tagTitle)
		return s.label + " - " + capitalize(r.pick(w.voc.text)+" "+r.pick(w.voc.text)+" "+r.pick(w.voc.text))
	case kindPrivate:
		return "Documento interno: " + w.shortTitle(si, j) + " | " + s.label
	}
	return w.shortTitle(si, j) + " | " + s.label
}

// pageWriter accumulates the HTML of one page and, as links are written,
// the links and anchors a standard HTML tokenizer would extract.
type pageWriter struct {
	w        *Web
	si, i    int
	r        rng
	b        bytes.Buffer
	truth    bool     // collect links and anchors
	base     *url.URL // URL relative references resolve against
	basePath string
	upper    bool // old-style upper-case tags
	links    []string
	anchors  []string
	aliasR   rng  // Config.Heterogeneous: draws which links use a bare name
	httpsR   *rng // Config.HTTPSShare: draws which links use http://, made on first use
}

// tagName returns name in the case this page uses.
func (p *pageWriter) tagName(name string) string {
	if p.upper {
		return strings.ToUpper(name)
	}
	return name
}

// safeUnquoted reports whether v can be written as an unquoted attribute.
func safeUnquoted(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-:", c)) {
			return false
		}
	}
	return true
}

// attr renders ` name="value"`, sometimes single-quoted or unquoted.
func (p *pageWriter) attr(name, val string) string {
	name = p.tagName(name)
	x := p.r.float()
	switch {
	case x < 0.04 && safeUnquoted(val):
		return " " + name + "=" + val
	case x < 0.09:
		return " " + name + "='" + html.EscapeString(val) + "'"
	}
	return " " + name + `="` + html.EscapeString(val) + `"`
}

// resolve returns the absolute, fragment-less URL href points to (only
// when collecting the truth; ok says whether href parses either way).
func (p *pageWriter) resolve(href string) (string, bool) {
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if !p.truth {
		return "", true
	}
	u := p.base.ResolveReference(ref)
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// add records a link (only when collecting the truth).
func (p *pageWriter) add(abs, anchor string) {
	if !p.truth {
		return
	}
	p.links = append(p.links, abs)
	p.anchors = append(p.anchors, strings.Join(strings.Fields(anchor), " "))
}

// a writes <a href>text</a>.
func (p *pageWriter) a(href, text string) {
	abs, ok := p.resolve(href)
	if !ok {
		p.b.WriteString(html.EscapeString(text))
		return
	}
	p.add(abs, text)
	inner := html.EscapeString(text)
	switch x := p.r.float(); {
	case x < 0.05:
		inner = "<b>" + inner + "</b>"
	case x < 0.08:
		inner = "\n  " + strings.ReplaceAll(inner, " ", "\n ") + "\n"
	}
	extra := ""
	if p.r.chance(0.1) {
		extra = p.attr("title", text)
	}
	p.b.WriteString("<" + p.tagName("a") + p.attr("href", href) + extra + ">" + inner + "</" + p.tagName("a") + ">")
}

// aImg writes a link whose only content is an image (empty anchor text).
func (p *pageWriter) aImg(href, alt string) {
	abs, ok := p.resolve(href)
	if !ok {
		return
	}
	p.add(abs, "")
	p.b.WriteString("<" + p.tagName("a") + p.attr("href", href) + "><img src=\"" + logoPath + "\" alt=\"" +
		html.EscapeString(alt) + "\" width=\"120\" height=\"40\"></" + p.tagName("a") + ">")
}

// area writes an <area> element; its anchor text is its alt text.
func (p *pageWriter) area(href, alt, coords string) {
	abs, ok := p.resolve(href)
	if !ok {
		return
	}
	p.add(abs, alt)
	p.b.WriteString("<area shape=\"rect\" coords=\"" + coords + "\"" + p.attr("href", href) + " alt=\"" + html.EscapeString(alt) + "\">\n")
}

// frame writes a <frame> or <iframe> element (empty anchor text).
func (p *pageWriter) frame(tag, href, extra string) {
	abs, ok := p.resolve(href)
	if !ok {
		return
	}
	p.add(abs, "")
	end := ""
	if tag == "iframe" {
		end = "</iframe>"
	}
	p.b.WriteString("<" + tag + p.attr("src", href) + extra + ">" + end + "\n")
}

// relRef returns a path-relative reference from a document whose path is
// basePath to target (a path with optional query).
func relRef(basePath, target string) string {
	tp, tq, hasQ := strings.Cut(target, "?")
	if tp == basePath && hasQ {
		return "?" + tq
	}
	bdir := basePath[:strings.LastIndex(basePath, "/")+1]
	cut := strings.LastIndex(tp, "/") + 1
	tdir, tfile := tp[:cut], tp[cut:]
	bsegs := splitSegs(bdir)
	tsegs := splitSegs(tdir)
	common := 0
	for common < len(bsegs) && common < len(tsegs) && bsegs[common] == tsegs[common] {
		common++
	}
	var b strings.Builder
	b.WriteString(strings.Repeat("../", len(bsegs)-common))
	for _, seg := range tsegs[common:] {
		b.WriteString(seg + "/")
	}
	b.WriteString(tfile)
	ref := b.String()
	if ref == "" {
		ref = "./"
	} else if first, _, _ := strings.Cut(ref, "/"); strings.Contains(first, ":") {
		ref = "./" + ref
	}
	if hasQ {
		ref += "?" + tq
	}
	return ref
}

// splitSegs splits "/a/b/" into [a b].
func splitSegs(dir string) []string {
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

// fragments are the #fragments some links carry.
const fragmentsText = "arriba contenido comentarios seccion-2 detalle"

// hrefTo writes a reference to path on site tsi in a random style.
func (p *pageWriter) hrefTo(tsi int, path string) string {
	var href string
	if tsi != p.si {
		o := p.w.origin(tsi)
		if p.r.chance(0.1) {
			href = p.schemeRelative(o) + path
		} else {
			href = o + path
		}
	} else {
		switch x := p.r.float(); {
		case x < 0.35:
			href = path
		case x < 0.65:
			href = relRef(p.basePath, path)
		case x < 0.85:
			href = p.ownOrigin() + path
		case x < 0.90:
			href = p.schemeRelative(p.ownOrigin()) + path
		default:
			href = path
		}
	}
	if p.r.chance(0.07) {
		href += "#" + p.r.pick(strings.Fields(fragmentsText))
	}
	return href
}

// pagePath is the path of page j of the current site.
func (p *pageWriter) pagePath(j int) string {
	s := &p.w.sites[p.si]
	return p.w.pathOf(s, j, s.kindOf(j))
}

// anchorFor is the anchor text of a link to page j of site tsi.
func (p *pageWriter) anchorFor(tsi, j int) string {
	s := &p.w.sites[tsi]
	switch s.kindOf(j) {
	case kindPDF:
		return "Descargar " + strings.ToLower(p.w.shortTitle(tsi, j)) + " (PDF)"
	case kindHome:
		if tsi != p.si {
			if p.r.chance(0.5) {
				return s.name
			}
			return s.label
		}
		return "Inicio"
	}
	if p.r.chance(0.25) {
		return p.r.pick(p.w.voc.anchors)
	}
	return p.w.shortTitle(tsi, j)
}

// sentence writes one sentence of pseudo-Spanish drawn from the page's
// stream.
func (p *pageWriter) sentence() {
	p.w.sentence(&p.b, &p.r)
}

// sentence writes one sentence of pseudo-Spanish drawn from r.
func (w *Web) sentence(b *bytes.Buffer, r *rng) {
	n := r.between(6, 16)
	words := make([]string, n)
	for k := range words {
		words[k] = r.pick(w.voc.text)
	}
	b.WriteString(html.EscapeString(capitalize(strings.Join(words, " "))) + ". ")
}

// inlineLink writes one link of the running text.
func (p *pageWriter) inlineLink() {
	w := p.w
	s := &w.sites[p.si]
	nOOS := len(w.sites) - w.nIn
	x := p.r.float()
	if !s.inScope {
		// Out-of-scope sites link mostly to themselves, some to the
		// national web.
		if x < 0.75 || w.nIn == 0 {
			j := p.r.intn(s.pages)
			p.a(p.hrefTo(p.si, p.pagePath(j)), p.anchorFor(p.si, j))
			return
		}
		t := p.r.intn(w.nIn)
		p.a(p.hrefTo(t, "/"), p.anchorFor(t, 0))
		return
	}
	switch {
	case x < 0.62:
		j := p.r.intn(s.pages)
		p.a(p.hrefTo(p.si, p.pagePath(j)), p.anchorFor(p.si, j))
	case x < 0.80 && w.nIn > 1:
		t := w.otherHost(&p.r, p.si)
		j := 0
		if p.r.chance(0.5) {
			j = p.r.intn(w.sites[t].pages)
		}
		ts := &w.sites[t]
		href := p.hrefTo(t, w.pathOf(ts, j, ts.kindOf(j)))
		if j == 0 {
			href = p.httpHomeHref(t, p.aliasHref(t, href), false)
		}
		p.a(href, p.anchorFor(t, j))
	case x < 0.85 && nOOS > 0:
		t := w.nIn + p.r.intn(nOOS)
		j := 0
		if p.r.chance(0.3) {
			j = p.r.intn(w.sites[t].pages)
		}
		ts := &w.sites[t]
		p.a(p.hrefTo(t, w.pathOf(ts, j, ts.kindOf(j))), p.anchorFor(t, j))
	case x < 0.90:
		// Broken internal link: never a page of the model.
		var path string
		if p.r.chance(0.5) {
			path = "/" + p.r.pick(s.sections) + "/old-" + strconv.Itoa(p.r.intn(1000)) + ".html"
		} else {
			path = "/index.php?page=" + strconv.Itoa(s.pages+p.r.intn(100))
		}
		p.a(p.hrefTo(p.si, path), p.r.pick(w.voc.anchors))
	case x < 0.92:
		p.a("#"+p.r.pick(strings.Fields(fragmentsText)), "Ir al contenido")
	default:
		j := 0
		if p.i > 0 {
			j = (p.i - 1) / s.branch
		}
		p.a(p.hrefTo(p.si, p.pagePath(j)), p.anchorFor(p.si, j))
	}
}

// charsetMeta returns the <meta> charset declaration of a page, if any.
func (s *site) charsetMeta() string {
	switch s.charset {
	case csUTF8Meta, csUTF8HeaderUpper:
		return `<meta charset="utf-8">` + "\n"
	case csUTF8Header:
		if s.metaUTF8 {
			return `<meta charset="utf-8">` + "\n"
		}
	case csLatin1Meta:
		return `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">` + "\n"
	case csLatin1Header:
		if s.metaUTF8 {
			return `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">` + "\n"
		}
	}
	return ""
}

// renderHTML renders an HTML page (home, ordinary, private or frameset)
// and returns its UTF-8 text with the Title (and, with truth, the Links
// and Anchors) of the truth filled in. v is the version of a changing
// page (pc its change model; 0 for every other page).
func (w *Web) renderHTML(si, i int, m pageMeta, truth bool, origin string, pc pageChange, v int) ([]byte, PageInfo) {
	s := &w.sites[si]
	base, err := url.Parse(origin + m.path)
	if err != nil {
		// Cannot happen: host names and paths are generated ASCII.
		base = &url.URL{Scheme: "http", Host: s.name, Path: "/"}
	}
	p := &pageWriter{w: w, si: si, i: i, r: newRNG(s.seed, uint64(i), tagBody), base: base, basePath: base.Path, truth: truth,
		aliasR: newRNG(s.seed, uint64(i), tagAliasLink)}
	p.b.Grow(8 << 10)
	title := w.fullTitle(si, i, m.kind)
	if m.kind == kindFrames {
		p.frameset(title)
		return p.b.Bytes(), PageInfo{Title: title, Links: p.links, Anchors: p.anchors}
	}
	b := &p.b
	if p.r.chance(0.2) {
		b.WriteString(`<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">` + "\n")
	} else {
		b.WriteString("<!DOCTYPE html>\n")
	}
	p.upper = p.r.chance(0.05)
	b.WriteString("<html lang=\"es\">\n<head>\n" + s.charsetMeta())
	b.WriteString("<title>" + html.EscapeString(title) + "</title>\n")
	b.WriteString(`<meta name="description" content="` + html.EscapeString(w.shortTitle(si, i)) + "\">\n")
	if m.kind == kindHTML && p.r.chance(0.05) {
		bp := "/"
		if p.r.chance(0.6) {
			bp = "/" + p.r.pick(s.sections) + "/"
		}
		nb, err := url.Parse(origin + bp)
		if err == nil {
			p.base, p.basePath = nb, nb.Path
			b.WriteString(`<base href="` + html.EscapeString(p.ownOrigin()+bp) + "\">\n")
		}
	}
	if p.r.chance(0.3) {
		fmt.Fprintf(b, "<script type=\"text/javascript\">\nvar destino = \"/%s/oculto-%d.html\";\n"+
			"document.write('<a href=\"/js/escrito.html\">generado</a>');\n"+
			"if (destino.length < 3 && destino.length > 1) { window.location.href = destino; }\n</script>\n",
			p.r.pick(s.sections), p.r.intn(1000))
	}
	b.WriteString("</head>\n<body>\n<a name=\"arriba\"></a>\n<div id=\"cabecera\">\n")
	if s.hasLogo {
		p.aImg(p.hrefTo(si, "/"), "Logo "+s.label)
	} else {
		p.a(p.hrefTo(si, "/"), s.label)
	}
	b.WriteString("\n<ul id=\"menu\">\n")
	for j := 1; j <= min(s.branch, s.pages-1, 6); j++ {
		b.WriteString("<li>")
		p.a(p.hrefTo(si, p.pagePath(j)), w.shortTitle(si, j))
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</div>\n<h1>" + html.EscapeString(w.shortTitle(si, i)) + "</h1>\n")

	inline := p.r.between(2, 10)
	for np := p.r.between(2, 5); np > 0; np-- {
		b.WriteString("<p>")
		for ns := p.r.between(2, 5); ns > 0; ns-- {
			p.sentence()
			if inline > 0 && p.r.chance(0.4) {
				p.inlineLink()
				b.WriteString(" ")
				inline--
			}
		}
		b.WriteString("</p>\n")
	}
	if inline > 0 {
		b.WriteString("<p>Ver también: ")
		for ; inline > 0; inline-- {
			p.inlineLink()
			b.WriteString(" ")
		}
		b.WriteString("</p>\n")
	}

	if first := i*s.branch + 1; first < s.pages {
		b.WriteString("<h2>Contenidos</h2>\n<ul class=\"hijos\">\n")
		for c := first; c < first+s.branch && c < s.pages; c++ {
			b.WriteString("<li>")
			p.a(p.hrefTo(si, p.pagePath(c)), p.anchorFor(si, c))
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	if p.r.chance(0.05) {
		name := "mapa" + strconv.Itoa(i)
		b.WriteString("<map name=\"" + name + "\">\n")
		for k, n := 0, p.r.between(1, 3); k < n; k++ {
			j := p.r.intn(s.pages)
			p.area(p.hrefTo(si, p.pagePath(j)), w.shortTitle(si, j), fmt.Sprintf("%d,0,%d,40", k*100, k*100+99))
		}
		b.WriteString("</map>\n<img src=\"/img/mapa.gif\" usemap=\"#" + name + "\" alt=\"Mapa del sitio\">\n")
	}
	if p.r.chance(0.04) {
		p.frame("iframe", p.hrefTo(si, p.pagePath(p.r.intn(s.pages))), ` width="400" height="200"`)
	}
	if p.r.chance(0.2) {
		b.WriteString("<!-- enlace antiguo: <a href=\"/" + p.r.pick(s.sections) + "/antiguo.html\">Antiguo</a> -->\n")
	}
	if i == 0 {
		w.homeExtras(p)
		w.writeHostileLinks(p)
		w.writeAliasLinks(p)
	}
	if w.cfg.HeavyPages {
		w.appendix(p)
	}
	if v > 0 {
		w.writeVersion(p, pc, v)
	}
	b.WriteString("<div id=\"pie\">\n<p>© 2024 " + html.EscapeString(s.label) + ". Todos los derechos reservados.</p>\n<p>")
	p.a(p.hrefTo(si, "/"), "Inicio")
	if p.r.chance(0.5) {
		b.WriteString(" | ")
		p.a("#arriba", "Volver arriba")
	}
	b.WriteString("</p>\n</div>\n</body>\n</html>\n")
	return b.Bytes(), PageInfo{Title: title, Links: p.links, Anchors: p.anchors}
}

// homeExtras writes the "friend sites" block of a home page. It links the
// next in-scope host (so every host is reachable from any other), a few
// more hosts, and every out-of-scope host assigned to this one.
func (w *Web) homeExtras(p *pageWriter) {
	s := &w.sites[p.si]
	b := &p.b
	b.WriteString("<h2>Sitios amigos</h2>\n<ul class=\"amigos\">\n")
	link := func(t int) {
		b.WriteString("<li>")
		p.a(p.hrefTo(t, "/"), p.anchorFor(t, 0))
		b.WriteString("</li>\n")
	}
	if s.inScope {
		if w.nIn > 1 {
			next := (p.si + 1) % w.nIn
			b.WriteString("<li>")
			p.a(p.httpHomeHref(next, p.hrefTo(next, "/"), true), p.anchorFor(next, 0))
			b.WriteString("</li>\n")
			for k := p.r.intn(4); k > 0; k-- {
				link(w.otherHost(&p.r, p.si))
			}
		}
		for j := p.si; j < len(w.sites)-w.nIn; j += w.nIn {
			link(w.nIn + j)
		}
	} else if w.nIn > 0 {
		link((p.si * 7) % w.nIn)
		link(p.r.intn(w.nIn))
	}
	b.WriteString("</ul>\n")
	if s.hasLogo {
		b.WriteString("<p>")
		p.a(p.hrefTo(p.si, logoPath), "Descargar logo")
		b.WriteString("</p>\n")
	}
}

// frameset writes a frameset document (the page is a tree leaf).
func (p *pageWriter) frameset(title string) {
	s := &p.w.sites[p.si]
	b := &p.b
	b.WriteString(`<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Frameset//EN" "http://www.w3.org/TR/html4/frameset.dtd">` + "\n")
	b.WriteString("<html>\n<head>\n" + s.charsetMeta() + "<title>" + html.EscapeString(title) + "</title>\n</head>\n")
	b.WriteString("<frameset cols=\"25%,75%\">\n")
	p.frame("frame", p.hrefTo(p.si, "/"), ` name="menu"`)
	p.frame("frame", p.hrefTo(p.si, p.pagePath(p.r.intn(s.pages))), ` name="contenido"`)
	b.WriteString("<noframes><p>Su navegador no soporta marcos.</p></noframes>\n</frameset>\n</html>\n")
}

// appendix writes, on about 5% of the pages, a long appendix of text
// without links whose length follows a Pareto law (alpha 1.2, from 2 KB,
// at most 1 MiB). It draws from its own random stream, so the rest of the
// page is the same with or without it.
func (w *Web) appendix(p *pageWriter) {
	s := &w.sites[p.si]
	r := newRNG(s.seed, uint64(p.i), tagAppendix)
	if !r.chance(0.05) {
		return
	}
	size := min(int(2000*math.Pow(1-r.float(), -1/1.2)), 1<<20)
	b := &p.b
	b.WriteString("<div class=\"anexo\">\n<h2>Anexo</h2>\n")
	for start := b.Len(); b.Len()-start < size; {
		b.WriteString("<p>")
		for ns := r.between(3, 8); ns > 0; ns-- {
			w.sentence(b, &r)
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</div>\n")
}
