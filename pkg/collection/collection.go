// Package collection owns the collection directory that the four stages
// share: its layout, its format version, the per-stage locks, the batch
// directories with their stage markers, and atomic file writing.
//
// The layout is documented in docs/format/collection.md:
//
//	DIR/
//	  FORMAT              "wire-collection 1"
//	  wire.toml           config
//	  graph.db            link graph (bbolt; manager and seeder only)
//	  text/               text store (gatherer)
//	  batches/000001/     one directory per batch
//	    batch.tsv         written by the manager
//	    harvest/          written by the harvester
//	    harvested.done    marker with the harvester's summary (JSON)
//	    parsed/           written by the gatherer
//	    gathered.done     marker with the gatherer's summary
//	    seeded.done       marker with the seeder's summary
//	  logs/               stage logs
//	  locks/              one lock file per stage
//
// Every name of a lock, marker or work directory (the harvester shards'
// included) is spelled here or in names.go, and nowhere else.
package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// FormatVersion is the version of the collection layout this code writes
// and reads.
const FormatVersion = 1

// Names of the files and directories of a collection.
const (
	FormatFile = "FORMAT"
	ConfigFile = "wire.toml"
	GraphFile  = "graph.db"
	TextDir    = "text"
	BatchesDir = "batches"
	LogsDir    = "logs"
	LocksDir   = "locks"
	BatchFile  = "batch.tsv"
	// BatchRobotsFile and BatchServersFile sit beside batch.tsv when the
	// manager has fresh robots.txt copies or server estimates for the
	// batch's sites (fetchlog.Robots and fetchlog.Server lines).
	BatchRobotsFile  = "robots.jsonl"
	BatchServersFile = "servers.jsonl"
	HarvestDir       = "harvest"
	ParsedDir        = "parsed"
	formatMagic      = "wire-collection"
)

// Stage names a step of the crawl cycle; each has a marker file in the
// batch directory once it has finished that batch.
type Stage string

// The stages, in the order a batch goes through them.
const (
	StageManaged   Stage = "managed" // batch.tsv exists
	StageHarvested Stage = "harvested"
	StageGathered  Stage = "gathered"
	StageSeeded    Stage = "seeded"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrNotCollection means the directory has no FORMAT file.
	ErrNotCollection = errors.New("not a collection")
	// ErrVersion means the collection was written by an incompatible version.
	ErrVersion = errors.New("unsupported collection format version")
	// ErrExists means a collection already exists where one was to be created.
	ErrExists = errors.New("collection already exists")
	// ErrLocked means another process holds the lock of a stage.
	ErrLocked = errors.New("locked by another process")
	// ErrDamaged means a file of the collection is damaged (graph.db, a
	// WARC file): the error names the file, what is wrong and the repair.
	ErrDamaged = errors.New("damaged")
	// ErrNothingToDo means no batch is ready for a stage.
	ErrNothingToDo = errors.New("nothing to do")
	// ErrNotReady means a batch has not been through the previous stage.
	ErrNotReady = errors.New("batch not ready")
	// ErrAlreadyDone means a batch has already been through a stage.
	ErrAlreadyDone = errors.New("batch already done")
	// ErrNoBatch means a batch directory does not exist.
	ErrNoBatch = errors.New("no such batch")
)

// Collection is an opened collection directory.
type Collection struct {
	// Dir is the collection's directory.
	Dir string
}

// Create makes a new collection in dir (which may exist but must not hold a
// collection) and writes config as its wire.toml.
func Create(dir string, config []byte) (*Collection, error) {
	if _, err := os.Stat(filepath.Join(dir, FormatFile)); err == nil {
		return nil, fmt.Errorf("create collection %s: %w", dir, ErrExists)
	}
	for _, sub := range []string{"", TextDir, BatchesDir, LogsDir, LocksDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("create collection %s: %w", dir, err)
		}
	}
	c := &Collection{Dir: dir}
	if _, err := os.Stat(c.ConfigPath()); errors.Is(err, os.ErrNotExist) {
		if err := WriteFileAtomic(c.ConfigPath(), config); err != nil {
			return nil, fmt.Errorf("create collection %s: %w", dir, err)
		}
	}
	// FORMAT last: a crash before it leaves a directory that is not yet a
	// collection and that Create can finish.
	if err := WriteFileAtomic(filepath.Join(dir, FormatFile), []byte(fmt.Sprintf("%s %d\n", formatMagic, FormatVersion))); err != nil {
		return nil, fmt.Errorf("create collection %s: %w", dir, err)
	}
	return c, nil
}

