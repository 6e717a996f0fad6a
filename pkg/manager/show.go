package manager

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
)

// Summary describes a batch file for people.
type Summary struct {
	File      string // where the batch was read from, if from a file
	Header    batch.Header
	URLs      int
	Sites     int
	New       int
	Revisits  int
	Sitemaps  int // entries of kind sitemap (docs/sitemaps.md)
	ScoreMin  float64
	ScoreMed  float64
	ScoreMax  float64
	Quantiles []Quantile  // score quantiles (QuantileLevels)
	TopSites  []SiteCount // the sites with most pages, at most Top (10 by default)
	SiteSizes []Bucket    // how many sites have 1, 2–3, 4–7, … pages
	Depths    []int       // Depths[d] is the number of URLs at depth d
	Robots    int         // lines of robots.jsonl beside the file (−1: no file)
	Servers   int         // lines of servers.jsonl beside the file (−1: no file)
}

// QuantileLevels are the score quantiles a summary reports.
var QuantileLevels = []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}

// Quantile is the score below which a fraction P of the batch's entries
// lie (nearest rank).
type Quantile struct {
	P     float64
	Score float64
}

// SiteCount is the number of pages of one site in a batch.
type SiteCount struct {
	Site  string
	Pages int
}

// Bucket counts the sites with between Min and Max pages.
type Bucket struct {
	Min, Max int
	Sites    int
}

// Summarize computes the summary of a batch, with the top 10 sites.
func Summarize(h batch.Header, entries []batch.Entry) Summary {
	return summarize(h, entries, 10)
}

func summarize(h batch.Header, entries []batch.Entry, top int) Summary {
	s := Summary{Header: h, URLs: len(entries), Robots: -1, Servers: -1}
	c := count(entries)
	s.Sites, s.New, s.Revisits, s.Sitemaps, s.ScoreMin, s.ScoreMax = c.sites, c.new, c.revisits, c.sitemaps, c.scoreMin, c.scoreMax
	if len(entries) == 0 {
		return s
	}
	scores := make([]float64, len(entries))
	bySite := map[string]int{}
	for i, e := range entries {
		scores[i] = e.Score
		bySite[e.Site]++
		for len(s.Depths) <= e.Depth {
			s.Depths = append(s.Depths, 0)
		}
		s.Depths[e.Depth]++
	}
	slices.Sort(scores)
	mid := len(scores) / 2
	s.ScoreMed = scores[mid]
	if len(scores)%2 == 0 {
		s.ScoreMed = (scores[mid-1] + scores[mid]) / 2
	}
	for _, q := range QuantileLevels {
		s.Quantiles = append(s.Quantiles, Quantile{q, quantile(scores, q)})
	}
	for _, site := range slices.Sorted(maps.Keys(bySite)) {
		s.TopSites = append(s.TopSites, SiteCount{site, bySite[site]})
	}
	slices.SortStableFunc(s.TopSites, func(a, b SiteCount) int { return cmp.Compare(b.Pages, a.Pages) })
	for _, sc := range s.TopSites {
		k := 0
		for 1<<(k+1) <= sc.Pages {
			k++
		}
		for len(s.SiteSizes) <= k {
			n := len(s.SiteSizes)
			s.SiteSizes = append(s.SiteSizes, Bucket{Min: 1 << n, Max: 1<<(n+1) - 1})
		}
		s.SiteSizes[k].Sites++
	}
	s.TopSites = s.TopSites[:min(max(top, 0), len(s.TopSites))]
	return s
}

