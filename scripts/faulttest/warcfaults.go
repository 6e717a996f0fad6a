package faulttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// warcCases are the damaged-WARC faults (issue 18): batch 2's WARC file
// truncated, emptied, deleted, and with one corrupt record. Each must
// stop `gatherer run` with exit 6 and one line naming the file and the
// offset, publishing nothing; then `gatherer run --salvage` and the
// seeder take in what can be read, every unread page is back in the
// frontier (its visit not recorded), the collection passes every check
// of CheckCollection, and a whole cycle runs on it.
func warcCases(ctx context.Context, fresh freshFunc, st states) []func() (EnvCase, error) {
	var out []func() (EnvCase, error)
	for _, kind := range []string{"truncated", "emptied", "deleted", "bad-record"} {
		out = append(out, func() (EnvCase, error) { return damagedWARC(ctx, fresh, st, kind) })
	}
	return out
}

// damagedWARC runs one damaged-WARC case.
func damagedWARC(ctx context.Context, fresh freshFunc, st states, kind string) (EnvCase, error) {
	c := EnvCase{Name: "warc-" + kind}
	r, err := fresh(c.Name, st.harvested)
	if err != nil {
		return c, err
	}
	b := filepath.Join(r.Collection, collection.BatchesDir, collection.BatchName(2))
	recs, err := fetchlog.ReadFile(filepath.Join(b, collection.HarvestDir, fetchlog.LogFile))
	if err != nil {
		return c, err
	}
	// The WARC file of the batch's first page with a body, and the pages
	// of that file with one.
	var pages []fetchlog.Record
	for _, rec := range recs {
		if rec.OK() && rec.Status == 200 && rec.WARC != "" && (len(pages) == 0 || rec.WARC == pages[0].WARC) {
			pages = append(pages, rec)
		}
	}
	if len(pages) < 2 {
		c.Skipped = fmt.Sprintf("batch 2 has %d pages with a body", len(pages))
		return c, nil
	}
	warc := filepath.Join(b, collection.HarvestDir, pages[0].WARC)
	mid := pages[len(pages)/2]
	switch kind {
	case "truncated":
		err = os.Truncate(warc, mid.Offset+mid.Length/2)
	case "emptied":
		err = os.Truncate(warc, 0)
	case "deleted":
		err = os.Remove(warc)
	case "bad-record":
		var data []byte
		if data, err = os.ReadFile(warc); err == nil {
			data[mid.Offset+mid.Length/2] ^= 0x55
			err = os.WriteFile(warc, data, 0o644)
		}
	}
	if err != nil {
		return c, fmt.Errorf("damage %s: %w", warc, err)
	}

	res, err := r.Stage(ctx, "gatherer")
	if err != nil {
		return c, err
	}
	expectOneLine(&c, res, exitDamaged, regexp.MustCompile(`damaged: WARC file `+regexp.QuoteMeta(warc)+`, record at offset \d+ .*--salvage`))
	if c.Problem != "" {
		return c, nil
	}
	for _, p := range []string{collection.MarkerFile(collection.StageGathered), collection.ParsedDir, collection.ParsedPartialDir} {
		if exists(filepath.Join(b, p)) {
			c.Problem = fmt.Sprintf("the stopped run left %s", p)
			return c, nil
		}
	}
	res, err = r.Run(ctx, "gatherer", "run", "--collection", r.Collection, "--salvage")
	if err != nil {
		return c, err
	}
	if res.Code != exitOK {
		c.Problem = fmt.Sprintf("gatherer run --salvage: %s", res)
		return c, nil
	}
	unread, err := unreadRecords(b)
	if err != nil {
		return c, err
	}
	if len(unread) == 0 {
		c.Problem = "gatherer run --salvage wrote no unread record"
		return c, nil
	}
	if res, err = r.Stage(ctx, "seeder"); err != nil || res.Code != exitOK {
		c.Problem = fmt.Sprintf("seeder after the salvage: %v %s", err, res)
		return c, nil
	}
	if p := notRecorded(r.Collection, recs, unread); p != "" {
		c.Problem = p
		return c, nil
	}
	rep, err := CheckCollection(ctx, r, CheckOptions{CatSample: 5})
	if err != nil {
		return c, err
	}
	if len(rep.Problems) > 0 {
		c.Problem = "after the salvage: " + strings.Join(rep.Problems, "; ")
		return c, nil
	}
	// The crawl goes on.
	for _, stage := range Stages() {
		res, err := r.Stage(ctx, stage)
		if err != nil {
			return c, err
		}
		if res.Code != exitOK && res.Code != exitNothing {
			c.Problem = fmt.Sprintf("the next cycle: %s", res)
			return c, nil
		}
	}
	if p := afterFault(ctx, r, ""); p != "" {
		c.Problem = "after the next cycle: " + p
		return c, nil
	}
	c.Note = fmt.Sprintf("--salvage: %d unread pages back in the frontier; every check passes; the next cycle runs", len(unread))
	return c, nil
}

// unreadRecords returns the records of a batch's docs.jsonl that the
// gatherer could not read back from their WARC file (--salvage: error
// "unread: ..."); none if the batch is not gathered.
func unreadRecords(batchDir string) (map[entryKey]bool, error) {
	path := filepath.Join(batchDir, collection.ParsedDir, parsed.DocsFile)
	if !exists(path) {
		return nil, nil
	}
	docs, err := parsed.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[entryKey]bool{}
	for _, d := range docs {
		if strings.HasPrefix(d.Err, parsed.Unread+":") {
			out[entryKey{d.DocID, d.URL}] = true
		}
	}
	return out, nil
}

// notRecorded checks in graph.db that no unread page has the visit of its
// fetch log line: it is back where it was before the batch (pending for
// a page never fetched), with no failure counted.
func notRecorded(col string, recs []fetchlog.Record, unread map[entryKey]bool) string {
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 30*time.Second)
	if err != nil {
		return fmt.Sprintf("open graph.db: %v", err)
	}
	defer g.Close()
	var problem string
	_ = g.View(func(tx *linkgraph.Tx) error {
		for _, rec := range recs {
			if !unread[entryKey{rec.DocID, rec.URL}] {
				continue
			}
			d, err := tx.Doc(rec.DocID)
			switch {
			case err != nil:
				problem = fmt.Sprintf("unread page %s: %v", rec.URL, err)
			case d.Fetched.Equal(rec.Fetched) || d.Failures > 0 || d.State == linkgraph.StateScheduled:
				problem = fmt.Sprintf("unread page %s is %s (fetched %v, %d failures): its unread visit was taken in", rec.URL, d.State, d.Fetched, d.Failures)
			case d.Visits == 0 && d.State != linkgraph.StatePending:
				problem = fmt.Sprintf("unread page %s, never fetched, is %s, not pending", rec.URL, d.State)
			}
			if problem != "" {
				return nil
			}
		}
		return nil
	})
	return problem
}
