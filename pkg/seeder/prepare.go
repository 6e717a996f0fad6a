package seeder

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// preparedDoc is a parsed record with its links normalised, checked
// against the scope and looked up in graph.db as it was before the batch:
// the work that does not need the batch's transaction, done ahead of it on
// every core while it takes in the previous records.
type preparedDoc struct {
	doc   *parsed.Doc
	links []preparedLink // links, then redirect, then canonical
	// stored is the document's record as graph.db held it before the
	// batch (nil if not read): the batch's transaction uses it unless it
	// has rewritten the record since (batchRun.doc).
	stored *linkgraph.Doc
}

// preparedLink is one link of a page after resolve.
type preparedLink struct {
	url      string     // normal form; "" when rejected
	rej      *rejection // why the link is kept out
	anchor   string
	nofollow bool
	// known and site are the URL's id and site id if graph.db knew the
	// URL before the batch (0 otherwise: it may still have been created
	// by an earlier record of the batch).
	known, site uint64
	// sameSite is set when the URL is on the page's own site (same
	// scheme, host and port), which makes its depth the page's + 1.
	sameSite bool
}

// chunk is a run of consecutive records, in file order.
type chunk struct {
	docs []preparedDoc
	err  error // a read error after docs
}

// chunkSize is the number of records prepared together.
const chunkSize = 256

// hasLinks tells whether a record's links are taken in: only for pages
// that came with a body (a response other than 304 Not Modified).
func hasLinks(d *parsed.Doc) bool { return d.Status > 0 && d.Status != 304 }

// prepare resolves the links of one record; tx, if not nil, is a read
// transaction on graph.db as it was before the batch, in which known URLs
// are looked up; sites caches site key → id lookups; chk is the calling
// goroutine's scope checker.
func (r resolver) prepare(d *parsed.Doc, tx *linkgraph.Tx, sites map[string]uint64, chk *scope.Checker) []preparedLink {
	if !hasLinks(d) {
		return nil
	}
	out := make([]preparedLink, 0, len(d.Links)+2)
	pageSite := urlnorm.SiteKey(d.URL) // the transaction checks d.URL against graph.db
	add := func(raw, anchor string, nofollow bool) {
		u, rej := r.resolveWith(raw, chk)
		l := preparedLink{url: u, rej: rej, anchor: anchor, nofollow: nofollow}
		if rej != nil {
			out = append(out, l)
			return
		}
		key := urlnorm.SiteKey(u)
		l.sameSite = key == pageSite
		if tx != nil {
			if id, ok := tx.LookupURL(u); ok {
				site, ok := sites[key]
				if !ok {
					site, _ = tx.SiteID(key)
					sites[key] = site
				}
				if site != 0 {
					l.known, l.site = id, site
				}
			}
		}
		out = append(out, l)
	}
	for _, l := range d.Links {
		add(l.URL, l.Anchor, l.NoFollow)
	}
	for _, u := range []string{d.Redirect, d.Canonical} {
		if u != "" {
			add(u, "", false)
		}
	}
	return out
}

// prepareDocs reads the records of a docs.jsonl file (name for messages)
// from r, decodes them and resolves their links on every core, looking up
// known URLs in graph.db (g, read-only snapshots; nil for none), and sends
// them in file order, a chunk at a time, until the end of the file, an
// error (sent with the chunk) or ctx is done. It closes out when it
// returns, after its last read transaction has ended: the batch's
// transaction may need to remap graph.db when it commits, which waits for
// open read transactions.
func prepareDocs(ctx context.Context, r io.Reader, name string, g *linkgraph.Graph, res resolver, out chan<- chunk) {
	defer close(out)
	workers := runtime.GOMAXPROCS(0)
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0 // lines read
	for {
		var c chunk
		var lines []string
		for len(lines) < chunkSize {
			// One copy of the line, which the record's strings share.
			line, err := br.ReadString('\n')
			if len(strings.TrimSpace(line)) > 0 {
				lines = append(lines, line)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				c.err = fmt.Errorf("read %s: %w", name, err)
				break
			}
		}
		c.docs = make([]preparedDoc, len(lines))
		errs := make([]error, len(lines))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(lines)) {
			wg.Go(func() {
				work := func(tx *linkgraph.Tx) error {
					sites := map[string]uint64{}
					chk := res.scope.Checker()
					for i := int(next.Add(1) - 1); i < len(lines); i = int(next.Add(1) - 1) {
						d, err := parsed.DecodeLine(lines[i], name, n+i+1)
						if err != nil {
							errs[i] = err
							continue
						}
						c.docs[i] = preparedDoc{doc: d, links: res.prepare(d, tx, sites, chk)}
						if tx != nil {
							if stored, err := tx.Doc(d.DocID); err == nil {
								c.docs[i].stored = stored
							}
						}
					}
					return nil
				}
				if g == nil {
					work(nil)
					return
				}
				if err := g.View(work); err != nil {
					errs[0] = err
				}
			})
		}
		wg.Wait()
		n += len(lines)
		for i, err := range errs {
			if err != nil {
				c.docs, c.err = c.docs[:i], err
				break
			}
		}
		if len(c.docs) == 0 && c.err == nil {
			return
		}
		select {
		case out <- c:
		case <-ctx.Done():
			return
		}
		if c.err != nil || len(lines) < chunkSize {
			return
		}
	}
}