// Open checks that dir is a collection of a supported version.
func Open(dir string) (*Collection, error) {
	data, err := os.ReadFile(filepath.Join(dir, FormatFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open collection %s: %w (no %s file; create one with 'seeder init')", dir, ErrNotCollection, FormatFile)
	}
	if err != nil {
		return nil, fmt.Errorf("open collection %s: %w", dir, err)
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 || fields[0] != formatMagic {
		return nil, fmt.Errorf("open collection %s: %w (%s says %s)", dir, ErrNotCollection, FormatFile, excerpt.Bytes(bytes.TrimSpace(data)))
	}
	v, err := strconv.Atoi(fields[1])
	if err != nil || v != FormatVersion {
		return nil, fmt.Errorf("open collection %s: %w %s (this program reads version %d)", dir, ErrVersion, fields[1], FormatVersion)
	}
	for _, sub := range []string{TextDir, BatchesDir, LogsDir, LocksDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open collection %s: %w", dir, err)
		}
	}
	return &Collection{Dir: dir}, nil
}

// ConfigPath is the collection's config file.
func (c *Collection) ConfigPath() string { return filepath.Join(c.Dir, ConfigFile) }

// GraphPath is the link graph database.
func (c *Collection) GraphPath() string { return filepath.Join(c.Dir, GraphFile) }

// LinksCacheFile is the manager's copy of graph.db's out-links, kept in
// step with it through graph.db's out-link change log (docs/manager.md,
// "Incremental planning"): derived data, rebuilt whenever it does not
// match.
const LinksCacheFile = "graph.links"

// LinksCachePath is the path of the manager's links cache.
func (c *Collection) LinksCachePath() string { return filepath.Join(c.Dir, LinksCacheFile) }

// DocsCacheFile is the manager's facts of graph.db's documents (what its
// value function needs of each), kept in step with graph.db through its
// document change log (docs/manager.md, "Incremental planning"): derived
// data, rebuilt whenever it does not match.
const DocsCacheFile = "graph.docs"

// DocsCachePath is the path of the manager's documents cache.
func (c *Collection) DocsCachePath() string { return filepath.Join(c.Dir, DocsCacheFile) }

// TextPath is the text store directory.
func (c *Collection) TextPath() string { return filepath.Join(c.Dir, TextDir) }

// LogsPath is the directory of stage logs.
func (c *Collection) LogsPath() string { return filepath.Join(c.Dir, LogsDir) }

// Lock is a held stage lock; Release frees it. The operating system frees
// it too when the process dies, so a killed stage never leaves it stuck.
type Lock struct {
	f *os.File
}

// Lock takes the exclusive lock of a stage (e.g. "seeder") without
// waiting: if another process holds it, it fails with ErrLocked.
func (c *Collection) Lock(name string) (*Lock, error) {
	return LockPath(filepath.Join(c.Dir, LocksDir, LockFileName(name)))
}

// LockPath takes an exclusive lock on the file at path (created if
// needed) without waiting; it fails with ErrLocked if another process
// holds it. The lock file records the holder's pid.
func LockPath(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w (pid %s)", path, ErrLocked, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release frees the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Batch is one batch directory of a collection.
type Batch struct {
	// ID is the batch number, starting at 1.
	ID int
	// Dir is the batch's directory.
	Dir string
}

// BatchName formats a batch id as its directory name (six digits).
func BatchName(id int) string { return fmt.Sprintf("%06d", id) }

// Batch returns the batch with the given id, which need not exist yet.
func (c *Collection) Batch(id int) *Batch {
	return &Batch{ID: id, Dir: filepath.Join(c.Dir, BatchesDir, BatchName(id))}
}

// BatchIDs lists the ids of the batches that have a batch file, in order.
func (c *Collection) BatchIDs() ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(c.Dir, BatchesDir))
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	var ids []int
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || id <= 0 || BatchName(id) != e.Name() {
			continue
		}
		if _, err := os.Stat(filepath.Join(c.Dir, BatchesDir, e.Name(), BatchFile)); err == nil {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids, nil
}

// NextBatchID is one more than the largest batch id in use.
func (c *Collection) NextBatchID() (int, error) {
	entries, err := os.ReadDir(filepath.Join(c.Dir, BatchesDir))
	if err != nil {
		return 0, fmt.Errorf("list batches: %w", err)
	}
	next := 1
	for _, e := range entries {
		if id, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && id >= next {
			next = id + 1
		}
	}
	return next, nil
}

// File is the batch file.
func (b *Batch) File() string { return filepath.Join(b.Dir, BatchFile) }

// RobotsPath is the manager's robots.txt copies for the batch (optional).
func (b *Batch) RobotsPath() string { return filepath.Join(b.Dir, BatchRobotsFile) }

// ServersPath is the manager's server estimates for the batch (optional).
func (b *Batch) ServersPath() string { return filepath.Join(b.Dir, BatchServersFile) }

// ClearDone removes the marker of stage s, so that the stage runs again
// on the batch (used with --force).
func (b *Batch) ClearDone(s Stage) error {
	if s == StageManaged {
		return fmt.Errorf("clear batch %s: the managed stage is marked by its batch file", b.Name())
	}
	if err := os.Remove(b.markerPath(s)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clear batch %s %s: %w", b.Name(), s, err)
	}
	return SyncDir(b.Dir)
}

// HarvestPath is the harvester's output directory.
func (b *Batch) HarvestPath() string { return filepath.Join(b.Dir, HarvestDir) }

// ParsedPath is the gatherer's output directory.
func (b *Batch) ParsedPath() string { return filepath.Join(b.Dir, ParsedDir) }

// Name is the batch's directory name.
func (b *Batch) Name() string { return BatchName(b.ID) }

func (b *Batch) markerPath(s Stage) string {
	if s == StageManaged {
		return b.File()
	}
	return filepath.Join(b.Dir, MarkerFile(s))
}

// Done tells whether the batch has been through stage s.
func (b *Batch) Done(s Stage) bool {
	_, err := os.Stat(b.markerPath(s))
	return err == nil
}

// MarkDone records atomically that the batch has been through stage s,
// with the stage's summary (any JSON-encodable value) as the marker's
// content.
func (b *Batch) MarkDone(s Stage, summary any) error {
	if s == StageManaged {
		return fmt.Errorf("mark batch %s: the managed stage is marked by its batch file", b.Name())
	}
	data, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return fmt.Errorf("mark batch %s %s: %w", b.Name(), s, err)
	}
	return WriteFileAtomic(b.markerPath(s), append(data, '\n'))
}

