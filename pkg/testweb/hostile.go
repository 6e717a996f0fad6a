package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HostileKind names the way a hostile host misbehaves.
type HostileKind string

// The hostile hosts, one of each kind. Each is named <kind>.hostil.<suffix>
// (in scope), answers 404 for /robots.txt, and is linked from ordinary
// home pages through its Entries.
const (
	// HostileDrip answers "/" with 200, Content-Length 600 and then one
	// byte of HTML per second: only a total time limit stops it.
	HostileDrip HostileKind = "drip"
	// HostileEndless answers "/" with 200 and a chunked HTML body that
	// never ends (the server stops after EndlessCap bytes).
	HostileEndless HostileKind = "endless"
	// HostileGzipBomb answers "/" with 200, Content-Encoding: gzip and
	// about 1 MiB on the wire that decodes to GzipBombSize bytes, sent
	// whatever the request's Accept-Encoding.
	HostileGzipBomb HostileKind = "gzip-bomb"
	// HostileRedirectLoop redirects "/" to /loop/1, /loop/k to /loop/k+1
	// and /loop/9 back to "/"; /self redirects to itself.
	HostileRedirectLoop HostileKind = "redirect-loop"
	// HostileHuge answers "/" with a HugeSize-byte HTML page (with
	// Content-Length).
	HostileHuge HostileKind = "huge"
	// HostileGarbage answers "/" with 64 KiB of random bytes labelled
	// "text/html; charset=utf-8".
	HostileGarbage HostileKind = "garbage"
	// HostileManyLinks answers "/" with a page of ManyLinks links to
	// /item/1.html ... /item/20000.html, small pages that link back.
	HostileManyLinks HostileKind = "many-links"
	// HostileCalendar is a crawler trap: /calendar?month=N (N = 0, 1, ...
	// without end) links to the next twelve months, the previous one and
	// 28 day pages /calendar?month=N&day=D, which link to 24 hour pages
	// /calendar?month=N&day=D&hour=H. Only a per-site cap stops a crawler.
	HostileCalendar HostileKind = "calendar"
	// HostileDeep answers "/" with HTML nested DeepNesting <div> elements
	// deep; the innermost holds a link to /inner.html, a small page.
	HostileDeep HostileKind = "deep"
	// HostileNXDomain is a name the DNS server answers NXDOMAIN for.
	HostileNXDomain HostileKind = "nxdomain"
	// HostileServFail is a name the DNS server answers SERVFAIL for.
	HostileServFail HostileKind = "servfail"
	// HostileReset resets the TCP connection (RST) on "/" as soon as the
	// request is read, and on /partial.html after the headers and 1,000
	// of the 10,000 bytes promised.
	HostileReset HostileKind = "reset"
)

// Sizes of the hostile answers.
const (
	// DripBytes is the Content-Length of the drip host's page, sent one
	// byte per second.
	DripBytes = 600
	// EndlessCap bounds the endless body: the server stops (ending the
	// chunked body properly) after this many bytes.
	EndlessCap = 1 << 30
	// GzipBombSize is the decoded size of the gzip bomb.
	GzipBombSize = 1 << 30
	// HugeSize is the size of the huge page (50 MiB).
	HugeSize = 50 << 20
	// GarbageSize is the size of the garbage page.
	GarbageSize = 64 << 10
	// ManyLinks is the number of links of the many-links page.
	ManyLinks = 20000
	// DeepNesting is how deep the deep page nests its <div> elements.
	DeepNesting = 100000
	// calendarMaxMonth bounds month numbers (and keeps them in an int).
	calendarMaxMonth = 999999999
)

// hostileKinds returns every kind, in a fixed order.
func hostileKinds() []HostileKind {
	return []HostileKind{
		HostileDrip, HostileEndless, HostileGzipBomb, HostileRedirectLoop, HostileHuge,
		HostileGarbage, HostileManyLinks, HostileCalendar, HostileDeep,
		HostileNXDomain, HostileServFail, HostileReset,
	}
}

// HostileHost is the truth about one hostile host.
type HostileHost struct {
	// Name is the host name, e.g. "drip.hostil.cl".
	Name string
	// Kind says how it misbehaves.
	Kind HostileKind
	// Entries are the absolute URLs of it that ordinary pages link to
	// (with the port once it is known).
	Entries []string
	// Pages is the number of distinct URLs it serves as pages (any
	// status): -1 for the calendar trap (no end), 0 when the name does not
	// resolve.
	Pages int
	// Note says in a few words what a crawler meets there.
	Note string
}