// quantile is the nearest-rank quantile q of ascending values: the
// smallest value with at least q of the values at or below it.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Print writes the summary as aligned text.
func (s Summary) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	h := s.Header
	fmt.Fprintf(tw, "batch\t%06d\n", h.Batch)
	if s.File != "" {
		fmt.Fprintf(tw, "file\t%s\n", s.File)
	}
	fmt.Fprintf(tw, "created\t%s\n", h.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "strategy\t%s\n", h.Strategy)
	params := make([]string, 0, len(h.Params))
	for _, k := range slices.Sorted(maps.Keys(h.Params)) {
		params = append(params, k+"="+h.Params[k])
	}
	fmt.Fprintf(tw, "params\t%s\n", strings.Join(params, " "))
	fmt.Fprintf(tw, "urls\t%d\n", s.URLs)
	fmt.Fprintf(tw, "sites\t%d\n", s.Sites)
	fmt.Fprintf(tw, "new\t%d\n", s.New)
	fmt.Fprintf(tw, "revisits\t%d\n", s.Revisits)
	if s.Sitemaps > 0 {
		fmt.Fprintf(tw, "sitemaps\t%d\n", s.Sitemaps)
	}
	for _, k := range []string{"sites", "new", "revisits", "sitemaps"} {
		got := map[string]int{"sites": s.Sites, "new": s.New, "revisits": s.Revisits, "sitemaps": s.Sitemaps}[k]
		if n, ok := h.Counts[k]; ok && n != got {
			fmt.Fprintf(tw, "warning\tthe header says %s=%d, the entries have %d\n", k, n, got)
		}
	}
	if s.Robots >= 0 {
		fmt.Fprintf(tw, "robots.txt\t%d sites with a stored copy (robots.jsonl); the others are fetched first\n", s.Robots)
	}
	if s.Servers >= 0 {
		fmt.Fprintf(tw, "servers\t%d with known estimates (servers.jsonl)\n", s.Servers)
	}
	if s.URLs > 0 {
		fmt.Fprintf(tw, "score\tmin %s  median %s  max %s\n", num(s.ScoreMin), num(s.ScoreMed), num(s.ScoreMax))
		qs := make([]string, len(s.Quantiles))
		for i, q := range s.Quantiles {
			qs[i] = fmt.Sprintf("p%s %s", strconv.FormatFloat(100*q.P, 'g', -1, 64), num(q.Score))
		}
		fmt.Fprintf(tw, "quantiles\t%s\n", strings.Join(qs, "  "))
		fmt.Fprintf(tw, "\n")
		fmt.Fprintf(tw, "top sites\tpages\n")
		for _, sc := range s.TopSites {
			fmt.Fprintf(tw, "  %s\t%d\n", sc.Site, sc.Pages)
		}
		fmt.Fprintf(tw, "\n")
		fmt.Fprintf(tw, "pages per site\tsites\n")
		for _, b := range s.SiteSizes {
			r := strconv.Itoa(b.Min)
			if b.Max > b.Min {
				r += "-" + strconv.Itoa(b.Max)
			}
			fmt.Fprintf(tw, "  %s\t%d\n", r, b.Sites)
		}
		fmt.Fprintf(tw, "\n")
		fmt.Fprintf(tw, "depth\turls\n")
		for d, n := range s.Depths {
			if n > 0 {
				fmt.Fprintf(tw, "  %d\t%d\n", d, n)
			}
		}
	}
	return tw.Flush()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// RowFilter selects the entries manager show prints; zero fields select
// everything.
type RowFilter struct {
	Site     string  // site key, exactly ("http://www.a.cl")
	Kind     string  // batch.KindNew or batch.KindRevisit
	Contains string  // substring of the URL
	MinDepth int     // depth at least this
	MaxDepth *int    // depth at most this; nil means no limit
	MinScore float64 // score at least this
	MaxScore float64 // score at most this; +Inf or 0 means no limit
	Limit    int     // at most this many rows; 0 means all
}

// Match tells whether entry e passes the filter.
func (f RowFilter) Match(e batch.Entry) bool {
	switch {
	case f.Site != "" && e.Site != f.Site,
		f.Kind != "" && e.Kind != f.Kind,
		f.Contains != "" && !strings.Contains(e.URL, f.Contains),
		e.Depth < f.MinDepth,
		f.MaxDepth != nil && e.Depth > *f.MaxDepth,
		e.Score < f.MinScore,
		f.MaxScore > 0 && e.Score > f.MaxScore:
		return false
	}
	return true
}

// ShowOptions configure Show.
type ShowOptions struct {
	Top    int       // sites listed; 0 means 10
	Rows   bool      // print the entries that pass Filter after the summary
	Filter RowFilter // which entries
}

// Show reads the batch file at path and prints its summary, the counts of
// robots.jsonl and servers.jsonl beside it, and with opts.Rows the
// entries opts.Filter selects, as tab-separated lines in batch order. A
// malformed file gives the reader's error, with its line number.
func Show(w io.Writer, path string, opts ShowOptions) error {
	h, entries, err := batch.ReadFile(path)
	if err != nil {
		return err
	}
	top := opts.Top
	if top <= 0 {
		top = 10
	}
	s := summarize(h, entries, top)
	s.File = path
	dir := filepath.Dir(path)
	if rs, err := fetchlog.ReadRobots(filepath.Join(dir, collection.BatchRobotsFile)); err == nil {
		s.Robots = len(rs)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if ss, err := fetchlog.ReadServers(filepath.Join(dir, collection.BatchServersFile)); err == nil {
		s.Servers = len(ss)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := s.Print(w); err != nil {
		return err
	}
	if !opts.Rows {
		return nil
	}
	fmt.Fprintf(w, "\n# %s\n", strings.Join(batch.Columns[:6], "\t"))
	shown, matched := 0, 0
	for _, e := range entries {
		if !opts.Filter.Match(e) {
			continue
		}
		matched++
		if opts.Filter.Limit > 0 && shown >= opts.Filter.Limit {
			continue
		}
		shown++
		if _, err := fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\t%s\n", e.DocID, e.Site, strconv.FormatFloat(e.Score, 'g', 6, 64), e.Depth, e.Kind, e.URL); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "# %d of %d entries match, %d shown\n", matched, len(entries), shown)
	return err
}
