package harvester

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirecrawl/wire/pkg/capture"
	"github.com/wirecrawl/wire/pkg/cdxj"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Names inside a batch directory and a harvest directory
// (docs/format/harvest.md); the batch directory's names are spelled in
// pkg/collection (names.go), the WARC files' in pkg/warcio (name.go).
const (
	// PartialDir is the harvest directory while it is being written.
	PartialDir = collection.HarvestPartialDir
	// LockFile is the lock a harvester holds on a batch directory.
	LockFile = collection.HarvesterLock + collection.LockSuffix
	// WARCSuffix ends the name of every WARC file.
	WARCSuffix = warcio.Suffix
)

// nextWARCName returns the name of the first WARC file a run writes in a
// harvest directory holding the files names (the run's template has its
// prefix, batch, shard and start time): the serial goes on from the
// highest one there, whatever the kind of name (an old
// PREFIX-NNNNN.warc.gz too), and the time is the one of the harvest's
// files already there, so a resumed harvest keeps its start time (a run
// killed before its first file took none).
func nextWARCName(tmpl warcio.Name, names []string) warcio.Name {
	n := tmpl
	n.Serial = 1
	n.Time = n.Time.UTC().Truncate(time.Second)
	last := 0
	for _, name := range names {
		s, ok := warcio.SerialOf(name)
		if !ok {
			continue
		}
		n.Serial = max(n.Serial, s+1)
		if p, ok := warcio.ParseName(name); ok && s >= last {
			n.Time, last = p.Time, s
		}
	}
	return n
}

// The WARC file and the fetch log are buffered (up to warcBuffer bytes of
// records) and written out every flushEvery, the WARC records always
// before the fetch log lines that point at them, so a line in the file
// never points past the end of the WARC file; the robots and servers
// files are buffered too (lineBuffer) and written out between the two;
// the WARC file, then the fetch log and the other logs, are fsynced
// every syncEvery while a run goes on, and at its end. A killed run
// loses at most the records and lines of the last flushEvery (their URLs
// are fetched again, a site's robots.txt too if its line was lost; a host
// done just before may lose its servers line: docs/format/harvest.md).
const (
	flushEvery = 200 * time.Millisecond
	syncEvery  = time.Second
	warcBuffer = 256 << 10
	lineBuffer = 16 << 10
)

// output writes one harvest directory: WARC files, fetch log, robots
// file, servers file. It is safe for concurrent use; records are built
// and compressed by the callers' goroutines, and only the appends are
// serialised.
type output struct {
	dir     string
	log     *slog.Logger
	maxWARC int64
	info    warcio.Info // content of each WARC file's warcinfo record
	now     func() time.Time

	mu       sync.Mutex
	logf     *os.File
	logw     *bufio.Writer // buffers logf
	robotsf  *os.File
	serversf *os.File
	// robotsw and serversw buffer robotsf and serversf: a line per site
	// or host, written out with the fetch log (flushLocked). Until
	// 2026-12-08 each line was a write of its own, on the scheduler's
	// goroutine for the servers file (about 30 µs of CPU each on the
	// benchmark's machine: docs/harvester.md, "Figures").
	robotsw  *bufio.Writer
	serversw *bufio.Writer
	warc     *warcio.Writer
	// infoID is warc's InfoID ("" before the first file), which
	// records are made with outside mu (currentInfoID).
	infoID   atomic.Pointer[string]
	warcFile string      // name of the open WARC file
	nextWARC warcio.Name // name of the next WARC file to open
	dirty    bool
	// newFile is set when a WARC file was created since the last sync,
	// which then fsyncs the directory too (before the logs that name
	// the file), not under mu at the first append.
	newFile bool
	closed  bool
	// onLine is called (under mu) for each fetch log line appended.
	onLine func(fetchlog.Record)
	// logBytes is the size the fetch log has once its buffer is
	// written: close checks the file against it.
	logBytes int64
	// indexing runs the indexes of the WARC files closed so far
	// (indexLater); indexErr is what failed of them (under mu).
	indexing sync.WaitGroup
	indexErr error
}

