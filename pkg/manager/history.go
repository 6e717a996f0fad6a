package manager

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// The historical strategy uses the PageRank of a previous crawl of the
// same web. ImportHistory brings it into graph.db's scores bucket from
// another collection (its graph.db: the PageRank is computed over its
// whole graph) or from a PageRank file; ExportPageRank writes one.
//
// A PageRank file (docs/manager.md, "PageRank files") is UTF-8 text, one
// page per line, "URL<TAB>PageRank"; lines starting with '#' and blank
// lines are ignored. ExportPageRank starts it with "# wire-pagerank 1".

// PageRankMagic starts the first line of a PageRank file ExportPageRank
// writes, followed by the version.
const PageRankMagic = "# wire-pagerank"

// importChunk is the number of entries written per transaction.
const importChunk = 200_000

// ErrHistorySource means a history source cannot be used.
var ErrHistorySource = errors.New("unusable history source")

// HistoryOptions configure ImportHistory and ExportPageRank.
type HistoryOptions struct {
	Config       config.Config    // manager.damping for the PageRank of a graph; scope.max_url_length for file URLs
	Logger       *slog.Logger     // nil discards
	Now          func() time.Time // nil means time.Now
	GraphTimeout time.Duration    // 0 means DefaultGraphTimeout
}

// HistoryResult is what ImportHistory or ExportPageRank did.
type HistoryResult struct {
	Source     string        `json:"source"`
	Kind       string        `json:"kind"`                 // "graph" or "file"
	Pages      int           `json:"pages"`                // PageRank values read or written
	Matched    int           `json:"matched"`              // of them, URLs this collection knows (import)
	Iterations int           `json:"iterations,omitempty"` // PageRank iterations (from a graph)
	Max        float64       `json:"max"`
	Min        float64       `json:"min"` // smallest positive value
	Elapsed    time.Duration `json:"elapsed"`
}

// graphMagic is bbolt's magic number, at byte 16 of its first page.
const graphMagic = 0xED0CDAED

// sourceKind tells whether path is a graph.db (a collection directory or
// a bbolt file) or a PageRank file, and returns the file to read.
func sourceKind(path string) (kind, file string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrHistorySource, err)
	}
	if fi.IsDir() {
		return "graph", filepath.Join(path, collection.GraphFile), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("%w: %w", ErrHistorySource, err)
	}
	defer f.Close()
	var head [20]byte
	if n, _ := io.ReadFull(f, head[:]); n == len(head) && binary.LittleEndian.Uint32(head[16:]) == graphMagic {
		return "graph", path, nil
	}
	return "file", path, nil
}

