package testweb

import (
	"errors"
	"fmt"
	"html"
	"math"
	"net/url"
	"strconv"
	"time"
)

// This file is the changing web (Config.Change): which pages change, how
// often, which version of a page is live at a time, and what a version
// adds to the page. The rule is documented in docs/testweb.md ("Versions")
// so that a tool can recompute it; VersionAt and ChangeTimes answer it.

// Defaults of the changing web (Config.Change): the shares and ranges of
// the web the project measured freshness on (docs/testweb.md).
const (
	// DefaultChangeShare is the fraction of the HTML pages that change.
	DefaultChangeShare = 0.7
	// DefaultChangeIntervalMin is the shortest mean interval between two
	// changes of a page.
	DefaultChangeIntervalMin = 30 * time.Second
	// DefaultChangeIntervalMax is the longest mean interval between two
	// changes of a page.
	DefaultChangeIntervalMax = 50 * time.Minute
	// DefaultChangeLinkShare is the fraction of the changing pages whose
	// links change with the version.
	DefaultChangeLinkShare = 0.5
	// DefaultHonestShare is the fraction of the sites with true
	// validators, with Config.Change.
	DefaultHonestShare = 0.6
	// DefaultLyingShare is the fraction of the sites that send
	// "Last-Modified: now", with Config.Change.
	DefaultLyingShare = 0.2
)

// maxChangeSeconds bounds the change times generated (about 3,000
// years after the origin), so that no loop over them runs away.
const maxChangeSeconds = 1 << 36

// changeDefaults fills and validates the fields of the changing web, the
// validators and the encodings.
func (c Config) changeDefaults() (Config, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"ChangeShare", c.ChangeShare}, {"ChangeLinkShare", c.ChangeLinkShare}, {"HonestShare", c.HonestShare},
		{"LyingShare", c.LyingShare}, {"CompressShare", c.CompressShare}, {"ChunkedShare", c.ChunkedShare}} {
		if math.IsNaN(f.v) || f.v > 1 {
			return c, fmt.Errorf("testweb: %s must be at most 1, got %v", f.name, f.v)
		}
	}
	if c.CompressShare < 0 || c.ChunkedShare < 0 {
		return c, fmt.Errorf("testweb: CompressShare and ChunkedShare must be between 0 and 1, got %v and %v", c.CompressShare, c.ChunkedShare)
	}
	if !c.Change {
		if c.ChangeShare != 0 || c.ChangeIntervalMin != 0 || c.ChangeIntervalMax != 0 || c.ChangeLinkShare != 0 {
			return c, errors.New("testweb: ChangeShare, ChangeIntervalMin, ChangeIntervalMax and ChangeLinkShare need Change")
		}
		c.HonestShare, c.LyingShare = max(c.HonestShare, 0), max(c.LyingShare, 0)
	} else {
		for _, f := range []struct {
			name string
			v    *float64
			def  float64
		}{{"ChangeShare", &c.ChangeShare, DefaultChangeShare}, {"ChangeLinkShare", &c.ChangeLinkShare, DefaultChangeLinkShare},
			{"HonestShare", &c.HonestShare, DefaultHonestShare}, {"LyingShare", &c.LyingShare, DefaultLyingShare}} {
			if err := defaultFraction(f.name, f.v, f.def); err != nil {
				return c, err
			}
		}
		if c.ChangeIntervalMin == 0 {
			c.ChangeIntervalMin = DefaultChangeIntervalMin
		}
		if c.ChangeIntervalMax == 0 {
			c.ChangeIntervalMax = max(DefaultChangeIntervalMax, c.ChangeIntervalMin)
		}
		for _, d := range []struct {
			name string
			v    time.Duration
		}{{"ChangeIntervalMin", c.ChangeIntervalMin}, {"ChangeIntervalMax", c.ChangeIntervalMax}} {
			if d.v < time.Second || d.v%time.Second != 0 {
				return c, fmt.Errorf("testweb: %s must be a whole number of seconds, at least 1s, got %v", d.name, d.v)
			}
		}
		if c.ChangeIntervalMin > c.ChangeIntervalMax {
			return c, fmt.Errorf("testweb: ChangeIntervalMin (%v) must not exceed ChangeIntervalMax (%v)", c.ChangeIntervalMin, c.ChangeIntervalMax)
		}
	}
	if c.HonestShare+c.LyingShare > 1 {
		return c, fmt.Errorf("testweb: HonestShare (%v) and LyingShare (%v) add up to more than 1", c.HonestShare, c.LyingShare)
	}
	if !c.timed() {
		if !c.TimeOrigin.IsZero() {
			return c, errors.New("testweb: TimeOrigin needs Change, HonestShare or LyingShare")
		}
		return c, nil
	}
	if !c.TimeOrigin.IsZero() {
		c.TimeOrigin = c.TimeOrigin.Truncate(time.Second).UTC()
	}
	return c, nil
}

