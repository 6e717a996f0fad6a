// Package sitemap reads sitemaps (sitemaps.org protocol 0.9: XML urlset,
// sitemap index, plain text; RSS 2.0 and Atom feeds), gzip-compressed or
// not, as a stream with hard bounds on bytes, entries and time.
//
// The format and the rules it applies are in docs/sitemaps.md.
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The protocol's limits (sitemaps.org, "Sitemap file location" and "Using
// Sitemap index files").
const (
	// MaxURLs is the most entries a sitemap file may list.
	MaxURLs = 50000
	// MaxBytes is the largest a sitemap file may be, uncompressed.
	MaxBytes = 50 * 1000 * 1000
	// MaxSitemaps is the most sitemaps an index may list.
	MaxSitemaps = 50000
	// MaxLocBytes is the longest URL the protocol allows in <loc>.
	MaxLocBytes = 2048
	// MaxDepth is the deepest an index may be nested: a sitemap reached
	// through MaxDepth indexes is read, but an index at that depth lists
	// nothing more (the protocol allows one level; some sites nest two).
	MaxDepth = 3
)

// Kind is what a file turned out to be.
type Kind int

// The kinds of file Parse recognises.
const (
	Unknown Kind = iota // nothing recognised (empty, or bad before the root)
	URLSet              // <urlset>: pages
	Index               // <sitemapindex>: other sitemaps
	Text                // one URL per line
	RSS                 // RSS 2.0 <rss><channel><item><link>
	Atom                // Atom <feed><entry><link href>
)

var kindNames = [...]string{"unknown", "urlset", "index", "text", "rss", "atom"}

// String returns the kind's name as docs/sitemaps.md spells it.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// ParseKind is the inverse of Kind.String; unknown names give Unknown.
func ParseKind(s string) Kind {
	for i, n := range kindNames {
		if n == s {
			return Kind(i)
		}
	}
	return Unknown
}

// Entry is one URL a sitemap lists: a page (urlset, text, feeds) or, in an
// index, another sitemap.
type Entry struct {
	// Loc is the URL as listed, white space trimmed, entities decoded.
	Loc string
	// Sitemap is true for the entries of an index.
	Sitemap bool
	// LastMod is <lastmod> (W3C datetime, any of its forms; RSS pubDate,
	// Atom updated), in UTC; zero when absent or not a date.
	LastMod time.Time
	// ChangeFreq is <changefreq> in lower case, one of always, hourly,
	// daily, weekly, monthly, yearly, never; empty when absent or other.
	ChangeFreq string
	// Priority is <priority> between 0 and 1; -1 when absent or invalid.
	Priority float64
	// Cross is true for an entry outside the sitemap's own host and
	// directory that Options.CrossSubmit let through.
	Cross bool
}

// Limits bound one file. The zero value of a field means the protocol's
// limit.
type Limits struct {
	MaxURLs  int   // entries kept (MaxURLs, or MaxSitemaps for an index)
	MaxBytes int64 // bytes read, uncompressed and compressed each
}

func (l Limits) withDefaults() Limits {
	if l.MaxURLs <= 0 {
		l.MaxURLs = MaxURLs
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = MaxBytes
	}
	return l
}

// Options say where a sitemap comes from, for its scope rule.
type Options struct {
	// Base is the sitemap's own URL. Entries must be under its scheme, host
	// and directory (the protocol's "Sitemap file location" rule); an index
	// may list sitemaps anywhere on its host. Nil accepts every http(s) URL
	// (a sitemap given by hand as a file).
	Base *url.URL
	// CrossSubmit reports whether the robots.txt of site (scheme://host
	// [:port]) names this sitemap with a Sitemap: line, which lets the
	// sitemap list that site's URLs (such entries have Cross set). Nil:
	// no cross-submission. A caller that cannot tell yet (the gatherer,
	// which has no robots.txt of other sites) lets all through and leaves
	// the check to whoever can (the seeder).
	CrossSubmit func(site string) bool
	// Limits bound the file.
	Limits Limits
}

