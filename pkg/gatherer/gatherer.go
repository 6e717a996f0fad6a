// Package gatherer is the parsing stage: it reads one batch's harvest
// output, decodes and parses every page on all cores, writes the batch's
// document records (parsed/docs.jsonl) for the seeder and the pages'
// text to a segment of the text store. docs/gatherer.md describes it.
package gatherer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/langid"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/sitemap"
	"github.com/wirecrawl/wire/pkg/textstore"
	"github.com/wirecrawl/wire/pkg/timescale"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// PartialDir is the name of the directory the gatherer writes its output
// in before publishing it as parsed/.
const PartialDir = collection.ParsedPartialDir

// Options say which batch to gather and how.
type Options struct {
	// BatchDir is the batch directory (batch.tsv, harvest/, ...).
	BatchDir string
	// BatchID is the batch id, which names the text segment; 0 takes it
	// from the directory name (six digits) or else from batch.tsv.
	BatchID int
	// TextDir is the text store directory (COLLECTION/text).
	TextDir string
	// Workers is the number of parsing goroutines; 0 means runtime.NumCPU().
	Workers int
	// TextMode and SummaryWords say what the text store keeps.
	TextMode     textstore.Mode
	SummaryWords int
	// MaxBodyBytes caps the body read from a WARC record (and the output
	// of a Content-Encoding the gatherer decodes itself); 0 means
	// config.Defaults().Harvester.MaxBodyBytes.
	MaxBodyBytes int64
	// MaxSitemapBytes caps the body of a sitemap read from a WARC record
	// (harvester.max_sitemap_bytes); 0 means MaxBodyBytes.
	MaxSitemapBytes int64
	// SitemapLimits bound each sitemap read; zero fields are the
	// protocol's limits (50,000 entries, 50 MB uncompressed). Tests lower
	// them.
	SitemapLimits sitemap.Limits
	// MaxURLLength is the URL normaliser's limit; 0 means the default.
	MaxURLLength int
	// SessionParams are the session-id parameters links lose
	// (scope.session_params); nil means urlnorm's default list.
	SessionParams []string
	// FallbackCharset is the encoding of undeclared pages that are not
	// UTF-8 and whose detection is unsure; "" means windows-1252.
	FallbackCharset string
	// LanguageSample is the bytes of running text a page's language is
	// told from (langid); 0 leaves the language undetected.
	LanguageSample int
	// Languages are the languages the detector chooses among (ISO 639
	// codes); empty means all it knows.
	Languages []string
	// InflightBytes bounds the response bytes held by the pipeline; 0
	// means config.Defaults().Gatherer.InflightBytes.
	InflightBytes int64
	// VerifyDigests makes the gatherer read every record the fetch log
	// points at (also the redirects and error pages it otherwise does
	// not read) and check its WARC-Block-Digest; a record that does not
	// match is damaged, as one that cannot be read (see Salvage). Off by
	// default: the gzip CRC-32 of each member read already guards it
	// (see warcio.Reader).
	VerifyDigests bool
	// Salvage takes in a batch whose WARC files are damaged: a record
	// that cannot be read back gives a document record with status 0 and
	// the error "unread: ..." (parsed.Unread), which the seeder takes as
	// not attempted (the page goes back to the frontier, not fetched and
	// without a failure counted). Without it the run stops at the first
	// damaged record, with an error wrapping collection.ErrDamaged that
	// names the file and the offset, and publishes nothing.
	Salvage bool
	// Follow gathers a batch that is not harvested yet while the
	// harvester writes it (docs/gatherer.md, "Gathering while the
	// harvest is written"): each page is parsed once its fetch log line
	// is written, and the run ends once the batch is harvested and every
	// line is gathered. What it publishes is what a run after the
	// harvest would publish. It waits as long as the harvest takes (the
	// caller cancels ctx to stop it).
	Follow bool
	// Agent is the robots.txt product token (meta robots and
	// X-Robots-Tag addressed to it count).
	Agent string
	// TimeScale is manager.time_scale: it scales the window and the
	// future slack of the lying-sitemap rule (docs/sitemaps.md, "A
	// sitemap that lies"); zero means 1.
	TimeScale timescale.Scale
	// Logger receives per-page problems at debug level and a line per
	// batch; nil discards.
	Logger *slog.Logger
	// Progress, if set, is called from one goroutine as documents are
	// written: done of total.
	Progress func(done, total int)
}

