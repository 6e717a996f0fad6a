// Package status tells where a collection stands, in one screen: the
// batches and the stage each has reached, the stages running now, the
// pages of graph.db by state, the last cron run and the last errors of
// the logs. It only reads: graph.db is opened read-only with a short
// timeout, and running stages are found from the kernel's lock table
// (/proc/locks) without touching their locks.
package status

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

// Defaults of Options.
const (
	// DefaultGraphTimeout is how long Collect waits for graph.db while a
	// manager or seeder holds it for writing.
	DefaultGraphTimeout = 2 * time.Second
	// DefaultErrors is how many error lines of the logs Collect keeps.
	DefaultErrors = 5
	// DefaultInProgress is how many unfinished batches Collect lists.
	DefaultInProgress = 5
)

// CronLockName is the lock scripts/cron.sh holds in the collection's
// locks/ directory while it runs.
const CronLockName = collection.CronLock

// CronLogFile is the log scripts/cron.sh writes in the collection's logs/.
const CronLogFile = "cron.log"

// Options tune Collect; zero fields take the defaults.
type Options struct {
	GraphTimeout time.Duration
	Errors       int
	InProgress   int
	// NoGraph skips graph.db (it reads every document record, which takes
	// time on a large collection).
	NoGraph bool
	// Crawl is the collection's crawl settings, for its partition
	// (crawl.partition, crawl.partition_peers); nil: not shown.
	Crawl *config.Crawl
	// Now is the time of the status (site graph ages); zero: time.Now.
	Now time.Time
}

// Status is where a collection stands.
type Status struct {
	Collection string `json:"collection"`
	// Batches is the number of batches with a batch file.
	Batches int `json:"batches"`
	// Last is the newest batch; nil when there is none.
	Last *Batch `json:"last,omitempty"`
	// InProgress are the oldest batches not seeded yet (at most
	// Options.InProgress), Last included if it is one.
	InProgress []Batch `json:"inProgress"`
	// Running are the stage locks held by a live process now.
	Running []Holder `json:"running"`
	// Pages counts graph.db's documents; nil if graph.db was not read.
	Pages *Pages `json:"pages,omitempty"`
	// GraphError says why graph.db could not be read (busy, missing).
	GraphError string `json:"graphError,omitempty"`
	// graphErr is that error, for Damaged.
	graphErr error
	// Cron is the last run of scripts/cron.sh found in logs/cron.log.
	Cron *CronRun `json:"cron,omitempty"`
	// Errors are the last error lines of the logs, oldest first.
	Errors []LogLine `json:"errors"`
	// Partition is where a partition of a web split over K collections
	// stands in the exchange; nil for a whole-web collection.
	Partition *Partition `json:"partition,omitempty"`
}

// Batch is one batch directory and how far it has gone.
type Batch struct {
	ID int `json:"id"`
	// Stage is the last stage done: managed, harvested, gathered or seeded.
	Stage collection.Stage `json:"stage"`
	// Next is the program that runs next on the batch ("" when seeded).
	Next string `json:"next,omitempty"`
	// Partial lists the work-in-progress directories present
	// (harvest.partial, parsed.partial, a shard's
	// harvest-shard-I-of-N.partial): a stage is running or was
	// interrupted there.
	Partial []string `json:"partial,omitempty"`
	// Stopped is what a harvester run that stopped before the batch was
	// done recorded in its partial directory (stopped.json): an
	// interruption or a network outage, which a rerun resumes.
	Stopped *Stopped `json:"stopped,omitempty"`
	// Progress is what a harvester working on the batch last wrote to
	// its partial directory (progress.json, every 5 s): a harvest
	// running (or killed: see Running) there.
	Progress *fetchlog.Progress `json:"progress,omitempty"`
	// ShardsDone lists the shard markers of a batch harvested in shards
	// that is not merged yet (harvested-shard-I-of-N.done).
	ShardsDone []string `json:"shardsDone,omitempty"`
	// Created is the batch file's creation time (its header).
	Created time.Time `json:"created,omitzero"`
	// Harvest is the harvester's summary, when the batch is harvested.
	Harvest *Harvest `json:"harvest,omitempty"`
}