// resumed is what an existing harvest.partial already holds.
type resumed struct {
	records []fetchlog.Record
	robots  map[string]fetchlog.Robots
	servers map[string]fetchlog.Server
	// repaired lists what had to be dropped, for the log.
	repaired []string
	// created is set when the fetch log was new (nothing to resume).
	created bool
}

// openOutput opens (creating or resuming) the harvest directory dir,
// whose WARC files are named after tmpl (nextWARCName). An existing fetch log
// is read and repaired: a torn last line, a damaged line (and everything
// after it) and lines whose WARC record is not whole on disk are dropped,
// so that their URLs are fetched again.
func openOutput(dir string, tmpl warcio.Name, maxWARC int64, info warcio.Info, log *slog.Logger) (*output, *resumed, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", dir, err)
	}
	o := &output{dir: dir, log: log, maxWARC: maxWARC, info: info, now: time.Now}
	if o.maxWARC <= 0 {
		o.maxWARC = 1 << 30
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	sizes := map[string]int64{}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), WARCSuffix) {
			continue
		}
		names = append(names, e.Name())
		if info, err := e.Info(); err == nil {
			sizes[e.Name()] = info.Size()
		}
	}
	o.nextWARC = nextWARCName(tmpl, names)
	res := &resumed{robots: map[string]fetchlog.Robots{}, servers: map[string]fetchlog.Server{}}
	if err := res.loadLog(filepath.Join(dir, fetchlog.LogFile), sizes); err != nil {
		return nil, nil, err
	}
	if err := res.loadRobots(filepath.Join(dir, fetchlog.RobotsFile)); err != nil {
		return nil, nil, err
	}
	if err := res.loadServers(filepath.Join(dir, fetchlog.ServersFile)); err != nil {
		return nil, nil, err
	}
	open := func(name string, flags int) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|flags, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", name, err)
		}
		return f, nil
	}
	if o.logf, err = open(fetchlog.LogFile, 0); err != nil {
		return nil, nil, err
	}
	o.logw = bufio.NewWriterSize(o.logf, 64<<10)
	if fi, err := o.logf.Stat(); err == nil {
		o.logBytes = fi.Size()
	} else {
		o.logf.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", fetchlog.LogFile, err)
	}
	if o.robotsf, err = open(fetchlog.RobotsFile, os.O_CREATE); err != nil {
		o.logf.Close()
		return nil, nil, err
	}
	if o.serversf, err = open(fetchlog.ServersFile, os.O_CREATE); err != nil {
		o.logf.Close()
		o.robotsf.Close()
		return nil, nil, err
	}
	o.robotsw = bufio.NewWriterSize(o.robotsf, lineBuffer)
	o.serversw = bufio.NewWriterSize(o.serversf, lineBuffer)
	// The files' names are made durable by the first sync (before
	// anything in them is synced); a resumed directory's are at once, as
	// its old lines may be synced already.
	o.newFile = true
	if !res.created {
		if err := collection.SyncDir(dir); err != nil {
			o.logf.Close()
			o.robotsf.Close()
			o.serversf.Close()
			return nil, nil, err
		}
	}
	return o, res, nil
}

// loadLog reads the fetch log at path, creating it (header only) if it
// does not exist, and rewrites it atomically if anything had to be
// dropped.
func (r *resumed) loadLog(path string, warcSizes map[string]int64) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		// A new log is made durable by the output's first sync, like
		// everything else in the directory; killed before that, the
		// next run finds no log or a torn header, both repaired here.
		if err := os.WriteFile(path, []byte(fetchlog.Header()), 0o644); err != nil {
			return fmt.Errorf("create fetch log: %w", err)
		}
		r.created = true
		return nil
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
		first, _, _ := bytes.Cut(data, []byte("\n"))
		if _, herr := fetchlog.Read(bytes.NewReader(append(first, '\n'))); herr != nil {
			// Not a fetch log of a version this program reads: never
			// repair that. (A version 1 log begun by an older harvester
			// is repaired, and rewritten under this version's header.)
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
	lines, err := loadJSONLines(r, path, "robots file", func(data []byte, name string) ([]fetchlog.Robots, error) {
		return fetchlog.ReadRobotsFrom(bytes.NewReader(data), name)
	}, fetchlog.FormatRobots)
	for _, l := range lines {
		r.robots[l.Site] = l
	}
	return err
}

