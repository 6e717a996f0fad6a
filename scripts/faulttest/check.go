package faulttest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/textstore"
)

// maxProblems bounds the problems a check reports of one kind.
const maxProblems = 20

// Report is what the collection checks found.
type Report struct {
	// Batches, Entries, Fetched, Docs and Texts count what was checked:
	// batch files, batch entries, URLs fetched with a response, documents
	// in graph.db, texts read back.
	Batches, Entries, Fetched, Docs, Texts int
	// CatChecked counts the pages read back with `gatherer cat`.
	CatChecked int
	// EmptyTexts counts the pages among Texts whose text is empty
	// (framesets, pages of markup only).
	EmptyTexts int
	// Problems are the violations found, each naming what is wrong.
	Problems []string
	counts   map[string]int
}

// problem records a violation, at most maxProblems of each kind.
func (r *Report) problem(kind, format string, args ...any) {
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[kind]++
	switch n := r.counts[kind]; {
	case n <= maxProblems:
		r.Problems = append(r.Problems, kind+": "+fmt.Sprintf(format, args...))
	case n == maxProblems+1:
		r.Problems = append(r.Problems, kind+": (more problems of this kind not listed)")
	}
}

// Err returns the problems as one error, or nil.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(r.Problems, "\n"))
}

// CheckOptions tune CheckCollection.
type CheckOptions struct {
	// CatSample is how many fetched HTML pages are also read back through
	// the binary (`gatherer cat URL`), chosen at random; the library reads
	// every one. Default 20.
	CatSample int
	// Seed chooses the sample.
	Seed uint64
}

