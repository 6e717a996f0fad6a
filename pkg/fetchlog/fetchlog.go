// Package fetchlog reads and writes the harvester's output index: the
// fetch log (harvest/fetch.log, one line per URL of the batch that was
// tried) and the robots file (harvest/robots.jsonl, one line per site).
// The page bytes themselves are in WARC files beside them; each fetch log
// line points at its response record. Formats: docs/format/harvest.md.
package fetchlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the fetch log format version this program writes. Version
// 2 marks harvests that may hold raw records and identical-payload
// revisit records (docs/format/harvest.md, "Changes"): a gatherer that
// reads only version 1 refuses them instead of reading a revisit as an
// empty page.
const Version = 2

// OldestVersion is the oldest fetch log format version this program
// reads: a version 1 harvest is read as before.
const OldestVersion = 1

// File names inside a harvest directory.
const (
	LogFile     = "fetch.log"
	RobotsFile  = "robots.jsonl"
	ServersFile = "servers.jsonl"
	header      = "# wire-fetchlog"
)

// Columns are the tab-separated fields of a fetch log line.
var Columns = []string{"docid", "url", "status", "bytes", "mime", "fetched", "ms", "warc", "offset", "length", "location", "error"}

// ErrFormat marks a fetch log or robots file that cannot be read.
var ErrFormat = errors.New("malformed harvest output")

// ErrVersion is returned for a fetch log of a format version this
// program does not read: not damage, a version to upgrade to.
var ErrVersion = errors.New("harvest output of an unsupported format version")

// Record is the outcome of fetching one URL of a batch.
type Record struct {
	DocID    uint64    // id from the batch file
	URL      string    // URL as in the batch file
	Status   int       // HTTP status; 0 when no response was received
	Bytes    int64     // body bytes stored (after any Content-Encoding was decoded)
	MIME     string    // media type from Content-Type, lower-case, without parameters
	Fetched  time.Time // when the request started
	Millis   int64     // time from request to end of body
	WARC     string    // WARC file name in the harvest directory holding the response record; "" if none
	Offset   int64     // byte offset of the response record in that file
	Length   int64     // byte length of the record (its gzip member) in that file
	Location string    // redirect target for 3xx, as sent (may be relative)
	Err      string    // why the fetch failed or was not attempted ("robots", "timeout: ...", ...); "" on success
}

// OK reports whether a response was received and stored.
func (r *Record) OK() bool { return r.Err == "" && r.Status > 0 }

// Header returns the first line of a fetch log.
func Header() string {
	return fmt.Sprintf("%s %d\n# columns: %s\n", header, Version, strings.Join(Columns, " "))
}

func clean(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

func unclean(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// Format returns the record as one fetch log line, newline included.
func (r *Record) Format() string {
	n := 96 + len(r.URL) + len(r.MIME) + len(r.WARC) + len(r.Location) + len(r.Err)
	return string(r.AppendFormat(make([]byte, 0, n)))
}

// AppendFormat appends the record as one fetch log line, newline
// included, to b and returns the extended slice: the same bytes as
// Format, without its allocations (the harvester writes a line per page
// with it).
func (r *Record) AppendFormat(b []byte) []byte {
	b = strconv.AppendUint(b, r.DocID, 10)
	b = append(b, '\t')
	b = appendClean(b, r.URL)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, r.Bytes, 10)
	b = append(b, '\t')
	b = appendClean(b, r.MIME)
	b = append(b, '\t')
	b = r.Fetched.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '\t')
	b = strconv.AppendInt(b, r.Millis, 10)
	b = append(b, '\t')
	b = appendClean(b, r.WARC)
	b = append(b, '\t')
	b = strconv.AppendInt(b, r.Offset, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, r.Length, 10)
	b = append(b, '\t')
	b = appendClean(b, r.Location)
	b = append(b, '\t')
	b = appendClean(b, r.Err)
	return append(b, '\n')
}

// appendClean appends clean(s): s itself when it is plain ASCII without
// tabs or line ends (the common case, no allocation), else what clean
// makes of it (which also replaces invalid UTF-8, as strings.Map does).
func appendClean(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\t' || c == '\n' || c == '\r' {
			return append(b, clean(s)...)
		}
	}
	return append(b, s...)
}

