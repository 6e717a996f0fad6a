// Package report describes a crawl for people: it reads a collection
// (graph.db read-only, every batch's fetch log and markers), computes
// PageRank over the known link graph with pkg/pagerank, and renders one
// self-contained HTML page whose plots are inline SVG: pages per site,
// in- and out-degree distributions, depth, HTTP status and MIME types,
// pages, bytes and harvest speed per batch, cumulative PageRank of the
// fetched pages over the crawl, and the top sites and pages by
// PageRank. The page needs no network, no script and no file beside it.
// What each plot shows is in docs/report.md.
package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/pagerank"
	"github.com/wirecrawl/wire/pkg/timescale"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Defaults of Options.
const (
	DefaultDamping      = 0.85
	DefaultTop          = 20
	DefaultGraphTimeout = 5 * time.Second
	// maxCurvePoints bounds the points of the cumulative PageRank curve.
	maxCurvePoints = 400
)

// ErrBusy means graph.db is being written by a manager or seeder.
// It wraps linkgraph.ErrBusy, so the binaries exit with the "locked" code.
var ErrBusy = fmt.Errorf("%w: run the report when no manager or seeder is running", linkgraph.ErrBusy)

// Options tune Collect; zero fields take the defaults.
type Options struct {
	// Damping is PageRank's damping factor (manager.damping).
	Damping float64
	// Top is the number of rows of the top sites and top pages tables.
	Top int
	// GraphTimeout is how long to wait for graph.db.
	GraphTimeout time.Duration
	// Now is the report's time stamp (the zero time means time.Now).
	Now time.Time
	// TimeScale is manager.time_scale: the page age classes are its
	// scaled days, weeks, months and years (zero means 1).
	TimeScale timescale.Scale
	// Logger receives progress messages; nil discards them.
	Logger *slog.Logger
	// Changes supplies the manager's change-rate estimates for the
	// freshness section; nil leaves the section out.
	Changes Changes
}

// Data is everything the report shows.
type Data struct {
	Collection string    `json:"collection"`
	Generated  time.Time `json:"generated"`
	Totals     Totals    `json:"totals"`
	// Freshness is the freshness section (nil without Options.Changes).
	Freshness *Freshness `json:"freshness,omitempty"`
	// Sitemaps counts the sitemaps, the sites that publish one and the
	// URLs found in them, only there included (docs/sitemaps.md).
	Sitemaps linkgraph.SitemapStats `json:"sitemaps"`
	// SiteSizes are "N sites have P pages" points, for known and for
	// fetched pages.
	SiteSizesKnown   []XY `json:"siteSizesKnown"`
	SiteSizesFetched []XY `json:"siteSizesFetched"`
	// InDegree and OutDegree are "N pages have degree D" points (D > 0);
	// in-degree over every known page, out-degree over fetched pages.
	InDegree  []XY `json:"inDegree"`
	OutDegree []XY `json:"outDegree"`
	// ZeroIn and ZeroOut count the pages of degree 0 (not on a log plot).
	ZeroIn  int `json:"zeroIn"`
	ZeroOut int `json:"zeroOut"`
	// DepthKnown[d] and DepthFetched[d] count pages at depth d.
	DepthKnown   []int `json:"depthKnown"`
	DepthFetched []int `json:"depthFetched"`
	// Statuses count every fetch log line by HTTP status, or by why it
	// has none; MIMEs count the 2xx responses by media type.
	Statuses []Count `json:"statuses"`
	MIMEs    []Count `json:"mimes"`
	// TLS counts the https sites by their certificate's verdict.
	TLS TLSSites `json:"tls"`
	// Batches are the harvested batches, in order.
	Batches []BatchRow `json:"batches"`
	// Unharvested counts batches not harvested yet (not in Batches).
	Unharvested int `json:"unharvested"`
	// Cumulative is the cumulative PageRank of the fetched pages in the
	// order they were first fetched: X pages fetched, Y the sum of their
	// PageRank (the PageRank of all known pages sums to 1).
	Cumulative []XY `json:"cumulative"`
	// BatchEnds are the X values of Cumulative where each batch ends.
	BatchEnds []float64 `json:"batchEnds"`
	TopPages  []PageRow `json:"topPages"`
	TopSites  []SiteRow `json:"topSites"`
	PageRank  PRInfo    `json:"pagerank"`
	// Web is the national web's sections: languages, duplicates,
	// mirrors, charsets, sizes, ages, links by top-level domain.
	Web Web `json:"web"`
}

