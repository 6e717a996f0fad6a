package gatherer

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/langid"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
	"github.com/wirecrawl/wire/pkg/textstore"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// input is one fetch log line and the harvest directory its WARC file is
// in (a batch harvested in shards has one directory per shard).
type input struct {
	rec     *fetchlog.Record
	dir     string
	sitemap bool // a batch entry of kind sitemap (docs/sitemaps.md)
	// published is the directory dir becomes when the harvester
	// publishes it, for a record read while the harvest is written
	// (follow.go); "" otherwise.
	published string
	// prev is the text hash of the URL in the newest older segment,
	// if hadPrev.
	prev    uint64
	hadPrev bool
}

// pipeline fans the records out to workers and writes their results back
// in fetch log order.
type pipeline struct {
	o     Options
	ex    *extract.Extractor
	lang  *langid.Detector // nil: languages not detected
	norm  *urlnorm.Normalizer
	log   *slog.Logger
	src   source           // the records, in fetch log order
	store *textstore.Store // older segments, for texts already stored
	batch int
	docs  *parsed.Writer
	seg   *textstore.Writer
	sum   *Summary
	total int
}

// job is a record handed to a worker, with the budget it holds.
type job struct {
	i    int
	in   *input
	cost int64
}

// result is what a worker made of one record.
type result struct {
	i       int
	in      *input
	doc     *parsed.Doc
	html    bool
	text    string
	meta    textstore.Meta
	older   *textstore.Meta // an older segment's entry with the same stored text
	cost    int64           // bytes of the budget held
	bytesIn int64
	readErr bool    // the response was read but its body could not be decoded
	unread  *damage // the response could not be read back from its WARC record
	dropped map[string]int
	// sitemapTime is the time spent reading a sitemap.
	sitemapTime time.Duration
}

// budget bounds the bytes of responses in flight: a reader takes a
// record's size before reading it and the writer gives it back once the
// record is written. A record larger than the whole budget waits until
// nothing else is in flight, then goes through alone.
type budget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	used  int64
	done  bool
}

