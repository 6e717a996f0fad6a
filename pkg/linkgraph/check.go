package linkgraph

import (
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// Stats counts what the graph holds.
type Stats struct {
	Docs      int           `json:"docs"`
	Sites     int           `json:"sites"`
	Links     uint64        `json:"links"`     // page-to-page links (out-link set sizes)
	SiteLinks uint64        `json:"siteLinks"` // linked pairs of distinct sites
	Frontier  uint64        `json:"frontier"`  // documents in the frontier
	Parked    ParkedStats   `json:"parked"`    // park files not yet released
	ByState   map[State]int `json:"byState"`
}

// ParkedStats counts the park files not yet released and the links they
// hold.
type ParkedStats struct {
	Files int `json:"files"`
	Links int `json:"links"`
}

// Stats counts documents by state, sites, links, the frontier and the
// parked links.
func (t *Tx) Stats() (Stats, error) {
	s := Stats{ByState: map[State]int{}}
	if err := t.flushNew(); err != nil {
		return s, err
	}
	err := t.ForEachDoc(func(d *Doc) error {
		s.Docs++
		s.ByState[d.State]++
		return nil
	})
	if err != nil {
		return s, err
	}
	s.Sites = t.tx.Bucket(bucketSites).Stats().KeyN
	err = t.ForEachOutLinks(func(_ uint64, bm *roaring.Bitmap) error {
		s.Links += bm.GetCardinality()
		return nil
	})
	if err != nil {
		return s, err
	}
	if s.Frontier, err = t.FrontierSize(); err != nil {
		return s, err
	}
	if !t.legacy {
		if err := t.ForEachSiteLinks(func(_ uint64, linked *roaring.Bitmap, _ []uint32) error {
			s.SiteLinks += linked.GetCardinality()
			return nil
		}); err != nil {
			return s, err
		}
	}
	err = t.ForEachParked(func(p Parked) error {
		s.Parked.Files++
		s.Parked.Links += p.Links
		return nil
	})
	return s, err
}

// checkChunk is the number of target ids whose in-links Check rebuilds
// in memory at a time.
const checkChunk = 1 << 21

// Check verifies the graph's invariants (docs/format/linkgraph.md,
// "Invariants") and returns the violations found, at most limit:
//
//  1. every document's URL maps to its id in urls, and there are as many
//     URLs as documents, and as many documents as the counter next_doc
//     (ids have no gaps); the same for sites and next_site;
//  2. every document's site exists and its key is the site key of the
//     document's URL; every site's pages equals its number of documents;
//  3. every out-link set belongs to an existing document and names only
//     existing documents;
//  4. the in-link sets mirror the out-link sets exactly;
//  5. the site graph equals the one the out-links give (links between
//     pages of distinct sites, counted per pair of sites);
//  6. the frontier set holds exactly the documents that are InFrontier.
//
// A version 1 file opened read-only is checked for 1 to 3 only.
func (t *Tx) Check(limit int) []error {
	if limit <= 0 {
		limit = 100
	}
	var errs []error
	stop := errors.New("stop")
	add := func(format string, args ...any) error {
		errs = append(errs, fmt.Errorf(format, args...))
		if len(errs) >= limit {
			return stop
		}
		return nil
	}
	err := t.check(add)
	if err != nil && err != stop {
		errs = append(errs, err)
	}
	return errs
}

func (t *Tx) check(add func(format string, args ...any) error) error {
	if err := t.flushNew(); err != nil {
		return err
	}
	if !t.legacy {
		if err := t.flushLinks(); err != nil {
			return err
		}
	}
	nextDoc := t.counter(keyNextDoc)
	nextSite := t.counter(keyNextSite)
	if nextDoc > 1<<32-1 || nextSite > 1<<32-1 {
		return add("counters next_doc %d, next_site %d beyond 32 bits", nextDoc, nextSite)
	}
	urls := t.tx.Bucket(bucketURLs)

	// Sites: key ↔ id both ways.
	sites := make([]*Site, nextSite+1)
	nSites := 0
	if err := t.ForEachSite(func(s *Site) error {
		nSites++
		if s.ID == 0 || s.ID > nextSite {
			return add("site %d (%s): id above counter %d", s.ID, s.Key, nextSite)
		}
		sites[s.ID] = s
		if id, ok := t.SiteID(s.Key); !ok || id != s.ID {
			return add("site %d: key %s maps to id %d", s.ID, s.Key, id)
		}
		return nil
	}); err != nil {
		return err
	}
	if n := t.tx.Bucket(bucketSites).Stats().KeyN; n != nSites || uint64(n) != nextSite {
		if err := add("%d site keys, %d site records, counter next_site %d", n, nSites, nextSite); err != nil {
			return err
		}
	}

	// Documents: URL ↔ id both ways, sites, pages, frontier.
	docSite := make([]uint32, nextDoc+1)
	pages := make([]int, nextSite+1)
	frontier := roaring.New()
	nDocs := 0
	if err := t.ForEachDoc(func(d *Doc) error {
		nDocs++
		if d.ID == 0 || d.ID > nextDoc {
			return add("doc %d (%s): id above counter %d", d.ID, d.URL, nextDoc)
		}
		if v := urls.Get([]byte(d.URL)); v == nil || getU64(v) != d.ID {
			if err := add("doc %d: its url %s maps to id %d", d.ID, d.URL, getU64(v)); err != nil {
				return err
			}
		}
		if d.Site == 0 || d.Site > nextSite || sites[d.Site] == nil {
			return add("doc %d (%s): site %d does not exist", d.ID, d.URL, d.Site)
		}
		docSite[d.ID] = uint32(d.Site)
		pages[d.Site]++
		if key := urlnorm.SiteKey(d.URL); sites[d.Site].Key != key {
			if err := add("doc %d: url %s is not on its site %s", d.ID, d.URL, sites[d.Site].Key); err != nil {
				return err
			}
		}
		if d.InFrontier() {
			frontier.Add(uint32(d.ID))
		}
		return nil
	}); err != nil {
		return err
	}
	if n := urls.Stats().KeyN; n != nDocs || uint64(nDocs) != nextDoc {
		if err := add("%d urls, %d documents, counter next_doc %d", n, nDocs, nextDoc); err != nil {
			return err
		}
	}
	for id, s := range sites {
		if s != nil && s.Pages != pages[id] {
			if err := add("site %d (%s): pages %d, but %d documents", id, s.Key, s.Pages, pages[id]); err != nil {
				return err
			}
		}
	}

	// Out-links, and the site graph they give.
	type pair [2]uint32
	siteLinks := map[pair]uint32{}
	if err := t.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
		if id == 0 || id > nextDoc || docSite[id] == 0 {
			return add("out-links of missing doc %d", id)
		}
		src := docSite[id]
		it := bm.Iterator()
		for it.HasNext() {
			dst := it.Next()
			if dst == 0 || uint64(dst) > nextDoc || docSite[dst] == 0 {
				if err := add("doc %d links to missing doc %d", id, dst); err != nil {
					return err
				}
				continue
			}
			if s := docSite[dst]; s != src {
				siteLinks[pair{src, s}]++
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if t.legacy {
		return nil
	}

	// In-links mirror out-links, a range of targets at a time.
	for lo := uint64(0); lo <= nextDoc; lo += checkChunk {
		hi := lo + checkChunk
		want := map[uint32]*roaring.Bitmap{}
		if err := t.ForEachOutLinks(func(id uint64, bm *roaring.Bitmap) error {
			it := bm.Iterator()
			it.AdvanceIfNeeded(uint32(lo))
			for it.HasNext() {
				dst := it.Next()
				if uint64(dst) >= hi {
					break
				}
				w := want[dst]
				if w == nil {
					w = roaring.New()
					want[dst] = w
				}
				w.Add(uint32(id))
			}
			return nil
		}); err != nil {
			return err
		}
		c := t.tx.Bucket(bucketIn).Cursor()
		for k, v := c.Seek(u64(lo)); k != nil && getU64(k) < hi; k, v = c.Next() {
			id := getU64(k)
			got := roaring.New()
			if err := unmarshalBitmap(got, v); err != nil {
				if err := add("in-links of doc %d: %v", id, err); err != nil {
					return err
				}
				continue
			}
			w := want[uint32(id)]
			delete(want, uint32(id))
			if w == nil {
				w = roaring.New()
			}
			if !got.Equals(w) {
				extra := roaring.AndNot(got, w)
				missing := roaring.AndNot(w, got)
				if err := add("in-links of doc %d do not mirror out-links: %d extra (%v), %d missing (%v)", id, extra.GetCardinality(), firstFew(extra), missing.GetCardinality(), firstFew(missing)); err != nil {
					return err
				}
			}
		}
		for id, w := range want {
			if err := add("in-links of doc %d missing: linked from %v", id, firstFew(w)); err != nil {
				return err
			}
		}
	}

	// The site graph.
	if err := t.ForEachSiteLinks(func(site uint64, linked *roaring.Bitmap, counts []uint32) error {
		it := linked.Iterator()
		for i := 0; it.HasNext(); i++ {
			dst := it.Next()
			p := pair{uint32(site), dst}
			if want := siteLinks[p]; want != counts[i] {
				if err := add("site graph: %d links from site %d to site %d, out-links give %d", counts[i], site, dst, want); err != nil {
					return err
				}
			}
			delete(siteLinks, p)
		}
		return nil
	}); err != nil {
		return err
	}
	for p, n := range siteLinks {
		if err := add("site graph: no entry for the %d links from site %d to site %d", n, p[0], p[1]); err != nil {
			return err
		}
	}

	// The frontier set.
	stored, err := t.frontierSet()
	if err != nil {
		return add("%v", err)
	}
	if !stored.Equals(frontier) {
		extra := roaring.AndNot(stored, frontier)
		missing := roaring.AndNot(frontier, stored)
		return add("frontier set: %d ids that are not in the frontier (%v), %d frontier documents missing (%v)", extra.GetCardinality(), firstFew(extra), missing.GetCardinality(), firstFew(missing))
	}
	return nil
}

// firstFew lists at most five ids of a set, for messages.
func firstFew(bm *roaring.Bitmap) []uint32 {
	var out []uint32
	it := bm.Iterator()
	for it.HasNext() && len(out) < 5 {
		out = append(out, it.Next())
	}
	return out
}
