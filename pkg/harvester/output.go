package harvester

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Names inside a batch directory and a harvest directory
// (docs/format/harvest.md).
const (
	// PartialDir is the harvest directory while it is being written.
	PartialDir = "harvest.partial"
	// LockFile is the lock a harvester holds on a batch directory.
	LockFile = "harvester.lock"
	// WARCPattern formats the name of the n-th WARC file.
	WARCPattern = "data-%05d.warc.gz"
	// DefaultMaxWARCSize is the size after which a new WARC file is
	// started (the customary 1 GB of WARC files).
	DefaultMaxWARCSize = 1 << 30
)

var warcName = regexp.MustCompile(`^data-(\d{5,})\.warc\.gz$`)

// Sync policy: the WARC files, then the fetch log and the robots file,
// are fsynced after this many new lines or this much time, and at the end.
const (
	syncEveryLines = 100
	syncEvery      = time.Second
)

// output writes one harvest directory: WARC files, fetch log, robots
// file. It is safe for concurrent use.
type output struct {
	dir     string
	log     *slog.Logger
	maxWARC int64

	mu       sync.Mutex
	logf     *os.File
	robotsf  *os.File
	warc     *warcio.Writer
	warcFile string // name of the open WARC file
	warcSize int64
	nextWARC int // number of the next WARC file to open
	dirty    int
	lastSync time.Time
	closed   bool
	// onLine is called (under mu) for each fetch log line appended.
	onLine func(fetchlog.Record)
}

// resumed is what an existing harvest.partial already holds.
type resumed struct {
	records []fetchlog.Record
	robots  map[string]fetchlog.Robots
	// repaired lists what had to be dropped, for the log.
	repaired []string
}

// openOutput opens (creating or resuming) the harvest directory dir. An
// existing fetch log is read and repaired: a torn last line, a damaged
// line (and everything after it) and lines whose WARC record is not whole
// on disk are dropped, so that their URLs are fetched again.
func openOutput(dir string, maxWARC int64, log *slog.Logger) (*output, *resumed, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", dir, err)
	}
	o := &output{dir: dir, log: log, maxWARC: maxWARC, nextWARC: 1, lastSync: time.Now()}
	if o.maxWARC <= 0 {
		o.maxWARC = DefaultMaxWARCSize
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	sizes := map[string]int64{}
	for _, e := range entries {
		m := warcName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		o.nextWARC = max(o.nextWARC, n+1)
		if info, err := e.Info(); err == nil {
			sizes[e.Name()] = info.Size()
		}
	}
	res := &resumed{robots: map[string]fetchlog.Robots{}}
	if err := res.loadLog(filepath.Join(dir, fetchlog.LogFile), sizes); err != nil {
		return nil, nil, err
	}
	if err := res.loadRobots(filepath.Join(dir, fetchlog.RobotsFile)); err != nil {
		return nil, nil, err
	}
	if o.logf, err = os.OpenFile(filepath.Join(dir, fetchlog.LogFile), os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, nil, fmt.Errorf("open fetch log: %w", err)
	}
	if o.robotsf, err = os.OpenFile(filepath.Join(dir, fetchlog.RobotsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
		o.logf.Close()
		return nil, nil, fmt.Errorf("open robots file: %w", err)
	}
	if err := collection.SyncDir(dir); err != nil {
		o.logf.Close()
		o.robotsf.Close()
		return nil, nil, err
	}
	return o, res, nil
}

// loadLog reads the fetch log at path, creating it (header only) if it
// does not exist, and rewrites it atomically if anything had to be
// dropped.
func (r *resumed) loadLog(path string, warcSizes map[string]int64) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return collection.WriteFileAtomic(path, []byte(fetchlog.Header()))
	}
	if err != nil {
		return fmt.Errorf("read fetch log: %w", err)
	}
	hdr := []byte(fetchlog.Header())
	if len(data) < len(hdr) && bytes.HasPrefix(hdr, data) {
		// Killed while writing the header: nothing was logged yet.
		return collection.WriteFileAtomic(path, hdr)
	}
	recs, err := fetchlog.Read(bytes.NewReader(data))
	rewrite := false
	if err != nil {
		if !bytes.HasPrefix(data, hdr) {
			// Not a fetch log of this version: never repair that.
			return fmt.Errorf("resume from %s: %w", path, err)
		}
		r.repaired = append(r.repaired, fmt.Sprintf("fetch log: %v; kept the %d lines before it", err, len(recs)))
		rewrite = true
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		r.repaired = append(r.repaired, "fetch log: dropped a torn last line")
		rewrite = true
	}
	kept := recs[:0]
	for _, rec := range recs {
		if rec.WARC != "" {
			size, ok := warcSizes[rec.WARC]
			if !ok || rec.Offset < 0 || rec.Length <= 0 || rec.Offset+rec.Length > size {
				r.repaired = append(r.repaired, fmt.Sprintf("fetch log: dropped %s, whose record %s@%d is not on disk", rec.URL, rec.WARC, rec.Offset))
				rewrite = true
				continue
			}
		}
		kept = append(kept, rec)
	}
	r.records = kept
	if !rewrite {
		return nil
	}
	return collection.WriteAtomic(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, fetchlog.Header()); err != nil {
			return err
		}
		for i := range kept {
			if _, err := io.WriteString(w, kept[i].Format()); err != nil {
				return err
			}
		}
		return nil
	})
}