// timed reports whether the web has a time origin: pages that change,
// or validators (a defaulted configuration).
func (c *Config) timed() bool {
	return c.Change || c.HonestShare > 0 || c.LyingShare > 0
}

// pageChange is the change model of one page, drawn from the seed.
type pageChange struct {
	mean  float64 // mean interval between two changes, seconds; 0: the page never changes
	links bool    // its links change with the version
	seed  uint64  // seed of its change times and of its versions' text
}

// changeOf draws the change model of page i of site si: with
// Config.Change, a page of kind home, HTML or private changes with
// probability ChangeShare, with a mean interval log-uniform between
// ChangeIntervalMin and ChangeIntervalMax, and its links change with
// probability ChangeLinkShare. The draws come from the page's own stream
// (tagChange), in that order whatever their outcome.
func (w *Web) changeOf(si, i int) pageChange {
	if !w.cfg.Change {
		return pageChange{}
	}
	s := &w.sites[si]
	switch s.kindOf(i) {
	case kindHome, kindHTML, kindPrivate:
	default:
		return pageChange{}
	}
	r := newRNG(s.seed, uint64(i), tagChange)
	changes := r.chance(w.cfg.ChangeShare)
	u := r.float()
	links := r.chance(w.cfg.ChangeLinkShare)
	seed := r.next()
	if !changes {
		return pageChange{}
	}
	lo, hi := w.cfg.ChangeIntervalMin.Seconds(), w.cfg.ChangeIntervalMax.Seconds()
	return pageChange{mean: lo * math.Pow(hi/lo, u), links: links, seed: seed}
}

// eachChange calls fn with k = 1, 2, ... and the time of the k-th change
// of the page in whole seconds after the origin, until fn returns false:
// the events of a Poisson process of rate 1/mean (exponential gaps drawn
// from the page's seed), each rounded up to the next whole second (at
// least 1). Two events in one second give that second twice. Nothing for
// a page that never changes.
func (pc pageChange) eachChange(fn func(k int, sec int64) bool) {
	if pc.mean <= 0 {
		return
	}
	r := rng{s: pc.seed}
	sum := 0.0
	for k := 1; ; k++ {
		sum += -pc.mean * math.Log(1-r.float()) // 1-float() is in (0, 1]
		if sum >= maxChangeSeconds {
			return
		}
		if !fn(k, max(int64(math.Ceil(sum)), 1)) {
			return
		}
	}
}

// versionAt returns the version of the page live at t and the time it
// went live (the origin for version 0): the number of its changes at or
// before t.
func (w *Web) versionAt(pc pageChange, t time.Time) (version int, since time.Time) {
	origin := w.cfg.TimeOrigin
	if pc.mean <= 0 || t.Before(origin) {
		return 0, origin
	}
	elapsed := int64(t.Sub(origin) / time.Second)
	last := int64(0)
	pc.eachChange(func(k int, sec int64) bool {
		if sec > elapsed {
			return false
		}
		version, last = k, sec
		return true
	})
	return version, origin.Add(time.Duration(last) * time.Second)
}

