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
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/textstore"
	"github.com/wirecrawl/wire/pkg/urlnorm"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// pipeline fans the records out to workers and writes their results back
// in fetch log order.
type pipeline struct {
	o     Options
	ex    *extract.Extractor
	norm  *urlnorm.Normalizer
	dir   string // harvest directory
	log   *slog.Logger
	recs  []fetchlog.Record
	prev  map[string]uint64 // text hash of each URL in the newest older segment
	docs  *parsed.Writer
	seg   *textstore.Writer
	sum   *Summary
	total int
}

// job is a record loaded by the reader: resp is set when the worker has
// a body to parse.
type job struct {
	r    *result
	resp *warcio.Response
}

// result is what a worker made of one record.
type result struct {
	i       int
	doc     *parsed.Doc
	html    bool
	text    string
	meta    textstore.Meta
	bytesIn int64
	readErr bool
	dropped map[string]int
}

// run processes every record. At most window results are in flight, so
// memory stays bounded however slow one page is.
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

	// One reader: warcio.ReadResponse is not safe for concurrent use
	// (gowarc's NewUnmarshaler writes a package variable of
	// github.com/google/uuid), and inflating the small gzip members is
	// several times faster than parsing what they hold.
	go func() {
		defer close(jobs)
		for i := range p.recs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			r, resp := p.load(i)
			select {
			case jobs <- job{r, resp}:
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
			for j := range jobs {
				r := j.r
				if j.resp != nil {
					p.parse(r, j.resp)
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
	if err := ctx.Err(); err != nil {
		return err
	}
	if next != len(p.recs) {
		return fmt.Errorf("internal error: wrote %d of %d records", next, len(p.recs))
	}
	return nil
}

// write appends one result to docs.jsonl and the text segment, in order.
func (p *pipeline) write(r *result) error {
	d, s := r.doc, p.sum
	prev, hadPrev := p.prev[d.URL]
	switch {
	case d.Status == 304:
		d.Unchanged = true
		if hadPrev {
			d.Hash = extract.HashHex(prev)
		}
	case r.html && hadPrev && prev == r.meta.Hash:
		d.Unchanged = true
	}
	if err := p.docs.Write(d); err != nil {
		return err
	}
	if r.html {
		if err := p.seg.Add(r.meta, r.text); err != nil {
			return err
		}
	}
	s.Docs++
	s.BytesIn += r.bytesIn
	switch {
	case d.Err != "" && r.readErr:
		s.ReadErrors++
	case d.Err != "":
		s.FetchErrors++
	case r.html:
		s.HTML++
		s.TextBytes += int64(d.TextBytes)
		s.Charsets[d.Charset]++
	case d.Status >= 200 && d.Status < 300:
		s.Other++
	}
	if d.Status == 304 {
		s.NotModified++
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
// response when there is a body to parse.
func (p *pipeline) load(i int) (*result, *warcio.Response) {
	rec := &p.recs[i]
	d := &parsed.Doc{DocID: rec.DocID, URL: rec.URL, Status: rec.Status, Err: rec.Err, Fetched: rec.Fetched, MIME: rec.MIME, Bytes: rec.Bytes}
	r := &result{i: i, doc: d}
	if rec.Err != "" || rec.WARC == "" || rec.Status == 304 {
		return r, nil // no body to read
	}
	if rec.Status >= 300 && rec.Status < 400 {
		loc := rec.Location
		if loc == "" {
			if resp, err := p.read(rec); err == nil {
				loc = resp.Header.Get("Location")
			}
		}
		if loc != "" {
			d.Redirect = p.resolve(rec.URL, loc, r)
		}
		return r, nil
	}
	if rec.Status < 200 || rec.Status >= 300 {
		return r, nil // error pages are not parsed
	}
	resp, err := p.read(rec)
	if err != nil {
		// Name the WARC file without its directory, so the record does
		// not depend on where the batch directory is.
		p.readFailed(r, errors.New(strings.ReplaceAll(err.Error(), filepath.Join(p.dir, rec.WARC), rec.WARC)))
		return r, nil
	}
	return r, resp
}

// parse decodes and parses the body of a 2xx response.
func (p *pipeline) parse(r *result, resp *warcio.Response) {
	rec, d := &p.recs[r.i], r.doc
	body := resp.Body
	var err error
	if ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce != "" && ce != "identity" {
		if body, err = decodeContent(ce, body, p.o.MaxBodyBytes); err != nil {
			p.readFailed(r, err)
			return
		}
	}
	r.bytesIn = int64(len(body))
	if d.Bytes == 0 {
		d.Bytes = int64(len(body))
	}
	x := p.ex.Extract(body, resp.Header.Get("Content-Type"), rec.URL)
	if d.MIME == "" {
		d.MIME = x.MIME
	}
	r.dropped = x.Dropped
	if !x.HTML {
		return
	}
	robots := extract.Robots{NoIndex: x.NoIndex, NoFollow: x.NoFollow}.Merge(extract.ParseRobotsHeader(resp.Header.Values("X-Robots-Tag"), p.ex.Agent()))
	r.html = true
	r.text = x.Text
	d.Charset = x.Charset
	d.Title = x.Title
	d.Hash = extract.HashHex(x.Hash)
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
	r.meta = textstore.Meta{URL: rec.URL, DocID: rec.DocID, Hash: x.Hash, Status: rec.Status, Flags: flags, Fetched: rec.Fetched,
		MIME: d.MIME, Charset: x.Charset, Lang: x.Lang, Title: x.Title, Description: x.Description}
}

func (p *pipeline) read(rec *fetchlog.Record) (*warcio.Response, error) {
	return warcio.ReadResponse(filepath.Join(p.dir, rec.WARC), rec.Offset, rec.Length, p.o.MaxBodyBytes)
}

func (p *pipeline) readFailed(r *result, err error) {
	p.log.Debug("unreadable response", "url", r.doc.URL, "err", err)
	r.doc.Err = "gatherer: " + err.Error()
	r.readErr = true
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
