package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// deferredPartition is the fetch log error of a URL whose name resolved
// to an address of another partition (harvester.ErrPartitionDeferred).
const deferredPartition = "deferred: partition"

// ExcludedPartition is the Reason of documents handed over to another
// partition with their site.
const ExcludedPartition = "partition"

// handOver takes in a URL the harvester did not ask because its name
// resolved to an address of another partition: the site, whose address
// the batch's servers file gave graph.db, goes to that partition with
// every URL of it not fetched yet (lines of kind site), and stays here
// as a record that passes the links to it on (Site.Partition). An
// address of this partition (the name moved back) leaves the URL pending.
func (r *batchRun) handOver(d *linkgraph.Doc, siteKey string) error {
	in := r.in
	site, err := in.site(siteKey, false)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(siteAddr(site))
	to := 0
	if err == nil {
		to = in.part.OfAddress(ip)
	}
	if to == 0 || to == in.part.I {
		r.s.Pending++
		rest(d)
		return nil
	}
	if site.rec.Partition != to {
		site.rec.Partition, site.dirty = to, true
		r.s.HandedOver++
		var others []uint64
		if err := in.tx.ForEachSiteURL(siteKey, func(_ string, id uint64) error {
			if id != d.ID {
				others = append(others, id)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, id := range others {
			o, err := in.tx.Doc(id)
			if err != nil {
				return err
			}
			if o.State != linkgraph.StatePending {
				continue // fetched, failed, excluded: its history stays here; scheduled: its batch hands it over
			}
			if err := r.sendSite(to, o); err != nil {
				return err
			}
			if err := in.tx.PutDoc(o); err != nil {
				return err
			}
			if id <= 1<<32-1 {
				r.rewritten.Add(uint32(id))
			}
		}
	}
	return r.sendSite(to, d)
}

// siteAddr is the site's known address ("" if none).
func siteAddr(s *siteEntry) string {
	if s == nil {
		return ""
	}
	return s.rec.IP
}

// sendSite writes d as a URL handed over to partition to, and marks it
// excluded here.
func (r *batchRun) sendSite(to int, d *linkgraph.Doc) error {
	anchor := ""
	if len(d.Anchors) > 0 {
		anchor = d.Anchors[0]
	}
	if err := r.in.send(to, exchangeLine{Kind: ExchangeSite, Depth: d.Depth, Batch: r.in.batch, URL: d.URL, Anchor: anchor}); err != nil {
		return err
	}
	d.State, d.Reason = linkgraph.StateExcluded, ExcludedPartition
	return nil
}

// ExchangeSummary is what one intake of other partitions' exchange files
// did.
type ExchangeSummary struct {
	Files     int            `json:"files"`               // files taken in
	Lines     int            `json:"lines"`               // their lines
	NewURLs   int            `json:"newUrls"`             // URLs new to graph.db
	Known     int            `json:"known"`               // URLs graph.db knew
	Adopted   int            `json:"adopted,omitempty"`   // sites taken over from their sender
	Forwarded int            `json:"forwarded,omitempty"` // links passed on to the partition a site was handed to
	Rejected  map[string]int `json:"rejected,omitempty"`  // refused by the scope or the limits, by reason
	Elapsed   string         `json:"elapsed"`
}

// exchange publishes the exchange files this collection's committed
// transactions wrote, then takes in, in one transaction, every file
// other partitions wrote for it that it has not taken in yet. Nil
// outside partitioned collections or when there was nothing to take.
func exchange(ctx context.Context, g *linkgraph.Graph, col *collection.Collection, cfg config.Config, log *slog.Logger) (*ExchangeSummary, error) {
	part := cfg.Crawl.PartitionOf()
	if part.Whole() {
		return nil, nil
	}
	start := time.Now()
	// Publish what committed (and drop what did not).
	var out []uint64
	if err := g.View(func(tx *linkgraph.Tx) error {
		var err error
		out, err = tx.ExchangeOut()
		return err
	}); err != nil {
		return nil, err
	}
	if _, err := publishExchange(col.Dir, func(seq uint64) bool { return slices.Contains(out, seq) }); err != nil {
		return nil, err
	}
	if len(out) > 0 {
		if err := g.Update(func(tx *linkgraph.Tx) error { return tx.PutExchangeOut(nil) }); err != nil {
			return nil, err
		}
	}

	files := exchangeIn(col.Dir, part, cfg.Crawl.PartitionPeers)
	if len(files) == 0 {
		return nil, nil
	}
	slices.SortFunc(files, func(a, b string) int {
		na, _ := parseExchangeName(filepath.Base(a))
		nb, _ := parseExchangeName(filepath.Base(b))
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	})
	res, err := newResolver(cfg)
	if err != nil {
		return nil, err
	}
	s := &ExchangeSummary{Rejected: map[string]int{}}
	err = g.Update(func(tx *linkgraph.Tx) error {
		in := newIntake(tx, cfg, 0, res, filepath.Join(col.Dir, FrontierDir))
		defer in.abortPark()
		defer in.abortExchange()
		taken := map[int]*roaring.Bitmap{}
		for _, path := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			seq, _ := parseExchangeName(filepath.Base(path))
			var lines []exchangeLine
			from, err := readExchange(path, part, func(l exchangeLine) error {
				lines = append(lines, l)
				return nil
			})
			if err != nil {
				if errors.Is(err, ErrExchangeFormat) {
					log.Warn("exchange file skipped", "path", path, "err", err)
					continue
				}
				return err
			}
			bm := taken[from]
			if bm == nil {
				if bm, err = tx.ExchangeTaken(from); err != nil {
					return err
				}
				taken[from] = bm
			}
			if seq > 1<<32-1 || bm.Contains(uint32(seq)) {
				continue // taken before (a copy, or a peer's file seen again)
			}
			bm.Add(uint32(seq))
			s.Files++
			for _, l := range lines {
				if err := takeExchangeLine(in, l, s); err != nil {
					return err
				}
			}
		}
		for from, bm := range taken {
			if err := tx.PutExchangeTaken(from, bm); err != nil {
				return err
			}
		}
		if err := in.flushSites(); err != nil {
			return err
		}
		for k, n := range in.counts.rejected {
			s.Rejected[k] += n
		}
		s.NewURLs = in.counts.newURLs
		if err := in.finishExchange(); err != nil {
			return err
		}
		return in.finishPark(0)
	})
	if err != nil {
		return nil, fmt.Errorf("take in exchange files: %w", err)
	}
	s.Elapsed = time.Since(start).Round(time.Millisecond).String()
	if s.Files == 0 {
		return nil, nil
	}
	log.Debug("exchange files taken in", "files", s.Files, "lines", s.Lines, "new_urls", s.NewURLs)
	return s, nil
}

// takeExchangeLine takes one line of another partition's file in: a
// handed-over URL makes its site this partition's; a link to a site this
// partition handed over goes on to that partition; any other URL is
// taken in as a link target (normalised, scoped, within the limits).
func takeExchangeLine(in *intake, l exchangeLine, s *ExchangeSummary) error {
	s.Lines++
	u, rej := in.resolve(l.URL)
	if rej != nil {
		in.reject(rej)
		return nil
	}
	site, err := in.site(urlnorm.SiteKey(u), l.Kind == ExchangeSite)
	if err != nil {
		return err
	}
	if site != nil && site.rec.Partition != 0 && site.rec.Partition != in.part.I {
		if l.Kind == ExchangeSite {
			site.rec.Partition, site.dirty = 0, true // handed (back) to this partition
			s.Adopted++
		} else {
			s.Forwarded++
			return in.send(site.rec.Partition, exchangeLine{Kind: ExchangeLink, Depth: l.Depth, Batch: l.Batch, URL: u, Anchor: l.Anchor})
		}
	}
	if id, ok := in.tx.LookupURL(u); ok {
		s.Known++
		d, err := in.tx.Doc(id)
		if err != nil {
			return err
		}
		if l.Kind == ExchangeSite && d.State == linkgraph.StateExcluded && d.Reason == ExcludedPartition {
			d.State, d.Reason = linkgraph.StatePending, "" // handed back
			return in.tx.PutDoc(d)
		}
		return nil
	}
	// A URL its site's robots.txt forbids is taken in as excluded by
	// create; screen refuses only what the limits keep out.
	_, rej, err = in.screen(u, l.Depth)
	if err != nil {
		return err
	}
	if rej != nil {
		in.reject(rej)
		return nil
	}
	_, _, rej, err = in.create(u, l.Depth, cleanAnchor(l.Anchor))
	if rej != nil {
		in.reject(rej)
	}
	return err
}

// WriteText prints the summary for people.
func (s *ExchangeSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "  exchange    %d files from other partitions, %d lines: %d new urls, %d known, %d sites adopted, %d links passed on\n",
		s.Files, s.Lines, s.NewURLs, s.Known, s.Adopted, s.Forwarded)
	if len(s.Rejected) > 0 {
		fmt.Fprintf(w, "              rejected %s\n", formatCounts(s.Rejected))
	}
}

// Exchange publishes this partition's exchange files and takes in the
// ones other partitions wrote for it (docs/operations.md, "Partitioned
// collections"), as seeder run does after each batch; for a crawl whose
// batches are all seeded, or to take the exchange in at once. Nil when
// the collection is not a partition or nothing was waiting.
func Exchange(ctx context.Context, opts ReleaseOptions) (*ExchangeSummary, error) {
	if opts.Config.Crawl.PartitionOf().Whole() {
		return nil, fmt.Errorf("exchange: %w", ErrNotPartitioned)
	}
	return withGraph(opts, func(g *linkgraph.Graph, log *slog.Logger) (*ExchangeSummary, error) {
		return exchange(ctx, g, opts.Collection, opts.Config, log)
	})
}

// ErrNotPartitioned means the collection crawls the whole web
// (crawl.partition is not set).
var ErrNotPartitioned = errors.New("the collection is not a partition of a web (crawl.partition is not set)")
