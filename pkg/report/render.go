package report

import (
	"fmt"

	"github.com/wirecrawl/wire/pkg/simhash"
	"github.com/wirecrawl/wire/pkg/timescale"
	"html/template"
	"io"
	"strconv"
	"time"
)

// PlotIDs are the ids of the report's plots (SVG elements), in page
// order; docs/report.md describes each.
func PlotIDs() []string {
	return []string{
		"plot-site-sizes", "plot-in-degree", "plot-out-degree", "plot-depth",
		"plot-status", "plot-mime", "plot-batch-pages", "plot-batch-bytes",
		"plot-batch-speed", "plot-cumulative-pagerank",
		"plot-languages", "plot-duplicates", "plot-charsets", "plot-sizes", "plot-ages", "plot-link-tlds",
		"plot-freshness-depth",
	}
}

// figure is one plot and its caption.
type figure struct {
	SVG     template.HTML
	Caption string
}

// page is what the template renders.
type page struct {
	D       *Data
	Figures []figure
}

// plots builds the figures from the data, in PlotIDs order.
func (d *Data) plots() []figure {
	var figs []figure
	add := func(svg, caption string) {
		// The SVG is built by this package, every text escaped.
		figs = append(figs, figure{SVG: template.HTML(svg), Caption: caption})
	}
	add((&XYPlot{ID: "plot-site-sizes", Title: "Pages per site", XLabel: "pages in the site", YLabel: "sites",
		LogX: true, LogY: true, Series: []Series{{Name: "known", Points: d.SiteSizesKnown}, {Name: "fetched", Points: d.SiteSizesFetched}}}).SVG(),
		"How many sites have each number of pages, on log-log axes: a national web is a few large sites and very many small ones.")
	add((&XYPlot{ID: "plot-in-degree", Title: "In-degree distribution", XLabel: "in-links of a page", YLabel: "pages",
		LogX: true, LogY: true, Series: []Series{{Name: "known pages", Points: d.InDegree}}}).SVG(),
		fmt.Sprintf("Pages by number of in-links from the known graph (%d known pages have none).", d.ZeroIn))
	add((&XYPlot{ID: "plot-out-degree", Title: "Out-degree distribution", XLabel: "out-links of a page", YLabel: "pages",
		LogX: true, LogY: true, Series: []Series{{Name: "fetched pages", Points: d.OutDegree}}}).SVG(),
		fmt.Sprintf("Fetched pages by number of distinct in-scope out-links (%d fetched pages have none).", d.ZeroOut))
	depthCats := make([]string, len(d.DepthKnown))
	known, fetched := make([]float64, len(d.DepthKnown)), make([]float64, len(d.DepthKnown))
	for i := range d.DepthKnown {
		depthCats[i] = strconv.Itoa(i)
		known[i], fetched[i] = float64(d.DepthKnown[i]), float64(d.DepthFetched[i])
	}
	add((&BarPlot{ID: "plot-depth", Title: "Depth", XLabel: "depth (links from the site's entry page)", YLabel: "pages",
		Categories: depthCats, Series: []string{"known", "fetched"}, Values: [][]float64{known, fetched}}).SVG(),
		"Pages by depth within their site, counted from where the crawl entered the site.")
	add(countBars("plot-status", "HTTP status", "fetch log lines", d.Statuses).SVG(),
		"Every fetch log line by HTTP status, or by why there was no response (robots.txt: not requested).")
	add(countBars("plot-mime", "MIME types", "2xx responses", d.MIMEs).SVG(),
		"Successful responses by media type.")
	ids := make([]string, len(d.Batches))
	urls, got, mb, speed := make([]float64, len(d.Batches)), make([]float64, len(d.Batches)), make([]float64, len(d.Batches)), make([]float64, len(d.Batches))
	for i, b := range d.Batches {
		ids[i] = strconv.Itoa(b.ID)
		urls[i], got[i], mb[i], speed[i] = float64(b.URLs), float64(b.Fetched), float64(b.Bytes)/1e6, b.PagesPerSecond
	}
	add((&BarPlot{ID: "plot-batch-pages", Title: "Pages per batch", XLabel: "batch", YLabel: "pages",
		Categories: ids, Series: []string{"URLs in the batch", "fetched"}, Values: [][]float64{urls, got}}).SVG(),
		"URLs the manager put in each batch, and responses the harvester stored.")
	add((&BarPlot{ID: "plot-batch-bytes", Title: "Bytes per batch", XLabel: "batch", YLabel: "MB of bodies",
		Categories: ids, Series: []string{"MB"}, Values: [][]float64{mb}}).SVG(),
		"Body bytes stored per batch (decoded, after the size cap).")
	add((&BarPlot{ID: "plot-batch-speed", Title: "Harvest speed per batch", XLabel: "batch", YLabel: "pages per second",
		Categories: ids, Series: []string{"pages/s"}, Values: [][]float64{speed}}).SVG(),
		"Pages per second of each batch's harvest (its last run, from harvested.done): politeness and the number of sites in the batch set it.")
	curves := []Series{{Name: "this crawl", Points: d.Cumulative, Line: true}}
	if len(d.Cumulative) > 0 {
		n := d.Cumulative[len(d.Cumulative)-1].X
		curves = append(curves, Series{Name: "same pages, no order", Points: []XY{{0, 0}, {n, d.PageRank.FetchedShare}}, Line: true, Dashed: true})
	}
	add((&XYPlot{ID: "plot-cumulative-pagerank", Title: "Cumulative PageRank of fetched pages", XLabel: "pages fetched, in crawl order", YLabel: "cumulative PageRank",
		Series: curves, VLines: d.BatchEnds}).SVG(),
		fmt.Sprintf("Sum of the PageRank (over the known graph, damping %g) of the pages fetched so far, in the order they were first fetched; dotted lines end batches. A curve above the dashed line fetched the valuable pages early (Baeza-Yates et al. 2005).", d.PageRank.Damping))
	d.webPlots(add)
	d.freshnessPlot(add)
	return figs
}