// hostile is a hostile host of the web.
type hostile struct {
	name    string
	kind    HostileKind
	entries []string // paths
	linkers []int    // in-scope sites whose home pages link the entries
}

// buildHostile creates the hostile hosts and chooses the home pages that
// link them: the biggest site's (the first seed) links every one, and
// each is also linked from one more big site.
func (w *Web) buildHostile() {
	if !w.cfg.Hostile {
		return
	}
	w.hostileByName = make(map[string]*hostile)
	w.hostileFrom = make(map[int][]*hostile)
	kinds := hostileKinds()
	if w.cfg.HTTPSShare > 0 {
		kinds = append(kinds, tlsHostileKinds()...)
	}
	for j, k := range kinds {
		h := &hostile{name: string(k) + ".hostil." + w.cfg.Suffix, kind: k, entries: []string{"/"}}
		switch k {
		case HostileRedirectLoop:
			h.entries = []string{"/", "/self"}
		case HostileReset:
			h.entries = []string{"/", "/partial.html"}
		}
		if w.nIn > 0 {
			h.linkers = append(h.linkers, w.bySize[0])
			if w.nIn > 1 {
				h.linkers = append(h.linkers, w.bySize[1+j%(w.nIn-1)])
			}
		}
		w.hostiles = append(w.hostiles, h)
		w.hostileByName[h.name] = h
		for _, si := range h.linkers {
			w.hostileFrom[si] = append(w.hostileFrom[si], h)
		}
	}
}

// hostileOrigin returns "http://name:port" of a hostile host.
func (w *Web) hostileOrigin(h *hostile) string {
	if tlsHostile(h.kind) {
		return originWith("https", h.name, w.httpsPort())
	}
	p := w.port.Load()
	if p == 0 {
		return "http://" + h.name
	}
	return "http://" + h.name + ":" + strconv.FormatInt(p, 10)
}

// HostileHosts returns the truth about every hostile host, in a fixed
// order (none unless Config.Hostile).
func (w *Web) HostileHosts() []HostileHost {
	out := make([]HostileHost, 0, len(w.hostiles))
	for _, h := range w.hostiles {
		hh := HostileHost{Name: h.name, Kind: h.kind}
		for _, e := range h.entries {
			hh.Entries = append(hh.Entries, w.hostileOrigin(h)+e)
		}
		switch h.kind {
		case HostileDrip:
			hh.Pages, hh.Note = 1, fmt.Sprintf("200, %d bytes at one byte per second", DripBytes)
		case HostileEndless:
			hh.Pages, hh.Note = 1+w.cfg.EndlessLinks, "200, chunked body without end"
		case HostileGzipBomb:
			hh.Pages, hh.Note = 1, fmt.Sprintf("200, gzip: ~1 MiB on the wire, %d bytes decoded", GzipBombSize)
		case HostileRedirectLoop:
			hh.Pages, hh.Note = 11, "/ -> /loop/1 -> ... -> /loop/9 -> /, and /self -> /self"
		case HostileHuge:
			hh.Pages, hh.Note = 1, fmt.Sprintf("200, %d bytes of HTML", HugeSize)
		case HostileGarbage:
			hh.Pages, hh.Note = 1, fmt.Sprintf("200 text/html, %d random bytes", GarbageSize)
		case HostileManyLinks:
			hh.Pages, hh.Note = 1+ManyLinks, fmt.Sprintf("/ has %d links to small pages", ManyLinks)
		case HostileCalendar:
			hh.Pages, hh.Note = -1, "infinite /calendar?month=N pages: a trap bounded only by a site cap"
		case HostileDeep:
			hh.Pages, hh.Note = 2, fmt.Sprintf("/ nests %d <div> elements", DeepNesting)
		case HostileNXDomain:
			hh.Note = "DNS answers NXDOMAIN"
		case HostileServFail:
			hh.Note = "DNS answers SERVFAIL"
		case HostileReset:
			hh.Pages, hh.Note = 2, "TCP reset before the response (/) and in the body (/partial.html)"
		case HostileTLSStall:
			hh.Pages, hh.Note = 1, "TLS: reads the ClientHello and never answers"
		case HostileTLSDrip:
			hh.Pages, hh.Note = 1, fmt.Sprintf("TLS: the handshake one byte every %v", TLSDripInterval)
		case HostileTLSGarbage:
			hh.Pages, hh.Note = 1, "TLS: random bytes instead of a ServerHello"
		case HostileSchemeLoop:
			hh.Pages, hh.Note = 2, "http://…/ -> https://…/ -> http://…/ without end"
		}
		out = append(out, hh)
	}
	return out
}

