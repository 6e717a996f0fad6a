// Package dupweb generates a web of HTML pages whose near-duplicates are
// known: sites with a shared template (navigation, footer) on every page,
// pages of every length down to stubs that are mostly template, and the
// near-copies a crawl meets, each recorded in the truth: a page served
// again with another date ("actualizado el ..."), with a session id in the
// URL and a visit counter, in a printer version (no template), and whole
// sites mirrored under another host name. It is the ground truth against
// which the gatherer's simhash and the grouping are measured
// (docs/gatherer.md, "Near-duplicates"); everything is a pure function of
// the Config.
package dupweb

import (
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"strings"
)

// Kinds of pages.
const (
	KindOriginal = "original" // a page of its own
	KindDate     = "date"     // the original with another date line
	KindSession  = "session"  // the original under a session id, with another visit count
	KindPrinter  = "printer"  // the original's body without the site's template
	KindMirror   = "mirror"   // the original on a mirror site
)

// Config says what to generate; zero fields take the defaults.
type Config struct {
	Sites    int     // original sites (default 40)
	MaxPages int     // pages of the largest site (default 60)
	Mirrors  int     // sites that mirror an original site (default 4)
	Variants float64 // share of original pages with a date, session or printer copy each (default 0.1)
	Seed     uint64
}

// Page is one generated page.
type Page struct {
	URL  string
	Site string // host name
	Kind string
	// Group is the index (in the list Generate returns) of the original
	// page this one copies, its own index for an original: pages with the
	// same Group are near-duplicates, all others are not.
	Group int
	HTML  []byte
	// BodyWords is the number of words of the original's body (without
	// the template).
	BodyWords int
}

type site struct {
	host   string
	name   string
	nav    []string
	footer string
}

type gen struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

// Generate returns the pages: every original site's pages, then their
// variants, then the mirror sites' pages.
func Generate(cfg Config) []Page {
	if cfg.Sites <= 0 {
		cfg.Sites = 40
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = 60
	}
	if cfg.Mirrors < 0 {
		cfg.Mirrors = 0
	} else if cfg.Mirrors == 0 {
		cfg.Mirrors = 4
	}
	if cfg.Variants <= 0 {
		cfg.Variants = 0.1
	}
	g := &gen{r: rand.New(rand.NewPCG(cfg.Seed, 0xd0b))}
	g.vocab = g.words(4000)
	g.zipf = rand.NewZipf(g.r, 1.07, 2, uint64(len(g.vocab)-1))
	var pages []Page
	var sites []site
	bodies := map[int]string{} // original index → body HTML
	for s := 0; s < cfg.Sites; s++ {
		st := g.site(fmt.Sprintf("www.%s%d.cl", g.vocab[g.r.IntN(300)], s))
		sites = append(sites, st)
		n := 1 + int(float64(cfg.MaxPages)*math.Pow(g.r.Float64(), 2))
		for p := 0; p < n; p++ {
			words := g.bodyWords()
			body := g.body(words)
			i := len(pages)
			bodies[i] = body
			pages = append(pages, Page{URL: fmt.Sprintf("http://%s/p%d.html", st.host, p), Site: st.host, Kind: KindOriginal, Group: i, BodyWords: words,
				HTML: g.page(st, g.title(), body, g.date(), "")})
		}
	}
	originals := len(pages)
	for i := 0; i < originals; i++ {
		o := pages[i]
		st := siteOf(sites, o.Site)
		title := titleOf(o.HTML)
		if g.r.Float64() < cfg.Variants {
			pages = append(pages, Page{URL: o.URL + "?v=2", Site: o.Site, Kind: KindDate, Group: i, BodyWords: o.BodyWords,
				HTML: g.page(st, title, bodies[i], g.date(), "")})
		}
		if g.r.Float64() < cfg.Variants {
			pages = append(pages, Page{URL: strings.TrimSuffix(o.URL, ".html") + fmt.Sprintf(";jsessionid=%08X.html", g.r.Uint32()), Site: o.Site, Kind: KindSession, Group: i, BodyWords: o.BodyWords,
				HTML: g.page(st, title, bodies[i], dateOf(o.HTML), fmt.Sprintf("Visitas: %d", 1000+g.r.IntN(90000)))})
		}
		if g.r.Float64() < cfg.Variants {
			pages = append(pages, Page{URL: strings.Replace(o.URL, "/p", "/imprimir/p", 1), Site: o.Site, Kind: KindPrinter, Group: i, BodyWords: o.BodyWords,
				HTML: printer(title, bodies[i])})
		}
	}
	for m := 0; m < cfg.Mirrors && m < cfg.Sites; m++ {
		orig := sites[m*cfg.Sites/cfg.Mirrors]
		mirror := orig
		mirror.host = fmt.Sprintf("espejo%d.%s", m, strings.TrimPrefix(orig.host, "www."))
		for i := 0; i < originals; i++ {
			o := pages[i]
			if o.Site != orig.host {
				continue
			}
			pages = append(pages, Page{URL: strings.Replace(o.URL, orig.host, mirror.host, 1), Site: mirror.host, Kind: KindMirror, Group: i, BodyWords: o.BodyWords,
				HTML: g.page(mirror, titleOf(o.HTML), bodies[i], dateOf(o.HTML), "")})
		}
	}
	return pages
}

