package gatherer

// Gathering a harvest while it is written (Options.Follow): the records
// come from the harvester's partial fetch log as its lines are written,
// and from the published fetch log once the batch is harvested.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// source hands the pipeline its records in fetch log order.
type source interface {
	// next returns the next record; false when there is none left or
	// ctx is done.
	next(ctx context.Context) (*input, bool)
	// err is why the records stopped early, once next returned false.
	err() error
	// count is the number of records handed out.
	count() int
}

// sliceSource hands out the records of a harvest read whole.
type sliceSource struct {
	ins []input
	i   int
}

func (s *sliceSource) next(ctx context.Context) (*input, bool) {
	if s.i >= len(s.ins) || ctx.Err() != nil {
		return nil, false
	}
	s.i++
	return &s.ins[s.i-1], true
}

func (s *sliceSource) err() error { return nil }
func (s *sliceSource) count() int { return s.i }

// errFollowLost is the follower's finding that the fetch log it read
// while the harvest was written is not the beginning of the published
// one (the harvester was killed and its rerun repaired the log, or it
// was forced to start again): the batch is gathered again from the
// published harvest.
var errFollowLost = errors.New("the harvest's fetch log changed while it was followed")

// Follow polling: the partial fetch log is read every followPoll; the
// records read are handed to the pipeline once followChunk of them are
// there or followHold has passed (each handover looks their URLs up in
// the older text segments, which costs a pass over those segments'
// tables).
const (
	followPoll  = 50 * time.Millisecond
	followChunk = 2000
	followHold  = 250 * time.Millisecond
)

// followSource hands out the records of a harvest as the harvester writes
// them: it follows harvest.partial/fetch.log until the batch's harvested
// marker exists, then reads the published fetch log, checks that what it
// followed is that log's beginning, and hands out the rest.
type followSource struct {
	ch     chan *input
	n      atomic.Int64
	failed error // set before ch is closed
}

func (s *followSource) next(ctx context.Context) (*input, bool) {
	select {
	case in, ok := <-s.ch:
		if !ok {
			return nil, false
		}
		s.n.Add(1)
		return in, true
	case <-ctx.Done():
		return nil, false
	}
}

func (s *followSource) err() error { return s.failed }
func (s *followSource) count() int { return int(s.n.Load()) }

// follow starts following batch b's harvest; sitemaps are the batch
// entries of kind sitemap, store the older text segments.
func follow(ctx context.Context, b *collection.Batch, sitemaps map[uint64]bool, store *textstore.Store) *followSource {
	s := &followSource{ch: make(chan *input, followChunk)}
	go func() {
		defer close(s.ch)
		s.failed = s.feed(ctx, b, sitemaps, store)
	}()
	return s
}

func (s *followSource) feed(ctx context.Context, b *collection.Batch, sitemaps map[uint64]bool, store *textstore.Store) error {
	partial, final := filepath.Join(b.Dir, collection.HarvestPartialDir), b.HarvestPath()
	fl := fetchlog.NewFollower(filepath.Join(partial, fetchlog.LogFile))
	defer fl.Close()
	var (
		fed     []fetchlog.Record // handed out, in order
		waiting []fetchlog.Record // read, not handed out yet
		since   = time.Now()      // when waiting was last emptied
	)
	hand := func(recs []fetchlog.Record, dir, published string) error {
		if len(recs) == 0 {
			return nil
		}
		urls := make([]string, len(recs))
		for i := range recs {
			urls[i] = recs[i].URL
		}
		prev, err := store.PreviousHashes(b.ID, urls)
		if err != nil {
			return fmt.Errorf("read older text segments: %w", err)
		}
		for i := range recs {
			rec := recs[i]
			h, ok := prev[rec.URL]
			in := &input{rec: &rec, dir: dir, published: published, sitemap: sitemaps[rec.DocID], prev: h, hadPrev: ok}
			select {
			case s.ch <- in:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		fed = append(fed, recs...)
		return nil
	}
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		// The marker is looked at before the log is read: once it is
		// there, the published log holds every line.
		if b.Done(collection.StageHarvested) {
			break
		}
		recs, err := fl.Next()
		if errors.Is(err, fetchlog.ErrReplaced) {
			return fmt.Errorf("%w: %w", errFollowLost, err)
		}
		if err != nil {
			return err
		}
		waiting = append(waiting, recs...)
		if len(waiting) >= followChunk || (len(waiting) > 0 && time.Since(since) >= followHold) {
			if err := hand(waiting, partial, final); err != nil {
				return err
			}
			waiting, since = nil, time.Now()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ins, err := readHarvest(b)
	if err != nil {
		return err
	}
	if len(ins) < len(fed) {
		return fmt.Errorf("%w: %d lines followed, %d published", errFollowLost, len(fed), len(ins))
	}
	for i := range fed {
		if ins[i].rec.Format() != fed[i].Format() {
			return fmt.Errorf("%w: line %d of the published log differs (%s)", errFollowLost, i+1, ins[i].rec.URL)
		}
	}
	rest := make([]fetchlog.Record, 0, len(ins)-len(fed))
	for _, in := range ins[len(fed):] {
		rest = append(rest, *in.rec)
	}
	return hand(rest, final, "")
}
