package testweb

import (
	"net/url"
	"strconv"
	"strings"
)

// robotsRule is one Allow or Disallow line (a plain path prefix).
type robotsRule struct {
	allow bool
	path  string
}

// robotsGroup is a group of user-agent lines followed by rules.
type robotsGroup struct {
	agents     []string
	rules      []robotsRule
	crawlDelay string
}

// robotsFile is the structured content of a robots.txt file; text is its
// rendering, which is exactly what the server sends.
type robotsFile struct {
	groups []robotsGroup
	text   string
}

// buildRobots draws the robots.txt of site si (which has robotsRules).
func (w *Web) buildRobots(si int) *robotsFile {
	s := &w.sites[si]
	r := newRNG(s.seed, 0, tagRobotsErr)
	star := robotsGroup{agents: []string{"*"}}
	if s.privPrefix != "" {
		star.rules = append(star.rules, robotsRule{path: s.privPrefix})
		if s.openPrefix {
			star.rules = append(star.rules, robotsRule{allow: true, path: s.privPrefix + "open-"})
		}
	}
	if s.privPrefix == "" || r.chance(0.2) {
		star.rules = append(star.rules, robotsRule{path: "/files/"})
	}
	if s.pages <= 30 && r.chance(0.15) {
		star.crawlDelay = "1"
	}
	groups := []robotsGroup{star}
	if r.chance(0.25) {
		bad := robotsGroup{agents: []string{r.pick(w.voc.bots)}, rules: []robotsRule{{path: "/"}}}
		if r.chance(0.4) {
			if b := r.pick(w.voc.bots); b != bad.agents[0] {
				bad.agents = append(bad.agents, b)
			}
		}
		groups = append(groups, bad)
	}
	if r.chance(0.15) {
		// An empty Disallow: the named bot may fetch everything, and the
		// "*" group does not apply to it.
		groups = append(groups, robotsGroup{agents: []string{"Googlebot"}, rules: []robotsRule{{path: ""}}})
	}
	if r.chance(0.5) {
		groups[0], groups[len(groups)-1] = groups[len(groups)-1], groups[0]
	}
	if s.crawlDelay > 0 {
		// The heterogeneous web's delay applies to every crawler.
		for gi := range groups {
			groups[gi].crawlDelay = strconv.Itoa(s.crawlDelay)
		}
	}
	lower := r.chance(0.2)
	key := func(k string) string {
		if lower {
			return strings.ToLower(k)
		}
		return k
	}
	var b strings.Builder
	b.WriteString("# robots.txt for " + s.name + "\n")
	for gi, g := range groups {
		if gi > 0 {
			b.WriteString("\n")
		}
		for _, a := range g.agents {
			b.WriteString(key("User-agent") + ": " + a + "\n")
		}
		for _, rule := range g.rules {
			k := key("Disallow")
			if rule.allow {
				k = key("Allow")
			}
			if rule.path == "" {
				b.WriteString(k + ":\n")
			} else {
				b.WriteString(k + ": " + rule.path + "\n")
			}
		}
		if g.crawlDelay != "" {
			b.WriteString(key("Crawl-delay") + ": " + g.crawlDelay + "\n")
		}
	}
	return &robotsFile{groups: groups, text: b.String()}
}

// names reports whether the group has a user-agent line for token
// ("*" matches only the "*" line).
func (g *robotsGroup) names(token string) bool {
	for _, a := range g.agents {
		if token == "*" && a == "*" || a != "*" && strings.EqualFold(a, token) {
			return true
		}
	}
	return false
}

// allowed applies RFC 9309 to a path (with query) for a product token:
// the groups naming the token (case-insensitively) apply, else the "*"
// groups; the longest matching rule wins and Allow wins ties.
func (f *robotsFile) allowed(token, path string) bool {
	if path == "/robots.txt" {
		return true
	}
	var rules []robotsRule
	specific := false
	for _, g := range f.groups {
		if g.names(token) {
			specific = true
			rules = append(rules, g.rules...)
		}
	}
	if !specific {
		for _, g := range f.groups {
			if g.names("*") {
				rules = append(rules, g.rules...)
			}
		}
	}
	best, allow := -1, true
	for _, rule := range rules {
		if rule.path == "" || !strings.HasPrefix(path, rule.path) {
			continue
		}
		if l := len(rule.path); l > best || l == best && rule.allow {
			best, allow = l, rule.allow
		}
	}
	return allow
}

// productToken reduces a User-Agent string to its product token
// ("WireBot/1.0 (+http://...)" gives "WireBot").
func productToken(ua string) string {
	if i := strings.IndexAny(ua, "/ "); i >= 0 {
		return ua[:i]
	}
	return ua
}

// robotsPath is the path-and-query part of u that robots rules match.
func robotsPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// Disallowed reports whether the robots.txt served by the URL's host
// forbids fetching rawURL for the given product token, as RFC 9309 says:
// no robots.txt (404) allows everything, a 500 robots.txt means complete
// disallow, otherwise the group for the token (or "*") decides by longest
// match, Allow winning ties. /robots.txt itself is always allowed. A full
// User-Agent string is reduced to its product token. An alias (see
// Aliases) redirects its robots.txt to its site's, which so decides for
// it too. Unknown hosts and unparsable URLs give false.
func (w *Web) Disallowed(rawURL, productTokenOrUA string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	si, _, ok := w.siteOf(canonicalHost(u.Hostname()))
	if !ok {
		return false
	}
	path := robotsPath(u)
	s := &w.sites[si]
	switch s.robots {
	case robotsError:
		return path != "/robots.txt"
	case robotsRules:
		return !s.rules.allowed(productToken(productTokenOrUA), path)
	}
	return false
}

// RobotsTxt returns the status and body that host serves for /robots.txt
// (404 with an HTML body when it has none, 500 for broken ones, 301 to
// the site's for an alias). ok is false for hosts that are not part of
// the web.
func (w *Web) RobotsTxt(host string) (status int, body string, ok bool) {
	si, alias, ok := w.siteOf(canonicalHost(host))
	if !ok {
		return 0, "", false
	}
	if alias {
		resp, _ := w.aliasResponse(si, "/robots.txt")
		return resp.status, string(resp.body), true
	}
	resp := w.robotsResponse(si)
	return resp.status, string(resp.body), true
}

// CrawlDelay returns the Crawl-delay that host's robots.txt gives the
// "*" group, or "" when there is none. For an alias it is its site's,
// where its robots.txt redirects.
func (w *Web) CrawlDelay(host string) string {
	si, _, ok := w.siteOf(canonicalHost(host))
	if !ok || w.sites[si].rules == nil {
		return ""
	}
	for _, g := range w.sites[si].rules.groups {
		if g.agents[0] == "*" {
			return g.crawlDelay
		}
	}
	return ""
}