// OptionsFromConfig fills the settings of Options from a configuration.
func OptionsFromConfig(cfg config.Config) (Options, error) {
	mode, err := textstore.ParseMode(cfg.Gatherer.TextMode)
	if err != nil {
		return Options{}, fmt.Errorf("%w: gatherer.text_mode: %w", config.ErrInvalid, err)
	}
	if _, ok := extract.LookupCharset(cfg.Gatherer.FallbackCharset); !ok {
		return Options{}, fmt.Errorf("%w: gatherer.fallback_charset: %q is not an encoding a page can be decoded from", config.ErrInvalid, cfg.Gatherer.FallbackCharset)
	}
	return Options{
		Workers:         cfg.Gatherer.Workers,
		TextMode:        mode,
		SummaryWords:    cfg.Gatherer.SummaryWords,
		MaxBodyBytes:    cfg.Harvester.MaxBodyBytes,
		MaxSitemapBytes: cfg.Harvester.MaxSitemapBytes,
		MaxURLLength:    cfg.Scope.MaxURLLength,
		SessionParams:   cfg.Scope.SessionParams,
		Agent:           cfg.Crawl.ProductToken,
		TimeScale:       cfg.Manager.Scale(),
		FallbackCharset: cfg.Gatherer.FallbackCharset,
		InflightBytes:   cfg.Gatherer.InflightBytes,
		LanguageSample:  cfg.Gatherer.LanguageSample,
		Languages:       cfg.Gatherer.Languages,
	}, nil
}

// Summary is what a run did; it is the content of the gathered.done
// marker and what the command prints.
type Summary struct {
	Batch        int            `json:"batch"`
	Docs         int            `json:"docs"`                   // records in docs.jsonl (one per fetch log line)
	HTML         int            `json:"html"`                   // pages parsed as HTML
	Other        int            `json:"other"`                  // 2xx responses of other media types (not parsed)
	FetchErrors  int            `json:"fetchErrors"`            // fetches that failed or were not attempted
	ReadErrors   int            `json:"readErrors"`             // responses whose body could not be decoded (Content-Encoding)
	Unread       int            `json:"unread,omitempty"`       // records that could not be read back from their WARC file (--salvage): back to the frontier
	Damaged      []string       `json:"damaged,omitempty"`      // the first unread records: "FILE at OFFSET: cause"
	Redirects    int            `json:"redirects"`              // 3xx responses and meta refreshes with a target
	NotModified  int            `json:"notModified"`            // 304 responses
	Identical    int            `json:"identical"`              // 2xx responses stored as identical-payload-digest revisits (nothing parsed)
	Unchanged    int            `json:"unchanged"`              // same text hash as the newest older segment
	NoIndex      int            `json:"noindex"`                // pages that asked not to be indexed
	NoFollow     int            `json:"nofollow"`               // pages that asked for their links not to be followed
	BytesIn      int64          `json:"bytesIn"`                // body bytes read from the WARC files
	TextBytes    int64          `json:"textBytes"`              // normalised text of the HTML pages
	StoredBytes  int64          `json:"storedBytes"`            // text written to the segment (after mode and de-duplication), uncompressed
	SegmentBytes int64          `json:"segmentBytes"`           // size of the segment's data file
	Duplicates   int            `json:"duplicates"`             // pages whose text was already stored in this segment
	Older        int            `json:"older"`                  // pages whose text was already stored in an older segment (unchanged pages among them)
	Links        int            `json:"links"`                  // out-links written
	LinksDropped map[string]int `json:"linksDropped,omitempty"` // links that failed normalisation, by reason
	Charsets     map[string]int `json:"charsets,omitempty"`     // HTML pages by charset decoded from
	Languages    map[string]int `json:"languages,omitempty"`    // HTML pages by language told from the text (none when detection is off)
	Workers      int            `json:"workers"`
	Started      time.Time      `json:"started"`
	Seconds      float64        `json:"seconds"`
	MBPerSecond  float64        `json:"mbPerSecond"` // BytesIn per wall-clock second
	// Sitemaps (docs/sitemaps.md): 2xx responses of entries of kind
	// sitemap, the entries they gave, those of them read with a problem
	// (bad XML, a limit), their bytes and the time spent reading them.
	Sitemaps       int     `json:"sitemaps,omitempty"`
	SitemapEntries int     `json:"sitemapEntries,omitempty"`
	SitemapErrors  int     `json:"sitemapErrors,omitempty"`
	SitemapBytes   int64   `json:"sitemapBytes,omitempty"`
	SitemapSeconds float64 `json:"sitemapSeconds,omitempty"`
}

