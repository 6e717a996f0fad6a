package seeder

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
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
	// key finds the URL among those the batch created (Tx.CreatedURLKey),
	// for a URL graph.db did not know; computed here, on the workers.
	key linkgraph.URLKey
}

// chunk is a run of consecutive records, in file order.
type chunk struct {
	docs []preparedDoc
	err  error // a read error after docs
}

// chunkSize is the number of records prepared together.
const chunkSize = 256

// hasLinks tells whether a record's links are taken in: only for pages
// that came with a body (a response other than 304 Not Modified or a
// revisit of the stored capture, parsed.Doc.NotModified).
func hasLinks(d *parsed.Doc) bool { return d.Status > 0 && !d.NotModified() }

// prepare resolves the links of one record as resolve does, with the
// host's part of the scope checked once per site (sites, the calling
// goroutine's memory of them); tx, if not nil, is a read transaction on
// graph.db as it was before the batch, in which known URLs are looked up.
func (r resolver) prepare(d *parsed.Doc, tx *linkgraph.Tx, sites *siteSet) []preparedLink {
	if !hasLinks(d) {
		return nil
	}
	out := make([]preparedLink, 0, len(d.Links)+2)
	pageSite := urlnorm.SiteKey(d.URL) // the transaction checks d.URL against graph.db
	add := func(raw, anchor string, nofollow bool) {
		l := preparedLink{anchor: anchor, nofollow: nofollow}
		u, err := r.norm.Normalize(raw)
		var st *siteURLs
		key := ""
		if err == nil {
			key = urlnorm.SiteKey(u)
			st = sites.site(tx, key, r.scope)
			if st.upgrade != "" && st.scopeErr == nil {
				// The site sends everything to https (Site.Upgrade):
				// the link is taken on https directly.
				u = st.upgrade + u[len(key):]
				key = st.upgrade
				st = sites.site(tx, key, r.scope)
			}
			err = r.scope.CheckInSite(u, len(key), st.scopeErr)
		}
		if err != nil {
			l.rej = &rejection{reason: reasonOf(err), err: err}
			out = append(out, l)
			return
		}
		l.url = u
		l.sameSite = key == pageSite
		if tx != nil {
			l.known, l.site = sites.lookup(tx, st, key, u)
			if l.known == 0 {
				l.key = tx.URLKey(u)
			}
			if st.id == 0 {
				// A site graph.db did not know: in a partitioned
				// collection, its name's address decides where its
				// URLs go (intake.route); the lookup starts now.
				r.loc.start(urlnorm.Host(u))
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
// error (sent with the chunk) or ctx is done. One goroutine reads the
// chunks' lines while GOMAXPROCS workers prepare a chunk each, so that
// neither the reading nor the slowest record of a chunk leaves a core
// idle. It closes out when it returns, after every read transaction of
// its workers has ended: the batch's transaction may need to remap
// graph.db when it commits, which waits for open read transactions.
func prepareDocs(ctx context.Context, r io.Reader, name string, g *linkgraph.Graph, res resolver, out chan<- chunk) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // the reader and the workers
		close(out)
	}()
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *prepJob, workers)
	// The jobs in file order, as many ahead as there are workers and one
	// being read.
	order := make(chan *prepJob, workers)
	wg.Go(func() { readChunks(ctx, r, name, jobs, order) })
	for range workers {
		wg.Go(func() {
			p := preparer{res: res, g: g, name: name, sites: newSiteSet()}
			for j := range jobs {
				j.done <- p.chunk(j)
			}
		})
	}
	for j := range order {
		var c chunk
		select {
		case c = <-j.done:
		case <-ctx.Done():
			return
		}
		if len(c.docs) == 0 && c.err == nil {
			return
		}
		select {
		case out <- c:
		case <-ctx.Done():
			return
		}
		if c.err != nil {
			return
		}
	}
}

// prepJob is a chunk's lines, read, waiting to be prepared.
type prepJob struct {
	lines   []string
	first   int   // the number of records before the chunk's
	readErr error // a read error after the lines
	done    chan chunk
}

// readChunks reads the lines of r, chunkSize records at a time (blank
// lines skipped), and hands each chunk to the workers (jobs) and to the
// delivery in file order (order), until the end of r, a read error (the
// last job's) or ctx is done; then it closes both channels.
func readChunks(ctx context.Context, r io.Reader, name string, jobs, order chan<- *prepJob) {
	defer close(jobs)
	defer close(order)
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0 // records read
	for {
		j := &prepJob{first: n, done: make(chan chunk, 1)}
		eof := false
		for len(j.lines) < chunkSize {
			// One copy of the line, which the record's strings share.
			line, err := br.ReadString('\n')
			if len(strings.TrimSpace(line)) > 0 {
				j.lines = append(j.lines, line)
			}
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				j.readErr = fmt.Errorf("read %s: %w", name, err)
				break
			}
		}
		n += len(j.lines)
		for _, ch := range []chan<- *prepJob{order, jobs} {
			select {
			case ch <- j:
			case <-ctx.Done():
				return
			}
		}
		if eof || j.readErr != nil || len(j.lines) == 0 {
			return
		}
	}
}

// preparer is one worker of prepareDocs: what it has read of the sites
// and their URLs (the snapshot of every read transaction is the same: the
// batch's transaction commits after the records).
type preparer struct {
	res   resolver
	g     *linkgraph.Graph
	name  string
	sites *siteSet
}

// chunk decodes and prepares the records of a job, in a read transaction
// of its own; a record that does not decode ends the chunk before it,
// with its error, which otherwise is the job's read error.
func (p *preparer) chunk(j *prepJob) chunk {
	c := chunk{docs: make([]preparedDoc, len(j.lines)), err: j.readErr}
	work := func(tx *linkgraph.Tx) error {
		for i, line := range j.lines {
			d, err := parsed.DecodeLine(line, p.name, j.first+i+1)
			if err != nil {
				c.docs, c.err = c.docs[:i], err
				return nil
			}
			c.docs[i] = preparedDoc{doc: d, links: p.res.prepare(d, tx, p.sites)}
			if tx != nil {
				if stored, err := tx.Doc(d.DocID); err == nil {
					c.docs[i].stored = stored
				}
			}
		}
		return nil
	}
	if p.g == nil {
		work(nil)
		return c
	}
	if err := p.g.View(work); err != nil {
		c.docs, c.err = nil, err
	}
	return c
}
