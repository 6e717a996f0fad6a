package testweb

import (
	"net/url"
	"runtime"
	"sort"
	"sync"
)

// scaleSizes multiplies the raw Pareto sizes of the in-scope sites by the
// smallest factor that makes them add up to at least target pages
// (bisection: the total is a non-decreasing step function of the factor).
// Sizes are rounded down, at least 1 and at most MaxPages, as unscaled
// ones are. The big sites of the heterogeneous web keep their sizes and
// the others make up the rest of the target.
func (w *Web) scaleSizes(target int) {
	in := w.sites[:w.cfg.Hosts]
	for i := range in {
		if in[i].big {
			target -= in[i].pages
		}
	}
	size := func(s *site, k float64) int {
		return min(max(int(k*s.raw), 1), w.cfg.MaxPages)
	}
	total := func(k float64) int {
		t := 0
		for i := range in {
			if !in[i].big {
				t += size(&in[i], k)
			}
		}
		return t
	}
	lo, hi := 0.0, 1.0
	for total(hi) < target && hi < 1e15 {
		lo, hi = hi, hi*2
	}
	for iter := 0; iter < 100 && hi-lo > hi*1e-12; iter++ {
		mid := (lo + hi) / 2
		if total(mid) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	for i := range in {
		if !in[i].big {
			in[i].pages = size(&in[i], hi)
			w.fitRobotsSize(&in[i])
		}
	}
}

// PageCount returns the number of URLs URLs would return (the pages of
// the model on every non-hostile host, logos and alias home pages
// included), without building them.
func (w *Web) PageCount() int {
	n := 0
	for si := range w.sites {
		n += w.sites[si].pages
		if w.sites[si].hasLogo {
			n++
		}
		if w.sites[si].alias != "" {
			n++
		}
		n += w.plainSideCount(si)
	}
	return n
}

// ForEachPage calls fn with the truth (as Page returns it) of every URL
// that URLs returns, site by site and in page order within a site (the
// logo, then the home page of the site's alias, last), stopping at the first error fn returns. Pages are rendered
// in parallel on every core while fn runs, so enumerating the link graph
// of a million pages takes seconds, not minutes; fn itself is called from
// one goroutine at a time. Call it after Start (or on a web whose
// HTTPAddr has a fixed port) so that URLs carry the port.
func (w *Web) ForEachPage(fn func(PageInfo) error) error {
	type result struct {
		infos []PageInfo
	}
	n := len(w.sites)
	workers := max(runtime.GOMAXPROCS(0), 1)
	// One slot per site, filled by the workers; the caller's loop reads
	// the slots in order. A window bounds the sites rendered ahead.
	window := 4 * workers
	slots := make([]chan result, n)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	next := make(chan int)
	stop := make(chan struct{})
	sem := make(chan struct{}, window)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for si := range next {
				slots[si] <- result{infos: w.sitePages(si)}
			}
		}()
	}
	go func() {
		defer close(next)
		for si := 0; si < n; si++ {
			select {
			case sem <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case next <- si:
			case <-stop:
				return
			}
		}
	}()
	var err error
	for si := 0; si < n && err == nil; si++ {
		res := <-slots[si]
		<-sem
		for _, info := range res.infos {
			if err = fn(info); err != nil {
				break
			}
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// sitePages renders the truth of every page of site si, changing pages
// (Config.Change) in their version 0, live from the web's origin.
func (w *Web) sitePages(si int) []PageInfo {
	at := w.cfg.TimeOrigin
	s := &w.sites[si]
	o := w.origin(si)
	out := make([]PageInfo, 0, s.pages+1)
	for i := 0; i < s.pages; i++ {
		_, info, _ := w.respondAt(si, o, w.pathOf(s, i, s.kindOf(i)), true, at)
		info.URL = o + w.pathOf(s, i, s.kindOf(i))
		out = append(out, info)
	}
	if s.hasLogo {
		_, info, _ := w.respondAt(si, o, logoPath, true, at)
		out = append(out, info)
	}
	if s.alias != "" {
		_, info := w.aliasResponse(si, "/")
		out = append(out, info)
	}
	if w.https != nil {
		out = append(out, w.plainSidePages(si, at)...)
	}
	return out
}

// Reachable returns, sorted, the URLs of the model a polite crawler can
// reach from seeds when it keeps to the in-scope hosts: a breadth-first
// walk that follows the links of HTML pages and the Location of
// redirects, and enters only pages of in-scope, non-hostile hosts that
// robots.txt allows for productToken. Every URL returned is a page of the
// model (broken links, robots.txt files and hostile hosts are left out);
// what the crawler's own limits (site caps, depth, file types) leave out
// is not modelled. It renders every reached page once, in parallel.
func (w *Web) Reachable(seeds []string, productToken string) []string {
	seen := make(map[string]bool)
	var level []string
	visit := func(u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		if w.enterable(u, productToken) {
			level = append(level, u)
		}
	}
	for _, s := range seeds {
		if u, ok := w.modelURL(s); ok {
			visit(u)
		}
	}
	var out []string
	workers := max(runtime.GOMAXPROCS(0), 1)
	for len(level) > 0 {
		out = append(out, level...)
		cur := level
		level = nil
		next := make([][]string, len(cur))
		var wg sync.WaitGroup
		chunk := (len(cur) + workers - 1) / workers
		for lo := 0; lo < len(cur); lo += chunk {
			hi := min(lo+chunk, len(cur))
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				for k := lo; k < hi; k++ {
					info, _ := w.Page(cur[k])
					links := info.Links
					if info.Location != "" {
						links = append([]string{info.Location}, links...)
					}
					var model []string
					for _, l := range links {
						if u, ok := w.modelURL(l); ok {
							model = append(model, u)
						}
					}
					next[k] = model
				}
			}(lo, hi)
		}
		wg.Wait()
		for _, links := range next {
			for _, l := range links {
				visit(l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// modelURL returns the URL of the page of the model rawURL names (as
// URLs and Page write it: with the port, without fragment), without
// rendering it; ok is false for anything that is not such a page.
func (w *Web) modelURL(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" && (w.https == nil || u.Scheme != "https") {
		return "", false
	}
	si, alias, ok := w.siteOf(canonicalHost(u.Hostname()))
	if !ok {
		return "", false
	}
	s := &w.sites[si]
	uri := u.RequestURI()
	if w.https != nil {
		if alias && u.Scheme == "https" {
			return "", false
		}
		if !alias {
			if m, ok, done := w.modelOnScheme(si, uri, u.Scheme == "https"); done {
				return m, ok
			}
		}
	}
	if alias {
		// The alias's home page is a redirect of the model, as the
		// site's redirects are; what else it answers is not linked.
		if uri != "/" {
			return "", false
		}
		return w.aliasOrigin(si) + "/", true
	}
	if s.hasLogo && uri == logoPath {
		return w.origin(si) + logoPath, true
	}
	i := w.lookupPath(s, uri)
	if i < 0 {
		return "", false
	}
	return w.origin(si) + w.pathOf(s, i, s.kindOf(i)), true
}

// enterable reports whether rawURL (a page of the model, as Page names
// it) is on an in-scope, non-hostile host and allowed by its robots.txt.
func (w *Web) enterable(rawURL, productToken string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	si, _, ok := w.siteOf(canonicalHost(u.Hostname()))
	if !ok || !w.sites[si].inScope {
		return false
	}
	return !w.Disallowed(rawURL, productToken)
}