// IsHostile reports whether host is one of the hostile hosts and which.
func (w *Web) IsHostile(host string) (HostileKind, bool) {
	h, ok := w.hostileByName[canonicalHost(host)]
	if !ok {
		return "", false
	}
	return h.kind, true
}

// writeHostileLinks writes, on the home page of site si, the links to
// the hostile hosts it refers to. It draws nothing from the page's random
// stream.
func (w *Web) writeHostileLinks(p *pageWriter) {
	hs := w.hostileFrom[p.si]
	if len(hs) == 0 {
		return
	}
	b := &p.b
	b.WriteString("<h2>Enlaces externos</h2>\n<ul class=\"externos\">\n")
	for _, h := range hs {
		for _, e := range h.entries {
			abs := w.hostileOrigin(h) + e
			text := "Visite " + h.name
			p.add(abs, text)
			b.WriteString("<li><a href=\"" + html.EscapeString(abs) + "\">" + html.EscapeString(text) + "</a></li>\n")
		}
	}
	b.WriteString("</ul>\n")
}

// hostilePage returns the truth about uri on hostile host h, and whether
// it is one of its pages.
func (w *Web) hostilePage(h *hostile, uri string) (PageInfo, bool) {
	o := w.hostileOrigin(h)
	info := PageInfo{URL: o + uri}
	switch h.kind {
	case HostileNXDomain, HostileServFail:
		return info, false
	case HostileReset:
		switch uri {
		case "/":
			return info, true // no response at all
		case "/partial.html":
			info.Status, info.MIME = 200, mimeHTMLUTF8
			return info, true
		}
	case HostileRedirectLoop:
		if loc, status, ok := redirectLoopTarget(uri); ok {
			info.Status, info.MIME, info.Location = status, mimeHTMLUTF8, o+loc
			info.Title = statusTitle(status)
			return info, true
		}
	case HostileDrip, HostileEndless, HostileGzipBomb, HostileHuge, HostileGarbage, HostileDeep, HostileManyLinks, HostileCalendar:
		if uri == "/robots.txt" {
			break
		}
		resp, pi, ok := w.hostileResponse(h, uri)
		if !ok {
			break
		}
		pi.URL = o + uri
		pi.Status, pi.MIME = resp.status, resp.ctype
		return pi, true
	}
	_, ei := errorResponse(404)
	ei.URL = info.URL
	return ei, false
}

// redirectLoopTarget returns the Location and status of a URI of the
// redirect-loop host.
func redirectLoopTarget(uri string) (loc string, status int, ok bool) {
	switch uri {
	case "/":
		return "/loop/1", http.StatusFound, true
	case "/self":
		return "/self", http.StatusFound, true
	case "/loop/9":
		return "/", http.StatusMovedPermanently, true
	}
	if n, found := strings.CutPrefix(uri, "/loop/"); found && len(n) == 1 && n[0] >= '1' && n[0] <= '8' {
		return "/loop/" + string(n[0]+1), http.StatusFound, true
	}
	return "", 0, false
}

