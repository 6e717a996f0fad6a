package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// The upgrade of a collection crawled before graph.db kept each page's
// stored capture (issue 37): the seeder records a capture when it takes
// in a 2xx response stored whole, and a revisit keeps the stored one, so
// a page that has answered 304 ever since it was last stored whole would
// never get one, and its revisit records would never refer to their
// payload. Captures reads the captures back from the WARC files of the
// batches already seeded. docs/format/linkgraph.md, "Doc records",
// describes the field; docs/seeder.md, "Stored captures", the command.

// CapturesOptions are the inputs of Captures.
type CapturesOptions struct {
	Collection *collection.Collection
	// DryRun reads the WARC files and counts what would change, without
	// changing graph.db.
	DryRun bool
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
}

// CapturesSummary is what Captures did.
type CapturesSummary struct {
	DryRun  bool `json:"dryRun,omitempty"`
	Batches int  `json:"batches"` // seeded batches whose harvest was read
	// Skipped names the seeded batches whose harvest could not be read
	// (removed, or not there), with why.
	Skipped []string `json:"skipped,omitempty"`
	// Records counts the 2xx response records stored whole that were
	// read; Unreadable those that could not be (damaged: left out).
	Records    int `json:"records"`
	Unreadable int `json:"unreadable,omitempty"`
	// Recorded counts the captures set (a page once for each batch that
	// holds a newer one than the last); Kept those not set because the
	// page's stored capture was as new already.
	Recorded int `json:"recorded"`
	Kept     int `json:"kept"`
	// Mismatched counts fetch log lines whose doc id names another URL
	// in graph.db (left out).
	Mismatched int `json:"mismatched,omitempty"`
}

// WriteText prints the summary for people.
func (s *CapturesSummary) WriteText(w io.Writer) {
	verb := "recorded"
	if s.DryRun {
		verb = "would be recorded (dry run)"
	}
	fmt.Fprintf(w, "%d stored captures %s, %d as new as graph.db's: %d response records read in %d batches\n", s.Recorded, verb, s.Kept, s.Records, s.Batches)
	if s.Unreadable > 0 || s.Mismatched > 0 {
		fmt.Fprintf(w, "  %d records unreadable, %d fetch log lines naming another URL: left out\n", s.Unreadable, s.Mismatched)
	}
	for _, b := range s.Skipped {
		fmt.Fprintf(w, "  skipped %s\n", b)
	}
}

// foundCapture is the capture of one fetch log line.
type foundCapture struct {
	id  uint64
	url string
	c   capture.Capture
}

// Captures records in graph.db the stored capture of every page whose
// last 2xx response stored whole is in the WARC files of a seeded batch
// and newer than the capture graph.db holds (none, for a collection
// crawled before captures were kept). It runs under the seeder's lock,
// one transaction per batch, batches in order; running it again changes
// nothing.
func Captures(ctx context.Context, opts CapturesOptions) (*CapturesSummary, error) {
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
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, err
	}
	s := &CapturesSummary{DryRun: opts.DryRun}
	var dry map[uint64]capture.Capture // a dry run's captures, as if written
	if opts.DryRun {
		dry = map[uint64]capture.Capture{}
	}
	rd := warcio.NewReader()
	defer rd.Close()
	for _, id := range ids {
		b := col.Batch(id)
		if !b.Done(collection.StageSeeded) {
			continue
		}
		found, err := batchCaptures(ctx, b, rd, s)
		if errors.Is(err, fs.ErrNotExist) {
			s.Skipped = append(s.Skipped, fmt.Sprintf("%s: no harvest output (%v)", b.Name(), err))
			continue
		}
		if err != nil {
			return s, err
		}
		s.Batches++
		apply := func(tx *linkgraph.Tx) error { return applyCaptures(tx, found, dry, s) }
		if opts.DryRun {
			err = g.View(apply)
		} else {
			err = g.Update(apply)
		}
		if err != nil {
			return s, fmt.Errorf("record the captures of batch %s in %s: %w", b.Name(), col.GraphPath(), err)
		}
	}
	return s, nil
}

// batchCaptures reads the captures of a batch's fetch log: the 2xx lines
// without an error whose record is a response stored whole.
func batchCaptures(ctx context.Context, b *collection.Batch, rd *warcio.Reader, s *CapturesSummary) ([]foundCapture, error) {
	dir := b.HarvestPath()
	recs, err := fetchlog.ReadFile(filepath.Join(dir, fetchlog.LogFile))
	if err != nil {
		return nil, err
	}
	var found []foundCapture
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.OK() || r.WARC == "" || r.Status < 200 || r.Status >= 300 {
			continue
		}
		// The headers are all it needs: no body byte is kept.
		resp, err := rd.ReadResponse(filepath.Join(dir, r.WARC), r.Offset, r.Length, 0)
		if errors.Is(err, warcio.ErrRecord) {
			s.Unreadable++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", b.Name(), err)
		}
		c := resp.Capture()
		if c.IsZero() || c.Check() != nil {
			continue // a revisit, or a record from elsewhere without a usable id
		}
		s.Records++
		found = append(found, foundCapture{id: r.DocID, url: r.URL, c: c})
	}
	return found, nil
}

// applyCaptures sets each page's capture unless graph.db holds one as
// new (the same date or later). A dry run (dry not nil) writes nothing
// and keeps in dry the captures it would have written, which later
// batches compare with.
func applyCaptures(tx *linkgraph.Tx, found []foundCapture, dry map[uint64]capture.Capture, s *CapturesSummary) error {
	for _, f := range found {
		d, err := tx.Doc(f.id)
		switch {
		case errors.Is(err, linkgraph.ErrNotFound) || err == nil && d.URL != f.url:
			s.Mismatched++
			continue
		case err != nil:
			return err
		}
		if c, ok := dry[f.id]; ok {
			d.Capture = c
		}
		if !d.Capture.IsZero() && !f.c.Date.After(d.Capture.Date) {
			s.Kept++
			continue
		}
		d.Capture = f.c
		s.Recorded++
		if dry != nil {
			dry[f.id] = f.c
			continue
		}
		if err := tx.PutDoc(d); err != nil {
			return err
		}
	}
	return nil
}
