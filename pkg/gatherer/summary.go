package gatherer

import (
	"fmt"
	"io"
	"time"

	"github.com/wirecrawl/wire/pkg/tally"
)

// WriteText prints the summary for people: the batch, the documents, the
// bytes read and stored, the links and the speed.
func (s *Summary) WriteText(w io.Writer) {
	el := time.Duration(s.Seconds * float64(time.Second)).Round(time.Millisecond)
	fmt.Fprintf(w, "batch %06d gathered in %s with %d workers\n", s.Batch, el, s.Workers)
	fmt.Fprintf(w, "  docs      %d: %d HTML, %d other, %d fetch errors, %d unreadable, %d redirects, %d not modified, %d identical, %d unchanged\n",
		s.Docs, s.HTML, s.Other, s.FetchErrors, s.ReadErrors, s.Redirects, s.NotModified, s.Identical, s.Unchanged)
	fmt.Fprintf(w, "  bytes     %s in, %s of text, %s stored (%s on disk); texts already stored: %d in this batch, %d in older segments\n",
		mb(s.BytesIn), mb(s.TextBytes), mb(s.StoredBytes), mb(s.SegmentBytes), s.Duplicates, s.Older)
	fmt.Fprintf(w, "  links     %d written, dropped %s; %d pages nofollow, %d noindex\n", s.Links, counts(s.LinksDropped), s.NoFollow, s.NoIndex)
	fmt.Fprintf(w, "  charsets  %s\n", counts(s.Charsets))
	if s.Sitemaps > 0 {
		fmt.Fprintf(w, "  sitemaps  %d read (%d with a problem): %d entries, %s in %.3fs\n", s.Sitemaps, s.SitemapErrors, s.SitemapEntries, mb(s.SitemapBytes), s.SitemapSeconds)
	}
	if len(s.Languages) > 0 {
		fmt.Fprintf(w, "  languages %s\n", counts(s.Languages))
	}
	fmt.Fprintf(w, "  speed     %.1f MB/s\n", s.MBPerSecond)
	if s.Unread > 0 {
		fmt.Fprintf(w, "  salvaged  %d records could not be read back from their WARC files: the pages go back to the frontier, not fetched\n", s.Unread)
		for _, d := range s.Damaged {
			fmt.Fprintf(w, "            %s\n", d)
		}
		if n := s.Unread - len(s.Damaged); n > 0 {
			fmt.Fprintf(w, "            and %d more\n", n)
		}
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return tally.Format(m)
}