// hostileResponse builds the (finite, in-memory) answer of the hostile
// hosts whose pages are ordinary HTML: many-links, calendar and deep, and
// the truth of the streamed ones (drip, endless, gzip bomb, huge,
// garbage), whose body it leaves empty.
func (w *Web) hostileResponse(h *hostile, uri string) (response, PageInfo, bool) {
	o := w.hostileOrigin(h)
	switch h.kind {
	case HostileDrip:
		if uri == "/" {
			return response{status: 200, ctype: mimeHTMLUTF8}, PageInfo{Title: "Goteo", Links: []string{o + "/"}, Anchors: []string{"Inicio"}}, true
		}
	case HostileEndless:
		if w.endlessPage(uri) {
			pi := PageInfo{Title: "Sin fin"}
			for _, l := range w.endlessLinks() {
				pi.Links, pi.Anchors = append(pi.Links, o+l), append(pi.Anchors, "Más")
			}
			return response{status: 200, ctype: mimeHTMLUTF8}, pi, true
		}
	case HostileGzipBomb:
		if uri == "/" {
			return response{status: 200, ctype: mimeHTMLUTF8}, PageInfo{Title: "Bomba"}, true
		}
	case HostileHuge:
		if uri == "/" {
			return response{status: 200, ctype: mimeHTMLUTF8}, PageInfo{Title: "Página enorme", Links: []string{o + "/"}, Anchors: []string{"Inicio"}}, true
		}
	case HostileGarbage:
		if uri == "/" {
			return response{status: 200, ctype: mimeHTMLUTF8}, PageInfo{}, true
		}
	case HostileManyLinks:
		return w.manyLinksPage(o, uri)
	case HostileCalendar:
		return calendarPage(o, uri)
	case HostileDeep:
		return deepPage(o, uri)
	}
	return response{}, PageInfo{}, false
}

// simplePage renders a small UTF-8 HTML page with links (hrefs are
// absolute paths, the truth's links absolute URLs on origin o).
func simplePage(o, title string, hrefs, texts []string) (response, PageInfo) {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) + "</title></head>\n<body>\n<h1>" +
		html.EscapeString(title) + "</h1>\n<ul>\n")
	info := PageInfo{Title: title, Links: make([]string, 0, len(hrefs)), Anchors: make([]string, 0, len(hrefs))}
	for k, href := range hrefs {
		b.WriteString("<li><a href=\"" + html.EscapeString(href) + "\">" + html.EscapeString(texts[k]) + "</a></li>\n")
		info.Links = append(info.Links, o+href)
		info.Anchors = append(info.Anchors, texts[k])
	}
	b.WriteString("</ul>\n</body></html>\n")
	return response{status: 200, ctype: mimeHTMLUTF8, body: []byte(b.String())}, info
}

// manyLinksPage is a page of the many-links host.
func (w *Web) manyLinksPage(o, uri string) (response, PageInfo, bool) {
	if uri == "/" {
		hrefs := make([]string, ManyLinks)
		texts := make([]string, ManyLinks)
		for k := range hrefs {
			hrefs[k] = "/item/" + strconv.Itoa(k+1) + ".html"
			texts[k] = "Artículo " + strconv.Itoa(k+1)
		}
		resp, info := simplePage(o, "Veinte mil enlaces", hrefs, texts)
		return resp, info, true
	}
	n, ok := strings.CutPrefix(uri, "/item/")
	if !ok {
		return response{}, PageInfo{}, false
	}
	n, ok = strings.CutSuffix(n, ".html")
	k, err := strconv.Atoi(n)
	if !ok || err != nil || k < 1 || k > ManyLinks || strconv.Itoa(k) != n {
		return response{}, PageInfo{}, false
	}
	resp, info := simplePage(o, "Artículo "+n, []string{"/"}, []string{"Inicio"})
	return resp, info, true
}