// loadServers reads the servers file (one line per server done in an
// earlier run; the latest line of a host wins), dropping a torn tail.
func (r *resumed) loadServers(path string) error {
	lines, err := loadJSONLines(r, path, "servers file", fetchlog.ParseServers, fetchlog.FormatServer)
	for _, l := range lines {
		r.servers[l.Host] = l
	}
	return err
}

// loadJSONLines reads a JSON-lines file of an earlier run once and parses
// it with parse; if
// its tail is torn or damaged, it keeps the good lines, notes the repair
// and rewrites the file atomically with format. A missing file is empty.
func loadJSONLines[T any](r *resumed, path, what string, parse func(data []byte, name string) ([]T, error), format func(T) ([]byte, error)) ([]T, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	lines, err := parse(data, path)
	rewrite := err != nil || (len(data) > 0 && data[len(data)-1] != '\n')
	if err != nil {
		r.repaired = append(r.repaired, fmt.Sprintf("%s: %v; kept the %d lines before it", what, err, len(lines)))
	}
	if !rewrite {
		return lines, nil
	}
	return lines, collection.WriteAtomic(path, func(w io.Writer) error {
		for _, l := range lines {
			b, err := format(l)
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

// exchange is what warcio stores of a response, its records made for
// the WARC file open now (appendWARC makes them again for another).
func (o *output) exchange(resp *fetch.Response, meta []warcio.Field) *warcio.Exchange {
	x := &warcio.Exchange{
		URL:        resp.URL,
		Date:       resp.Started,
		IP:         resp.IP,
		Request:    resp.Request,
		StatusLine: resp.StatusLine,
		Header:     resp.Header,
		Head:       resp.Head,
		Body:       resp.Body,
		Truncated:  resp.Truncated,
		Metadata:   meta,
	}
	if id := o.infoID.Load(); id != nil {
		x.WarcinfoID = *id
	}
	return x
}

// page appends the response (if any) to the WARC file and then the record
// to the fetch log, filling in the record's WARC position. prev is the
// URL's stored capture from the batch (zero if none): a 304, or a 2xx
// whose payload is prev's, is written as a revisit record that refers to
// it. The records are built and compressed before the lock is taken. A
// response that cannot be made into a WARC record (warcio.BuildError) is
// logged as a failure of kind store, and the harvest goes on.
func (o *output) page(resp *fetch.Response, meta []warcio.Field, rec fetchlog.Record, prev capture.Capture) error {
	var enc *warcio.Encoded
	var x *warcio.Exchange
	if resp != nil {
		x = o.exchange(resp, meta)
		x.Previous = prev
		var err error
		enc, err = warcio.Encode(x)
		var be *warcio.BuildError
		switch {
		case errors.As(err, &be):
			rec.Err = ErrStore + ": " + be.Reason
			enc = nil
		case err != nil:
			return err
		}
		defer enc.Release()
	}
	// One lock for the record and its line (each taking of the lock
	// that 32 connections share is a chance to wait): the record is
	// appended to the WARC buffer, then the line, formatted in place, to
	// the fetch log's, so every flush finds the records before the lines
	// that point at them.
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return errors.New("harvest output closed")
	}
	var w *warcio.Writer
	if enc != nil {
		name, off, n, err := o.appendWARC(x, enc)
		o.dirty = true
		if err != nil {
			o.mu.Unlock()
			return err
		}
		rec.WARC, rec.Offset, rec.Length = name, off, n
		w = o.warc
	}
	err := o.appendLine(&rec)
	o.mu.Unlock()
	if err != nil {
		return err
	}
	// A full WARC buffer is written outside mu: the other connections go
	// on appending meanwhile.
	return flushIfDue(w)
}

// appendLine appends rec's line to the fetch log buffer. Called with mu
// held. A line that does not fit in the buffer's free space would make
// the buffer write itself out, maybe ahead of WARC records still
// buffered that its lines point at: the WARC buffer, then the fetch
// log's, are flushed first.
func (o *output) appendLine(rec *fetchlog.Record) error {
	line := rec.AppendFormat(o.logw.AvailableBuffer())
	if len(line) > o.logw.Available() {
		if err := o.flushLocked(); err != nil {
			return err
		}
		line = rec.AppendFormat(o.logw.AvailableBuffer())
	}
	if _, err := o.logw.Write(line); err != nil {
		return fmt.Errorf("append to fetch log: %w", err)
	}
	o.logBytes += int64(len(line))
	if o.onLine != nil {
		o.onLine(*rec)
	}
	o.dirty = true
	return nil
}

// robotsResponse stores a robots.txt response (one hop of it) in the WARC
// file. A response that cannot be made into a WARC record is not stored
// and its *warcio.BuildError returned: the caller must not let it decide
// the site's rules.
func (o *output) robotsResponse(resp *fetch.Response) error {
	x := o.exchange(resp, nil)
	enc, err := warcio.Encode(x)
	if err != nil {
		return err
	}
	defer enc.Release()
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return errors.New("harvest output closed")
	}
	_, _, _, err = o.appendWARC(x, enc)
	o.dirty = true
	w := o.warc
	o.mu.Unlock()
	if err != nil {
		return err
	}
	return flushIfDue(w)
}

// flushIfDue writes the WARC buffer once it is full, outside mu: the
// other connections go on appending meanwhile. (The fetch log lines of
// its records are written later, by flush or sync, which write the WARC
// buffer first.)
func flushIfDue(w *warcio.Writer) error {
	if w != nil && w.FlushDue() {
		return w.Flush()
	}
	return nil
}

// server appends a line to the servers file.
func (o *output) server(s fetchlog.Server) error {
	line, err := fetchlog.FormatServer(s)
	if err != nil {
		return err
	}
	return o.appendTo(o.serversw, "servers file", line)
}

// robots appends a line to the robots file.
func (o *output) robots(r fetchlog.Robots) error {
	line, err := fetchlog.FormatRobots(r)
	if err != nil {
		return err
	}
	return o.appendTo(o.robotsw, "robots file", line)
}

// appendTo appends a line to the buffer of one of the output's other
// logs (the robots and servers files, a line per site or host), which
// flushLocked writes out. A line that does not fit in the buffer's free
// space would make the buffer write itself out, maybe ahead of the
// robots.txt records still buffered: everything is flushed first, as
// for a fetch log line (appendLine).
func (o *output) appendTo(w *bufio.Writer, what string, line []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errors.New("harvest output closed")
	}
	if len(line) > w.Available() {
		if err := o.flushLocked(); err != nil {
			return err
		}
	}
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", what, err)
	}
	o.dirty = true
	return nil
}