func parse(line string) (Record, error) {
	f := strings.Split(line, "\t")
	if len(f) != len(Columns) {
		return Record{}, fmt.Errorf("want %d fields, got %d", len(Columns), len(f))
	}
	var r Record
	var err error
	num := func(i int) int64 {
		if err != nil {
			return 0
		}
		var n int64
		n, err = strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			err = fmt.Errorf("field %s: %q is not a number", Columns[i], f[i])
		}
		return n
	}
	if r.DocID, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return r, fmt.Errorf("field docid: %q is not a number", f[0])
	}
	r.URL = unclean(f[1])
	r.Status = int(num(2))
	r.Bytes = num(3)
	r.MIME = unclean(f[4])
	r.Millis = num(6)
	r.WARC = unclean(f[7])
	r.Offset = num(8)
	r.Length = num(9)
	r.Location = unclean(f[10])
	r.Err = unclean(f[11])
	if err != nil {
		return r, err
	}
	if r.Fetched, err = time.Parse(time.RFC3339Nano, f[5]); err != nil {
		return r, fmt.Errorf("field fetched: %q is not an RFC 3339 time", f[5])
	}
	return r, nil
}

// parseLine parses line n (from 1) of a fetch log: the header (checked,
// no record), a comment or blank line (no record), or a record.
func parseLine(n int, line string) (Record, bool, error) {
	if n == 1 {
		v, ok := strings.CutPrefix(line, header+" ")
		if !ok {
			return Record{}, false, fmt.Errorf("%w: line 1: want %q, got %q", ErrFormat, fmt.Sprintf("%s %d", header, Version), line)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || v != strconv.Itoa(n) {
			return Record{}, false, fmt.Errorf("%w: line 1: want %q, got %q", ErrFormat, fmt.Sprintf("%s %d", header, Version), line)
		}
		if n < OldestVersion || n > Version {
			return Record{}, false, fmt.Errorf("%w: line 1: version %d, this program reads %d to %d", ErrVersion, n, OldestVersion, Version)
		}
		return Record{}, false, nil
	}
	if strings.HasPrefix(line, "#") || line == "" {
		return Record{}, false, nil
	}
	rec, err := parse(line)
	if err != nil {
		return Record{}, false, fmt.Errorf("%w: line %d: %w", ErrFormat, n, err)
	}
	return rec, true, nil
}

// Read parses a fetch log. A last line without its newline (left by a
// killed harvester) is ignored; any other bad line is an error naming it.
func Read(r io.Reader) ([]Record, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var out []Record
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return out, nil // a partial last line is an interrupted write
		}
		if err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		rec, ok, err := parseLine(n, strings.TrimSuffix(line, "\n"))
		if err != nil {
			return out, err
		}
		if !ok {
			continue
		}
		out = append(out, rec)
	}
}

// ReadFile reads the fetch log at path.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open fetch log %s: %w", path, err)
	}
	defer f.Close()
	recs, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("read fetch log %s: %w", path, err)
	}
	return recs, nil
}

// Robots is the harvester's copy of one site's robots.txt.
type Robots struct {
	Site    string    `json:"site"`            // scheme://host[:port]
	Status  int       `json:"status"`          // HTTP status; 0 if unreachable
	Fetched time.Time `json:"fetched"`         // when it was fetched
	Body    string    `json:"body,omitempty"`  // the file, up to harvester.max_robots_bytes
	Err     string    `json:"error,omitempty"` // network error, if any
}

// ReadRobots reads a robots file (JSON lines). A partial last line is
// ignored as in Read.
func ReadRobots(path string) ([]Robots, error) { return readJSONLines[Robots](path, "robots") }

// ReadRobotsFrom reads the content of a robots file from r as ReadRobots
// does; name (the file's path) is for errors.
func ReadRobotsFrom(r io.Reader, name string) ([]Robots, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read robots file %s: %w", name, err)
	}
	return parseJSONLines[Robots](data, name)
}

// readJSONLines reads a file of one JSON value per line as parseJSONLines
// does.
func readJSONLines[T any](path, what string) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s file %s: %w", what, path, err)
	}
	return parseJSONLines[T](data, path)
}

