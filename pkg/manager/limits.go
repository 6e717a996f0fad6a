package manager

import (
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// limits holds the URL rules of the batch limits: which URLs are dynamic
// (Baeza-Yates et al. 2005, §5.1: "known filename extensions and a
// question mark") and which script a query URL belongs to (Nakahira et
// al.: at most one fetch per script), and the clock of the revisit rule
// and the freshness estimate (min_revisit at manager.time_scale).
type limits struct {
	exts  map[string]bool // lower-case extensions without dot
	clock Clock
	// optimal is manager.revisits = optimal; revisitFloor is the age a
	// fetched page must reach to be a candidate again: min_revisit, or
	// under the optimal policy min_revisit / RevisitFloorDivisor (the
	// policy then decides whether it is due).
	optimal      bool
	revisitFloor time.Duration
}

func newLimits(m *config.Manager) *limits {
	l := &limits{exts: make(map[string]bool, len(m.DynamicExtensions)), clock: NewClock(m)}
	l.revisitFloor = l.clock.MinRevisit
	if p := newRevisitPolicy(m); p != nil {
		l.optimal, l.revisitFloor = true, p.floor
	}
	for _, e := range m.DynamicExtensions {
		l.exts[strings.ToLower(e)] = true
	}
	return l
}

// dynamic tells whether a normal URL is a dynamic page: it has a query,
// its path has a /cgi-bin/ segment, or its last path segment ends with
// one of manager.dynamic_extensions (".php", ".asp", …), matched without
// case.
func (l *limits) dynamic(u string) bool {
	if strings.Contains(u, "?") {
		return true
	}
	path := urlPath(u)
	if strings.Contains(path, "/cgi-bin/") {
		return true
	}
	last := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(last, ';'); i >= 0 { // ;jsessionid=… path parameters
		last = last[:i]
	}
	dot := strings.LastIndexByte(last, '.')
	return dot >= 0 && l.exts[strings.ToLower(last[dot+1:])]
}

// urlPath returns the path of a normal URL without query or fragment.
func urlPath(u string) string {
	site := urlnorm.SiteKey(u)
	p := strings.TrimPrefix(u, site)
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "/"
	}
	return p
}

// ScriptOf returns the script of a query URL, the URL before its '?'
// (http://a.cl/index.php for http://a.cl/index.php?id=2), and "" for a
// URL without a query. manager.max_fetches_per_script limits the URLs
// fetched per script.
func ScriptOf(u string) string {
	i := strings.IndexByte(u, '?')
	if i < 0 {
		return ""
	}
	return u[:i]
}

// scriptHash identifies a script in memory; 0 means no script.
func scriptHash(u string) uint64 {
	s := ScriptOf(u)
	if s == "" {
		return 0
	}
	return xxhash.Sum64String(s) | 1
}

// batchURL tells whether u can be an entry of a batch file (see
// pkg/batch): an http(s) URL on its site, without tabs or newlines. The
// seeder only stores such URLs; this keeps one bad record from making
// every batch unwritable.
func batchURL(u string) bool {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return false
	}
	return !strings.ContainsAny(u, "\t\n\r") && strings.HasPrefix(u, urlnorm.SiteKey(u)+"/")
}
