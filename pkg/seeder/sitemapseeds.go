package seeder

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/sitemap"
)

// SitemapSeedSummary is what AddSitemap did.
type SitemapSeedSummary struct {
	Sitemaps   int            `json:"sitemaps"`   // sitemap URLs added (or flagged) to be fetched
	Entries    int            `json:"entries"`    // page entries read from a file
	Added      int            `json:"added"`      // new page URLs
	Known      int            `json:"known"`      // page URLs already known
	Rejected   map[string]int `json:"rejected"`   // kept out, by reason
	FileReason string         `json:"fileReason"` // why a file was not read to its end
}

// WriteText prints the summary for people.
func (s *SitemapSeedSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "sitemap: %d sitemaps to fetch; %d page entries: %d added, %d already known; rejected %s\n",
		s.Sitemaps, s.Entries, s.Added, s.Known, formatCounts(s.Rejected))
	if s.FileReason != "" {
		fmt.Fprintf(w, "sitemap: read stopped: %s\n", s.FileReason)
	}
}

// AddSitemap gives a sitemap by hand (seeder add --sitemap): an http(s)
// URL becomes a sitemap document, fetched by the next batches like one
// found in robots.txt; anything else is a local file (a sitemap, an
// index, gzip or not, text, RSS or Atom) read at once, whose pages are
// added as seeds with the source "sitemap FILE" and their hints, and whose
// listed sitemaps become sitemap documents. No scope rule of location
// applies to a file: the operator vouches for it.
func AddSitemap(opts SeedOptions, arg string, problems io.Writer) (*SitemapSeedSummary, error) {
	s := &SitemapSeedSummary{Rejected: map[string]int{}}
	var pages []sitemap.Entry
	var maps []string
	isURL := strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://")
	if isURL {
		maps = []string{arg}
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, fmt.Errorf("read sitemap: %w", err)
		}
		res, err := sitemap.Parse(f, sitemap.Options{}, func(e sitemap.Entry) error {
			if e.Sitemap {
				maps = append(maps, e.Loc)
			} else {
				pages = append(pages, e)
			}
			return nil
		})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read sitemap %s: %w", arg, err)
		}
		s.FileReason = res.Reason
		if res.Invalid > 0 {
			s.Rejected["invalid"] += res.Invalid
		}
		if res.Kind == sitemap.Unknown {
			return nil, fmt.Errorf("read sitemap %s: not a sitemap: %s", arg, res.Reason)
		}
	}
	err := updateWithIntake(opts, "sitemap is", func(tx *linkgraph.Tx, in *intake) error {
		r := &batchRun{in: in, s: &Summary{}, rewritten: roaring.New()}
		reject := func(what string, rej *rejection) {
			s.Rejected[rej.reason]++
			fmt.Fprintf(problems, "%s: %s: %s\n", arg, rej.reason, excerpt.Quote(what))
		}
		source := SourceSeed + " " + arg
		for _, m := range maps {
			u, rej := in.resolveSitemap(m)
			if rej != nil {
				reject(m, rej)
				continue
			}
			if err := r.addSitemap(u, 0, source, true); err != nil {
				return err
			}
			s.Sitemaps++
		}
		in.decorate = func(_ string, d *linkgraph.Doc) { d.Source = SourceSitemap + " " + arg }
		for _, e := range pages {
			s.Entries++
			u, rej := in.resolve(e.Loc)
			if rej == nil {
				id, created, rej2, err := in.take(u, 0, true)
				rej = rej2
				if err != nil {
					return err
				}
				if rej == nil {
					if created {
						s.Added++
					} else {
						s.Known++
					}
					h := sitemapHint{lastMod: e.LastMod, changeFreq: e.ChangeFreq}
					if e.Priority >= 0 {
						h.priority = e.Priority + 1
					}
					if err := hintNow(tx, id, h); err != nil {
						return err
					}
					continue
				}
			}
			reject(e.Loc, rej)
		}
		in.decorate = nil
		for k, n := range in.counts.rejected {
			s.Rejected[k] += n
		}
		return in.flushSites()
	}, func() bool { return s.Added > 0 || s.Sitemaps > 0 })
	if err != nil {
		return nil, fmt.Errorf("add sitemap %s: %w", arg, err)
	}
	return s, nil
}

// hintNow writes a sitemap hint into a document at once.
func hintNow(tx *linkgraph.Tx, id uint64, h sitemapHint) error {
	if (h == sitemapHint{}) {
		return nil
	}
	d, err := tx.Doc(id)
	if err != nil {
		return err
	}
	if !h.apply(d) {
		return nil
	}
	return tx.PutDoc(d)
}