// words makes n distinct words of two to four syllables.
func (g *gen) words(n int) []string {
	syl := []string{"ca", "sa", "la", "ma", "pa", "ta", "re", "de", "ne", "te", "ri", "li", "mi", "ti", "co", "lo", "mo", "po", "to", "cu", "lu", "mu", "gra", "tra", "bra", "cia", "ción", "dad", "mente", "es", "al", "en", "or", "ar", "ir", "ul"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		k := 2 + g.r.IntN(3)
		var b strings.Builder
		for j := 0; j < k; j++ {
			b.WriteString(syl[g.r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func (g *gen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *gen) phrase(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

// bodyWords draws a body length: a fifth of the pages are stubs of 3 to
// 30 words, the rest log-uniform from 30 to 2,000.
func (g *gen) bodyWords() int {
	if g.r.IntN(5) == 0 {
		return 3 + g.r.IntN(28)
	}
	return int(30 * math.Pow(2000.0/30, g.r.Float64()))
}

func (g *gen) body(words int) string {
	var b strings.Builder
	for words > 0 {
		n := min(words, 20+g.r.IntN(60))
		s := g.phrase(n)
		fmt.Fprintf(&b, "<p>%s%s.</p>\n", strings.ToUpper(s[:1]), s[1:])
		words -= n
	}
	return b.String()
}

func (g *gen) title() string { return g.phrase(2 + g.r.IntN(5)) }

func (g *gen) date() string {
	months := []string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}
	return fmt.Sprintf("%d de %s de %d", 1+g.r.IntN(28), months[g.r.IntN(12)], 2015+g.r.IntN(12))
}

func (g *gen) site(host string) site {
	s := site{host: host, name: g.phrase(2 + g.r.IntN(3))}
	for i := 0; i < 6+g.r.IntN(8); i++ {
		s.nav = append(s.nav, g.phrase(1+g.r.IntN(3)))
	}
	s.footer = g.phrase(15 + g.r.IntN(25))
	return s
}

// page renders a page of site s.
func (g *gen) page(s site, title, body, date, counter string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", html.EscapeString(title))
	fmt.Fprintf(&b, "<header><h1>%s</h1><p>%s</p><nav>", html.EscapeString(s.name), s.host)
	for i, n := range s.nav {
		fmt.Fprintf(&b, "<a href=\"/s%d.html\">%s</a> ", i, n)
	}
	fmt.Fprintf(&b, "</nav></header>\n<main><h2>%s</h2>\n<p class=date>Actualizado el %s</p>\n%s</main>\n", html.EscapeString(title), date, body)
	fmt.Fprintf(&b, "<footer><p>%s</p>", s.footer)
	if counter != "" {
		fmt.Fprintf(&b, "<p>%s</p>", counter)
	}
	b.WriteString("<p><a href=\"/imprimir/\">Versión para imprimir</a></p></footer>\n</body></html>\n")
	return []byte(b.String())
}

// printer renders the printer version of a page: its title and body only.
func printer(title, body string) []byte {
	return []byte(fmt.Sprintf("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n<p>Versión para imprimir</p>\n<h2>%s</h2>\n%s</body></html>\n",
		html.EscapeString(title), html.EscapeString(title), body))
}

func siteOf(sites []site, host string) site {
	for _, s := range sites {
		if s.host == host {
			return s
		}
	}
	return site{host: host}
}

func between(b []byte, from, to string) string {
	s := string(b)
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

func titleOf(b []byte) string { return html.UnescapeString(between(b, "<title>", "</title>")) }

func dateOf(b []byte) string { return between(b, "Actualizado el ", "</p>") }