// loadRobots reads the robots file, rewriting it without a torn or
// damaged tail.
func (r *resumed) loadRobots(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read robots file: %w", err)
	}
	lines, err := fetchlog.ReadRobots(path)
	rewrite := err != nil || (len(data) > 0 && data[len(data)-1] != '\n')
	if err != nil {
		r.repaired = append(r.repaired, fmt.Sprintf("robots file: %v; kept the %d lines before it", err, len(lines)))
	}
	for _, l := range lines {
		r.robots[l.Site] = l
	}
	if !rewrite {
		return nil
	}
	return collection.WriteAtomic(path, func(w io.Writer) error {
		for _, l := range lines {
			b, err := fetchlog.FormatRobots(l)
			if err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// errStore marks a record that could not be built (not a disk error): its
// URL is logged as failed and the harvest goes on.
var errStore = errors.New("store")

// page appends the response (if any) to the WARC file and then the record
// to the fetch log, filling in the record's WARC position.
func (o *output) page(resp *fetch.Response, rec fetchlog.Record) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("harvest output closed")
	}
	if resp != nil {
		name, off, n, err := o.writeWARC(resp)
		switch {
		case errors.Is(err, errStore):
			rec.Err = "store: " + err.Error()
		case err != nil:
			return err
		default:
			rec.WARC, rec.Offset, rec.Length = name, off, n
		}
	}
	if _, err := o.logf.WriteString(rec.Format()); err != nil {
		return fmt.Errorf("append to fetch log: %w", err)
	}
	if o.onLine != nil {
		o.onLine(rec)
	}
	o.dirty++
	return o.maybeSync()
}

// robotsResponse stores a robots.txt response (one hop of it) in the WARC
// file.
func (o *output) robotsResponse(resp *fetch.Response) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("harvest output closed")
	}
	_, _, _, err := o.writeWARC(resp)
	if errors.Is(err, errStore) {
		o.log.Warn("robots.txt response not stored", "url", resp.URL, "err", err)
		return nil
	}
	return err
}

// robots appends a line to the robots file.
func (o *output) robots(r fetchlog.Robots) error {
	line, err := fetchlog.FormatRobots(r)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("harvest output closed")
	}
	if _, err := o.robotsf.Write(line); err != nil {
		return fmt.Errorf("append to robots file: %w", err)
	}
	o.dirty++
	return o.maybeSync()
}

// writeWARC appends the exchange to the current WARC file, opening the
// next file first if there is none or the current one is full. Called
// with mu held.
func (o *output) writeWARC(resp *fetch.Response) (string, int64, int64, error) {
	if o.warc != nil && o.warcSize >= o.maxWARC {
		if err := o.closeWARC(); err != nil {
			return "", 0, 0, err
		}
	}
	if o.warc == nil {
		name := fmt.Sprintf(WARCPattern, o.nextWARC)
		w, err := warcio.Create(filepath.Join(o.dir, name))
		if err != nil {
			return "", 0, 0, err
		}
		o.nextWARC++
		o.warc, o.warcFile, o.warcSize = w, name, 0
		if err := collection.SyncDir(o.dir); err != nil {
			return "", 0, 0, err
		}
	}
	off, n, err := o.warc.Write(&warcio.Exchange{
		URL:        resp.URL,
		Date:       resp.Started,
		IP:         resp.IP,
		Request:    resp.Request,
		StatusLine: resp.StatusLine,
		Header:     resp.Header,
		Body:       resp.Body,
		Truncated:  resp.Truncated,
	})
	if err != nil {
		if strings.Contains(err.Error(), "build warc record") {
			// warcio could not build the record (its content, not the
			// disk): nothing was written.
			return "", 0, 0, fmt.Errorf("%w: %v", errStore, err)
		}
		return "", 0, 0, err
	}
	o.warcSize = off + n
	return o.warcFile, off, n, nil
}

func (o *output) closeWARC() error {
	if o.warc == nil {
		return nil
	}
	err := o.warc.Sync()
	if cerr := o.warc.Close(); err == nil {
		err = cerr
	}
	o.warc = nil
	return err
}

// maybeSync syncs when enough lines or time have gone by. Called with mu
// held.
func (o *output) maybeSync() error {
	if o.dirty >= syncEveryLines || (o.dirty > 0 && time.Since(o.lastSync) >= syncEvery) {
		return o.syncLocked()
	}
	return nil
}

// syncLocked flushes the WARC file first, then the logs that point into
// it.
func (o *output) syncLocked() error {
	if o.warc != nil {
		if err := o.warc.Sync(); err != nil {
			return err
		}
	}
	if err := o.logf.Sync(); err != nil {
		return fmt.Errorf("sync fetch log: %w", err)
	}
	if err := o.robotsf.Sync(); err != nil {
		return fmt.Errorf("sync robots file: %w", err)
	}
	o.dirty, o.lastSync = 0, time.Now()
	return nil
}

// tick syncs if anything is waiting; the harvester calls it every second
// so that a quiet period does not leave lines unsynced.
func (o *output) tick() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.dirty == 0 {
		return nil
	}
	return o.syncLocked()
}

// close syncs and closes everything.
func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	err := o.syncLocked()
	o.closed = true
	if cerr := o.closeWARC(); err == nil {
		err = cerr
	}
	if cerr := o.logf.Close(); err == nil {
		err = cerr
	}
	if cerr := o.robotsf.Close(); err == nil {
		err = cerr
	}
	return err
}

// warcFiles lists the WARC files of a harvest directory, in order.
func warcFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if warcName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