// BatchID works out the id of a batch directory: its name if it is six
// digits, else the batch: line of its batch.tsv.
func BatchID(dir string) (int, error) {
	name := filepath.Base(filepath.Clean(dir))
	if id, err := strconv.Atoi(name); err == nil && id > 0 && collection.BatchName(id) == name {
		return id, nil
	}
	h, _, err := batch.ReadFile(filepath.Join(dir, collection.BatchFile))
	if err != nil {
		return 0, fmt.Errorf("batch id of %s: %w", dir, err)
	}
	if h.Batch <= 0 {
		return 0, fmt.Errorf("batch id of %s: the batch file has no batch number", dir)
	}
	return h.Batch, nil
}

// Run gathers one batch: it reads harvest/fetch.log, parses the pages on
// Options.Workers goroutines, writes parsed.partial/docs.jsonl in fetch
// log order, commits the text segment, publishes parsed.partial/ as
// parsed/ and writes the gathered.done marker, in that order, so a kill
// at any moment leaves the batch either not gathered (and a rerun redoes
// it) or completely gathered. The caller checks that the batch is ready
// (collection.Batch.CheckReady) and holds the lock.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.BatchID == 0 {
		id, err := BatchID(o.BatchDir)
		if err != nil {
			return nil, err
		}
		o.BatchID = id
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = config.Defaults().Harvester.MaxBodyBytes
	}
	if o.InflightBytes <= 0 {
		o.InflightBytes = config.Defaults().Gatherer.InflightBytes
	}
	b := &collection.Batch{ID: o.BatchID, Dir: o.BatchDir}
	if o.Follow && !b.Done(collection.StageHarvested) {
		sum, err := gather(ctx, o, b, log, start, true)
		if !errors.Is(err, errFollowLost) {
			return sum, err
		}
		log.Warn("gathering the batch again from its published harvest", "batch", b.Name(), "why", err)
	}
	return gather(ctx, o, b, log, start, false)
}

