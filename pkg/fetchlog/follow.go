package fetchlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrReplaced is returned by Follower.Next when the fetch log it follows
// was replaced by another file (a resumed harvest repairs its log by
// rewriting it): what was read may no longer be the log's beginning.
var ErrReplaced = errors.New("fetch log replaced while followed")

// Follower reads a fetch log while the harvester appends to it: each
// call to Next returns the records of the complete lines added since the
// last call. The harvester writes a line only after the WARC record it
// points at (harvest.md), so a record Next returns can be read at once.
type Follower struct {
	path    string
	f       *os.File
	pending []byte // a line not complete yet
	line    int    // lines read
	buf     []byte
}

// NewFollower follows the fetch log at path, which need not exist yet.
func NewFollower(path string) *Follower { return &Follower{path: path} }

// Close closes the file followed.
func (t *Follower) Close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// Next returns the records of the lines completed since the last call;
// none while the file does not exist. It fails with ErrReplaced when the
// path now names another file than the one being read, and with the
// format errors of Read.
func (t *Follower) Next() ([]Record, error) {
	if t.f == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("follow fetch log %s: %w", t.path, err)
		}
		t.f = f
	} else if err := t.same(); err != nil {
		return nil, err
	}
	if t.buf == nil {
		t.buf = make([]byte, 64<<10)
	}
	var out []Record
	for {
		n, err := t.f.Read(t.buf)
		data := t.buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				t.pending = append(t.pending, data...)
				break
			}
			line := data[:i]
			if len(t.pending) > 0 {
				line = append(t.pending, line...)
				t.pending = t.pending[:0]
			}
			data = data[i+1:]
			t.line++
			rec, ok, perr := parseLine(t.line, string(line))
			if perr != nil {
				return out, fmt.Errorf("follow fetch log %s: %w", t.path, perr)
			}
			if ok {
				out = append(out, rec)
			}
		}
		if err == io.EOF || n == 0 {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("follow fetch log %s: %w", t.path, err)
		}
	}
}

// same checks that the path still names the file being read. A path
// that is gone (the harvest directory renamed when it was published)
// keeps the open file: it is the same file under its new name.
func (t *Follower) same() error {
	st, err := os.Stat(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("follow fetch log %s: %w", t.path, err)
	}
	open, err := t.f.Stat()
	if err != nil {
		return fmt.Errorf("follow fetch log %s: %w", t.path, err)
	}
	if !os.SameFile(st, open) {
		return fmt.Errorf("follow fetch log %s: %w", t.path, ErrReplaced)
	}
	return nil
}