// TLSSites counts the https sites with a page stored by what the
// harvester recorded of their certificate (the WARC metadata record of
// one of their pages in their latest harvest: tlsCertValid,
// tlsCertProblem).
type TLSSites struct {
	Sites  int `json:"sites"`
	Broken int `json:"broken"` // not valid for the name
	// Problems counts the broken ones by the problem's first word
	// (expired, wrong-name, self-signed ...).
	Problems []Count `json:"problems,omitempty"`
}

// Totals are the headline numbers.
type Totals struct {
	Batches  int     `json:"batches"`
	Known    int     `json:"known"`
	Fetched  int     `json:"fetched"`
	Pending  int     `json:"pending"`
	Failed   int     `json:"failed"`
	Excluded int     `json:"excluded"`
	Sites    int     `json:"sites"`
	Links    int     `json:"links"` // links stored in graph.db, self-links included (as `seeder stats`)
	Bytes    int64   `json:"bytes"`
	Lines    int     `json:"fetchLogLines"`
	Seconds  float64 `json:"harvestSeconds"`
}

// Count is a labelled count.
type Count struct {
	Label string `json:"label"`
	N     int    `json:"n"`
}

// BatchRow is one harvested batch.
type BatchRow struct {
	ID      int   `json:"id"`
	URLs    int   `json:"urls"`
	Fetched int   `json:"fetched"`
	Bytes   int64 `json:"bytes"`
	// Seconds and PagesPerSecond are those of the harvest's last run
	// (harvested.done); resumed harvests say so.
	Seconds        float64   `json:"seconds"`
	PagesPerSecond float64   `json:"pagesPerSecond"`
	Resumed        bool      `json:"resumed"`
	Finished       time.Time `json:"finished"`
}

// PageRow is a page of the top pages table.
type PageRow struct {
	URL      string  `json:"url"`
	Title    string  `json:"title"`
	Rank     float64 `json:"rank"`
	InLinks  int     `json:"inLinks"`
	State    string  `json:"state"`
	Status   int     `json:"status"`
	Position int     `json:"position"` // 1-based fetch order; 0 if not fetched
}

// SiteRow is a site of the top sites table.
type SiteRow struct {
	Site    string  `json:"site"`
	Rank    float64 `json:"rank"`
	Pages   int     `json:"pages"`
	Fetched int     `json:"fetched"`
}

// PRInfo says how PageRank was computed.
type PRInfo struct {
	Damping    float64 `json:"damping"`
	Nodes      int     `json:"nodes"`
	Edges      int     `json:"edges"`
	Iterations int     `json:"iterations"`
	Converged  bool    `json:"converged"`
	// FetchedShare is the PageRank of all fetched pages together.
	FetchedShare float64 `json:"fetchedShare"`
}

// docInfo is what Collect keeps of each document, indexed by id-1.
type docInfo struct {
	site    uint32
	depth   int32
	state   linkgraph.State
	first   int64 // first fetch, Unix nanoseconds; 0 if never fetched
	status  int32
	inDeg   int32
	outDeg  int32
	present bool
}

