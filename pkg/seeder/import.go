package seeder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
)

// Seed choices of ImportOptions.Seeds (`seeder import --seeds`).
const (
	// ImportStarts takes every page of the old crawl at depth 0 that
	// robots.txt did not exclude: its seeds and the entry page of every
	// site it found.
	ImportStarts = "starts"
	// ImportFetched takes every page the old crawl fetched with a 2xx
	// status.
	ImportFetched = "fetched"
)

// DefaultImportTimeout is how long Import waits for either graph.db when
// ImportOptions.GraphTimeout is 0.
const DefaultImportTimeout = 10 * time.Second

// Errors of Import; test with errors.Is.
var (
	// ErrImportSelf means the old collection is the collection itself.
	ErrImportSelf = errors.New("is this collection")
	// ErrImportSeeds means ImportOptions.Seeds is neither ImportStarts
	// nor ImportFetched.
	ErrImportSeeds = errors.New("unknown seed choice")
)

// ImportOptions are the inputs of Import.
type ImportOptions struct {
	// Collection is the new collection (made with Init) that receives
	// the old crawl's sites and seeds.
	Collection *collection.Collection
	// Config is the new collection's configuration: its scope decides
	// which sites and seeds are taken.
	Config config.Config
	// From is the directory of the previous collection, read only.
	From string
	// Seeds is ImportStarts (also when empty) or ImportFetched.
	Seeds string
	// SeedsOut, when not empty, is a file that also receives the seed
	// list, one URL a line, written atomically.
	SeedsOut string
	// GraphTimeout is how long to wait for either graph.db; 0 means
	// DefaultImportTimeout.
	GraphTimeout time.Duration
	// Problems receives the seed lines kept out, as AddSeeds reports
	// them; nil discards them.
	Problems io.Writer
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// ImportSummary is what Import did.
type ImportSummary struct {
	From       string       `json:"from"`       // the previous collection's directory
	Sites      int          `json:"sites"`      // sites of From in scope, imported
	NewSites   int          `json:"newSites"`   // of those, sites this collection did not know
	Robots     int          `json:"robots"`     // robots.txt copies carried over
	OutOfScope int          `json:"outOfScope"` // sites of From out of this collection's scope
	Seeds      *SeedSummary `json:"seeds"`      // the seed list, added as AddSeeds adds it
}

// WriteText prints the summary for people: a line for the sites, then the
// seeds' line of SeedSummary.WriteText.
func (s *ImportSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "sites: %d of %s imported (%d new here, %d robots.txt copies), %d out of scope\n",
		s.Sites, s.From, s.NewSites, s.Robots, s.OutOfScope)
	if s.Seeds != nil {
		s.Seeds.WriteText(w)
	}
}