// parseJSONLines parses the content of a file of one JSON value per line;
// the text after the last newline (empty, or a line torn by a crash) is
// ignored, and so are blank lines. On a bad line it returns the values
// before it and an error naming path and the line.
func parseJSONLines[T any](data []byte, path string) ([]T, error) {
	var out []T
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		if i == len(lines)-1 || strings.TrimSpace(line) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return out, fmt.Errorf("%w: %s line %d: %w", ErrFormat, path, i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// FormatRobots returns r as one robots file line, newline included.
func FormatRobots(r Robots) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode robots of %s: %w", r.Site, err)
	}
	return append(b, '\n'), nil
}

// Server is what the harvester measured of one server (host name) during
// a batch: the estimates of Cao et al.'s two-level scheduling, exponentially
// weighted moving averages with alpha 0.8. A zero estimate means "not
// measured" (e.g. a host that did not resolve). The harvester writes them to
// harvest/servers.jsonl; the seeder keeps them per site; the manager copies
// the known ones into the next batch directory's servers.jsonl so the
// harvester can rank servers before it has measured them again.
type Server struct {
	Host            string    `json:"host"`                      // host name
	IP              string    `json:"ip,omitempty"`              // address used
	ConnectMs       float64   `json:"connectMs"`                 // time to open a connection
	ResponseMs      float64   `json:"responseMs"`                // time from request to end of a page
	RequestsPerConn float64   `json:"requestsPerConn,omitempty"` // pages served per kept-alive connection
	Pages           int       `json:"pages,omitempty"`           // pages fetched in this batch
	Bytes           int64     `json:"bytes,omitempty"`           // body bytes in this batch
	Errors          int       `json:"errors,omitempty"`          // failed requests in this batch
	Measured        time.Time `json:"measured"`                  // when the estimates were last updated
	// DNSError is why the host name did not resolve in this batch (the
	// fetch log text, "dns: no such host www.x.cl"); empty when it did.
	DNSError string `json:"dnsError,omitempty"`
	// GaveUp is why the harvester gave the host up for the rest of the
	// batch ("3 consecutive failures (last: timeout)"), if it did.
	GaveUp string `json:"gaveUp,omitempty"`
	// Streak counts the host's page responses in a row cut at the body cap
	// or by a time limit after the headers, as the harvester left it: it
	// starts from the batch's servers.jsonl (the count at the end of the
	// host's last harvest) and a whole response sets it back to 0.
	Streak int `json:"streak,omitempty"`
	// Streaming says the harvester gave the host up in this batch because
	// Streak reached harvester.max_streaming (GaveUp then starts with
	// "streaming:").
	Streaming bool `json:"streaming,omitempty"`
	// NotBefore is the earliest time the host may be asked again (its
	// last request's end plus its wait or Crawl-delay), when that was
	// still to come as the harvester finished with the host; the next
	// batch's harvester does not ask it before then.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// CrawlDelay is a robots.txt Crawl-delay, in seconds, with the address
	// it holds at (IP). In a batch's servers.jsonl (the manager's) it is
	// that of the host's stored robots.txt, and the line may name a host
	// outside the batch (a site of one of the batch's registrable
	// domains); in a harvest's, the longest the harvester kept for the
	// host's politeness unit (capped at max_crawl_delay). Either way the
	// next harvester gives it to the unit of the host's registrable domain
	// on that address, so every name that resolves there keeps it from its
	// first request.
	CrawlDelay float64 `json:"crawlDelay,omitempty"`
	// UnitCrawlDelay was written by managers before 2026-12-07 (the
	// longest Crawl-delay of the host's unit as the manager guessed it);
	// the harvester still obeys it in an older batch. No longer written.
	UnitCrawlDelay float64 `json:"unitCrawlDelay,omitempty"`
}

// FormatServer returns s as one servers file line, newline included.
func FormatServer(s Server) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode server %s: %w", s.Host, err)
	}
	return append(b, '\n'), nil
}

// WriteLines writes recs to w as JSON lines, each formatted by format
// (FormatRobots, FormatServer): the content of a robots or servers file.
func WriteLines[T any](w io.Writer, recs []T, format func(T) ([]byte, error)) error {
	for _, r := range recs {
		line, err := format(r)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// ReadServers reads a servers file (JSON lines); a partial last line is
// ignored as in Read.
func ReadServers(path string) ([]Server, error) { return readJSONLines[Server](path, "servers") }

// ParseServers reads the content of a servers file; name is for errors.
func ParseServers(data []byte, name string) ([]Server, error) {
	return parseJSONLines[Server](data, name)
}