// calendarPage is a page of the calendar trap.
func calendarPage(o, uri string) (response, PageInfo, bool) {
	month := func(n int) string { return "/calendar?month=" + strconv.Itoa(n) }
	if uri == "/" {
		resp, info := simplePage(o, "Calendario", []string{month(0)}, []string{"Ver el calendario"})
		return resp, info, true
	}
	rest, ok := strings.CutPrefix(uri, "/calendar?")
	if !ok {
		return response{}, PageInfo{}, false
	}
	q, err := url.ParseQuery(rest)
	if err != nil {
		return response{}, PageInfo{}, false
	}
	num := func(key string, hi int) (int, bool) {
		v := q.Get(key)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > hi || strconv.Itoa(n) != v {
			return 0, false
		}
		return n, true
	}
	m, ok := num("month", calendarMaxMonth)
	if !ok {
		return response{}, PageInfo{}, false
	}
	// Only the canonical forms the pages link to are pages.
	var hrefs, texts []string
	var title string
	_, hasDay := q["day"]
	_, hasHour := q["hour"]
	switch {
	case !hasDay && !hasHour && uri == "/calendar?"+"month="+strconv.Itoa(m):
		title = "Calendario: mes " + strconv.Itoa(m)
		if m > 0 {
			hrefs, texts = append(hrefs, month(m-1)), append(texts, "Mes anterior")
		}
		for k := 1; k <= 12 && m+k <= calendarMaxMonth; k++ {
			hrefs, texts = append(hrefs, month(m+k)), append(texts, "Mes "+strconv.Itoa(m+k))
		}
		for d := 1; d <= 28; d++ {
			hrefs = append(hrefs, month(m)+"&day="+strconv.Itoa(d))
			texts = append(texts, "Día "+strconv.Itoa(d))
		}
	case hasDay && !hasHour:
		d, ok := num("day", 28)
		if !ok || d < 1 || uri != month(m)+"&day="+strconv.Itoa(d) {
			return response{}, PageInfo{}, false
		}
		title = "Calendario: mes " + strconv.Itoa(m) + ", día " + strconv.Itoa(d)
		hrefs, texts = append(hrefs, month(m)), append(texts, "Volver al mes")
		for hr := 0; hr < 24; hr++ {
			hrefs = append(hrefs, month(m)+"&day="+strconv.Itoa(d)+"&hour="+strconv.Itoa(hr))
			texts = append(texts, strconv.Itoa(hr)+":00")
		}
	case hasDay && hasHour:
		d, ok1 := num("day", 28)
		hr, ok2 := num("hour", 23)
		if !ok1 || !ok2 || d < 1 || uri != month(m)+"&day="+strconv.Itoa(d)+"&hour="+strconv.Itoa(hr) {
			return response{}, PageInfo{}, false
		}
		title = "Calendario: mes " + strconv.Itoa(m) + ", día " + strconv.Itoa(d) + ", " + strconv.Itoa(hr) + ":00"
		hrefs, texts = append(hrefs, month(m)+"&day="+strconv.Itoa(d)), append(texts, "Volver al día")
	default:
		return response{}, PageInfo{}, false
	}
	resp, info := simplePage(o, title, hrefs, texts)
	return resp, info, true
}

// deepPage is a page of the deep host.
func deepPage(o, uri string) (response, PageInfo, bool) {
	switch uri {
	case "/inner.html":
		resp, info := simplePage(o, "Interior", []string{"/"}, []string{"Inicio"})
		return resp, info, true
	case "/":
	default:
		return response{}, PageInfo{}, false
	}
	var b bytes.Buffer
	b.Grow(12*DeepNesting + 200)
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Profundo</title></head>\n<body>\n")
	for k := 0; k < DeepNesting; k++ {
		b.WriteString("<div>")
	}
	b.WriteString("<p>Muy adentro. <a href=\"/inner.html\">Interior</a></p>")
	for k := 0; k < DeepNesting; k++ {
		b.WriteString("</div>")
	}
	b.WriteString("\n</body></html>\n")
	return response{status: 200, ctype: mimeHTMLUTF8, body: b.Bytes()},
		PageInfo{Title: "Profundo", Links: []string{o + "/inner.html"}, Anchors: []string{"Interior"}}, true
}