func newBudget(limit int64) *budget {
	b := &budget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// take waits for n bytes; it returns the bytes taken (n capped at the
// limit), or false when the budget was closed.
func (b *budget) take(n int64) (int64, bool) {
	n = min(max(n, 1), b.limit)
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.done && b.used+n > b.limit {
		b.cond.Wait()
	}
	if b.done {
		return 0, false
	}
	b.used += n
	return n, true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// close wakes and refuses every waiter.
func (b *budget) close() {
	b.mu.Lock()
	b.done = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// run processes every record. At most window results are in flight, and
// at most Options.InflightBytes of responses, so memory stays bounded
// however large the batch and however slow one page is.
func (p *pipeline) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := p.o.Workers * 8
	if window < 16 {
		window = 16
	}
	jobs := make(chan job, p.o.Workers)
	results := make(chan *result, p.o.Workers)
	slots := make(chan struct{}, window)
	bud := newBudget(p.o.InflightBytes)
	stop := context.AfterFunc(ctx, bud.close)
	defer stop()

	// The dispatcher hands out records in fetch log order once they fit
	// in the window and the byte budget; each worker reads its record
	// from its WARC file (warcio is safe for concurrent use) and parses
	// it, so inflating and checking records uses every core too.
	go func() {
		defer close(jobs)
		for i := 0; ; i++ {
			in, ok := p.src.next(ctx)
			if !ok {
				return
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			rec := in.rec
			cost, ok := bud.take(max(rec.Bytes, rec.Length))
			if !ok {
				return
			}
			select {
			case jobs <- job{i, in, cost}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range p.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker reads with a Reader of its own: its inflater,
			// buffers and open files are reused from record to record,
			// and a response's body lives until the worker's next read
			// (parse copies what it keeps).
			rd := warcio.NewReader()
			rd.VerifyDigest = p.o.VerifyDigests
			defer rd.Close()
			for j := range jobs {
				r, resp := p.load(j.i, j.in, rd)
				r.cost = j.cost
				if resp != nil {
					if err := p.parse(r, resp); err != nil {
						r.readErr = true
						r.doc.Err = "gatherer: " + err.Error()
					}
				}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := map[int]*result{}
	next := 0
	var err error
	for r := range results {
		if err != nil {
			continue // drain
		}
		pending[r.i] = r
		for {
			q, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if err = p.write(q); err != nil {
				cancel()
				break
			}
			bud.give(q.cost)
			next++
			<-slots
			if p.o.Progress != nil {
				p.o.Progress(next, p.total)
			}
		}
	}
	if err != nil {
		return err
	}
	if err := p.src.err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n := p.src.count(); next != n {
		return fmt.Errorf("internal error: wrote %d of %d records", next, n)
	}
	return nil
}

// write adds one result to the text segment and appends its record to
// docs.jsonl, in order.
func (p *pipeline) write(r *result) error {
	d, s := r.doc, p.sum
	if r.unread != nil {
		if !p.o.Salvage {
			return r.unread.err()
		}
		s.Unread++
		if len(s.Damaged) < maxDamaged {
			s.Damaged = append(s.Damaged, r.unread.String())
		}
		p.log.Warn("unread record: the page goes back to the frontier", "url", d.URL, "warc", r.unread.path, "offset", r.unread.offset, "err", r.unread.cause)
	}
	prev, hadPrev := r.in.prev, r.in.hadPrev
	switch {
	case d.NotModified():
		// A 304, or a 2xx stored as a revisit of the stored capture:
		// the text is the one stored before.
		d.Unchanged = true
		if hadPrev {
			d.Hash = extract.HashHex(prev)
		}
	case r.html && hadPrev && prev == r.meta.Hash:
		d.Unchanged = true
	}
	if r.html {
		added, err := p.seg.Add(r.meta, r.text, r.older)
		if err != nil {
			return err
		}
		if added.Of != "" && added.Of != d.URL {
			d.DuplicateOf = added.Of
		}
	}
	if err := p.docs.Write(d); err != nil {
		return err
	}
	s.Docs++
	s.BytesIn += r.bytesIn
	switch {
	case r.unread != nil:
	case d.Err != "" && r.readErr:
		s.ReadErrors++
	case d.Err != "":
		s.FetchErrors++
	case d.Revisit: // counted below, with the 304s
	case d.Sitemap != nil:
		s.Sitemaps++
		s.SitemapEntries += len(d.Links)
		s.SitemapBytes += r.bytesIn
		s.SitemapSeconds += r.sitemapTime.Seconds()
		if d.Sitemap.Reason != "" {
			s.SitemapErrors++
		}
	case r.html:
		s.HTML++
		s.TextBytes += int64(d.TextBytes)
		s.Charsets[d.Charset]++
		if d.DetectedLang != "" {
			s.Languages[d.DetectedLang]++
		}
	case d.Status >= 200 && d.Status < 300:
		s.Other++
	}
	switch {
	case d.Status == 304:
		s.NotModified++
	case d.Revisit:
		s.Identical++
	}
	if d.Unchanged {
		s.Unchanged++
	}
	if d.Redirect != "" {
		s.Redirects++
	}
	if d.NoIndex {
		s.NoIndex++
	}
	if d.NoFollow {
		s.NoFollow++
	}
	s.Links += len(d.Links)
	for k, v := range r.dropped {
		s.LinksDropped[k] += v
	}
	return nil
}

// load starts the document record of one fetch log record and reads its
// response when there is something to take from it: the body of a 2xx
// (or, for a 2xx stored as a revisit record, only its headers, as for a
// 304), the headers of a 304 or of a 3xx the fetch log gives no location
// for, and with Options.VerifyDigests every record, to check its digest.
// A record that cannot be read is marked unread (result.unread). Workers
// call it concurrently.
func (p *pipeline) load(i int, in *input, rd *warcio.Reader) (*result, *warcio.Response) {
	rec := in.rec
	d := &parsed.Doc{DocID: rec.DocID, URL: rec.URL, Status: rec.Status, Err: rec.Err, Fetched: rec.Fetched, MIME: rec.MIME, Bytes: rec.Bytes}
	r := &result{i: i, in: in, doc: d}
	if rec.Err != "" || rec.WARC == "" {
		return r, nil // no response to read
	}
	var resp *warcio.Response
	read := func() bool {
		var err error
		if resp, err = p.read(rd, in); err != nil {
			dm := newDamage(*in, err)
			p.log.Debug("unreadable WARC record", "url", d.URL, "err", dm)
			dm.unreadDoc(r)
			return false
		}
		return true
	}
	switch {
	case rec.Status == 304:
		// No body; the headers may carry new validators.
		if read() {
			validators(d, resp.Header)
			d.Revisit = resp.Revisit
		}
		return r, nil
	case rec.Status >= 300 && rec.Status < 400:
		loc := rec.Location
		if loc == "" || p.o.VerifyDigests {
			if !read() {
				return r, nil
			}
			if loc == "" {
				loc = resp.Header.Get("Location")
			}
		}
		if loc != "" {
			d.Redirect = p.resolve(rec.URL, loc, r)
		}
		return r, nil
	case rec.Status < 200 || rec.Status >= 300:
		// Error pages are not parsed; their record is read only to
		// check its digest.
		if p.o.VerifyDigests {
			read()
		}
		return r, nil
	}
	if !read() {
		return r, nil
	}
	validators(d, resp.Header)
	if resp.Revisit {
		// An identical-payload-digest revisit: the payload is the stored
		// capture's, already taken in. Nothing to parse, as for a 304.
		d.Revisit = true
		return r, nil
	}
	if c := resp.Capture(); !c.IsZero() {
		// The URL's new stored capture, for the revisits of later visits.
		d.RecordID, d.RecordDate, d.PayloadDigest = c.ID, c.DateString(), c.Digest
	}
	return r, resp
}

// validators copies the response's validators, which the seeder keeps
// for conditional GETs on the next visit.
func validators(d *parsed.Doc, h http.Header) {
	d.LastModified, d.ETag = strings.TrimSpace(h.Get("Last-Modified")), strings.TrimSpace(h.Get("ETag"))
}

// parse decodes and parses the body of a 2xx response.
func (p *pipeline) parse(r *result, resp *warcio.Response) error {
	rec, d := r.in.rec, r.doc
	body := resp.Body
	var err error
	if ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce != "" && ce != "identity" {
		if body, err = decodeContent(ce, body, p.o.MaxBodyBytes); err != nil {
			p.log.Debug("unreadable response", "url", d.URL, "err", err)
			return err
		}
	}
	r.bytesIn = int64(len(body))
	if d.Bytes == 0 {
		d.Bytes = int64(len(body))
	}
	if r.in.sitemap {
		p.parseSitemap(r, body, resp.Truncated)
		return nil
	}
	x := p.ex.Extract(body, resp.Header.Get("Content-Type"), rec.URL)
	if d.MIME == "" {
		d.MIME = x.MIME
	}
	r.dropped = x.Dropped
	if !x.HTML {
		return nil
	}
	robots := extract.Robots{NoIndex: x.NoIndex, NoFollow: x.NoFollow}.Merge(extract.ParseRobotsHeader(resp.Header.Values("X-Robots-Tag"), p.ex.Agent()))
	r.html = true
	r.text = x.Text
	d.Charset = x.Charset
	d.Title = x.Title
	d.Description = x.Description
	d.Lang = x.Lang
	d.Hash = extract.HashHex(x.Hash)
	if x.Text != "" {
		d.Simhash = extract.HashHex(simhash.Sum(x.Text))
	}
	if p.lang != nil {
		d.DetectedLang, d.LangConf = p.lang.Detect(x.Text)
	}
	d.TextBytes = len(x.Text)
	d.Redirect = x.Refresh
	d.Canonical = x.Canonical
	d.NoIndex, d.NoFollow = robots.NoIndex, robots.NoFollow
	if !robots.NoFollow && len(x.Links) > 0 {
		d.Links = make([]parsed.Link, len(x.Links))
		for j, l := range x.Links {
			d.Links[j] = parsed.Link{URL: l.URL, Anchor: l.Anchor, NoFollow: l.NoFollow}
		}
	}
	var flags uint16
	if robots.NoIndex {
		flags |= textstore.FlagNoIndex
	}
	if robots.NoFollow {
		flags |= textstore.FlagNoFollow
	}
	var heads []textstore.Heading
	if len(x.Headings) > 0 {
		heads = make([]textstore.Heading, len(x.Headings))
		for j, h := range x.Headings {
			heads[j] = textstore.Heading{Level: h.Level, Text: h.Text}
		}
	}
	r.meta = textstore.Meta{URL: rec.URL, DocID: rec.DocID, Hash: x.Hash, Status: rec.Status, Flags: flags, Fetched: rec.Fetched, Batch: p.batch,
		MIME: d.MIME, Charset: x.Charset, Lang: x.Lang, Title: x.Title, Description: x.Description, Headings: heads}
	// A text an older segment already stores is pointed at, not stored
	// again (exact duplicates, and pages that did not change).
	if !robots.NoIndex {
		if kept := p.o.TextMode.Keep(x.Text, p.o.SummaryWords); kept != "" {
			older, ok, err := p.store.FindText(p.batch, x.Hash, kept)
			if err != nil {
				p.log.Warn("text store: looking for an older copy", "url", d.URL, "err", err)
			} else if ok {
				r.older = &older
			}
		}
	}
	return nil
}

func (p *pipeline) read(rd *warcio.Reader, in *input) (*warcio.Response, error) {
	rec := in.rec
	limit := p.o.MaxBodyBytes
	if in.sitemap {
		limit = max(limit, p.o.MaxSitemapBytes)
	}
	resp, err := rd.ReadResponse(filepath.Join(in.dir, rec.WARC), rec.Offset, rec.Length, limit)
	if err != nil && in.published != "" && errors.Is(err, fs.ErrNotExist) {
		// Published between the fetch log line and this read.
		return rd.ReadResponse(filepath.Join(in.published, rec.WARC), rec.Offset, rec.Length, limit)
	}
	return resp, err
}

// resolve resolves a redirect target against the page URL; a target that
// fails normalisation is counted and left out.
func (p *pipeline) resolve(page, ref string, r *result) string {
	base, err := url.Parse(page)
	if err != nil {
		base = &url.URL{}
	}
	u, err := p.norm.Resolve(base, ref)
	if err != nil {
		reason := string(urlnorm.ReasonOf(err))
		if reason == "" {
			reason = string(urlnorm.ReasonUnparsable)
		}
		if r.dropped == nil {
			r.dropped = map[string]int{}
		}
		r.dropped[reason]++
		return ""
	}
	return u
}

// decodeContent removes a Content-Encoding the harvester left in place
// (it renames the header when it decoded the body itself, so a body is
// never decoded twice). Output beyond max bytes is cut.
func decodeContent(enc string, body []byte, max int64) ([]byte, error) {
	var r io.Reader
	var err error
	switch enc {
	case "gzip", "x-gzip":
		r, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate": // RFC 9110 §8.4.1.2: zlib; some servers send raw deflate
		if r, err = zlib.NewReader(bytes.NewReader(body)); err != nil {
			r, err = flate.NewReader(bytes.NewReader(body)), nil
		}
	default:
		return nil, fmt.Errorf("content-encoding %q not supported", enc)
	}
	if err != nil {
		return nil, fmt.Errorf("content-encoding %s: %w", enc, err)
	}
	out, err := io.ReadAll(io.LimitReader(r, max))
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("content-encoding %s: %w", enc, err)
	}
	return out, nil // a body cut short by the harvester still gives its beginning
}