// Import starts a recrawl from a previous collection (docs/operations.md,
// "Recrawls"). It reads From's graph.db read-only and, under this
// collection's seeder lock and in one transaction of its graph.db, copies
// every site of From that is in scope with its robots.txt copy and server
// estimates (a site already known here keeps its id, its page count and
// its own robots.txt copy if that is newer). Then it adds the seeds chosen
// by opts.Seeds as AddSeeds adds a list: normalised, checked against the
// scope, excluded at once where the carried robots.txt forbids them.
// Importing twice adds nothing the second time.
//
// A graph.db held by another process past the timeout is an error that
// matches linkgraph.ErrBusy; a busy seeder lock matches
// collection.ErrLocked; From naming this collection is ErrImportSelf.
func Import(ctx context.Context, opts ImportOptions) (*ImportSummary, error) {
	mode := opts.Seeds
	if mode == "" {
		mode = ImportStarts
	}
	if mode != ImportStarts && mode != ImportFetched {
		return nil, fmt.Errorf("import: %w %q: want %s or %s", ErrImportSeeds, mode, ImportStarts, ImportFetched)
	}
	if opts.GraphTimeout <= 0 {
		opts.GraphTimeout = DefaultImportTimeout
	}
	old, err := collection.Open(opts.From)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if sameDir(old.Dir, opts.Collection.Dir) {
		return nil, fmt.Errorf("import: --from %s %w", old.Dir, ErrImportSelf)
	}
	s := &ImportSummary{From: old.Dir}
	seeds, err := importSites(ctx, opts, old, mode, s)
	if err != nil {
		return nil, err
	}
	if opts.SeedsOut != "" {
		if err := collection.WriteFileAtomic(opts.SeedsOut, []byte(strings.Join(seeds, "\n")+"\n")); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	problems := opts.Problems
	if problems == nil {
		problems = io.Discard
	}
	name := filepath.Join(old.Dir, collection.GraphFile)
	s.Seeds, err = AddSeeds(SeedOptions{Collection: opts.Collection, Config: opts.Config, GraphTimeout: opts.GraphTimeout, Logger: opts.Logger},
		strings.NewReader(strings.Join(seeds, "\n")), name, problems)
	if err != nil {
		return nil, fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	return s, nil
}

// sameDir tells whether two paths name the same directory.
func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// importSites copies OLD's sites (in scope) with their robots.txt copies
// into the collection's graph.db, in one transaction under the seeder's
// lock, and returns the seed URLs chosen by mode. ctx is checked between
// sites: a cancelled import rolls the transaction back.
func importSites(ctx context.Context, opts ImportOptions, old *collection.Collection, mode string, s *ImportSummary) ([]string, error) {
	col := opts.Collection
	lock, err := col.Lock(LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	og, err := linkgraph.Open(old.GraphPath(), true, opts.GraphTimeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, fmt.Errorf("import from %s: %w: wait until its manager or seeder is done", old.Dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	defer og.Close()
	ng, err := linkgraph.Open(col.GraphPath(), false, opts.GraphTimeout)
	if err != nil {
		return nil, fmt.Errorf("import into %s: %w", col.Dir, err)
	}
	defer ng.Close()
	sc, err := scope.Compile(opts.Config.Scope)
	if err != nil {
		return nil, fmt.Errorf("import into %s: %w", col.Dir, err)
	}
	var seeds []string
	err = og.View(func(otx *linkgraph.Tx) error {
		err := ng.Update(func(ntx *linkgraph.Tx) error {
			return otx.ForEachSite(func(site *linkgraph.Site) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				if sc.Check(site.Key+"/") != nil {
					s.OutOfScope++
					return nil
				}
				return importSite(ntx, site, s)
			})
		})
		if err != nil {
			return err
		}
		return otx.ForEachDoc(func(d *linkgraph.Doc) error {
			if pickSeed(d, mode) {
				seeds = append(seeds, d.URL)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	logger(opts.Logger).Debug("sites imported", "from", old.Dir, "sites", s.Sites, "new", s.NewSites, "seeds", len(seeds))
	return seeds, nil
}

// importSite adds one site of the old crawl: the whole record (robots.txt
// copy, server estimates), keeping this collection's id and page count,
// and its own robots.txt copy if that is newer.
func importSite(tx *linkgraph.Tx, old *linkgraph.Site, s *ImportSummary) error {
	id, created, err := tx.AddSite(old.Key)
	if err != nil {
		return err
	}
	cur, err := tx.Site(id)
	if err != nil {
		return err
	}
	s.Sites++
	if created {
		s.NewSites++
	}
	if !created && !cur.RobotsFetched.IsZero() && !cur.RobotsFetched.Before(old.RobotsFetched) {
		return nil
	}
	rec := *old
	rec.ID, rec.Pages = cur.ID, cur.Pages
	if !rec.RobotsFetched.IsZero() {
		s.Robots++
	}
	return tx.PutSite(&rec)
}

// pickSeed tells whether a page of the old crawl becomes a seed.
func pickSeed(d *linkgraph.Doc, mode string) bool {
	if mode == ImportFetched {
		return d.State == linkgraph.StateFetched && d.Status >= 200 && d.Status < 300
	}
	return d.Depth == 0 && d.State != linkgraph.StateExcluded
}
