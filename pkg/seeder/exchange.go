package seeder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/golang/snappy"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/partition"
)

// Exchange files (docs/format/exchange.md): what one partition of a web
// split over K collections (crawl.partition) hands to another. A seeder
// writes them in the transaction that takes a batch in, one file per
// destination, and takes in, each exactly once, the files other
// partitions wrote for it.
//
//	COLLECTION/exchange/out/to-J/pending/NNNNNNNN.sz   written before the commit
//	COLLECTION/exchange/out/to-J/NNNNNNNN.sz           published after it, removed once J reports it taken
//	COLLECTION/exchange/out/to-J/taken                 the numbers of J's files this partition took
//	COLLECTION/exchange/out/to-J/sitegraph.sz          this partition's site graph (pkg/sitegraph)
//	COLLECTION/exchange/in/from-I/...                  the same, copied in (rsync)
//
// A partition J reads its peers' exchange/out/to-J/ (crawl.partition_peers,
// on a shared file system) and its own exchange/in/*/: both are the same
// files, named by the sender's sequence number, and graph.db records the
// numbers it took from each sender.
const (
	// ExchangeDir is the directory of exchange files in a collection.
	ExchangeDir = "exchange"
	// ExchangeVersion is the version of the exchange file format.
	ExchangeVersion = 1
	exchangeMagic   = "# wire-exchange"
	// exchangeColumns names the tab-separated fields of a line.
	exchangeColumns = "kind depth batch url anchor"
)

// Kinds of exchange lines.
const (
	// ExchangeLink is a link found by the sender to a URL of the
	// receiver's: taken in like a link of the receiver's own pages (or
	// passed on, if the receiver has handed the URL's site over).
	ExchangeLink = "link"
	// ExchangeSite is a URL of a site the sender hands over because its
	// server's address belongs to the receiver: the receiver takes the
	// site as its own.
	ExchangeSite = "site"
)

// ErrExchangeFormat means an exchange file is damaged, of an unknown
// version, or meant for another partition.
var ErrExchangeFormat = errors.New("malformed exchange file")

// exchangeLine is one line of an exchange file.
type exchangeLine struct {
	Kind   string
	Depth  int
	Batch  int    // the sender's batch that found the link or handed the site over
	URL    string // normalised, in scope when written
	Anchor string // cleaned anchor text, may be empty
}

// exchangeName is the file name of the sender's file number seq.
func exchangeName(seq uint64) string { return fmt.Sprintf("%08d.sz", seq) }

// parseExchangeName returns the number of an exchange file name.
func parseExchangeName(name string) (uint64, bool) {
	s, ok := strings.CutSuffix(name, ".sz")
	if !ok || len(s) < 8 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// outDir is the directory of the files for partition j.
func outDir(col string, j int) string {
	return filepath.Join(col, ExchangeDir, "out", "to-"+strconv.Itoa(j))
}

// exchangeHeader is the first line of a file from p to partition to.
func exchangeHeader(p partition.Partition, to int) string {
	return fmt.Sprintf("%s %d from %s to %d\n# columns: %s\n", exchangeMagic, ExchangeVersion, p, to, exchangeColumns)
}

// exchangeWriter writes one exchange file atomically into the pending
// directory: it appears there only when Commit succeeds.
type exchangeWriter struct {
	seq  uint64
	to   int
	path string
	f    *collection.AtomicFile
	sw   *snappy.Writer
	bw   *bufio.Writer
	n    int
}

func createExchange(col string, p partition.Partition, to int, seq uint64) (*exchangeWriter, error) {
	dir := filepath.Join(outDir(col, to), "pending")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create exchange file: %w", err)
	}
	path := filepath.Join(dir, exchangeName(seq))
	f, err := collection.CreateAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("create exchange file: %w", err)
	}
	w := &exchangeWriter{seq: seq, to: to, path: path, f: f, sw: snappy.NewBufferedWriter(f)}
	w.bw = bufio.NewWriterSize(w.sw, 64<<10)
	if _, err := w.bw.WriteString(exchangeHeader(p, to)); err != nil {
		f.Abort()
		return nil, fmt.Errorf("write exchange file: %w", err)
	}
	return w, nil
}

// Write adds a line.
func (w *exchangeWriter) Write(l exchangeLine) error {
	if strings.ContainsAny(l.URL, "\t\r\n") {
		return fmt.Errorf("write exchange file: url %q holds a tab or newline", l.URL)
	}
	w.n++
	_, err := fmt.Fprintf(w.bw, "%s\t%d\t%d\t%s\t%s\n", l.Kind, l.Depth, l.Batch, l.URL, cleanAnchor(l.Anchor))
	if err != nil {
		return fmt.Errorf("write exchange file: %w", err)
	}
	return nil
}

// Commit flushes and syncs the file and puts it under its name in the
// pending directory.
func (w *exchangeWriter) Commit() error {
	if err := w.bw.Flush(); err != nil {
		w.f.Abort()
		return fmt.Errorf("write exchange file: %w", err)
	}
	if err := w.sw.Close(); err != nil {
		w.f.Abort()
		return fmt.Errorf("write exchange file: %w", err)
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("write exchange file: %w", err)
	}
	return nil
}

