package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/extract"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// The completeness of a collection (issue 18): every page graph.db
// counts as fetched had its record read by the gatherer and has its text
// (or the reason it has none: its status, its media type) stored. Check
// finds the pages that break it; Requeue puts them back in the frontier.
// docs/seeder.md, "Completeness", describes both.

// Lost is a page graph.db counts as fetched whose last visit is not
// stored.
type Lost struct {
	ID    uint64 `json:"id"`
	URL   string `json:"url"`
	Batch int    `json:"batch"` // the batch of its last visit
	Why   string `json:"why"`
}

// unreadByOldGatherer tells whether a document's error is what a gatherer
// before issue 18 wrote for a page whose WARC record it could not read:
// the harvester's status kept and the error "gatherer: " and the read
// error (now the gatherer stops, or with --salvage writes status 0 and
// "unread: ..."). "gatherer: content-encoding ..." is a body that was
// read but could not be decoded: its reason is stored, it is not lost.
func unreadByOldGatherer(status int, reason string) bool {
	return status > 0 && strings.HasPrefix(reason, "gatherer: ") && !strings.HasPrefix(reason, "gatherer: content-encoding")
}

// textChecker looks up documents in the text store; a missing text
// directory is a store without entries (it is not created).
type textChecker struct {
	store *textstore.Store
}

func openTextChecker(dir string) (*textChecker, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return &textChecker{}, nil
	}
	st, err := textstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return &textChecker{store: st}, nil
}

func (c *textChecker) Close() {
	if c.store != nil {
		c.store.Close()
	}
}

// lost says why d's last visit is not stored, or "" when it is (or d
// does not count as fetched).
func (c *textChecker) lost(d *linkgraph.Doc) (string, error) {
	if d.State != linkgraph.StateFetched || d.Visits == 0 {
		return "", nil
	}
	if unreadByOldGatherer(d.Status, d.Reason) {
		return "its WARC record was not read (" + cut(d.Reason, 120) + ")", nil
	}
	if d.Hash == "" {
		return "", nil // no text: its status or media type says why
	}
	if c.store == nil {
		return "no text store", nil
	}
	m, err := c.store.Lookup(d.URL)
	switch {
	case errors.Is(err, textstore.ErrNotFound):
		return "the text store has no entry for it", nil
	case err != nil:
		return "", err
	case extract.HashHex(m.Hash) == d.Hash:
		return "", nil
	case m.Batch > d.Batch:
		// Gathered again since (a batch not seeded yet, or cancelled):
		// the store is ahead of graph.db, nothing is lost.
		return "", nil
	}
	return fmt.Sprintf("the text store holds another text for it (hash %s of batch %d, graph.db has %s)", extract.HashHex(m.Hash), m.Batch, d.Hash), nil
}

// cut shortens s to at most n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// findLost calls fn for every lost page of tx.
func findLost(tx *linkgraph.Tx, texts *textChecker, fn func(Lost) error) error {
	return tx.ForEachDoc(func(d *linkgraph.Doc) error {
		why, err := texts.lost(d)
		if err != nil {
			return fmt.Errorf("doc %d (%s): %w", d.ID, d.URL, err)
		}
		if why == "" {
			return nil
		}
		return fn(Lost{ID: d.ID, URL: d.URL, Batch: d.Batch, Why: why})
	})
}

// maxLostShown is how many lost pages Check names.
const maxLostShown = 5

// checkComplete adds Check's problems for lost pages: one line with their
// number and the repair, then the first few.
func checkComplete(tx *linkgraph.Tx, col *collection.Collection, add func(string, ...any)) error {
	texts, err := openTextChecker(col.TextPath())
	if err != nil {
		return err
	}
	defer texts.Close()
	var first []Lost
	n := 0
	if err := findLost(tx, texts, func(l Lost) error {
		n++
		if len(first) < maxLostShown {
			first = append(first, l)
		}
		return nil
	}); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	add("%d pages are fetched in graph.db but their text is not stored (docs/seeder.md, \"Completeness\"); `seeder requeue` puts them back in the frontier", n)
	for _, l := range first {
		add("  doc %d %s (batch %06d): %s", l.ID, l.URL, l.Batch, l.Why)
	}
	return nil
}

// RequeueOptions are the inputs of Requeue.
type RequeueOptions struct {
	Collection *collection.Collection
	// DryRun finds the lost pages without changing graph.db.
	DryRun bool
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
}

// RequeueSummary is what Requeue did.
type RequeueSummary struct {
	DryRun bool   `json:"dryRun,omitempty"`
	Lost   []Lost `json:"lost"`
}

// WriteText prints the summary for people.
func (s *RequeueSummary) WriteText(w io.Writer) {
	verb := "put back in the frontier"
	if s.DryRun {
		verb = "would be put back in the frontier (dry run)"
	}
	fmt.Fprintf(w, "%d pages fetched without their text stored %s\n", len(s.Lost), verb)
	for i, l := range s.Lost {
		if i == 20 {
			fmt.Fprintf(w, "  and %d more\n", len(s.Lost)-i)
			break
		}
		fmt.Fprintf(w, "  doc %d %s (batch %06d): %s\n", l.ID, l.URL, l.Batch, l.Why)
	}
}

// Requeue puts every lost page (see Check) back in the frontier, in one
// transaction under the seeder's lock: its state becomes pending, its
// validators (Last-Modified, ETag) are dropped so that the next visit is
// a full GET and not a 304 pointing at a text that is not stored, and its
// visit history is kept (the visits happened; the manager schedules it as
// a revisit). Nothing else changes, and running it again finds nothing.
func Requeue(ctx context.Context, opts RequeueOptions) (*RequeueSummary, error) {
	col := opts.Collection
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	g, err := openGraph(col, opts.DryRun, opts.GraphTimeout)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	texts, err := openTextChecker(col.TextPath())
	if err != nil {
		return nil, err
	}
	defer texts.Close()
	s := &RequeueSummary{DryRun: opts.DryRun}
	find := func(tx *linkgraph.Tx) error {
		return findLost(tx, texts, func(l Lost) error {
			s.Lost = append(s.Lost, l)
			return ctx.Err()
		})
	}
	if opts.DryRun {
		err = g.View(find)
	} else {
		err = g.Update(func(tx *linkgraph.Tx) error {
			if err := find(tx); err != nil {
				return err
			}
			for _, l := range s.Lost {
				d, err := tx.Doc(l.ID)
				if err != nil {
					return err
				}
				d.State, d.Reason = linkgraph.StatePending, ""
				d.LastModified, d.ETag = "", ""
				if err := tx.PutDoc(d); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
	if err != nil {
		return nil, fmt.Errorf("requeue %s: %w", col.GraphPath(), err)
	}
	return s, nil
}