// gather is Run on a batch whose harvest is read whole, or followed while
// it is written (follow.go).
func gather(ctx context.Context, o Options, b *collection.Batch, log *slog.Logger, start time.Time, following bool) (*Summary, error) {
	fail := func(err error) (*Summary, error) {
		return nil, fmt.Errorf("gather batch %s: %w", b.Name(), err)
	}
	// The marker goes first: from here until the new one is written the
	// batch counts as not gathered. Its removal is made durable while the
	// batch is read and parsed; nothing is published before it is.
	cleared := make(chan error, 1)
	go func() { cleared <- b.ClearDone(collection.StageGathered) }()
	clearedErr, waited := error(nil), false
	waitCleared := func() error {
		if !waited {
			clearedErr, waited = <-cleared, true
		}
		return clearedErr
	}
	defer waitCleared()
	sitemaps, entries, err := sitemapEntries(o.BatchDir)
	if err != nil {
		return fail(err)
	}
	var ins []input
	if !following {
		if ins, err = readHarvest(b); err != nil {
			return fail(err)
		}
		for i := range ins {
			ins[i].sitemap = sitemaps[ins[i].rec.DocID]
		}
	}
	// A gatherer killed while writing its segment leaves its temporary
	// files (text/.seg-*.tmp-*); the lock held makes every one debris.
	if removed, err := textstore.RemoveTemp(o.TextDir); err != nil {
		return fail(err)
	} else if len(removed) > 0 {
		log.Info("removed the temporary files of an interrupted run", "dir", o.TextDir, "files", removed)
	}
	// A WARC file that is missing or shorter than its records is found
	// before anything is parsed; with Salvage the records it cannot hold
	// are marked unread as they are met.
	if d := checkWARCs(ins); d != nil {
		if !o.Salvage {
			return fail(d.err())
		}
		log.Warn("damaged WARC file: salvaging what can be read", "warc", d.path, "offset", d.offset, "err", d.cause)
	}
	store, err := textstore.Open(o.TextDir)
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	var src source
	total := len(ins)
	if following {
		src = follow(ctx, b, sitemaps, store)
		// The progress counts the batch's URLs: the fetch log has a
		// line for each once it is published.
		total = entries
	} else {
		urls := make([]string, len(ins))
		for i := range ins {
			urls[i] = ins[i].rec.URL
		}
		prev, err := store.PreviousHashes(b.ID, urls)
		if err != nil {
			return fail(fmt.Errorf("read older text segments: %w", err))
		}
		for i := range ins {
			ins[i].prev, ins[i].hadPrev = prev[ins[i].rec.URL]
		}
		src = &sliceSource{ins: ins}
	}
	seg, err := textstore.Create(o.TextDir, b.ID, o.TextMode, o.SummaryWords)
	if err != nil {
		return fail(err)
	}
	defer seg.Abort()

	partial := filepath.Join(b.Dir, PartialDir)
	if err := os.RemoveAll(partial); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return fail(err)
	}
	published := false
	defer func() {
		if !published {
			os.RemoveAll(partial)
		}
	}()
	f, err := os.Create(filepath.Join(partial, parsed.DocsFile))
	if err != nil {
		return fail(err)
	}
	defer f.Close()

	sum := &Summary{Batch: b.ID, Workers: o.Workers, Started: start.UTC(), LinksDropped: map[string]int{}, Charsets: map[string]int{}, Languages: map[string]int{}}
	w := parsed.NewWriter(textstore.NewWritebackFile(f)) // written out as it goes: the fsync at the end has less to wait for
	norm := urlnorm.New(o.MaxURLLength)
	if o.SessionParams != nil {
		norm = urlnorm.NewWithParams(o.MaxURLLength, o.SessionParams)
	}
	var lang *langid.Detector
	if o.LanguageSample > 0 {
		var unknown []string
		if lang, unknown = langid.New(o.LanguageSample, o.Languages); len(unknown) > 0 {
			return fail(fmt.Errorf("%w: gatherer.languages: codes the detector does not know: %q", config.ErrInvalid, unknown))
		}
	}
	p := &pipeline{
		o:     o,
		lang:  lang,
		ex:    extract.New(extract.Options{Normalizer: norm, MaxURLLength: o.MaxURLLength, Agent: o.Agent, Fallback: o.FallbackCharset}),
		norm:  norm,
		log:   log,
		src:   src,
		store: store,
		batch: b.ID,
		docs:  w,
		seg:   seg,
		sum:   sum,
		total: total,
	}
	if err := p.run(ctx); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := waitCleared(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	// docs.jsonl is made durable while the segment is committed: their
	// fsyncs do not depend on each other, and parsed/ is published only
	// once both are done.
	st := seg.Stats()
	synced := make(chan error, 1)
	go func() { synced <- syncDocs(f, partial) }()
	errSeg := seg.Commit()
	if err := <-synced; err != nil {
		return fail(err)
	}
	if errSeg != nil {
		return fail(errSeg)
	}
	if err := collection.ReplaceDir(partial, b.ParsedPath()); err != nil {
		return fail(err)
	}
	published = true
	sum.StoredBytes = st.TextBytes
	sum.SegmentBytes = st.DataBytes
	sum.Duplicates = st.Duplicates
	sum.Older = st.Older
	el := time.Since(start)
	sum.Seconds = el.Seconds()
	if el > 0 {
		sum.MBPerSecond = float64(sum.BytesIn) / 1e6 / el.Seconds()
	}
	if len(sum.LinksDropped) == 0 {
		sum.LinksDropped = nil
	}
	if len(sum.Languages) == 0 {
		sum.Languages = nil
	}
	if len(sum.Charsets) == 0 {
		sum.Charsets = nil
	}
	if err := b.MarkDone(collection.StageGathered, sum); err != nil {
		return fail(err)
	}
	log.Info("gathered", "batch", b.Name(), "docs", sum.Docs, "html", sum.HTML, "links", sum.Links, "unread", sum.Unread, "seconds", sum.Seconds)
	return sum, nil
}

// syncDocs makes docs.jsonl, written and flushed, durable in its
// directory, and closes it.
func syncDocs(f *os.File, dir string) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	return collection.SyncDir(dir)
}

// readHarvest reads the fetch log of a batch's harvest.
func readHarvest(b *collection.Batch) ([]input, error) {
	dir := b.HarvestPath()
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		return nil, err
	}
	ins := make([]input, len(recs))
	for i := range recs {
		ins[i] = input{rec: &recs[i], dir: dir}
	}
	return ins, nil
}
