package sitemap

import (
	"fmt"
	"io"
	"net/url"
)

// WalkOptions bound a Walk.
type WalkOptions struct {
	// MaxDepth is the deepest index nesting followed (0: MaxDepth).
	MaxDepth int
	// MaxFiles is the most files read in all (0: MaxSitemaps + 1).
	MaxFiles int
	// Limits bound each file.
	Limits Limits
	// CrossSubmit reports whether site's robots.txt names sitemap.
	CrossSubmit func(sitemap, site string) bool
}

// WalkStats sums a Walk.
type WalkStats struct {
	Files      int      // files read
	Pages      int      // page entries handed to the callback
	Invalid    int      // entries skipped as invalid, in all files
	OutOfScope int      // entries out of their sitemap's scope
	Dropped    int      // entries past a file's limits
	Repeated   int      // sitemaps listed again (a loop or a duplicate), not read again
	TooDeep    int      // sitemaps listed by an index at MaxDepth, not read
	OverFiles  int      // sitemaps not read because MaxFiles were read
	Failed     []string // "URL: reason" of files not read to their end (at most 100)
}

// Walk reads the sitemap at root and, depth first, the sitemaps its
// indexes list, each once, up to MaxDepth indexes deep and MaxFiles files:
// an index that lists itself or loops ends. fn gets each page entry with
// the URL of the sitemap that listed it. open fetches or opens a sitemap.
// Walk is what `seeder add --sitemap FILE` and the tests use; a crawl
// instead fetches each sitemap as a batch entry (docs/sitemaps.md).
func Walk(root string, open func(loc string) (io.ReadCloser, error), opt WalkOptions, fn func(sitemap string, e Entry) error) (WalkStats, error) {
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = MaxDepth
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = MaxSitemaps + 1
	}
	w := &walker{open: open, opt: opt, fn: fn, seen: map[string]bool{root: true}}
	err := w.walk(root, 0)
	return w.st, err
}

type walker struct {
	open func(string) (io.ReadCloser, error)
	opt  WalkOptions
	fn   func(string, Entry) error
	seen map[string]bool
	st   WalkStats
}

func (w *walker) fail(loc, reason string) {
	if len(w.st.Failed) < 100 {
		w.st.Failed = append(w.st.Failed, loc+": "+reason)
	}
}

func (w *walker) walk(loc string, depth int) error {
	if w.st.Files >= w.opt.MaxFiles {
		w.st.OverFiles++
		return nil
	}
	w.st.Files++
	rc, err := w.open(loc)
	if err != nil {
		w.fail(loc, err.Error())
		return nil
	}
	o := Options{Limits: w.opt.Limits}
	if u, err := url.Parse(loc); err == nil && u.Host != "" {
		o.Base = u
		if w.opt.CrossSubmit != nil {
			o.CrossSubmit = func(site string) bool { return w.opt.CrossSubmit(loc, site) }
		}
	}
	var children []string
	res, err := Parse(rc, o, func(e Entry) error {
		if e.Sitemap {
			children = append(children, e.Loc)
			return nil
		}
		w.st.Pages++
		return w.fn(loc, e)
	})
	rc.Close() //nolint:errcheck // read only
	if err != nil {
		return fmt.Errorf("walk sitemap %s: %w", loc, err)
	}
	w.st.Invalid += res.Invalid
	w.st.OutOfScope += res.OutOfScope
	w.st.Dropped += res.Dropped
	if res.Reason != "" {
		w.fail(loc, res.Reason)
	}
	for _, c := range children {
		switch {
		case w.seen[c]:
			w.st.Repeated++
		case depth >= w.opt.MaxDepth:
			w.st.TooDeep++
		default:
			w.seen[c] = true
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