// Stopped is a harvester's stopped.json (docs/format/harvest.md).
type Stopped struct {
	// Dir is the partial directory that holds it.
	Dir string `json:"dir"`
	// Why is "interrupted" or "network-down".
	Why   string    `json:"why"`
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

// stoppedFile is the harvester's harvester.StoppedFile.
const stoppedFile = "stopped.json"

// Harvest is the part of a harvested.done marker status shows
// (docs/format/harvest.md, "harvested.done").
type Harvest struct {
	URLs           int            `json:"urls"`
	Fetched        int            `json:"fetched"`
	Bytes          int64          `json:"bytes"`
	RobotsExcluded int            `json:"robots_excluded"`
	Errors         map[string]int `json:"errors"`
	ElapsedSeconds float64        `json:"elapsed_seconds"`
	PagesPerSecond float64        `json:"pages_per_second"`
	Finished       time.Time      `json:"finished"`
}

// Holder is a lock held by a live process.
type Holder struct {
	// Name is the lock's name: a stage (harvester, …), "cron", or
	// "harvester 000004" for a batch directory's own lock.
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// Pages counts documents by state.
type Pages struct {
	Known     int `json:"known"`
	Pending   int `json:"pending"`
	Scheduled int `json:"scheduled"`
	Fetched   int `json:"fetched"`
	Failed    int `json:"failed"`
	Excluded  int `json:"excluded"`
	Sites     int `json:"sites"`
}

// Collect reads the collection's state.
func Collect(col *collection.Collection, opts Options) (*Status, error) {
	if opts.GraphTimeout <= 0 {
		opts.GraphTimeout = DefaultGraphTimeout
	}
	if opts.Errors <= 0 {
		opts.Errors = DefaultErrors
	}
	if opts.InProgress <= 0 {
		opts.InProgress = DefaultInProgress
	}
	s := &Status{Collection: col.Dir, InProgress: []Batch{}, Running: []Holder{}, Errors: []LogLine{}}
	ids, err := col.BatchIDs()
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", col.Dir, err)
	}
	s.Batches = len(ids)
	locks := readLocks()
	for _, id := range ids {
		b := col.Batch(id)
		if b.Done(collection.StageSeeded) && id != ids[len(ids)-1] {
			continue
		}
		info := readBatch(b)
		if id == ids[len(ids)-1] {
			s.Last = &info
		}
		if info.Stage != collection.StageSeeded && len(s.InProgress) < opts.InProgress {
			s.InProgress = append(s.InProgress, info)
		}
		if !b.Done(collection.StageHarvested) {
			// A harvester working on a bare batch directory (--batch-dir,
			// or a shard) locks a file in it: harvester.lock,
			// harvester-shard-I-of-N.lock.
			held, _ := filepath.Glob(filepath.Join(b.Dir, "*"+collection.LockSuffix))
			sort.Strings(held)
			for _, f := range held {
				if pid, ok := locks.holder(f); ok {
					s.Running = append(s.Running, Holder{Name: strings.TrimSuffix(filepath.Base(f), collection.LockSuffix) + " " + b.Name(), PID: pid})
				}
			}
		}
	}
	lockFiles, _ := filepath.Glob(filepath.Join(col.Dir, collection.LocksDir, "*"+collection.LockSuffix))
	sort.Strings(lockFiles)
	for _, f := range lockFiles {
		if pid, ok := locks.holder(f); ok {
			s.Running = append(s.Running, Holder{Name: strings.TrimSuffix(filepath.Base(f), collection.LockSuffix), PID: pid})
		}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	var partitionTx func(tx *linkgraph.Tx) error
	if opts.Crawl != nil && !opts.Crawl.PartitionOf().Whole() {
		partitionTx = func(tx *linkgraph.Tx) error {
			var err error
			s.Partition, err = ReadPartition(col.Dir, *opts.Crawl, tx, opts.Now)
			return err
		}
	}
	if !opts.NoGraph {
		s.Pages, err = countPages(col, opts.GraphTimeout, partitionTx)
		if err != nil {
			s.GraphError, s.graphErr = err.Error(), err
		}
	}
	if partitionTx != nil && s.Partition == nil {
		// graph.db not read: the files and site graphs only.
		if s.Partition, err = ReadPartition(col.Dir, *opts.Crawl, nil, opts.Now); err != nil {
			return nil, fmt.Errorf("status of %s: %w", col.Dir, err)
		}
	}
	s.Cron, s.Errors = scanLogs(col.LogsPath(), opts.Errors)
	for _, h := range s.Running {
		if s.Cron != nil && h.Name == CronLockName && h.PID == s.Cron.PID {
			s.Cron.Running = true
		}
	}
	return s, nil
}

// Damaged returns the error that found graph.db damaged
// (collection.ErrDamaged: the status is shown, and the command then exits
// with the damaged-file code), nil otherwise (a busy or missing graph.db
// is only shown).
func (s *Status) Damaged() error {
	if errors.Is(s.graphErr, collection.ErrDamaged) {
		return s.graphErr
	}
	return nil
}

// stageNext names the program that takes a batch after stage st.
func stageNext(st collection.Stage) string {
	switch st {
	case collection.StageManaged:
		return "harvester"
	case collection.StageHarvested:
		return "gatherer"
	case collection.StageGathered:
		return "seeder"
	}
	return ""
}

// readBatch reads a batch's markers, partial directories and header.
func readBatch(b *collection.Batch) Batch {
	info := Batch{ID: b.ID, Stage: collection.StageManaged}
	for _, st := range []collection.Stage{collection.StageHarvested, collection.StageGathered, collection.StageSeeded} {
		if b.Done(st) {
			info.Stage = st
		}
	}
	info.Next = stageNext(info.Stage)
	// harvest.partial, parsed.partial, harvest-shard-I-of-N.partial …
	partial, _ := filepath.Glob(filepath.Join(b.Dir, "*"+collection.PartialSuffix))
	sort.Strings(partial)
	for _, p := range partial {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			info.Partial = append(info.Partial, filepath.Base(p))
			var st Stopped
			if data, err := os.ReadFile(filepath.Join(p, stoppedFile)); err == nil && json.Unmarshal(data, &st) == nil && st.Why != "" {
				st.Dir = filepath.Base(p)
				info.Stopped = &st
			}
			var pr fetchlog.Progress
			if data, err := os.ReadFile(filepath.Join(p, fetchlog.ProgressFile)); err == nil && json.Unmarshal(data, &pr) == nil && pr.Total > 0 {
				info.Progress = &pr
			}
		}
	}
	if !b.Done(collection.StageHarvested) {
		done, _ := filepath.Glob(filepath.Join(b.Dir, string(collection.StageHarvested)+"-shard-*"+collection.MarkerSuffix))
		sort.Strings(done)
		for _, d := range done {
			info.ShardsDone = append(info.ShardsDone, filepath.Base(d))
		}
	}
	info.Created = batchCreated(b.File())
	if b.Done(collection.StageHarvested) {
		var h Harvest
		if err := b.Summary(collection.StageHarvested, &h); err == nil {
			info.Harvest = &h
		}
	}
	return info
}

// batchCreated reads the "# created:" line of a batch file's header
// (docs/format/batch.md) without reading the entries.
func batchCreated(path string) time.Time {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if v, ok := strings.CutPrefix(line, "# created:"); ok {
			t, _ := time.Parse(time.RFC3339, strings.TrimSpace(v))
			return t
		}
	}
	return time.Time{}
}