// Abort discards an uncommitted file.
func (w *exchangeWriter) Abort() { w.f.Abort() }

// readExchange reads an exchange file meant for partition p, calling fn
// for each line; it returns the sender's partition number.
func readExchange(path string, p partition.Partition, fn func(exchangeLine) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read exchange file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(snappy.NewReader(f))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	from := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			var v, to int
			var fromPart string
			if _, err := fmt.Sscanf(line, exchangeMagic+" %d from %s to %d", &v, &fromPart, &to); err != nil || v != ExchangeVersion {
				return 0, fmt.Errorf("%w: %s: line 1 %q: want %q", ErrExchangeFormat, path, line, strings.TrimSpace(exchangeHeader(p, p.I)))
			}
			sender, err := partition.Parse(fromPart)
			if err != nil || sender.K != p.K || to != p.I || sender.I == p.I {
				return 0, fmt.Errorf("%w: %s: from %s to %d, this collection is partition %s", ErrExchangeFormat, path, fromPart, to, p)
			}
			from = sender.I
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 || (f[0] != ExchangeLink && f[0] != ExchangeSite) {
			return 0, fmt.Errorf("%w: %s: line %d: want %s", ErrExchangeFormat, path, n, exchangeColumns)
		}
		depth, err1 := strconv.Atoi(f[1])
		batch, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || depth < 0 || batch < 0 || f[3] == "" {
			return 0, fmt.Errorf("%w: %s: line %d: bad depth, batch or url", ErrExchangeFormat, path, n)
		}
		if err := fn(exchangeLine{Kind: f[0], Depth: depth, Batch: batch, URL: f[3], Anchor: f[4]}); err != nil {
			return 0, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%w: %s: %w", ErrExchangeFormat, path, err)
	}
	if from == 0 {
		return 0, fmt.Errorf("%w: %s: empty", ErrExchangeFormat, path)
	}
	return from, nil
}

// exchangeIn lists the exchange files meant for partition p: its peers'
// published files (out/to-I/ of each of peers) and those copied into its
// own exchange/in/ (any subdirectory), as paths; unreadable directories
// are skipped (a peer not mounted yet).
func exchangeIn(col string, p partition.Partition, peers []string) []string {
	var dirs []string
	for _, peer := range peers {
		dirs = append(dirs, outDir(peer, p.I))
	}
	in := filepath.Join(col, ExchangeDir, "in")
	if subs, err := os.ReadDir(in); err == nil {
		for _, s := range subs {
			if s.IsDir() {
				dirs = append(dirs, filepath.Join(in, s.Name()))
			}
		}
	}
	var out []string
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if _, ok := parseExchangeName(e.Name()); ok && e.Type().IsRegular() {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// publishExchange moves the committed files of the pending directories
// (seqs: the numbers graph.db records as committed) to their published
// names, and removes the others (written by a transaction that did not
// commit). It returns the numbers it published.
func publishExchange(col string, committed func(seq uint64) bool) ([]uint64, error) {
	base := filepath.Join(col, ExchangeDir, "out")
	tos, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("publish exchange files: %w", err)
	}
	var done []uint64
	for _, to := range tos {
		pending := filepath.Join(base, to.Name(), "pending")
		entries, err := os.ReadDir(pending)
		if err != nil {
			continue
		}
		for _, e := range entries {
			seq, ok := parseExchangeName(e.Name())
			if !ok {
				continue // an atomic file's temporary: CreateAtomic's own
			}
			from := filepath.Join(pending, e.Name())
			if !committed(seq) {
				if err := os.Remove(from); err != nil {
					return done, fmt.Errorf("remove uncommitted exchange file: %w", err)
				}
				continue
			}
			if err := os.Rename(from, filepath.Join(base, to.Name(), e.Name())); err != nil {
				return done, fmt.Errorf("publish exchange file: %w", err)
			}
			done = append(done, seq)
		}
		if err := collection.SyncDir(filepath.Join(base, to.Name())); err != nil {
			return done, fmt.Errorf("publish exchange files: %w", err)
		}
	}
	return done, nil
}

// Taken files: a receiver J reports to each sender I the numbers of I's
// files it has taken in, in exchange/out/to-I/taken (written after the
// transaction that took them committed, so a number is never reported
// before it is taken). Sender I reads it where it reads J's links — a
// peer's exchange/out/to-I/, or a copy in its own exchange/in/ANY/ — and
// removes the published files it lists: a file is removed only once its
// receiver has taken it, and a copy of one seen again is still taken
// once (graph.db's record of numbers taken).
const (
	// TakenFile is the name of a receiver's report of the files taken.
	TakenFile  = "taken"
	takenMagic = "# wire-exchange-taken"
)

// takenText is the report of partition p that it took bm from partition
// from.
func takenText(p partition.Partition, from int, bm *roaring.Bitmap) []byte {
	var b []byte
	b = fmt.Appendf(b, "%s %d by %s from %d\n# the numbers of partition %d's exchange files partition %d has taken in: N or FIRST-LAST\n", takenMagic, ExchangeVersion, p, from, from, p.I)
	it := bm.Iterator()
	first, last, open := uint32(0), uint32(0), false
	flush := func() {
		if !open {
			return
		}
		if first == last {
			b = fmt.Appendf(b, "%d\n", first)
		} else {
			b = fmt.Appendf(b, "%d-%d\n", first, last)
		}
	}
	for it.HasNext() {
		v := it.Next()
		if open && v == last+1 {
			last = v
			continue
		}
		flush()
		first, last, open = v, v, true
	}
	flush()
	return b
}

// writeTaken reports to partition from the numbers of its files taken
// (bm), replacing the previous report when it changed.
func writeTaken(col string, p partition.Partition, from int, bm *roaring.Bitmap) error {
	if bm.IsEmpty() {
		return nil
	}
	path := filepath.Join(outDir(col, from), TakenFile)
	text := takenText(p, from, bm)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, text) {
		return nil
	}
	if err := collection.WriteFileAtomic(path, text); err != nil {
		return fmt.Errorf("report exchange files taken: %w", err)
	}
	return nil
}

