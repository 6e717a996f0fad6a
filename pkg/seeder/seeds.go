package seeder

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// SeedOptions are the inputs of AddSeeds.
type SeedOptions struct {
	Collection *collection.Collection
	Config     config.Config
	// GraphTimeout is how long to wait for graph.db; 0 means
	// DefaultGraphTimeout.
	GraphTimeout time.Duration
	Logger       *slog.Logger
}

// SeedSummary is what AddSeeds did.
type SeedSummary struct {
	Lines    int            `json:"lines"`    // URL lines read (not blank, not comments)
	Added    int            `json:"added"`    // new URLs
	Known    int            `json:"known"`    // URLs already in graph.db (or twice in the list)
	Excluded int            `json:"excluded"` // new URLs that known robots.txt rules forbid (added as excluded)
	NewSites int            `json:"newSites"` // sites given an id
	Rejected map[string]int `json:"rejected"` // lines kept out, by reason
	// OtherPartitions counts the URLs of other partitions of the web
	// (crawl.partition): each partition is given the whole seed list and
	// keeps its own.
	OtherPartitions int `json:"otherPartitions,omitempty"`
}

// WriteText prints the summary for people.
func (s *SeedSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "seeds: %d urls read: %d added (%d excluded by robots.txt), %d already known, %d new sites; rejected %s",
		s.Lines, s.Added, s.Excluded, s.Known, s.NewSites, formatCounts(s.Rejected))
	if s.OtherPartitions > 0 {
		fmt.Fprintf(w, "; %d of other partitions", s.OtherPartitions)
	}
	fmt.Fprintln(w)
}

// updateWithIntake runs fn in one graph.db update under the seeder's
// lock, with an intake of batch 0 (URLs given by hand: seeds, sitemaps):
// what `seeder add` does around its URLs. Then, if added() says fn added
// documents, it brings the backup up to date (new documents take ids a
// restore would not give again); a failed backup is only logged, naming
// what stays added.
func updateWithIntake(opts SeedOptions, what string, fn func(tx *linkgraph.Tx, in *intake) error, added func() bool) error {
	lock, err := opts.Collection.Lock(LockName)
	if err != nil {
		return err
	}
	defer lock.Release()
	g, err := openGraph(opts.Collection, false, opts.GraphTimeout)
	if err != nil {
		return err
	}
	defer g.Close()
	res, err := newResolver(opts.Config)
	if err != nil {
		return err
	}
	if res.loc, err = newLocator(opts.Config); err != nil {
		return err
	}
	defer res.loc.close()
	err = g.Update(func(tx *linkgraph.Tx) error {
		return fn(tx, newIntake(tx, opts.Config, 0, res, filepath.Join(opts.Collection.Dir, FrontierDir)))
	})
	if err != nil {
		return err
	}
	if added() && opts.Config.Seeder.BackupEvery > 0 {
		if err := Backup(g, opts.Collection); err != nil {
			logger(opts.Logger).Warn("backup of graph.db failed; the "+what+" added", "err", err)
		}
	}
	return nil
}

// AddSeeds reads a seed list from r (one URL per line; blank lines and
// lines starting with '#' are ignored; spaces around a URL are trimmed)
// and adds every new in-scope URL to graph.db at depth 0, pending, with
// its site. A URL already known becomes depth 0 (it is a starting point).
// Each line kept out is reported on problems as "NAME:LINE: reason: "url""
// (the URL quoted and cut by excerpt.Quote)
// and does not stop the others. The whole list is read before graph.db is
// touched: if r fails, nothing is added.
func AddSeeds(opts SeedOptions, r io.Reader, name string, problems io.Writer) (*SeedSummary, error) {
	lines, err := readSeedLines(r, name)
	if err != nil {
		return nil, err
	}
	var s *SeedSummary
	err = updateWithIntake(opts, "seeds are", func(tx *linkgraph.Tx, in *intake) error {
		s = &SeedSummary{Lines: len(lines), Rejected: map[string]int{}}
		if in.loc != nil {
			// The names' lookups at once (route waits for each).
			for _, l := range lines {
				if u, rej := in.resolve(l.url); rej == nil {
					in.loc.start(urlnorm.Host(u))
				}
			}
		}
		for _, l := range lines {
			u, rej := in.resolve(l.url)
			if rej == nil {
				to, err := in.route(u)
				if err != nil {
					return err
				}
				if to != 0 {
					s.OtherPartitions++
					continue
				}
				var created bool
				var id uint64
				id, created, rej, err = in.take(u, 0, true)
				if err != nil {
					return err
				}
				if rej == nil && !created {
					s.Known++
					if err := makeStart(tx, id); err != nil {
						return err
					}
					continue
				}
			}
			if rej != nil {
				s.Rejected[rej.reason]++
				fmt.Fprintf(problems, "%s:%d: %s: %s\n", name, l.n, rej.reason, excerpt.Quote(l.url))
				continue
			}
			s.Added++
		}
		s.Excluded, s.NewSites = in.counts.newExcluded, in.counts.newSites
		return in.flushSites()
	}, func() bool { return s.Added > 0 })
	if err != nil {
		return nil, fmt.Errorf("add seeds %s: %w", name, err)
	}
	logger(opts.Logger).Debug("seeds added", "file", name, "added", s.Added, "known", s.Known)
	return s, nil
}

// seedLine is one URL line of a seed list.
type seedLine struct {
	n   int    // line number, from 1
	url string // the line without the spaces around it
}

// readSeedLines reads a seed list: one URL per line; a UTF-8 byte order
// mark before the first line, blank lines and lines whose first non-space
// character is '#' are skipped, and spaces around a URL are trimmed (a
// "\r\n" line end included). The last line needs no newline. name is for
// errors; on a read error no line is returned.
func readSeedLines(r io.Reader, name string) ([]seedLine, error) {
	var lines []seedLine
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read seeds %s: line %d: %w", name, n, err)
		}
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if t := strings.TrimSpace(text); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, seedLine{n, t})
		}
		if err == io.EOF {
			return lines, nil
		}
	}
}

// makeStart gives a known URL depth 0.
func makeStart(tx *linkgraph.Tx, id uint64) error {
	d, err := tx.Doc(id)
	if err != nil || d.Depth == 0 {
		return err
	}
	d.Depth = 0
	return tx.PutDoc(d)
}