// Summary reads the summary a stage left in its marker into v.
func (b *Batch) Summary(s Stage, v any) error {
	data, err := os.ReadFile(b.markerPath(s))
	if err != nil {
		return fmt.Errorf("read batch %s %s marker: %w", b.Name(), s, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read batch %s %s marker: %w", b.Name(), s, err)
	}
	return nil
}

// Previous is the stage that must be done before s can run.
func Previous(s Stage) Stage {
	switch s {
	case StageHarvested:
		return StageManaged
	case StageGathered:
		return StageHarvested
	case StageSeeded:
		return StageGathered
	}
	return ""
}

// CheckReady tells whether stage s may run on the batch: the batch exists,
// its previous stage is done and s is not.
func (b *Batch) CheckReady(s Stage) error {
	if !b.Done(StageManaged) {
		return fmt.Errorf("batch %s (%s): %w", b.Name(), b.Dir, ErrNoBatch)
	}
	if b.Done(s) {
		return fmt.Errorf("batch %s: %w: already %s", b.Name(), ErrAlreadyDone, s)
	}
	if p := Previous(s); p != "" && !b.Done(p) {
		return fmt.Errorf("batch %s: %w for the %s stage: not %s yet", b.Name(), ErrNotReady, s, p)
	}
	return nil
}

// NextReady returns the oldest batch that stage s may run on, or
// ErrNothingToDo.
func (c *Collection) NextReady(s Stage) (*Batch, error) {
	ids, err := c.BatchIDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		b := c.Batch(id)
		if b.CheckReady(s) == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("no batch is ready to be %s: %w", s, ErrNothingToDo)
}