// webPlots adds the national web's plots.
func (d *Data) webPlots(add func(svg, caption string)) {
	w := &d.Web
	cats := make([]string, len(w.Languages))
	pages, sites := make([]float64, len(w.Languages)), make([]float64, len(w.Languages))
	for i, l := range w.Languages {
		if i == 15 {
			cats, pages, sites = cats[:i], pages[:i], sites[:i]
			break
		}
		cats[i], pages[i], sites[i] = l.Lang, float64(l.Pages), float64(l.Sites)
	}
	add((&BarPlot{ID: "plot-languages", Title: "Languages", XLabel: "language (from the text)", YLabel: "pages and sites",
		Categories: cats, Series: []string{"pages", "sites"}, Values: [][]float64{pages, sites}, Horizontal: true}).SVG(),
		"HTML pages by the language the gatherer told from their text, and sites by the language of most of their pages (unknown: too short or too mixed to tell).")
	mirrored := 0
	for _, m := range w.Mirrors {
		mirrored += m.Pages
	}
	unique := w.Pages - w.ExactDuplicates - w.NearDuplicates
	add(countBars("plot-duplicates", "Duplication", "HTML pages", []Count{{"unique", unique}, {"exact duplicates", w.ExactDuplicates}, {"near-duplicates", w.NearDuplicates}, {"pages of mirror sites", mirrored}}).SVG(),
		fmt.Sprintf("HTML pages whose text another page has (exact), whose simhash is within %d bits of another's (near), and the pages of mirror sites (sites found to mirror another: %d; they overlap the near-duplicates).", simhash.Distance, len(w.Mirrors)))
	add(countBars("plot-charsets", "Charsets", "HTML pages", w.Charsets).SVG(),
		"HTML pages by the encoding they were decoded from (declared, or detected).")
	add(countBars("plot-sizes", "Page sizes", "2xx responses", w.Sizes).SVG(),
		"Successful responses of every type by body size (after Content-Encoding was removed and the size cap applied).")
	ages := "HTML pages by the age their Last-Modified header gave when fetched (unknown: no header, or a date in the future)."
	if w.TimeScale != 0 {
		ages += fmt.Sprintf(" Ages are in scaled time: manager.time_scale %s.", timescale.Scale(w.TimeScale))
	}
	add(countBars("plot-ages", "Page age", "HTML pages", w.Ages).SVG(), ages)
	add(countBars("plot-link-tlds", "Links to other domains by top-level domain", "links", w.LinkTLDs).SVG(),
		fmt.Sprintf("The %d links of fetched HTML pages to another registrable domain, by the target's top-level domain: which countries the national web links to.", w.LinksOut))
}

// countBars is a horizontal bar chart of counts.
func countBars(id, title, xlabel string, cs []Count) *BarPlot {
	cats, vals := make([]string, len(cs)), make([]float64, len(cs))
	for i, c := range cs {
		cats[i], vals[i] = c.Label, float64(c.N)
	}
	return &BarPlot{ID: id, Title: title, XLabel: xlabel, Categories: cats, Series: []string{xlabel}, Values: [][]float64{vals}, Horizontal: true}
}