// Result is what Parse found in one file.
type Result struct {
	Kind       Kind   // what the file was
	Entries    int    // entries handed to the callback
	Invalid    int    // entries skipped: no or bad <loc>, not http(s), too long
	OutOfScope int    // entries outside the sitemap's host and path, not cross-submitted
	Dropped    int    // entries not read or not kept past the limits (at least 1 when the limit stopped the read)
	Bytes      int64  // uncompressed bytes read
	Gzip       bool   // the file was gzip-compressed
	Reason     string // why the file was not read to its end (bad XML, a limit); empty when it was
}

// Errors a Result's Reason is built from; Parse returns them wrapped only
// when the callback stops it or the reader fails.
var (
	// ErrTooLarge: the file is larger than Limits.MaxBytes uncompressed.
	ErrTooLarge = errors.New("sitemap larger than the byte limit")
	// ErrTooMany: the file lists more entries than Limits.MaxURLs.
	ErrTooMany = errors.New("sitemap lists more entries than the limit")
)

// Parse reads one sitemap from r and calls fn for each entry in scope, in
// file order. It never reads more than Limits.MaxBytes from r nor
// decompresses more than Limits.MaxBytes, and stops at Limits.MaxURLs
// entries: what it found up to a limit or to bad XML is kept, and
// Result.Reason says why it stopped. The error is non-nil only when r
// fails or fn returns an error (which Parse returns wrapped).
func Parse(r io.Reader, opt Options, fn func(Entry) error) (Result, error) {
	p := &parser{opt: opt, lim: opt.Limits.withDefaults(), fn: fn}
	err := p.parse(r)
	return p.res, err
}

type parser struct {
	opt Options
	lim Limits
	fn  func(Entry) error
	res Result
	cnt *countReader
	src *srcReader
	// baseDir is Base's scheme://host/dir/ prefix; baseSite its scheme://host.
	baseDir, baseSite string
	cbErr             error
}

// errStop ends a parse at a limit (the reason is already in the result).
var errStop = errors.New("stop")

// countReader counts what passes and fails with ErrTooLarge past max.
type countReader struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *countReader) Read(b []byte) (int, error) {
	if c.n >= c.max {
		// One byte more than allowed tells a file of exactly max bytes
		// from a larger one.
		var one [1]byte
		k, err := c.r.Read(one[:])
		if k > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(b)) > c.max-c.n {
		b = b[:c.max-c.n]
	}
	k, err := c.r.Read(b)
	c.n += int64(k)
	return k, err
}

func (p *parser) parse(r io.Reader) error {
	if b := p.opt.Base; b != nil {
		p.baseSite = strings.ToLower(b.Scheme) + "://" + strings.ToLower(b.Host)
		dir := b.EscapedPath()
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			dir = dir[:i+1]
		} else {
			dir = "/"
		}
		p.baseDir = p.baseSite + dir
	}
	// The compressed stream is bounded too: a gzip file is never larger
	// than what it holds by more than a little, and a 1 GB body must not
	// be read to its end to learn that it is too large.
	p.src = &srcReader{r: r}
	raw := bufio.NewReaderSize(&countReader{r: p.src, max: p.lim.MaxBytes}, 64<<10)
	var in io.Reader = raw
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		p.res.Gzip = true
		zr, err := gzip.NewReader(raw)
		if err != nil {
			p.res.Reason = "gzip: " + err.Error()
			return p.readErr(err)
		}
		zr.Multistream(true)
		in = zr
	}
	p.cnt = &countReader{r: in, max: p.lim.MaxBytes}
	br := bufio.NewReaderSize(p.cnt, 64<<10)
	err := p.sniffAndParse(br)
	p.res.Bytes = p.cnt.n
	if p.cbErr != nil {
		return p.cbErr
	}
	if err == nil || errors.Is(err, errStop) {
		return nil
	}
	if errors.Is(err, ErrTooLarge) {
		p.res.Reason = fmt.Sprintf("%v (%d bytes)", ErrTooLarge, p.lim.MaxBytes)
		if p.res.Dropped == 0 {
			p.res.Dropped = 1
		}
		return nil
	}
	if p.res.Reason == "" {
		p.res.Reason = err.Error()
	}
	return p.readErr(err)
}

