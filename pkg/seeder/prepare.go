package seeder

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/wirecrawl/wire/pkg/parsed"
)

// preparedDoc is a parsed record with its links normalised and checked
// against the scope: the work that needs no database, done ahead of the
// transaction on every core while it takes in the previous records.
type preparedDoc struct {
	doc   *parsed.Doc
	links []preparedLink // links, then redirect, then canonical
}

// preparedLink is one link of a page after resolve.
type preparedLink struct {
	url      string     // normal form; "" when rejected
	rej      *rejection // why the link is kept out
	anchor   string
	nofollow bool
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

// prepare resolves the links of one record.
func (r resolver) prepare(d *parsed.Doc) []preparedLink {
	if !hasLinks(d) {
		return nil
	}
	out := make([]preparedLink, 0, len(d.Links)+2)
	add := func(raw, anchor string, nofollow bool) {
		u, rej := r.resolve(raw)
		out = append(out, preparedLink{url: u, rej: rej, anchor: anchor, nofollow: nofollow})
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

// prepareDocs reads records from reader, resolves their links on every
// core, and sends them in file order, a chunk at a time, until the end of
// the file, a read error (sent with the chunk) or ctx is done. It closes
// out when it returns.
func prepareDocs(ctx context.Context, reader *parsed.Reader, res resolver, out chan<- chunk) {
	defer close(out)
	workers := runtime.GOMAXPROCS(0)
	for {
		var c chunk
		for len(c.docs) < chunkSize {
			d, err := reader.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				c.err = err
				break
			}
			c.docs = append(c.docs, preparedDoc{doc: d})
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(c.docs)) {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < len(c.docs); i = int(next.Add(1) - 1) {
					c.docs[i].links = res.prepare(c.docs[i].doc)
				}
			})
		}
		wg.Wait()
		if len(c.docs) == 0 && c.err == nil {
			return
		}
		select {
		case out <- c:
		case <-ctx.Done():
			return
		}
		if c.err != nil || len(c.docs) < chunkSize {
			return
		}
	}
}
