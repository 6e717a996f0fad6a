package seeder

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/simhash"
)

// NearDupFile is the collection's table of the fingerprints of fetched
// pages (docs/seeder.md, "Near-duplicates"), in the collection directory.
const NearDupFile = "neardup.bin"

// nearDupHeader starts the file; records of 16 bytes follow: doc id and
// current simhash, both little-endian uint64, one per page, in the order
// the pages were first fingerprinted. The table's version is the
// fingerprints' (simhash.Version): a table of version 1 holds
// fingerprints of the first scheme, which are not compared with the new
// ones, so loadNearDups starts an empty table in its place.
const nearDupHeader = "# wire-neardup 2\n"

// nearDupHeaderV1 starts a table of fingerprints of version 1.
const nearDupHeaderV1 = "# wire-neardup 1\n"

// nearDups is the table of fingerprints of fetched pages, read before a
// batch and written back with it: each fetched page's simhash is looked
// up among the pages fingerprinted before it (across sites), and a match
// within simhash.Distance makes it a near-duplicate (Doc.NearDup).
type nearDups struct {
	path string
	// sites counts, per site, the batch's fetched pages with text and,
	// per other site, those of them that are near-duplicates of its pages
	// (mirror detection).
	sites map[uint64]*siteCopies
	table *simhash.Table
	// A page's rank is the order in which it was first fingerprinted;
	// order and fps give each rank's doc id and current fingerprint, and
	// rankOf each doc id's rank plus one (doc ids are dense and below
	// 2^32). The table keeps replaced fingerprints, which fps tells apart.
	order  []uint64
	fps    []uint64
	rankOf []int32
	dirty  bool
	// discarded counts the fingerprints of another version that the
	// table held when read (a table of version 1), set aside.
	discarded int
}

// siteCopies is a site's count for mirror detection.
type siteCopies struct {
	pages int
	of    map[uint64]int // site id → pages that are near-duplicates of its pages
}

// Mirror detection thresholds (docs/seeder.md, "Near-duplicates").
const (
	// MirrorMinPages is the fewest pages with text a batch must fetch of
	// a site to decide whether it is a mirror.
	MirrorMinPages = 3
	// MirrorMinShare is the share of those pages that must be
	// near-duplicates of pages of one other site.
	MirrorMinShare = 0.5
)