// ImportHistory replaces the historical PageRank of the collection with
// the one of source: a collection directory or graph.db file of a
// previous crawl (its PageRank is computed over its whole graph, damping
// manager.damping), or a PageRank file. The import is written in several
// transactions into a second table and becomes the one in use at once,
// in the last; a killed import leaves the previous one in use.
func ImportHistory(ctx context.Context, col *collection.Collection, source string, opts HistoryOptions) (*HistoryResult, error) {
	start := time.Now()
	log := orDiscard(opts.Logger)
	kind, file, err := sourceKind(source)
	if err != nil {
		return nil, err
	}
	if same, _ := sameFile(file, col.GraphPath()); same {
		return nil, fmt.Errorf("%w: %s is this collection's own graph.db", ErrHistorySource, file)
	}
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	g, err := openGraph(col, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()

	var old *historyState
	if err := g.View(func(tx *linkgraph.Tx) error {
		old, err = readHistoryState(tx)
		return err
	}); err != nil {
		return nil, err
	}
	table := historyTableA
	if old != nil && old.Table == historyTableA {
		table = historyTableB
	}
	if err := g.Update(func(tx *linkgraph.Tx) error { return tx.ClearScoreTable(table) }); err != nil {
		return nil, err
	}
	w := &tableWriter{ctx: ctx, g: g, table: table, sample: newReservoir(SampleSize)}
	res := &HistoryResult{Source: source, Kind: kind}
	switch kind {
	case "graph":
		res.Iterations, err = graphPageRank(ctx, file, opts, w.add)
	default:
		err = readPageRankFile(file, opts.Config.Scope.Normalizer(), w.add)
	}
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		return nil, fmt.Errorf("import history from %s: %w", source, err)
	}
	res.Pages, res.Max, res.Min = w.n, w.max, w.min
	if res.Pages == 0 {
		return nil, fmt.Errorf("import history from %s: %w: no PageRank values", source, ErrHistorySource)
	}
	now := time.Now()
	if opts.Now != nil {
		now = opts.Now()
	}
	st := historyState{Table: table, Source: source, Kind: kind, Imported: now.UTC().Truncate(time.Second), Pages: w.n, Max: w.max, Min: w.min}
	if kind == "graph" {
		st.Damping = opts.Config.Manager.Damping
	}
	err = g.Update(func(tx *linkgraph.Tx) error {
		raw, _ := json.Marshal(st)
		if err := tx.PutScoreVector(historySample, w.sample.sorted()); err != nil {
			return err
		}
		if err := tx.PutScoreMeta(historyMeta, raw); err != nil {
			return err
		}
		if old != nil && old.Table != table {
			return tx.ClearScoreTable(old.Table)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import history from %s: %w", source, err)
	}
	err = g.View(func(tx *linkgraph.Tx) error {
		return tx.JoinURLScores(table, func(uint64, float64) error { res.Matched++; return nil })
	})
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	log.Info("imported historical pagerank", "source", source, "kind", kind, "pages", res.Pages, "matched", res.Matched)
	return res, nil
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// tableWriter writes (URL, value) pairs into a score table, importChunk
// per transaction, and keeps their extremes and a sample.
type tableWriter struct {
	ctx      context.Context
	g        *linkgraph.Graph
	table    string
	keys     []string
	vals     []float64
	n        int
	max, min float64
	sample   *reservoir
}

func (w *tableWriter) add(u string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("pagerank of %s is %g", u, v)
	}
	w.keys = append(w.keys, u)
	w.vals = append(w.vals, v)
	w.n++
	w.max = max(w.max, v)
	if v > 0 && (w.min == 0 || v < w.min) {
		w.min = v
	}
	w.sample.add(v)
	if len(w.keys) >= importChunk {
		return w.flush()
	}
	return nil
}

func (w *tableWriter) flush() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if len(w.keys) == 0 {
		return nil
	}
	err := w.g.Update(func(tx *linkgraph.Tx) error {
		return tx.PutScores(w.table, func(put func(string, float64) error) error {
			for i, k := range w.keys {
				if err := put(k, w.vals[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
	w.keys, w.vals = w.keys[:0], w.vals[:0]
	return err
}

// reservoir keeps a uniform random sample of the values added (Vitter's
// algorithm R, with a fixed seed so an import is repeatable).
type reservoir struct {
	r    *rand.Rand
	size int
	seen int
	v    []float64
}

func newReservoir(size int) *reservoir {
	return &reservoir{r: rand.New(rand.NewPCG(1, 2)), size: size}
}

func (r *reservoir) add(x float64) {
	r.seen++
	if len(r.v) < r.size {
		r.v = append(r.v, x)
		return
	}
	if j := r.r.IntN(r.seen); j < r.size {
		r.v[j] = x
	}
}

func (r *reservoir) sorted() []float64 {
	s := slices.Clone(r.v)
	slices.Sort(s)
	return s
}

// graphPageRank computes the PageRank of every document of the graph.db
// at path and calls emit with each URL and its PageRank in URL order.
func graphPageRank(ctx context.Context, path string, opts HistoryOptions, emit func(string, float64) error) (int, error) {
	timeout := opts.GraphTimeout
	if timeout <= 0 {
		timeout = DefaultGraphTimeout
	}
	g, err := linkgraph.Open(path, true, timeout)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	iterations := 0
	err = g.View(func(tx *linkgraph.Tx) error {
		v, err := readIDs(ctx, tx)
		if err != nil {
			return err
		}
		pr, err := v.pageRank(ctx, tx, opts.Config.Manager.Damping, nil)
		if err != nil {
			return err
		}
		iterations = v.stats.Iterations
		return forEachURL(tx, func(u string, id uint64) error {
			if p := v.position(id); p >= 0 {
				return emit(u, pr[p])
			}
			return nil
		})
	})
	return iterations, err
}

// readIDs reads only the ids of the documents (for the PageRank of a
// graph that is not the collection's).
func readIDs(ctx context.Context, tx *linkgraph.Tx) (*graphView, error) {
	v := &graphView{stats: Stats{Skipped: map[string]int{}}}
	err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
		if len(v.ids)%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if d.ID > math.MaxUint32 || d.ID == 0 || (len(v.ids) > 0 && uint32(d.ID) <= v.ids[len(v.ids)-1]) {
			return fmt.Errorf("doc %d: id out of order or range", d.ID)
		}
		v.ids = append(v.ids, uint32(d.ID))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	v.indexPositions()
	return v, nil
}

// forEachURL calls fn with every URL of the graph and its id in URL
// order: the sites sorted by key + "/" and each site's URLs, a range of
// the sorted urls bucket.
func forEachURL(tx *linkgraph.Tx, fn func(u string, id uint64) error) error {
	var keys []string
	if err := tx.ForEachSite(func(s *linkgraph.Site) error {
		keys = append(keys, s.Key+"/")
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := tx.ForEachSiteURL(strings.TrimSuffix(k, "/"), fn); err != nil {
			return err
		}
	}
	return nil
}

// readPageRankFile reads a PageRank file and calls emit with each URL
// (normalised by norm, the collection's normaliser, so that the URLs
// match graph.db's) and value in URL order, values of URLs that normalise
// alike added up. A bad line is an error naming its number.
func readPageRankFile(path string, norm *urlnorm.Normalizer, emit func(string, float64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type entry struct {
		u string
		v float64
	}
	var entries []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		raw, val, ok := strings.Cut(text, "\t")
		if !ok {
			return fmt.Errorf("%w: %s line %d: want URL<TAB>PageRank, got %s", ErrHistorySource, path, line, excerpt.Quote(text))
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("%w: %s line %d: PageRank %s is not a number ≥ 0", ErrHistorySource, path, line, excerpt.Quote(val))
		}
		u, err := norm.Normalize(raw)
		if err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrHistorySource, path, line, err)
		}
		entries = append(entries, entry{u, x})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrHistorySource, path, err)
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.u, b.u) })
	for i := 0; i < len(entries); {
		j, sum := i, 0.0
		for ; j < len(entries) && entries[j].u == entries[i].u; j++ {
			sum += entries[j].v
		}
		if err := emit(entries[i].u, sum); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// ExportPageRank computes the PageRank of the collection's graph
// (manager.damping) and writes it to w as a PageRank file, in URL order:
// the history of the next crawl.
func ExportPageRank(ctx context.Context, col *collection.Collection, w io.Writer, opts HistoryOptions) (*HistoryResult, error) {
	start := time.Now()
	res := &HistoryResult{Source: col.GraphPath(), Kind: "graph"}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line bytes.Buffer
	fmt.Fprintf(bw, "%s 1\n# damping: %s\n# columns: url pagerank\n", PageRankMagic, strconv.FormatFloat(opts.Config.Manager.Damping, 'g', -1, 64))
	iterations, err := graphPageRank(ctx, col.GraphPath(), opts, func(u string, v float64) error {
		res.Pages++
		res.Max = max(res.Max, v)
		if v > 0 && (res.Min == 0 || v < res.Min) {
			res.Min = v
		}
		line.Reset()
		line.WriteString(u)
		line.WriteByte('\t')
		line.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		line.WriteByte('\n')
		_, err := bw.Write(line.Bytes())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("export pagerank: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("export pagerank: %w", err)
	}
	res.Iterations, res.Elapsed = iterations, time.Since(start)
	return res, nil
}
