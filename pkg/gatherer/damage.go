package gatherer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// maxDamaged is how many unread records a Summary names.
const maxDamaged = 10

// damage is a WARC record the gatherer could not read back: its file (as
// the fetch log names it, and with its directory), where it starts, the
// page it holds and what is wrong.
type damage struct {
	name   string // file name in the harvest directory (fetch log's WARC column)
	path   string // the file with its directory, for the operator
	offset int64
	url    string
	cause  string // without the file's name and offset
}

// newDamage describes the failed read of in's record.
func newDamage(in input, err error) *damage {
	rec := in.rec
	path := filepath.Join(in.dir, rec.WARC)
	cause := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cause = "the file is missing"
	default:
		// warcio says "bad WARC record: PATH at OFFSET: cause".
		cause = strings.TrimPrefix(cause, fmt.Sprintf("%v: %s at %d: ", warcio.ErrRecord, path, rec.Offset))
		cause = strings.ReplaceAll(cause, path, rec.WARC)
	}
	return &damage{name: rec.WARC, path: path, offset: rec.Offset, url: rec.URL, cause: cause}
}

// String is the damage without the directory, as docs.jsonl and the
// summary give it (so they do not depend on where the batch is).
func (d *damage) String() string {
	return fmt.Sprintf("%s at %d: %s", d.name, d.offset, d.cause)
}

// err is the error that stops a run without --salvage: one line naming
// the file, the offset and the ways out. It wraps collection.ErrDamaged
// (exit code 6).
func (d *damage) err() error {
	return fmt.Errorf("%w: WARC file %s, record at offset %d (%s): %s; restore the file from a copy and gather the batch again, or gather it with --salvage to take in the records that can be read (the others go back to the frontier, not fetched)",
		collection.ErrDamaged, d.path, d.offset, d.url, d.cause)
}

// unreadDoc turns the document record of an unread page into what the
// seeder takes as not attempted: no response, and the reason.
func (d *damage) unreadDoc(r *result) {
	r.unread = d
	r.doc.Status = 0
	r.doc.Err = parsed.Unread + ": " + d.String()
	r.doc.Redirect, r.doc.LastModified, r.doc.ETag = "", "", ""
}

// checkWARCs looks at the WARC files the fetch log names before anything
// is parsed: each must exist and be long enough for every record the
// fetch log places in it. It returns the first record (in fetch log
// order) a missing, empty or truncated file cannot hold, or nil.
func checkWARCs(ins []input) *damage {
	type file struct {
		size    int64
		missing bool
	}
	files := map[string]*file{}
	for _, in := range ins {
		rec := in.rec
		if rec.WARC == "" {
			continue
		}
		path := filepath.Join(in.dir, rec.WARC)
		f, ok := files[path]
		if !ok {
			f = &file{}
			st, err := os.Stat(path)
			switch {
			case err != nil && errors.Is(err, fs.ErrNotExist):
				f.missing = true
			case err != nil:
				return newDamage(in, err)
			default:
				f.size = st.Size()
			}
			files[path] = f
		}
		d := &damage{name: rec.WARC, path: path, offset: rec.Offset, url: rec.URL}
		switch {
		case f.missing:
			d.cause = "the file is missing"
		case f.size == 0:
			d.cause = "the file is empty"
		case rec.Offset+rec.Length > f.size:
			d.cause = fmt.Sprintf("the file ends at byte %d, before the end of the record (byte %d): truncated", f.size, rec.Offset+rec.Length)
		default:
			continue
		}
		return d
	}
	return nil
}