// serveHostile answers a request to hostile host h. It returns the status
// recorded for the request (0 when the connection was reset before any
// response).
func (w *Web) serveHostile(rw http.ResponseWriter, req *http.Request, h *hostile, uri string) int {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		resp, _ := errorResponse(http.StatusMethodNotAllowed)
		w.writeResponse(rw, req, resp)
		return resp.status
	}
	if uri == "/robots.txt" {
		resp, _ := errorResponse(404)
		w.writeResponse(rw, req, resp)
		return 404
	}
	switch h.kind {
	case HostileNXDomain, HostileServFail:
		resp, _ := errorResponse(http.StatusMisdirectedRequest)
		w.writeResponse(rw, req, resp)
		return resp.status
	case HostileReset:
		switch uri {
		case "/":
			resetConn(rw, nil)
			return 0
		case "/partial.html":
			head := "HTTP/1.1 200 OK\r\nContent-Type: " + mimeHTMLUTF8 + "\r\nContent-Length: 10000\r\n\r\n"
			body := "<!DOCTYPE html>\n<html><head><title>Parcial</title></head><body><p>" + strings.Repeat("x", 1000)
			resetConn(rw, []byte(head+body[:1000]))
			return 200
		}
	case HostileRedirectLoop:
		if loc, status, ok := redirectLoopTarget(uri); ok {
			resp, _ := errorResponse(status)
			resp.location = loc
			w.writeResponse(rw, req, resp)
			return status
		}
	case HostileSchemeLoop:
		resp, _ := w.schemeLoopResponse(h, uri, req.TLS != nil)
		w.writeResponse(rw, req, resp)
		return resp.status
	case HostileDrip:
		if uri == "/" {
			w.serveDrip(rw, req)
			return 200
		}
	case HostileEndless:
		if w.endlessPage(uri) {
			w.serveEndless(rw, req)
			return 200
		}
	case HostileGzipBomb:
		if uri == "/" {
			bomb := w.gzipBomb()
			hd := rw.Header()
			hd["Date"] = nil
			hd.Set("Content-Type", mimeHTMLUTF8)
			hd.Set("Content-Encoding", "gzip")
			hd.Set("Content-Length", strconv.Itoa(len(bomb)))
			rw.WriteHeader(200)
			if req.Method != http.MethodHead {
				_, _ = rw.Write(bomb)
			}
			return 200
		}
	case HostileHuge:
		if uri == "/" {
			w.serveHuge(rw, req)
			return 200
		}
	case HostileGarbage:
		if uri == "/" {
			w.writeResponse(rw, req, response{status: 200, ctype: mimeHTMLUTF8, body: w.garbage()})
			return 200
		}
	default:
		if resp, _, ok := w.hostileResponse(h, uri); ok {
			w.writeResponse(rw, req, resp)
			return resp.status
		}
	}
	resp, _ := errorResponse(404)
	w.writeResponse(rw, req, resp)
	return 404
}

