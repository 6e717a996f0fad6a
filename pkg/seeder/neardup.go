package seeder

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
)

// NearDupFile is the collection's table of the fingerprints of fetched
// pages (docs/seeder.md, "Near-duplicates"), in the collection directory.
const NearDupFile = "neardup.bin"

// nearDupHeader starts the file; records of 16 bytes follow: doc id and
// simhash, both little-endian uint64, in the order the pages were first
// fingerprinted.
const nearDupHeader = "# wire-neardup 1\n"

// nearDups is the table of fingerprints of fetched pages, read before a
// batch and written back with it: each fetched page's simhash is looked
// up among the pages fingerprinted before it (across sites), and a match
// within simhash.Distance makes it a near-duplicate (Doc.NearDup).
type nearDups struct {
	path  string
	table *simhash.Table
	// cur is each page's current fingerprint and its rank (order of first
	// fingerprint); the table keeps replaced fingerprints, which cur
	// tells apart.
	cur   map[uint64]nearEntry
	order []uint64 // ids by rank
	dirty bool
}

type nearEntry struct {
	fp   uint64
	rank int
}

// loadNearDups reads the table at path; a missing file is an empty table.
func loadNearDups(path string) (*nearDups, error) {
	n := &nearDups{path: path, cur: map[uint64]nearEntry{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		n.table = simhash.NewTable(0)
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open near-duplicate table: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head := make([]byte, len(nearDupHeader))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != nearDupHeader {
		return nil, fmt.Errorf("%w: %s: not a near-duplicate table of version 1", collection.ErrDamaged, path)
	}
	st, _ := f.Stat()
	size := 0
	if st != nil {
		size = int(st.Size()) / 16
	}
	n.table = simhash.NewTable(size)
	var rec [16]byte
	for {
		if _, err := io.ReadFull(br, rec[:]); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%w: %s: truncated record", collection.ErrDamaged, path)
		}
		n.put(binary.LittleEndian.Uint64(rec[:8]), binary.LittleEndian.Uint64(rec[8:]))
	}
	n.dirty = false
	return n, nil
}

// put records id's fingerprint.
func (n *nearDups) put(id, fp uint64) {
	e, ok := n.cur[id]
	if ok && e.fp == fp {
		return
	}
	if !ok {
		e.rank = len(n.order)
		n.order = append(n.order, id)
	}
	e.fp = fp
	n.cur[id] = e
	n.table.Add(id, fp)
	n.dirty = true
}

// check sets d's Simhash and NearDup from its new parsed record pd (a
// response with text): NearDup is the fetched page its rel=canonical
// names, else the closest page within simhash.Distance fingerprinted
// before d, else 0. It counts near-duplicates in s.
func (n *nearDups) check(tx *linkgraph.Tx, d *linkgraph.Doc, pd *parsed.Doc, s *Summary) error {
	fp, err := strconv.ParseUint(pd.Simhash, 16, 64)
	if err != nil || pd.Simhash == "" {
		fp = 0
	}
	d.Simhash, d.NearDup = fp, 0
	if pd.Canonical != "" && pd.Canonical != pd.URL {
		if id, ok := tx.LookupURL(pd.Canonical); ok && id != d.ID {
			c, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if fetchedCopy(c) {
				d.NearDup = id
				s.Canonical++
			}
		}
	}
	if fp == 0 {
		return nil
	}
	n.put(d.ID, fp)
	if d.NearDup != 0 {
		return nil
	}
	rank := n.cur[d.ID].rank
	if id, _, ok := n.table.Nearest(fp, d.ID, func(id, fp uint64) bool {
		e := n.cur[id]
		return e.fp == fp && e.rank < rank
	}); ok {
		d.NearDup = id
		s.NearDuplicates++
	}
	return nil
}

// save writes the table back (atomically) if it changed.
func (n *nearDups) save() error {
	if !n.dirty {
		return nil
	}
	err := collection.WriteAtomic(n.path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		bw.WriteString(nearDupHeader)
		var rec [16]byte
		for _, id := range n.order {
			binary.LittleEndian.PutUint64(rec[:8], id)
			binary.LittleEndian.PutUint64(rec[8:], n.cur[id].fp)
			bw.Write(rec[:])
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("write near-duplicate table: %w", err)
	}
	n.dirty = false
	return nil
}

// fetchedCopy tells whether the collection holds a fetched copy of d
// (as the manager's fetchedCopy).
func fetchedCopy(d *linkgraph.Doc) bool {
	switch d.State {
	case linkgraph.StateFetched:
		return true
	case linkgraph.StateFailed, linkgraph.StateScheduled:
		return d.Visits > 0 && !d.Fetched.IsZero()
	}
	return false
}