// Render writes the report as one HTML page.
func (d *Data) Render(w io.Writer) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"pct": func(a, b int) string {
			if b == 0 {
				return "–"
			}
			return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(b))
		},
		"mb":    func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) },
		"rank":  func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) },
		"fixed": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"stamp": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"inc":   func(i int) int { return i + 1 },
	}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	if err := t.Execute(w, page{D: d, Figures: d.plots()}); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crawl report: {{.D.Collection}}</title>
<style>
body { font-family: sans-serif; margin: 24px; color: #222; background: #f6f6f6; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
.meta { color: #555; margin-bottom: 16px; }
.totals { display: flex; flex-wrap: wrap; gap: 10px; }
.totals div { background: #fff; border: 1px solid #ddd; padding: 8px 14px; min-width: 110px; }
.totals b { display: block; font-size: 20px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(580px, 1fr)); gap: 14px; }
figure { margin: 0; background: #fff; border: 1px solid #ddd; padding: 8px; }
figcaption { font-size: 12px; color: #555; margin-top: 4px; max-width: 560px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.url { max-width: 520px; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>Crawl report</h1>
<div class="meta">Collection <code>{{.D.Collection}}</code>, generated {{stamp .D.Generated}} by <code>manager report</code>.</div>
<div class="totals" id="totals">
<div><b>{{.D.Totals.Batches}}</b>batches ({{.D.Unharvested}} not harvested)</div>
<div><b>{{.D.Totals.Known}}</b>pages known</div>
<div><b>{{.D.Totals.Fetched}}</b>fetched ({{pct .D.Totals.Fetched .D.Totals.Known}})</div>
<div><b>{{.D.Totals.Pending}}</b>pending</div>
<div><b>{{.D.Totals.Failed}}</b>failed</div>
<div><b>{{.D.Totals.Excluded}}</b>excluded</div>
<div><b>{{.D.Totals.Sites}}</b>sites</div>
<div><b>{{.D.Totals.Links}}</b>links</div>
<div><b>{{mb .D.Totals.Bytes}}</b>of bodies</div>
<div><b>{{fixed .D.Totals.Seconds}} s</b>harvesting</div>{{if .D.TLS.Sites}}
<div><b>{{.D.TLS.Broken}}</b>of {{.D.TLS.Sites}} https sites with a broken certificate{{range .D.TLS.Problems}} · {{.Label}} {{.N}}{{end}}</div>{{end}}
{{if .D.Sitemaps.Sitemaps}}<div id="sitemaps"><b>{{.D.Sitemaps.Sites}}</b>sites publish sitemaps ({{.D.Sitemaps.Read}} of {{.D.Sitemaps.Sitemaps}} sitemaps read)</div>
<div><b>{{.D.Sitemaps.Only}}</b>URLs only in sitemaps ({{.D.Sitemaps.OnlyFetched}} fetched; {{.D.Sitemaps.Found}} found in sitemaps)</div>
{{end}}</div>
<h2>Plots</h2>
<div class="grid">
{{range .Figures}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div>
<h2>Top sites by PageRank</h2>
<table id="top-sites">
<tr><th>#</th><th>site</th><th>PageRank</th><th>pages known</th><th>fetched</th></tr>
{{range $i, $s := .D.TopSites}}<tr><td class="n">{{inc $i}}</td><td class="url">{{$s.Site}}</td><td class="n">{{rank $s.Rank}}</td><td class="n">{{$s.Pages}}</td><td class="n">{{$s.Fetched}}</td></tr>
{{end}}</table>
<h2>Top pages by PageRank</h2>
<table id="top-pages">
<tr><th>#</th><th>page</th><th>title</th><th>PageRank</th><th>in-links</th><th>state</th><th>fetched as</th></tr>
{{range $i, $p := .D.TopPages}}<tr><td class="n">{{inc $i}}</td><td class="url">{{$p.URL}}</td><td>{{$p.Title}}</td><td class="n">{{rank $p.Rank}}</td><td class="n">{{$p.InLinks}}</td><td>{{$p.State}}{{if $p.Status}} ({{$p.Status}}){{end}}</td><td class="n">{{if $p.Position}}#{{$p.Position}}{{else}}–{{end}}</td></tr>
{{end}}</table>
<h2>Batches</h2>
<table id="batches">
<tr><th>batch</th><th>URLs</th><th>fetched</th><th>bytes</th><th>harvest time</th><th>pages/s</th></tr>
{{range .D.Batches}}<tr><td class="n">{{.ID}}</td><td class="n">{{.URLs}}</td><td class="n">{{.Fetched}}</td><td class="n">{{mb .Bytes}}</td><td class="n">{{fixed .Seconds}} s{{if .Resumed}} (resumed){{end}}</td><td class="n">{{fixed .PagesPerSecond}}</td></tr>
{{end}}</table>
<h2>The national web</h2>
<p class="meta">{{.D.Web.Pages}} HTML pages ({{.D.Web.WithText}} with text), each counted once as last fetched.</p>
<h3>Languages</h3>
<table id="languages">
<tr><th>language (from the text)</th><th>pages</th><th>share</th><th>sites</th></tr>
{{range .D.Web.Languages}}<tr><td>{{.Lang}}</td><td class="n">{{.Pages}}</td><td class="n">{{pct .Pages $.D.Web.Pages}}</td><td class="n">{{.Sites}}</td></tr>
{{end}}</table>
<table id="declared">
<tr><th>language declared</th><th>pages</th></tr>
{{range .D.Web.Declared}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>
<h3>Duplicates and mirrors</h3>
<table id="duplicates">
<tr><th></th><th>pages</th><th>share</th></tr>
<tr><td>exact duplicates</td><td class="n">{{.D.Web.ExactDuplicates}}</td><td class="n">{{pct .D.Web.ExactDuplicates .D.Web.Pages}}</td></tr>
<tr><td>near-duplicates (not exact), in {{.D.Web.NearGroups}} groups</td><td class="n">{{.D.Web.NearDuplicates}}</td><td class="n">{{pct .D.Web.NearDuplicates .D.Web.Pages}}</td></tr>
</table>
<table id="mirrors">
<tr><th>site</th><th>mirrors</th><th>pages</th><th>with a copy there</th></tr>
{{range .D.Web.Mirrors}}<tr><td class="url">{{.Site}}</td><td class="url">{{.Of}}</td><td class="n">{{.Pages}}</td><td class="n">{{.Shared}}</td></tr>
{{else}}<tr><td colspan="4">no mirrors found</td></tr>
{{end}}</table>
<h3>Charsets, sizes, ages</h3>
<table id="charsets">
<tr><th>charset</th><th>pages</th></tr>
{{range .D.Web.Charsets}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>
<table id="sizes">
<tr><th>size</th><th>responses</th></tr>
{{range .D.Web.Sizes}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>
<table id="ages">
<tr><th>age (Last-Modified)</th><th>pages</th></tr>
{{range .D.Web.Ages}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td></tr>
{{end}}</table>
<h3>Links to other domains</h3>
<table id="link-tlds">
<tr><th>top-level domain</th><th>links</th><th>share</th></tr>
{{range .D.Web.LinkTLDs}}<tr><td>{{.Label}}</td><td class="n">{{.N}}</td><td class="n">{{pct .N $.D.Web.LinksOut}}</td></tr>
{{end}}</table>
{{with .D.Freshness}}<h2>Freshness</h2>
<p class="meta" id="freshness">{{.Pages}} fetched pages, estimated {{printf "%.3f" .Estimated}} fresh now (the mean of exp(−λ·age) with the manager's change-rate estimates); {{.Revisits}} revisits, {{.Changed}} found the text changed ({{pct .Changed .Revisits}}).{{if .TimeScale}} Intervals in days of manager.time_scale {{.TimeScale}}.{{end}}</p>
<table id="freshness-depth">
<tr><th>depth</th><th>pages</th><th>median change interval (days)</th><th>estimated freshness</th><th>revisits</th><th>found a change</th></tr>
{{range .ByDepth}}<tr><td class="n">{{.Label}}</td><td class="n">{{.Pages}}</td><td class="n">{{rank .MedianInterval}}</td><td class="n">{{printf "%.3f" .Freshness}}</td><td class="n">{{.Revisits}}</td><td class="n">{{pct .Changed .Revisits}}</td></tr>
{{end}}</table>
<table id="freshness-sites">
<tr><th>site (most fetched pages)</th><th>pages</th><th>median change interval (days)</th><th>estimated freshness</th><th>revisits</th><th>found a change</th></tr>
{{range .BySite}}<tr><td class="url">{{.Label}}</td><td class="n">{{.Pages}}</td><td class="n">{{rank .MedianInterval}}</td><td class="n">{{printf "%.3f" .Freshness}}</td><td class="n">{{.Revisits}}</td><td class="n">{{pct .Changed .Revisits}}</td></tr>
{{end}}</table>
{{end}}<p class="meta">PageRank over {{.D.PageRank.Nodes}} pages and {{.D.PageRank.Edges}} links, damping {{.D.PageRank.Damping}}, {{.D.PageRank.Iterations}} iterations{{if not .D.PageRank.Converged}} (not converged){{end}}; the fetched pages hold {{rank .D.PageRank.FetchedShare}} of it.</p>
</body>
</html>
`