// resetConn hijacks the connection, writes prefix, and closes it with
// SO_LINGER 0 so that the kernel sends a RST.
func resetConn(rw http.ResponseWriter, prefix []byte) {
	hj, ok := rw.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if len(prefix) > 0 {
		_, _ = buf.Write(prefix)
		_ = buf.Flush()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// pause waits d, and reports false if the client went away or the web is
// closing.
func (w *Web) pause(req *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-req.Context().Done():
	case <-w.quit:
	}
	return false
}

// stopped reports whether the client went away or the web is closing.
func (w *Web) stopped(req *http.Request) bool {
	select {
	case <-req.Context().Done():
		return true
	case <-w.quit:
		return true
	default:
		return false
	}
}

// dripBody is the page the drip host sends, DripBytes long.
func dripBody() []byte {
	head := "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Goteo</title></head>\n<body><p><a href=\"/\">Inicio</a></p>\n<p>"
	tail := "</p></body></html>\n"
	return []byte(head + strings.Repeat("gota ", (DripBytes-len(head)-len(tail))/5) +
		strings.Repeat(" ", (DripBytes-len(head)-len(tail))%5) + tail)
}

// serveDrip sends the drip page one byte per second.
func (w *Web) serveDrip(rw http.ResponseWriter, req *http.Request) {
	body := dripBody()
	hd := rw.Header()
	hd["Date"] = nil
	hd.Set("Content-Type", mimeHTMLUTF8)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(200)
	if req.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(rw)
	_ = rc.Flush()
	for k := range body {
		if k > 0 && !w.pause(req, time.Second) {
			return
		}
		if _, err := rw.Write(body[k : k+1]); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// endlessPath is the path of the endless host's further pages
// (Config.EndlessLinks): /sin-fin/1, /sin-fin/2, ...
const endlessPath = "/sin-fin/"

// endlessPage tells whether uri is a page of the endless host: "/", and
// /sin-fin/K for K from 1 to Config.EndlessLinks.
func (w *Web) endlessPage(uri string) bool {
	if uri == "/" {
		return true
	}
	rest, ok := strings.CutPrefix(uri, endlessPath)
	if !ok {
		return false
	}
	k, err := strconv.Atoi(rest)
	return err == nil && k >= 1 && k <= w.cfg.EndlessLinks && strconv.Itoa(k) == rest
}

// endlessLinks returns the paths every endless page links to.
func (w *Web) endlessLinks() []string {
	out := make([]string, w.cfg.EndlessLinks)
	for k := range out {
		out[k] = endlessPath + strconv.Itoa(k+1)
	}
	return out
}

// serveEndless sends HTML without end (up to EndlessCap bytes), after
// the links of Config.EndlessLinks.
func (w *Web) serveEndless(rw http.ResponseWriter, req *http.Request) {
	hd := rw.Header()
	hd["Date"] = nil
	hd.Set("Content-Type", mimeHTMLUTF8)
	rw.WriteHeader(200)
	if req.Method == http.MethodHead {
		return
	}
	chunk := []byte(strings.Repeat("<p>Y el texto sigue y sigue, sin terminar nunca.</p>\n", 1200))
	head := "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Sin fin</title></head>\n<body>\n"
	for _, l := range w.endlessLinks() {
		head += "<p><a href=\"" + l + "\">Más</a></p>\n"
	}
	if _, err := rw.Write([]byte(head)); err != nil {
		return
	}
	for sent := 0; sent < EndlessCap; sent += len(chunk) {
		if w.stopped(req) {
			return
		}
		if _, err := rw.Write(chunk); err != nil {
			return
		}
	}
}

// hugeHead and hugeTail frame the huge page.
const (
	hugeHead = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Página enorme</title></head>\n<body>\n<p><a href=\"/\">Inicio</a></p>\n"
	hugeTail = "</body></html>\n"
)

// serveHuge sends the HugeSize-byte page.
func (w *Web) serveHuge(rw http.ResponseWriter, req *http.Request) {
	hd := rw.Header()
	hd["Date"] = nil
	hd.Set("Content-Type", mimeHTMLUTF8)
	hd.Set("Content-Length", strconv.Itoa(HugeSize))
	rw.WriteHeader(200)
	if req.Method == http.MethodHead {
		return
	}
	line := []byte("<p>Una página muy, muy larga: el mismo párrafo repetido hasta llegar a cincuenta megabytes.</p>\n")
	var chunk []byte
	for len(chunk) < 64<<10 {
		chunk = append(chunk, line...)
	}
	if _, err := rw.Write([]byte(hugeHead)); err != nil {
		return
	}
	left := HugeSize - len(hugeHead) - len(hugeTail)
	for left > 0 {
		if w.stopped(req) {
			return
		}
		n := min(left, len(chunk))
		if _, err := rw.Write(chunk[:n]); err != nil {
			return
		}
		left -= n
	}
	_, _ = rw.Write([]byte(hugeTail))
}

// gzipBomb returns the gzip bomb, built once: an HTML start and then
// gzip members of 16 MiB of spaces each, GzipBombSize bytes decoded in
// all (a gzip file may hold several members; decoders read them all).
func (w *Web) gzipBomb() []byte {
	w.bombOnce.Do(func() {
		const member = 16 << 20
		var one bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
		head := []byte("<!DOCTYPE html>\n<html><head><title>Bomba</title></head><body><p>")
		_, _ = zw.Write(head)
		spaces := bytes.Repeat([]byte{' '}, 1<<20)
		left := member - len(head)
		for left > 0 {
			n := min(left, len(spaces))
			_, _ = zw.Write(spaces[:n])
			left -= n
		}
		_ = zw.Close()
		first := append([]byte(nil), one.Bytes()...)
		one.Reset()
		zw.Reset(&one)
		for left = member; left > 0; {
			n := min(left, len(spaces))
			_, _ = zw.Write(spaces[:n])
			left -= n
		}
		_ = zw.Close()
		rest := one.Bytes()
		out := make([]byte, 0, len(first)+(GzipBombSize/member-1)*len(rest))
		out = append(out, first...)
		for k := 1; k < GzipBombSize/member; k++ {
			out = append(out, rest...)
		}
		w.bomb = out
	})
	return w.bomb
}

// garbage returns the garbage page: GarbageSize deterministic random
// bytes.
func (w *Web) garbage() []byte {
	r := newRNG(uint64(w.cfg.Seed), tagGarbage, 0)
	out := make([]byte, GarbageSize)
	for k := 0; k < len(out); k += 8 {
		v := r.next()
		for j := 0; j < 8 && k+j < len(out); j++ {
			out[k+j] = byte(v >> (8 * j))
		}
	}
	return out
}