// appendWARC appends encoded records (of x) to the current WARC file,
// starting the next file first if there is none or the records would take
// the current one past the size limit. Records made for another file's
// warcinfo record (the file opened since they were made) are made again
// for this one, under mu: once per file. Called with mu held.
func (o *output) appendWARC(x *warcio.Exchange, enc *warcio.Encoded) (string, int64, int64, error) {
	if o.warc != nil && o.warc.Size()+enc.Size() > o.maxWARC {
		if err := o.warc.Close(); err != nil {
			return "", 0, 0, err
		}
		o.indexLater(o.warcFile)
		o.warc = nil
	}
	if o.warc == nil {
		name := o.nextWARC.String()
		w, err := warcio.CreateWithInfo(filepath.Join(o.dir, name), o.info)
		if err != nil {
			return "", 0, 0, err
		}
		o.nextWARC.Serial++
		o.warc, o.warcFile = w, name
		id := w.InfoID()
		o.infoID.Store(&id)
		o.newFile = true
		if err := w.SetBuffer(warcBuffer); err != nil {
			return "", 0, 0, err
		}
	}
	if id := o.warc.InfoID(); enc.WarcinfoID() != id {
		x.WarcinfoID = id
		again, err := warcio.Encode(x)
		if err != nil {
			return "", 0, 0, err
		}
		defer again.Release()
		enc = again
	}
	off, n, err := o.warc.Append(enc)
	if err != nil {
		return "", 0, 0, err
	}
	return o.warcFile, off, n, nil
}

