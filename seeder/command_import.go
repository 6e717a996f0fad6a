package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/scope"
	"github.com/wirecrawl/wire/pkg/seeder"
)

// Seed choices of `seeder import --seeds`.
const (
	importStarts  = "starts"
	importFetched = "fetched"
)

// importTimeout is how long import waits for either graph.db.
const importTimeout = 10 * time.Second

func importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "start a recrawl from a previous collection: its sites, robots.txt copies and seeds",
		Description: `Carries over into this collection (made with 'seeder init') what a previous
crawl of the same country learnt, read from OLD's graph.db (read-only):

  1. the site list: every site of OLD that is in this collection's scope,
     with its robots.txt copy (status, body, fetch time) and the server
     estimates the harvester measured; a site this collection already
     knows keeps its own robots.txt copy if it is newer;
  2. the seeds: with --seeds starts (the default) every page of OLD at
     depth 0 that robots.txt did not exclude: OLD's seeds and the entry
     page of every site it found; with --seeds fetched every page OLD
     fetched with a 2xx status (more seeds, but each becomes a depth-0
     starting point, so the depth limits count from it). They are added
     as 'seeder add' adds a list: normalised, checked against this
     collection's scope, and excluded at once where the carried
     robots.txt forbids them.

Running it twice adds nothing the second time. The historical PageRank
(manager.strategy = historical) is carried by the manager's own import;
docs/operations.md, "Recrawls", gives every step.

` + command.ExitCodesHelp,
		Flags: command.WithSettings(
			&cli.StringFlag{Name: "from", Usage: "the previous collection `OLD` (required)"},
			&cli.StringFlag{Name: "seeds", Value: importStarts, Usage: "which pages of OLD become seeds: starts or fetched"},
			&cli.StringFlag{Name: "seeds-out", Usage: "also write the seed list to `FILE`"},
		),
		Action: runImport,
	}
}

// importSummary is what import did.
type importSummary struct {
	sites, newSites, robots, outOfScope int
	seeds                               *seeder.SeedSummary
}

func runImport(c *cli.Context) error {
	if c.String("from") == "" {
		return command.Usage("import needs --from OLD, the previous collection")
	}
	mode := c.String("seeds")
	if mode != importStarts && mode != importFetched {
		return command.Usage("--seeds wants %s or %s, got %q", importStarts, importFetched, mode)
	}
	col, cfg, err := command.Open(c)
	if err != nil {
		return err
	}
	old, err := collection.Open(c.String("from"))
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if same(old.Dir, col.Dir) {
		return command.Usage("import: --from %s is this collection", old.Dir)
	}
	s := &importSummary{}
	seeds, err := importSites(col, old, cfg, mode, s)
	if err != nil {
		return err
	}
	if out := c.String("seeds-out"); out != "" {
		if err := collection.WriteFileAtomic(out, []byte(strings.Join(seeds, "\n")+"\n")); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	name := filepath.Join(old.Dir, collection.GraphFile)
	s.seeds, err = seeder.AddSeeds(seeder.SeedOptions{Collection: col, Config: cfg, GraphTimeout: importTimeout, Logger: command.Logger(c)},
		strings.NewReader(strings.Join(seeds, "\n")), name, c.App.ErrWriter)
	if err != nil {
		return fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	fmt.Fprintf(c.App.Writer, "sites: %d of %s imported (%d new here, %d robots.txt copies), %d out of scope\n",
		s.sites, old.Dir, s.newSites, s.robots, s.outOfScope)
	s.seeds.WriteText(c.App.Writer)
	return nil
}

// same tells whether two paths name the same directory.
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// importSites copies OLD's sites (in scope) with their robots.txt copies
// into the collection's graph.db, in one transaction under the seeder's
// lock, and returns the seed URLs chosen by mode.
func importSites(col, old *collection.Collection, cfg config.Config, mode string, s *importSummary) ([]string, error) {
	lock, err := col.Lock(seeder.LockName)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	og, err := linkgraph.Open(old.GraphPath(), true, importTimeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, fmt.Errorf("import from %s: %w: wait until its manager or seeder is done", old.Dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("import from %s: %w", old.Dir, err)
	}
	defer og.Close()
	ng, err := linkgraph.Open(col.GraphPath(), false, importTimeout)
	if err != nil {
		return nil, fmt.Errorf("import into %s: %w", col.Dir, err)
	}
	defer ng.Close()
	sc, err := scope.Compile(cfg.Scope)
	if err != nil {
		return nil, fmt.Errorf("import into %s: %w", col.Dir, err)
	}
	var seeds []string
	err = og.View(func(otx *linkgraph.Tx) error {
		err := ng.Update(func(ntx *linkgraph.Tx) error {
			return otx.ForEachSite(func(site *linkgraph.Site) error {
				if sc.Check(site.Key+"/") != nil {
					s.outOfScope++
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
	return seeds, nil
}

// importSite adds one site of the old crawl: the whole record (robots.txt
// copy, server estimates), keeping this collection's id and page count,
// and its own robots.txt copy if that is newer.
func importSite(tx *linkgraph.Tx, old *linkgraph.Site, s *importSummary) error {
	id, created, err := tx.AddSite(old.Key)
	if err != nil {
		return err
	}
	cur, err := tx.Site(id)
	if err != nil {
		return err
	}
	s.sites++
	if created {
		s.newSites++
	}
	if !created && !cur.RobotsFetched.IsZero() && !cur.RobotsFetched.Before(old.RobotsFetched) {
		return nil
	}
	rec := *old
	rec.ID, rec.Pages = cur.ID, cur.Pages
	if !rec.RobotsFetched.IsZero() {
		s.robots++
	}
	return tx.PutSite(&rec)
}

// pickSeed tells whether a page of the old crawl becomes a seed.
func pickSeed(d *linkgraph.Doc, mode string) bool {
	if mode == importFetched {
		return d.State == linkgraph.StateFetched && d.Status >= 200 && d.Status < 300
	}
	return d.Depth == 0 && d.State != linkgraph.StateExcluded
}
