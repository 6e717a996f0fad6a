package manager

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
)

// Summary describes a batch file for people.
type Summary struct {
	File      string // where the batch was read from, if from a file
	Header    batch.Header
	URLs      int
	Sites     int
	New       int
	Revisits  int
	ScoreMin  float64
	ScoreMed  float64
	ScoreMax  float64
	TopSites  []SiteCount // the sites with most pages, at most 10
	SiteSizes []Bucket    // how many sites have 1, 2–3, 4–7, … pages
	Depths    []int       // Depths[d] is the number of URLs at depth d
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

// Summarize computes the summary of a batch.
func Summarize(h batch.Header, entries []batch.Entry) Summary {
	s := Summary{Header: h, URLs: len(entries)}
	c := count(entries)
	s.Sites, s.New, s.Revisits, s.ScoreMin, s.ScoreMax = c.sites, c.new, c.revisits, c.scoreMin, c.scoreMax
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
	s.TopSites = s.TopSites[:min(10, len(s.TopSites))]
	return s
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
	for _, k := range []string{"sites", "new", "revisits"} {
		got := map[string]int{"sites": s.Sites, "new": s.New, "revisits": s.Revisits}[k]
		if n, ok := h.Counts[k]; ok && n != got {
			fmt.Fprintf(tw, "warning\tthe header says %s=%d, the entries have %d\n", k, n, got)
		}
	}
	if s.URLs > 0 {
		fmt.Fprintf(tw, "score\tmin %s  median %s  max %s\n", num(s.ScoreMin), num(s.ScoreMed), num(s.ScoreMax))
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

// Show reads the batch file at path and prints its summary. A malformed
// file gives the reader's error, with its line number.
func Show(w io.Writer, path string) error {
	h, entries, err := batch.ReadFile(path)
	if err != nil {
		return err
	}
	s := Summarize(h, entries)
	s.File = path
	return s.Print(w)
}