// indexLater writes the CDXJ index of the WARC file name, closed and
// synced, in the background while the harvest goes on (reading a file
// back costs about 180 µs a page: docs/harvester.md, "Output"); close
// waits for it. The run's last file is indexed when the harvest is
// published (indexWARCs). Called with mu held.
func (o *output) indexLater(name string) {
	o.indexing.Go(func() {
		_, torn, err := cdxj.WriteIndex(o.dir, name)
		if err == nil && torn >= 0 {
			err = fmt.Errorf("index %s: the closed file has a torn record at %d", name, torn)
		}
		if err != nil {
			o.mu.Lock()
			o.indexErr = errors.Join(o.indexErr, err)
			o.mu.Unlock()
		}
	})
}

// flush writes the buffered WARC records, then the buffered fetch log
// lines, to their files.
func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	return o.flushLocked()
}

// flushLocked is flush with mu held: the WARC records first, so that every
// fetch log line in the file points at a record in the file, then the
// robots and servers lines (a site's robots line after its robots.txt
// records), then the fetch log lines.
func (o *output) flushLocked() error {
	if o.warc != nil {
		if err := o.warc.Flush(); err != nil {
			return err
		}
	}
	if err := o.robotsw.Flush(); err != nil {
		return fmt.Errorf("append to robots file: %w", err)
	}
	if err := o.serversw.Flush(); err != nil {
		return fmt.Errorf("append to servers file: %w", err)
	}
	if err := o.logw.Flush(); err != nil {
		return fmt.Errorf("append to fetch log: %w", err)
	}
	return nil
}

// sync writes out the WARC records and then the fetch log, then fsyncs
// the WARC file first and the logs that point into it after. The appends
// go on meanwhile: only taking the files is serialised.
func (o *output) sync() error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	if err := o.flushLocked(); err != nil {
		o.mu.Unlock()
		return err
	}
	warc, files := o.warc, []*os.File{o.logf, o.robotsf, o.serversf}
	newFile := o.newFile
	o.dirty, o.newFile = false, false
	o.mu.Unlock()
	// The WARC file and the directory naming a new one are made durable
	// (at the same time: neither depends on the other) before the logs
	// that point into them; the three logs then at the same time too.
	var dirErr error
	var wg sync.WaitGroup
	if newFile {
		wg.Go(func() {
			// The new WARC file's name is durable before the lines naming it.
			if dirErr = collection.SyncDir(o.dir); dirErr != nil {
				o.mu.Lock()
				o.newFile = true
				o.mu.Unlock()
			}
		})
	}
	var warcErr error
	if warc != nil {
		warcErr = warc.Sync()
	}
	wg.Wait()
	if err := errors.Join(warcErr, dirErr); err != nil {
		return err
	}
	errs := make([]error, len(files))
	for i, f := range files[1:] {
		wg.Go(func() { errs[i+1] = syncFile(f) })
	}
	errs[0] = syncFile(files[0])
	wg.Wait()
	return errors.Join(errs...)
}

// syncFile fsyncs f; a file closed meanwhile (by close) is no error.
func syncFile(f *os.File) error {
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return nil
}

// tick syncs if anything was written since the last sync; the harvester
// calls it every syncEvery.
func (o *output) tick() error {
	o.mu.Lock()
	dirty := o.dirty
	o.mu.Unlock()
	if !dirty {
		return nil
	}
	return o.sync()
}

// close syncs and closes everything, and waits for the indexes of the
// WARC files closed on the way (indexLater). It checks that the fetch log on
// disk holds exactly the bytes appended to it: the harvest's summary and
// check are made from the lines as they were appended, not read back.
func (o *output) close() error {
	err := o.closeFiles()
	// No file is closed past closeFiles (closed is set), so no index is
	// started after this wait.
	o.indexing.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		err = o.indexErr
	}
	return err
}

// closeFiles syncs and closes the files, once.
func (o *output) closeFiles() error {
	err := o.sync()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if err == nil {
		err = o.checkLogSize()
	}
	if o.warc != nil {
		if cerr := o.warc.Close(); err == nil {
			err = cerr
		}
		o.warc = nil
	}
	for _, f := range []*os.File{o.logf, o.robotsf, o.serversf} {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", f.Name(), cerr)
		}
	}
	return err
}