// countPages counts graph.db's documents by state, read-only; also, if
// not nil, runs in the same transaction.
func countPages(col *collection.Collection, timeout time.Duration, also func(tx *linkgraph.Tx) error) (*Pages, error) {
	if _, err := os.Stat(col.GraphPath()); err != nil {
		return nil, fmt.Errorf("no graph.db: %w", err)
	}
	g, err := linkgraph.Open(col.GraphPath(), true, timeout)
	if errors.Is(err, linkgraph.ErrBusy) {
		return nil, fmt.Errorf("graph.db is being written (a manager or seeder runs); try again when it is done")
	}
	if err != nil {
		return nil, err
	}
	defer g.Close()
	p := &Pages{}
	err = g.View(func(tx *linkgraph.Tx) error {
		if err := tx.ForEachDoc(func(d *linkgraph.Doc) error {
			p.Known++
			switch d.State {
			case linkgraph.StatePending:
				p.Pending++
			case linkgraph.StateScheduled:
				p.Scheduled++
			case linkgraph.StateFetched:
				p.Fetched++
			case linkgraph.StateFailed:
				p.Failed++
			case linkgraph.StateExcluded:
				p.Excluded++
			}
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ForEachSite(func(*linkgraph.Site) error {
			p.Sites++
			return nil
		}); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read graph.db: %w", err)
	}
	return p, nil
}