// Collect reads the collection and computes the report's data.
func Collect(ctx context.Context, col *collection.Collection, opts Options) (*Data, error) {
	if opts.Damping == 0 {
		opts.Damping = DefaultDamping
	}
	if opts.Top <= 0 {
		opts.Top = DefaultTop
	}
	if opts.GraphTimeout <= 0 {
		opts.GraphTimeout = DefaultGraphTimeout
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Data{Collection: col.Dir, Generated: opts.Now.UTC()}
	if err := d.readBatches(col); err != nil {
		return nil, err
	}
	web, err := readWeb(col, opts.TimeScale)
	if err != nil {
		return nil, fmt.Errorf("report on %s: %w", col.Dir, err)
	}
	d.Web = *web
	if opts.Changes != nil {
		if d.Freshness, err = collectFreshness(ctx, opts.Changes, opts.TimeScale.Factor(), opts.Top); err != nil {
			return nil, fmt.Errorf("report on %s: %w", col.Dir, err)
		}
	}
	g, err := linkgraph.Open(col.GraphPath(), true, opts.GraphTimeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, fmt.Errorf("report on %s: %w", col.Dir, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("report on %s: %w", col.Dir, err)
	}
	defer g.Close()
	var docs []docInfo
	var sites map[uint32]string
	var pr *pagerank.Graph
	var links int
	err = g.View(func(tx *linkgraph.Tx) error {
		var err error
		if docs, err = readDocs(tx); err != nil {
			return err
		}
		if sites, err = readSites(tx); err != nil {
			return err
		}
		if pr, links, err = readLinks(tx, docs); err != nil {
			return err
		}
		d.Sitemaps, err = tx.SitemapStats()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("report on %s: read graph.db: %w", col.Dir, err)
	}
	log.Info("graph read", "docs", len(docs), "sites", len(sites), "links", pr.Edges())
	res, err := pagerank.Compute(ctx, pr, pagerank.Options{Damping: opts.Damping})
	if err != nil {
		return nil, fmt.Errorf("report on %s: %w", col.Dir, err)
	}
	d.PageRank = PRInfo{Damping: opts.Damping, Nodes: pr.N, Edges: pr.Edges(), Iterations: res.Iterations, Converged: res.Converged}
	log.Info("pagerank computed", "iterations", res.Iterations, "converged", res.Converged)
	d.Totals.Sites = len(sites)
	d.Totals.Links = links
	d.fromDocs(docs)
	order := d.cumulative(docs, res.Rank)
	d.topSites(docs, sites, res.Rank, opts.Top)
	err = g.View(func(tx *linkgraph.Tx) error { return d.topPages(tx, docs, res.Rank, order, opts.Top) })
	if err != nil {
		return nil, fmt.Errorf("report on %s: %w", col.Dir, err)
	}
	return d, nil
}

// readDocs reads every document record.
func readDocs(tx *linkgraph.Tx) ([]docInfo, error) {
	docs := make([]docInfo, 0, min(tx.LastDocID(), math.MaxUint32))
	err := tx.ForEachDoc(func(doc *linkgraph.Doc) error {
		if doc.ID == 0 || doc.ID > math.MaxUint32 {
			return fmt.Errorf("doc id %d out of range", doc.ID)
		}
		for uint64(len(docs)) < doc.ID {
			docs = append(docs, docInfo{})
		}
		di := &docs[doc.ID-1]
		*di = docInfo{site: uint32(doc.Site), depth: int32(doc.Depth), state: doc.State, status: int32(doc.Status), present: true}
		if doc.State == linkgraph.StateFetched {
			t := doc.FirstFetched
			if t.IsZero() {
				t = doc.Fetched
			}
			di.first = t.UnixNano()
		}
		return nil
	})
	return docs, err
}

// readSites maps site ids to their keys.
func readSites(tx *linkgraph.Tx) (map[uint32]string, error) {
	sites := map[uint32]string{}
	err := tx.ForEachSite(func(s *linkgraph.Site) error {
		sites[uint32(s.ID)] = s.Key
		return nil
	})
	return sites, err
}

// readLinks builds the PageRank graph over every document (node id-1),
// counts degrees, and counts the links graph.db stores: the sizes of the
// out-link sets, self-links included, as linkgraph's Stats (and so
// `seeder stats`) counts them. The PageRank graph and the degrees leave
// self-links out, so its edges are fewer (PRInfo.Edges).
func readLinks(tx *linkgraph.Tx, docs []docInfo) (*pagerank.Graph, int, error) {
	b := pagerank.NewBuilder(len(docs))
	var targets []uint32
	stored := 0
	err := tx.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		stored += int(bm.GetCardinality())
		if id == 0 || id > uint64(len(docs)) {
			return nil
		}
		targets = targets[:0]
		it := bm.Iterator()
		for it.HasNext() {
			t := it.Next()
			if t == 0 || uint64(t) > uint64(len(docs)) || uint64(t) == id {
				continue
			}
			targets = append(targets, t-1)
			docs[t-1].inDeg++
		}
		docs[id-1].outDeg = int32(len(targets))
		return b.Add(int(id-1), targets)
	})
	if err != nil {
		return nil, 0, err
	}
	return b.Graph(), stored, nil
}

// fromDocs fills the totals and the distributions that need only the
// documents.
func (d *Data) fromDocs(docs []docInfo) {
	known, fetched := map[uint32]int{}, map[uint32]int{}
	in, out := map[int]int{}, map[int]int{}
	for i := range docs {
		di := &docs[i]
		if !di.present {
			continue
		}
		d.Totals.Known++
		known[di.site]++
		depth := int(max(di.depth, 0))
		for len(d.DepthKnown) <= depth {
			d.DepthKnown = append(d.DepthKnown, 0)
			d.DepthFetched = append(d.DepthFetched, 0)
		}
		d.DepthKnown[depth]++
		if di.inDeg > 0 {
			in[int(di.inDeg)]++
		} else {
			d.ZeroIn++
		}
		switch di.state {
		case linkgraph.StateFetched:
			d.Totals.Fetched++
			fetched[di.site]++
			d.DepthFetched[depth]++
			if di.outDeg > 0 {
				out[int(di.outDeg)]++
			} else {
				d.ZeroOut++
			}
		case linkgraph.StatePending, linkgraph.StateScheduled:
			d.Totals.Pending++
		case linkgraph.StateFailed:
			d.Totals.Failed++
		case linkgraph.StateExcluded:
			d.Totals.Excluded++
		}
	}
	d.SiteSizesKnown = histogram(known)
	d.SiteSizesFetched = histogram(fetched)
	d.InDegree = frequencies(in)
	d.OutDegree = frequencies(out)
}

// histogram turns "site → pages" into "pages → number of sites" points.
func histogram(perSite map[uint32]int) []XY {
	freq := map[int]int{}
	for _, n := range perSite {
		freq[n]++
	}
	return frequencies(freq)
}

// frequencies turns "value → count" into points sorted by value.
func frequencies(m map[int]int) []XY {
	out := make([]XY, 0, len(m))
	for v, n := range m {
		out = append(out, XY{float64(v), float64(n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

// cumulative orders the fetched pages by first fetch and sums their
// PageRank; it returns the fetch position of each document (1-based, 0
// if never fetched).
func (d *Data) cumulative(docs []docInfo, rank []float64) []int {
	var ids []int
	for i := range docs {
		if docs[i].present && docs[i].state == linkgraph.StateFetched {
			ids = append(ids, i)
		}
	}
	sort.SliceStable(ids, func(a, b int) bool { return docs[ids[a]].first < docs[ids[b]].first })
	pos := make([]int, len(docs))
	if len(ids) == 0 {
		return pos
	}
	step := max(1, len(ids)/maxCurvePoints)
	sum := 0.0
	d.Cumulative = append(d.Cumulative, XY{0, 0})
	for k, i := range ids {
		sum += rank[i]
		pos[i] = k + 1
		if (k+1)%step == 0 || k == len(ids)-1 {
			d.Cumulative = append(d.Cumulative, XY{float64(k + 1), sum})
		}
	}
	d.PageRank.FetchedShare = sum
	// Batch boundaries: how many pages had been fetched when each
	// batch's harvest finished.
	for _, b := range d.Batches {
		if b.Finished.IsZero() {
			continue
		}
		end := b.Finished.UnixNano()
		n := sort.Search(len(ids), func(k int) bool { return docs[ids[k]].first > end })
		d.BatchEnds = append(d.BatchEnds, float64(n))
	}
	return pos
}

// topSites sums PageRank by site.
func (d *Data) topSites(docs []docInfo, sites map[uint32]string, rank []float64, top int) {
	type agg struct {
		rank           float64
		pages, fetched int
	}
	by := map[uint32]*agg{}
	for i := range docs {
		if !docs[i].present {
			continue
		}
		a := by[docs[i].site]
		if a == nil {
			a = &agg{}
			by[docs[i].site] = a
		}
		a.rank += rank[i]
		a.pages++
		if docs[i].state == linkgraph.StateFetched {
			a.fetched++
		}
	}
	for id, a := range by {
		key := sites[id]
		if key == "" {
			key = "site " + strconv.Itoa(int(id))
		}
		d.TopSites = append(d.TopSites, SiteRow{Site: key, Rank: a.rank, Pages: a.pages, Fetched: a.fetched})
	}
	sort.Slice(d.TopSites, func(i, j int) bool {
		if d.TopSites[i].Rank != d.TopSites[j].Rank {
			return d.TopSites[i].Rank > d.TopSites[j].Rank
		}
		return d.TopSites[i].Site < d.TopSites[j].Site
	})
	if len(d.TopSites) > top {
		d.TopSites = d.TopSites[:top]
	}
}

// topPages lists the pages of highest PageRank with their records.
func (d *Data) topPages(tx *linkgraph.Tx, docs []docInfo, rank []float64, pos []int, top int) error {
	idx := make([]int, 0, len(docs))
	for i := range docs {
		if docs[i].present {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		if rank[idx[a]] != rank[idx[b]] {
			return rank[idx[a]] > rank[idx[b]]
		}
		return idx[a] < idx[b]
	})
	if len(idx) > top {
		idx = idx[:top]
	}
	for _, i := range idx {
		doc, err := tx.Doc(uint64(i + 1))
		if err != nil {
			return err
		}
		d.TopPages = append(d.TopPages, PageRow{URL: doc.URL, Title: doc.Title, Rank: rank[i], InLinks: int(docs[i].inDeg),
			State: string(doc.State), Status: doc.Status, Position: pos[i]})
	}
	return nil
}

// readBatches reads every harvested batch's fetch log and marker.
func (d *Data) readBatches(col *collection.Collection) error {
	ids, err := col.BatchIDs()
	if err != nil {
		return fmt.Errorf("report on %s: %w", col.Dir, err)
	}
	d.Totals.Batches = len(ids)
	statuses, mimes := map[string]int{}, map[string]int{}
	certs := map[string]string{} // https site -> "" (valid) or its problem's first word, from its latest harvest
	for _, id := range ids {
		b := col.Batch(id)
		if !b.Done(collection.StageHarvested) {
			d.Unharvested++
			continue
		}
		row := BatchRow{ID: id}
		var sum struct {
			ElapsedSeconds float64   `json:"elapsed_seconds"`
			PagesPerSecond float64   `json:"pages_per_second"`
			Resumed        bool      `json:"resumed"`
			Finished       time.Time `json:"finished"`
		}
		if err := b.Summary(collection.StageHarvested, &sum); err == nil {
			row.Seconds, row.PagesPerSecond, row.Resumed, row.Finished = sum.ElapsedSeconds, sum.PagesPerSecond, sum.Resumed, sum.Finished
		}
		logs, err := FetchLogs(b.Dir)
		if err != nil {
			return fmt.Errorf("report on %s: batch %s: %w", col.Dir, b.Name(), err)
		}
		sampled := map[string]bool{} // https sites whose verdict this batch gave
		for _, path := range logs {
			recs, err := fetchlog.ReadFile(path)
			if err != nil {
				return fmt.Errorf("report on %s: %w", col.Dir, err)
			}
			for _, r := range recs {
				if r.OK() && r.WARC != "" && strings.HasPrefix(r.URL, "https://") {
					if site := urlnorm.SiteKey(r.URL); !sampled[site] {
						if v, ok := certVerdict(filepath.Join(filepath.Dir(path), r.WARC), r.Offset+r.Length); ok {
							sampled[site] = true
							certs[site] = v
						}
					}
				}
				row.URLs++
				statuses[statusLabel(r)]++
				if r.OK() {
					row.Fetched++
					row.Bytes += r.Bytes
					if r.Status >= 200 && r.Status < 300 {
						mime := r.MIME
						if mime == "" {
							mime = "(none)"
						}
						mimes[mime]++
					}
				}
			}
		}
		d.Totals.Lines += row.URLs
		d.Totals.Bytes += row.Bytes
		d.Totals.Seconds += row.Seconds
		d.Batches = append(d.Batches, row)
	}
	d.Statuses = topCounts(statuses, 12)
	d.MIMEs = topCounts(mimes, 10)
	problems := map[string]int{}
	for _, v := range certs {
		d.TLS.Sites++
		if v != "" {
			d.TLS.Broken++
			problems[v]++
		}
	}
	d.TLS.Problems = topCounts(problems, 10)
	return nil
}

// certVerdict reads the TLS facts of a page's metadata record (at offset
// in the WARC file path): "" for a certificate valid for the name, the
// first word of the problem otherwise; ok is false when the record has
// none (a harvest before issue 23, a page without metadata).
func certVerdict(path string, offset int64) (verdict string, ok bool) {
	fields, err := warcio.ReadMetadata(path, offset)
	if err != nil {
		return "", false
	}
	valid, problem := "", ""
	for _, f := range fields {
		switch f.Name {
		case warcio.MetaTLSCertValid:
			valid = f.Value
		case warcio.MetaTLSCertProblem:
			problem = f.Value
		}
	}
	switch valid {
	case "true":
		return "", true
	case "false":
		word, _, _ := strings.Cut(problem, ":")
		if word == "" {
			word = "unknown"
		}
		return word, true
	}
	return "", false
}

// FetchLogs lists the fetch logs of a harvested batch directory: the
// harvest/fetch.log of docs/format/harvest.md.
func FetchLogs(batchDir string) ([]string, error) {
	p := filepath.Join(batchDir, collection.HarvestDir, fetchlog.LogFile)
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("no fetch log: %w", err)
	}
	return []string{p}, nil
}

// statusLabel is the status plot's category of a fetch log line: the
// HTTP status, "robots.txt" for URLs robots.txt forbade, or "no
// response: KIND" with the error's kind (docs/format/harvest.md).
func statusLabel(r fetchlog.Record) string {
	if r.Status > 0 {
		return strconv.Itoa(r.Status)
	}
	kind := r.Err
	if i := strings.IndexAny(kind, ": "); i >= 0 {
		kind = kind[:i]
	}
	if kind == "robots" {
		return "robots.txt"
	}
	if kind == "" {
		kind = "unknown"
	}
	return "no response: " + kind
}

// topCounts sorts counts, largest first, keeping n labels and adding
// the rest up as "other".
func topCounts(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Label < out[j].Label
	})
	if len(out) > n {
		other := 0
		for _, c := range out[n-1:] {
			other += c.N
		}
		out = append(out[:n-1], Count{"other", other})
	}
	return out
}