// batchDirs returns the batch directories of a collection, oldest first.
func batchDirs(col string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(col, collection.BatchesDir))
	if err != nil {
		return nil, fmt.Errorf("list batches of %s: %w", col, err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); e.IsDir() && err == nil {
			out = append(out, filepath.Join(col, collection.BatchesDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// entryKey identifies a batch entry.
type entryKey struct {
	id  uint64
	url string
}

// fetchedPage is a fetch log line with a response.
type fetchedPage struct {
	batch string
	rec   fetchlog.Record
}

// CheckCollection checks a collection after a crawl (no stage may run
// meanwhile):
//
//   - `seeder check` passes;
//   - every entry of every batch file has exactly one fetch log line once
//     the batch is harvested, and is still scheduled in graph.db while it
//     is not (fetched once or still pending);
//   - a URL fetched with a response is never scheduled as new again
//     (one that failed is);
//   - no document has two ids: every URL of graph.db maps to one
//     document, whose URL it is, and every batch entry's id is the id of
//     its URL;
//   - every document graph.db says is fetched has its fetch log line;
//   - the text of every page fetched with status 200 as HTML in a
//     gathered batch is in the text store (read with pkg/textstore; it
//     may be empty, e.g. for a frameset), and a random sample reads back
//     through `gatherer cat`, identical.
func CheckCollection(ctx context.Context, r *Runner, opts CheckOptions) (Report, error) {
	var rep Report
	if opts.CatSample == 0 {
		opts.CatSample = 20
	}
	col := r.Collection
	res, err := r.Run(ctx, "seeder", "check", "--collection", col)
	if err != nil {
		return rep, err
	}
	if res.Code != exitOK {
		rep.problem("seeder check", "%s\n%s", res, res.Stdout)
	}

	dirs, err := batchDirs(col)
	if err != nil {
		return rep, err
	}
	entries := map[string][]batch.Entry{} // by batch dir
	harvested := map[string]bool{}
	okIn := map[string]string{}   // URL -> batch that fetched it
	answered := map[string]bool{} // URLs with a response, even cut short
	var fetched []fetchedPage
	for _, dir := range dirs {
		bf := filepath.Join(dir, collection.BatchFile)
		if !exists(bf) {
			continue // a batch the manager never finished writing
		}
		_, ents, err := batch.ReadFile(bf)
		if err != nil {
			rep.problem("batch file", "%v", err)
			continue
		}
		rep.Batches++
		rep.Entries += len(ents)
		entries[dir] = ents
		for _, e := range ents {
			// A URL that failed (no response) is scheduled again, as
			// new; one that was fetched must not be.
			if prev, ok := okIn[e.URL]; ok && e.Kind == batch.KindNew {
				rep.problem("fetched once", "%s was fetched in batch %s and is new again in %s", e.URL, filepath.Base(prev), filepath.Base(dir))
			}
		}
		log := filepath.Join(dir, collection.HarvestDir, fetchlog.LogFile)
		if !exists(log) {
			continue
		}
		harvested[dir] = true
		recs, err := fetchlog.ReadFile(log)
		if err != nil {
			rep.problem("fetch log", "%v", err)
			continue
		}
		unread, err := unreadRecords(dir) // gatherer --salvage: not fetched
		if err != nil {
			rep.problem("parsed docs", "%v", err)
		}
		lines := map[entryKey]int{}
		for _, rec := range recs {
			lines[entryKey{rec.DocID, rec.URL}]++
			if rec.Status != 0 {
				answered[rec.URL] = true
			}
			if rec.OK() && !unread[entryKey{rec.DocID, rec.URL}] {
				fetched = append(fetched, fetchedPage{batch: dir, rec: rec})
				okIn[rec.URL] = dir
			}
		}
		want := map[entryKey]bool{}
		for _, e := range ents {
			k := entryKey{e.DocID, e.URL}
			want[k] = true
			if n := lines[k]; n != 1 {
				rep.problem("fetched once", "batch %s: %s (id %d) has %d fetch log lines", filepath.Base(dir), e.URL, e.DocID, n)
			}
		}
		for k := range lines {
			if !want[k] {
				rep.problem("fetched once", "batch %s: fetch log line for %s (id %d), which the batch does not hold", filepath.Base(dir), k.url, k.id)
			}
		}
	}
	rep.Fetched = len(fetched)

	if err := checkGraph(col, dirs, entries, harvested, answered, &rep); err != nil {
		return rep, err
	}
	if err := checkText(ctx, r, dirs, fetched, opts, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// checkGraph checks ids and states in graph.db against the batches.
func checkGraph(col string, dirs []string, entries map[string][]batch.Entry, harvested, answered map[string]bool, rep *Report) error {
	g, err := linkgraph.Open(filepath.Join(col, collection.GraphFile), true, 30*time.Second)
	if err != nil {
		return fmt.Errorf("open graph of %s: %w", col, err)
	}
	defer g.Close()
	return g.View(func(tx *linkgraph.Tx) error {
		byURL := map[string]uint64{}
		err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			rep.Docs++
			if prev, ok := byURL[d.URL]; ok {
				rep.problem("two ids", "%s has ids %d and %d", d.URL, prev, d.ID)
			}
			byURL[d.URL] = d.ID
			if id, ok := tx.LookupURL(d.URL); !ok || id != d.ID {
				rep.problem("two ids", "document %d has URL %s, which maps to id %d (found %v)", d.ID, d.URL, id, ok)
			}
			if d.State == linkgraph.StateFetched && d.Visits > 0 && !answered[d.URL] {
				rep.problem("fetched once", "document %d (%s) is fetched but no fetch log line has a response for it", d.ID, d.URL)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read documents: %w", err)
		}
		for _, dir := range dirs {
			for _, e := range entries[dir] {
				id, ok := tx.LookupURL(e.URL)
				if !ok || id != e.DocID {
					rep.problem("two ids", "batch %s: %s has id %d, graph.db says %d (found %v)", filepath.Base(dir), e.URL, e.DocID, id, ok)
					continue
				}
				if harvested[dir] {
					continue
				}
				// Not harvested yet: the URL must still be waiting.
				d, err := tx.Doc(id)
				if err != nil {
					return fmt.Errorf("read document %d: %w", id, err)
				}
				if d.State != linkgraph.StateScheduled {
					rep.problem("still pending", "batch %s is not harvested, but %s is %s", filepath.Base(dir), e.URL, d.State)
				}
			}
		}
		return nil
	})
}

// checkText reads back the text of every page fetched as HTML with
// status 200 in a gathered batch.
func checkText(ctx context.Context, r *Runner, dirs []string, fetched []fetchedPage, opts CheckOptions, rep *Report) error {
	gathered := map[string]bool{}
	for _, dir := range dirs {
		gathered[dir] = exists(filepath.Join(dir, collection.MarkerFile(collection.StageGathered)))
	}
	dir := filepath.Join(r.Collection, collection.TextDir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if len(fetched) > 0 {
			rep.problem("text", "no text store at %s", dir)
		}
		return nil
	}
	st, err := textstore.Open(dir)
	if err != nil {
		rep.problem("text", "%v", err)
		return nil
	}
	defer st.Close()
	type page struct{ url, text string }
	var html []page
	for _, f := range fetched {
		if !gathered[f.batch] || f.rec.Status != 200 || f.rec.MIME != "text/html" || f.rec.Err != "" {
			continue
		}
		// Retrievable: the store has an entry. Its text may be empty (a
		// frameset, a page of markup only).
		text, _, err := st.Get(f.rec.URL)
		switch {
		case err != nil:
			rep.problem("text", "%s: %v", f.rec.URL, err)
		case text == "":
			rep.EmptyTexts++
		default:
			html = append(html, page{f.rec.URL, text})
		}
		rep.Texts++
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 7))
	rng.Shuffle(len(html), func(i, j int) { html[i], html[j] = html[j], html[i] })
	for _, p := range html[:min(opts.CatSample, len(html))] {
		res, err := r.Run(ctx, "gatherer", "cat", "--collection", r.Collection, p.url)
		if err != nil {
			return err
		}
		rep.CatChecked++
		if res.Code != exitOK || strings.TrimSpace(res.Stdout) != strings.TrimSpace(p.text) {
			rep.problem("gatherer cat", "%s: %s: %d bytes printed, the store holds %d", p.url, res, len(res.Stdout), len(p.text))
		}
	}
	return nil
}
