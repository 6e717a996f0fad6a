package gatherer

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/sitemap"
	"github.com/wirecrawl/wire/pkg/timescale"
)

// Lying dates: a sitemap whose entries nearly all claim to have changed
// within lyingWindow of its fetch (a generator that writes "now" for every
// URL) has its lastmod dates left out, as has any single date later than
// the fetch by more than futureSlack (docs/sitemaps.md, "Freshness"). Both
// durations are at time scale 1; trustDates takes them through the
// manager.time_scale of the run.
const (
	lyingWindow   = time.Hour
	lyingMin      = 10  // entries with a date before the rule applies
	lyingFraction = 0.9 // share of dated entries within lyingWindow
	futureSlack   = 24 * time.Hour
)

// sitemapEntries reads the batch file of the batch directory dir: the
// doc ids of its entries of kind sitemap, and how many entries it has. A
// batch directory without batch.tsv (a harvest gathered elsewhere) has
// none.
func sitemapEntries(dir string) (map[uint64]bool, int, error) {
	path := filepath.Join(dir, collection.BatchFile)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, 0, nil
	}
	_, entries, err := batch.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	maps := map[uint64]bool{}
	for _, e := range entries {
		if e.Kind == batch.KindSitemap {
			maps[e.DocID] = true
		}
	}
	return maps, len(entries), nil
}

// parseSitemap reads a sitemap's body (Content-Encoding already removed;
// a gzip file is recognised by its magic bytes) into the record's Sitemap
// and Links. Entries are resolved and normalised as links are; those
// outside the sitemap's own directory are kept marked cross for the
// seeder, which knows the listed sites' robots.txt.
//
// A body the harvester cut at harvester.max_sitemap_bytes (truncated) is
// read up to the cut: the entries before it are kept, but the last line of
// a text sitemap, which may be a URL cut short, is dropped.
func (p *pipeline) parseSitemap(r *result, body []byte, truncated string) {
	d := r.doc
	start := time.Now()
	base, err := url.Parse(d.URL)
	if err != nil {
		d.Sitemap = &parsed.Sitemap{Kind: sitemap.Unknown.String(), Reason: "bad sitemap URL: " + err.Error()}
		return
	}
	var links []parsed.Link
	var dates []time.Time // parallel to links, zero when none
	res, err := sitemap.Parse(bytes.NewReader(body), sitemap.Options{
		Base:        base,
		CrossSubmit: func(string) bool { return true },
		Limits:      p.o.SitemapLimits,
	}, func(e sitemap.Entry) error {
		u := p.resolve(d.URL, e.Loc, r)
		if u == "" {
			return nil
		}
		l := parsed.Link{URL: u, Sitemap: e.Sitemap, Cross: e.Cross, ChangeFreq: e.ChangeFreq}
		if e.Priority >= 0 {
			pr := e.Priority
			l.Priority = &pr
		}
		links = append(links, l)
		dates = append(dates, e.LastMod)
		return nil
	})
	sm := &parsed.Sitemap{Kind: res.Kind.String(), Entries: len(links), Invalid: res.Invalid, OutOfScope: res.OutOfScope,
		Dropped: res.Dropped + res.Entries - len(links), Gzip: res.Gzip, Reason: res.Reason}
	if err != nil { // a bytes.Reader does not fail; kept for the record
		sm.Reason = err.Error()
	}
	if truncated != "" {
		if res.Kind == sitemap.Text && len(links) > 0 && len(body) > 0 && body[len(body)-1] != '\n' {
			links, dates = links[:len(links)-1], dates[:len(dates)-1]
			sm.Entries--
			sm.Dropped++
		}
		why := "body cut by the harvester (" + truncated + ")"
		if sm.Reason != "" {
			why += "; " + sm.Reason
		}
		sm.Reason = why
	}
	sm.Untrusted = trustDates(links, dates, d.Fetched, p.o.TimeScale)
	d.Sitemap, d.Links = sm, links
	r.bytesIn = int64(len(body))
	r.sitemapTime = time.Since(start)
}

// trustDates copies the entries' lastmod dates into the links unless the
// sitemap lies about them, and says why when it does; its window and
// future slack are scaled by s.
func trustDates(links []parsed.Link, dates []time.Time, fetched time.Time, s timescale.Scale) string {
	window, slack := s.D(lyingWindow), s.D(futureSlack)
	dated, recent := 0, 0
	for _, t := range dates {
		if t.IsZero() {
			continue
		}
		dated++
		if !fetched.IsZero() && t.After(fetched.Add(-window)) {
			recent++
		}
	}
	if dated >= lyingMin && float64(recent) >= lyingFraction*float64(dated) {
		return fmt.Sprintf("%d of %d lastmod dates within %s of the fetch", recent, dated, window)
	}
	for i, t := range dates {
		if t.IsZero() || (!fetched.IsZero() && t.After(fetched.Add(slack))) {
			continue
		}
		links[i].LastMod = t.Format(time.RFC3339)
	}
	return ""
}