// readTaken reads a report of files taken: the receiver's partition
// number and the numbers it took from partition p.
func readTaken(path string, p partition.Partition) (int, *roaring.Bitmap, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	bm := roaring.New()
	by := 0
	for n, line := range strings.Split(string(data), "\n") {
		if n == 0 {
			var v, from int
			var byPart string
			if _, err := fmt.Sscanf(line, takenMagic+" %d by %s from %d", &v, &byPart, &from); err != nil || v != ExchangeVersion {
				return 0, nil, fmt.Errorf("%w: %s: line 1 %q: want %q", ErrExchangeFormat, path, line, takenMagic+" 1 by J/K from I")
			}
			taker, err := partition.Parse(byPart)
			if err != nil || taker.K != p.K || from != p.I || taker.I == p.I {
				return 0, nil, fmt.Errorf("%w: %s: files of partition %d taken by %s, this collection is partition %s", ErrExchangeFormat, path, from, byPart, p)
			}
			by = taker.I
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		a, b, isRange := strings.Cut(line, "-")
		lo, err1 := strconv.ParseUint(a, 10, 32)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.ParseUint(b, 10, 32)
		}
		if err1 != nil || err2 != nil || hi < lo {
			return 0, nil, fmt.Errorf("%w: %s: line %d: want N or FIRST-LAST", ErrExchangeFormat, path, n+1)
		}
		bm.AddRange(lo, hi+1)
	}
	if by == 0 {
		return 0, nil, fmt.Errorf("%w: %s: empty", ErrExchangeFormat, path)
	}
	return by, bm, nil
}

// removeTaken removes this partition's published files that their
// receiver reported taken (its reports in peers' exchange/out/to-I/ and
// in this collection's exchange/in/ANY/), returning how many per
// receiver.
func removeTaken(col string, p partition.Partition, peers []string, log *slog.Logger) (map[int]int, error) {
	var reports []string
	for _, peer := range peers {
		reports = append(reports, filepath.Join(outDir(peer, p.I), TakenFile))
	}
	in := filepath.Join(col, ExchangeDir, "in")
	if subs, err := os.ReadDir(in); err == nil {
		for _, s := range subs {
			if s.IsDir() {
				reports = append(reports, filepath.Join(in, s.Name(), TakenFile))
			}
		}
	}
	removed := map[int]int{}
	for _, path := range reports {
		to, bm, err := readTaken(path, p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			log.Warn("report of exchange files taken skipped", "path", path, "err", err)
			continue
		}
		dir := outDir(col, to)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		n := 0
		for _, e := range entries {
			seq, ok := parseExchangeName(e.Name())
			if !ok || !e.Type().IsRegular() || seq > 1<<32-1 || !bm.Contains(uint32(seq)) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return removed, fmt.Errorf("remove exchange file taken: %w", err)
			}
			n++
		}
		if n > 0 {
			removed[to] += n
			if err := collection.SyncDir(dir); err != nil {
				return removed, fmt.Errorf("remove exchange files taken: %w", err)
			}
		}
	}
	return removed, nil
}

// ReadExchangeFile reads a published exchange file meant for partition
// p (docs/format/exchange.md), calling fn with the kind (ExchangeLink or
// ExchangeSite) and the URL of each line; it returns the sender's
// partition number. For tools that account for an exchange (crawlcheck
// exchange); the seeder's intake reads the files itself.
func ReadExchangeFile(path string, p partition.Partition, fn func(kind, url string) error) (int, error) {
	return readExchange(path, p, func(l exchangeLine) error { return fn(l.Kind, l.URL) })
}

// ExchangeOutDir is the directory where collection col publishes its
// exchange files for partition j.
func ExchangeOutDir(col string, j int) string { return outDir(col, j) }

// ParseExchangeName returns the sender's file number of an exchange file
// name (NNNNNNNN.sz), and false for any other name.
func ParseExchangeName(name string) (uint64, bool) { return parseExchangeName(name) }