// readErr keeps errors of the content (bad XML, bad gzip) in the Result
// and returns only those of the reader itself.
func (p *parser) readErr(err error) error {
	if p.src.err != nil && p.src.err != io.EOF && errors.Is(err, p.src.err) {
		return fmt.Errorf("read sitemap: %w", err)
	}
	return nil
}

// srcReader remembers the error of the reader Parse was given, to tell it
// from errors of the content.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if err != nil {
		s.err = err
	}
	return n, err
}

func (p *parser) sniffAndParse(br *bufio.Reader) error {
	// Skip a byte-order mark and leading white space to see the first
	// character: '<' is XML, anything else a text sitemap.
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				p.res.Reason = "empty file"
				return nil
			}
			return err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte() //nolint:errcheck // peeked
			continue
		case 0xEF:
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				br.Discard(3) //nolint:errcheck // peeked
				continue
			}
		case '<':
			return p.parseXML(br)
		}
		p.res.Kind = Text
		return p.parseText(br)
	}
}

// parseText reads a text sitemap: one URL per line, UTF-8, nothing else.
func (p *parser) parseText(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		long := false
		for err == bufio.ErrBufferFull {
			// A line longer than the buffer is no URL: skip it whole.
			long = true
			_, err = br.ReadSlice('\n')
		}
		if s := strings.TrimSpace(string(line)); long {
			p.res.Invalid++
		} else if s != "" {
			if e := p.emit(Entry{Loc: s, Priority: -1}); e != nil {
				return e
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// emit checks one entry and hands it to the callback.
func (p *parser) emit(e Entry) error {
	if p.res.Entries >= p.lim.MaxURLs {
		p.res.Dropped++
		p.res.Reason = fmt.Sprintf("%v (%d)", ErrTooMany, p.lim.MaxURLs)
		return errStop
	}
	u, ok := checkLoc(e.Loc)
	if !ok {
		p.res.Invalid++
		return nil
	}
	_ = u // the listed form is kept: the caller normalises it
	ok, cross := p.inScope(u, e.Sitemap)
	if !ok {
		p.res.OutOfScope++
		return nil
	}
	e.Cross = cross
	p.res.Entries++
	if err := p.fn(e); err != nil {
		p.cbErr = fmt.Errorf("sitemap entry %s: %w", e.Loc, err)
		return p.cbErr
	}
	return nil
}

// checkLoc parses a listed URL: absolute, http or https, with a host, no
// longer than MaxLocBytes.
func checkLoc(s string) (*url.URL, bool) {
	if s == "" || len(s) > MaxLocBytes {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, false
	}
	return u, true
}

// inScope applies the protocol's location rule: a sitemap lists URLs of
// its own scheme and host under its own directory; an index lists
// sitemaps of its own host. Either may list another site's URLs when that
// site's robots.txt names the sitemap (cross-submission).
func (p *parser) inScope(u *url.URL, sitemap bool) (ok, cross bool) {
	if p.opt.Base == nil {
		return true, false
	}
	site := Site(u)
	if site == p.baseSite {
		if sitemap {
			return true, false
		}
		if strings.HasPrefix(site+u.EscapedPath(), p.baseDir) {
			return true, false
		}
	}
	if p.opt.CrossSubmit != nil && p.opt.CrossSubmit(site) {
		return true, true
	}
	return false, false
}

// Site returns scheme://host[:port] of a URL, lower case, as the scope
// rule and CrossSubmit name sites.
func Site(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