// warcFiles lists the WARC files of a harvest directory, in order.
func warcFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), WARCSuffix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// checkLogSize checks that the fetch log file holds as many bytes as were
// written to it (called with mu held, after a sync).
func (o *output) checkLogSize() error {
	fi, err := o.logf.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", o.logf.Name(), err)
	}
	if fi.Size() != o.logBytes {
		return fmt.Errorf("fetch log %s holds %d bytes, %d were written to it", o.logf.Name(), fi.Size(), o.logBytes)
	}
	return nil
}

// serverLine is what the servers file says of srv.
func serverLine(srv *Server) fetchlog.Server {
	l := fetchlog.Server{Host: srv.Host, DNSError: srv.dnsErr, GaveUp: srv.gaveUp, Measured: srv.Est.Measured.UTC(),
		Streak: srv.streak, Streaming: strings.HasPrefix(srv.gaveUp, GaveUpStreaming)}
	if srv.ip.IsValid() {
		l.IP = srv.ip.String()
	}
	if srv.Est.KnownConnect {
		l.ConnectMs = ms(srv.Est.ConnectTime)
	}
	if srv.Est.KnownResponse {
		l.ResponseMs = ms(srv.Est.ResponseTime)
	}
	if srv.Est.KnownRPC {
		l.RequestsPerConn = srv.Est.RequestsPerConn
	}
	return l
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// finalServers writes the servers file of the finished harvest: one line
// per host of the batch (latest estimates), with its pages, bytes and
// errors counted from the whole fetch log.
func (h *harvest) finalServers(dir string, recs []fetchlog.Record) error {
	type count struct {
		pages, errors int
		bytes         int64
	}
	counts := map[string]*count{}
	for _, r := range recs {
		host := hostOf(siteOf(r.URL))
		c := counts[host]
		if c == nil {
			c = &count{}
			counts[host] = c
		}
		switch {
		case r.OK():
			c.pages++
			c.bytes += r.Bytes
		case fetch.KindOf(r.Err) != ErrRobots && fetch.KindOf(r.Err) != ErrDeferred:
			c.errors++
		}
	}
	// Each name's hold as it stands now: a server's line took its
	// unit's turn when the server was done, and another name of the unit
	// may have been asked since.
	holds := h.hosts.holds(time.Now())
	held := make(map[string]time.Time, len(holds))
	for _, hd := range holds {
		held[hd.host] = hd.notBefore
	}
	var lines []fetchlog.Server
	for host, l := range h.finished {
		if c := counts[host]; c != nil {
			l.Pages, l.Bytes, l.Errors = c.pages, c.bytes, c.errors
		}
		if at, ok := held[host]; ok && at.After(l.NotBefore) {
			l.NotBefore = at.UTC()
		}
		lines = append(lines, l)
	}
	// Every other name the next harvest may not ask yet (a redirect's
	// target, another name of a unit, a server of the batch a killed
	// run of it held back): a line with its hold alone, so that the
	// next harvest needs no start floor of its own (carryOver,
	// quietSince).
	for _, hd := range holds {
		if _, ok := h.finished[hd.host]; ok {
			continue
		}
		l := fetchlog.Server{Host: hd.host, NotBefore: hd.notBefore.UTC()}
		if hd.ip.IsValid() {
			l.IP = hd.ip.String()
			if hd.crawlDelay > 0 {
				l.CrawlDelay = hd.crawlDelay.Seconds()
			}
		}
		lines = append(lines, l)
	}
	return writeServers(filepath.Join(dir, fetchlog.ServersFile), lines)
}

// writeServers writes a servers file atomically: one line per host (the
// last given wins), sorted by host.
func writeServers(path string, lines []fetchlog.Server) error {
	byHost := map[string]fetchlog.Server{}
	for _, l := range lines {
		byHost[l.Host] = l
	}
	hosts := make([]string, 0, len(byHost))
	for host := range byHost {
		hosts = append(hosts, host)
	}
	sort.Strings(hosts)
	return collection.WriteAtomic(path, func(w io.Writer) error {
		for _, host := range hosts {
			b, err := fetchlog.FormatServer(byHost[host])
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