// loadNearDups reads the table at path; a missing file is an empty table.
func loadNearDups(path string) (*nearDups, error) {
	n := &nearDups{path: path, sites: map[uint64]*siteCopies{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		n.table = simhash.NewTable()
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read near-duplicate table: %w", err)
	}
	if strings.HasPrefix(string(b[:min(len(b), len(nearDupHeaderV1))]), nearDupHeaderV1) {
		// Fingerprints of version 1: set aside. The pages come back
		// into the table as they are fetched again (docs/seeder.md,
		// "Near-duplicates"); the file is written anew with the batch.
		n.table, n.dirty, n.discarded = simhash.NewTable(), true, (len(b)-len(nearDupHeaderV1))/16
		return n, nil
	}
	if !strings.HasPrefix(string(b[:min(len(b), len(nearDupHeader))]), nearDupHeader) {
		return nil, fmt.Errorf("%w: %s: not a near-duplicate table of version 2", collection.ErrDamaged, path)
	}
	b = b[len(nearDupHeader):]
	if len(b)%16 != 0 {
		return nil, fmt.Errorf("%w: %s: truncated record", collection.ErrDamaged, path)
	}
	n.order, n.fps = make([]uint64, 0, len(b)/16), make([]uint64, 0, len(b)/16)
	for ; len(b) > 0; b = b[16:] {
		id, fp := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		if id == 0 || id >= 1<<32 || n.rank(id) >= 0 {
			return nil, fmt.Errorf("%w: %s: bad or repeated doc id %d", collection.ErrDamaged, path, id)
		}
		n.setRank(id, len(n.order))
		n.order = append(n.order, id)
		n.fps = append(n.fps, fp)
	}
	n.table = simhash.NewTableOf(n.order, n.fps)
	return n, nil
}

// rank returns id's rank, -1 if it has none.
func (n *nearDups) rank(id uint64) int {
	if id >= uint64(len(n.rankOf)) {
		return -1
	}
	return int(n.rankOf[id]) - 1
}

func (n *nearDups) setRank(id uint64, r int) {
	if id >= uint64(len(n.rankOf)) {
		n.rankOf = append(n.rankOf, make([]int32, int(id)+1-len(n.rankOf)+len(n.rankOf)/4)...)
	}
	n.rankOf[id] = int32(r + 1)
}

// put records id's fingerprint and returns its rank.
func (n *nearDups) put(id, fp uint64) int {
	r := n.rank(id)
	if r >= 0 && n.fps[r] == fp {
		return r
	}
	if r < 0 {
		r = len(n.order)
		n.setRank(id, r)
		n.order = append(n.order, id)
		n.fps = append(n.fps, fp)
	} else {
		n.fps[r] = fp
	}
	n.table.Add(id, fp)
	n.dirty = true
	return r
}

// nearest returns the page fingerprinted before rank whose current
// fingerprint is closest to fp within simhash.Distance.
func (n *nearDups) nearest(fp, id uint64, rank int) (uint64, bool) {
	c, _, ok := n.table.Nearest(fp, id, func(c, cfp uint64) bool {
		r := n.rank(c)
		return r >= 0 && r < rank && n.fps[r] == cfp
	})
	return c, ok
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
	d.Simhash, d.SimhashVersion, d.NearDup = fp, 0, 0
	if fp != 0 {
		d.SimhashVersion = pd.SimhashVersion()
	}
	if d.SimhashVersion != simhash.Version && fp != 0 {
		// A fingerprint of another version (a batch gathered before
		// the change) is stored with its version but not compared:
		// the page is looked up again when fetched again.
		fp = 0
		s.OldSimhashes++
	}
	if pd.Canonical != "" && pd.Canonical != pd.URL {
		if id, ok := tx.LookupURL(pd.Canonical); ok && id != d.ID {
			c, err := tx.Doc(id)
			if err != nil {
				return err
			}
			if c.HasFetchedCopy() {
				d.NearDup = id
				s.Canonical++
			}
		}
	}
	if fp == 0 || d.ID >= 1<<32 {
		return nil
	}
	rank := n.put(d.ID, fp)
	if d.NearDup == 0 {
		if id, ok := n.nearest(fp, d.ID, rank); ok {
			d.NearDup = id
			s.NearDuplicates++
		}
	}
	c := n.sites[d.Site]
	if c == nil {
		c = &siteCopies{of: map[uint64]int{}}
		n.sites[d.Site] = c
	}
	c.pages++
	if d.NearDup != 0 {
		site, err := tx.DocSite(d.NearDup)
		if err != nil {
			return err
		}
		if site != d.Site {
			c.of[site]++
		}
	}
	return nil
}

// mirrors decides, for each site of which the batch fetched at least
// MirrorMinPages pages with text, whether it mirrors another: the site
// whose pages most of them copy, if they are MirrorMinShare or more of
// them (ties to the smaller site id). It sets or clears Site.MirrorOf and
// counts the sites newly flagged and cleared.
func (n *nearDups) mirrors(in *intake, s *Summary) error {
	ids := make([]uint64, 0, len(n.sites))
	for id := range n.sites {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := n.sites[id]
		if c.pages < MirrorMinPages {
			continue
		}
		var of uint64
		best := 0
		for o, k := range c.of {
			if k > best || k == best && o < of {
				of, best = o, k
			}
		}
		if float64(best) < MirrorMinShare*float64(c.pages) {
			of = 0
		}
		e, err := in.siteByID(id)
		if err != nil {
			return err
		}
		if e.rec.MirrorOf == of {
			continue
		}
		if of != 0 {
			s.Mirrors++
		} else {
			s.MirrorsCleared++
		}
		e.rec.MirrorOf = of
		e.dirty = true
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
		for r, id := range n.order {
			binary.LittleEndian.PutUint64(rec[:8], id)
			binary.LittleEndian.PutUint64(rec[8:], n.fps[r])
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

// siteByID returns the intake's entry of site id, reading it from
// graph.db the first time.
func (in *intake) siteByID(id uint64) (*siteEntry, error) {
	if s, ok := in.byID[id]; ok {
		return s, nil
	}
	rec, err := in.tx.Site(id)
	if err != nil {
		return nil, err
	}
	s, err := in.site(rec.Key, false)
	if err == nil && s == nil {
		err = fmt.Errorf("site %d (%s) is not in the sites index", id, rec.Key)
	}
	return s, err
}