// Origin returns the web's time origin (Config.TimeOrigin, or the time
// New built the web, to the second), from which version 0 of every page
// is live; zero for a web without Config.Change, HonestShare or
// LyingShare.
func (w *Web) Origin() time.Time {
	return w.cfg.TimeOrigin
}

// changingPage returns the site, page index and change model of the page
// rawURL names (http or https, on the site's own name; the port and
// fragment are ignored); ok is false when it is not a page of the model
// rendered as HTML (the only pages that change).
func (w *Web) changingPage(rawURL string) (si, i int, pc pageChange, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, 0, pc, false
	}
	si, alias, known := w.siteOf(canonicalHost(u.Hostname()))
	if !known || alias {
		return 0, 0, pc, false
	}
	i = w.lookupPath(&w.sites[si], u.RequestURI())
	if i < 0 {
		return 0, 0, pc, false
	}
	return si, i, w.changeOf(si, i), true
}

// VersionAt returns the version of page rawURL live at t: the number of
// its changes from the web's origin up to t (see docs/testweb.md,
// "Versions"), and since when that version is live (its change time, or
// the origin for version 0). A page that never changes, a URL that is no
// page of the model and any time before the origin give version 0.
func (w *Web) VersionAt(rawURL string, t time.Time) (version int, since time.Time) {
	_, _, pc, _ := w.changingPage(rawURL)
	return w.versionAt(pc, t)
}

// ChangeTimes returns the times page rawURL changes at, from the origin
// up to until (included), in order: the k-th (from 1) is when version k
// goes live; a time may repeat (two changes in one second). Nil for a
// page that never changes.
func (w *Web) ChangeTimes(rawURL string, until time.Time) []time.Time {
	_, _, pc, _ := w.changingPage(rawURL)
	origin := w.cfg.TimeOrigin
	if until.Before(origin) {
		return nil
	}
	elapsed := int64(until.Sub(origin) / time.Second)
	var out []time.Time
	pc.eachChange(func(_ int, sec int64) bool {
		if sec > elapsed {
			return false
		}
		out = append(out, origin.Add(time.Duration(sec)*time.Second))
		return true
	})
	return out
}

// ChangeInterval returns the mean interval between two changes of page
// rawURL (its Poisson rate is the inverse), and whether its links change
// with its version; 0 for a page that never changes.
func (w *Web) ChangeInterval(rawURL string) (mean time.Duration, linksChange bool) {
	_, _, pc, _ := w.changingPage(rawURL)
	return time.Duration(pc.mean * float64(time.Second)), pc.links && pc.mean > 0
}

// writeVersion writes what version v (> 0) of a changing page adds to
// it, before its footer: a heading and a paragraph drawn from the
// version's own stream, and, on a page whose links change, one to three
// links to pages of its own site (ordinary HTML pages or the home page,
// all reachable through the site's tree anyway). It draws nothing from
// the page's main stream, so the rest of the page is that of version 0.
func (w *Web) writeVersion(p *pageWriter, pc pageChange, v int) {
	r := newRNG(pc.seed, uint64(v), tagVersion)
	s := &w.sites[p.si]
	b := &p.b
	b.WriteString("<div class=\"actualizacion\">\n<h2>Actualización " + strconv.Itoa(v) + "</h2>\n<p>")
	for n := r.between(2, 4); n > 0; n-- {
		w.sentence(b, &r)
	}
	b.WriteString("</p>\n")
	if pc.links {
		b.WriteString("<p>Novedades:")
		for n := r.between(1, 3); n > 0; n-- {
			j := r.intn(s.pages)
			if k := s.kindOf(j); k != kindHTML && k != kindHome {
				continue
			}
			path := w.pathOf(s, j, s.kindOf(j))
			abs, ok := p.resolve(path)
			if !ok {
				continue
			}
			text := w.shortTitle(p.si, j)
			p.add(abs, text)
			b.WriteString(" <a href=\"" + html.EscapeString(path) + "\">" + html.EscapeString(text) + "</a>")
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</div>\n")
}
