package linkgraph

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Target is one out-link of a page: the target document and its site.
type Target struct {
	Doc  uint64
	Site uint64
}

// OutLinks returns a copy of the out-link set of a document (empty if it
// has none), safe to keep after the transaction.
func (t *Tx) OutLinks(id uint64) (*roaring.Bitmap, error) {
	bm := roaring.New()
	v := t.outValue(id)
	if v == nil {
		return bm, nil
	}
	if err := unmarshalBitmap(bm, v); err != nil {
		return nil, fmt.Errorf("out-links of doc %d: %w: %w", id, ErrCorrupt, err)
	}
	return bm, nil
}

// outValue is the stored out-link set of a document, as written in this
// transaction or in the bucket.
func (t *Tx) outValue(id uint64) []byte {
	if v, ok := t.newOut[id]; ok {
		return v
	}
	return t.tx.Bucket(bucketOut).Get(u64(id))
}

// putOut stores an out-link set; the sets are written in id order when the
// transaction ends (a batch's pages come in any order, and random inserts
// into one bbolt node are quadratic before the commit splits it).
func (t *Tx) putOut(id uint64, v []byte) {
	if t.newOut == nil {
		t.newOut = map[uint64][]byte{}
	}
	t.newOut[id] = v
	t.logChange(outLog, id)
}

// flushOut writes the out-link sets stored in this transaction.
func (t *Tx) flushOut() error {
	if len(t.newOut) == 0 {
		return nil
	}
	if err := putInIDOrder(t.tx.Bucket(bucketOut), t.newOut, "out-links of doc"); err != nil {
		return err
	}
	t.newOut = nil
	return nil
}

// InLinks returns a copy of the in-link set of a document: the documents
// whose out-links contain it.
func (t *Tx) InLinks(id uint64) (*roaring.Bitmap, error) {
	if t.legacy {
		return nil, ErrNeedsUpgrade
	}
	if err := t.flushLinks(); err != nil {
		return nil, err
	}
	return t.bitmap(bucketIn, id, "in-links")
}

func (t *Tx) bitmap(bucket []byte, id uint64, what string) (*roaring.Bitmap, error) {
	bm := roaring.New()
	b := t.tx.Bucket(bucket)
	if b == nil {
		return bm, nil
	}
	v := b.Get(u64(id))
	if v == nil {
		return bm, nil
	}
	if err := unmarshalBitmap(bm, v); err != nil {
		return nil, fmt.Errorf("%s of doc %d: %w: %w", what, id, ErrCorrupt, err)
	}
	return bm, nil
}

// SetOutLinks replaces the out-link set of a document, keeping the
// in-links and the site graph in step; the sites of the documents are
// read from their records. ReplaceOutLinks does the same without those
// reads when the caller knows the sites.
func (t *Tx) SetOutLinks(id uint64, bm *roaring.Bitmap) error {
	src, err := t.DocSite(id)
	if err != nil {
		return fmt.Errorf("out-links of doc %d: %w", id, err)
	}
	targets := make([]Target, 0, bm.GetCardinality())
	it := bm.Iterator()
	for it.HasNext() {
		dst := uint64(it.Next())
		site, err := t.DocSite(dst)
		if err != nil {
			return fmt.Errorf("out-links of doc %d: %w", id, err)
		}
		targets = append(targets, Target{Doc: dst, Site: site})
	}
	_, err = t.ReplaceOutLinks(id, src, targets)
	return err
}

// ReplaceOutLinks replaces the out-link set of document src (of site
// srcSite) with targets (duplicates allowed; each Site must be the site of
// its Doc) and records the changes of in-links and of the site graph,
// which are written grouped by target at the end of the transaction. It
// returns the number of distinct targets stored.
func (t *Tx) ReplaceOutLinks(src, srcSite uint64, targets []Target) (uint64, error) {
	for _, tg := range targets {
		if tg.Doc == 0 || tg.Doc > 1<<32-1 {
			return 0, fmt.Errorf("out-links of doc %d: bad target id %d", src, tg.Doc)
		}
	}
	v := t.outValue(src)
	if v == nil {
		return t.newOutLinks(src, srcSite, targets), nil
	}
	old := roaring.New()
	if err := unmarshalBitmap(old, v); err != nil {
		return 0, fmt.Errorf("out-links of doc %d: %w: %w", src, ErrCorrupt, err)
	}
	nw := roaring.New()
	s32 := uint32(srcSite)
	for _, tg := range targets {
		if nw.CheckedAdd(uint32(tg.Doc)) && !old.Contains(uint32(tg.Doc)) {
			t.inAdd.add(tg.Doc<<32 | src)
			t.siteDelta(s32, uint32(tg.Site), 1)
		}
	}
	it := old.Iterator()
	for it.HasNext() {
		dst := it.Next()
		if nw.Contains(dst) {
			continue
		}
		t.inDel = append(t.inDel, uint64(dst)<<32|src)
		site, err := t.DocSite(uint64(dst))
		if err != nil {
			return 0, fmt.Errorf("out-links of doc %d: %w", src, err)
		}
		t.siteDelta(s32, uint32(site), -1)
	}
	nw.RunOptimize()
	v, err := nw.ToBytes()
	if err != nil {
		return 0, fmt.Errorf("out-links of doc %d: %w", src, err)
	}
	t.putOut(src, v)
	return nw.GetCardinality(), nil
}

// newOutLinks is ReplaceOutLinks for a document without out-links (a
// page fetched for the first time): the set is serialized from the
// sorted targets without building a bitmap. The targets' ids are valid.
func (t *Tx) newOutLinks(src, srcSite uint64, targets []Target) uint64 {
	sorted := append(t.sortedTargets[:0], targets...)
	slices.SortFunc(sorted, func(a, b Target) int { return cmp.Compare(a.Doc, b.Doc) })
	ids := t.ids[:0]
	s32 := uint32(srcSite)
	for i, tg := range sorted {
		if i > 0 && tg.Doc == sorted[i-1].Doc {
			continue // each target once (with its site, the same for every Target of a Doc)
		}
		ids = append(ids, uint32(tg.Doc))
		t.inAdd.add(tg.Doc<<32 | src)
		t.siteDelta(s32, uint32(tg.Site), 1)
	}
	t.sortedTargets, t.ids = sorted, ids
	t.putOut(src, sortedSetBytes(ids))
	return uint64(len(ids))
}

// AddOutLinks adds targets to the out-link set of document src (of site
// srcSite), keeping the links it already has, with the in-links and the
// site graph in step. It returns the number of links added.
func (t *Tx) AddOutLinks(src, srcSite uint64, targets []Target) (uint64, error) {
	bm := roaring.New()
	if v := t.outValue(src); v != nil {
		if err := unmarshalBitmap(bm, v); err != nil {
			return 0, fmt.Errorf("out-links of doc %d: %w: %w", src, ErrCorrupt, err)
		}
	}
	var added uint64
	for _, tg := range targets {
		if tg.Doc == 0 || tg.Doc > 1<<32-1 {
			return 0, fmt.Errorf("out-links of doc %d: bad target id %d", src, tg.Doc)
		}
		if bm.CheckedAdd(uint32(tg.Doc)) {
			added++
			t.inAdd.add(tg.Doc<<32 | src)
			t.siteDelta(uint32(srcSite), uint32(tg.Site), 1)
		}
	}
	if added == 0 {
		return 0, nil
	}
	bm.RunOptimize()
	v, err := bm.ToBytes()
	if err != nil {
		return 0, fmt.Errorf("out-links of doc %d: %w", src, err)
	}
	t.putOut(src, v)
	return added, nil
}

func (t *Tx) siteDelta(src, dst uint32, n int64) {
	if src == dst {
		return // the site graph has no loops
	}
	if t.siteDeltas == nil {
		t.siteDeltas = map[[2]uint32]int64{}
	}
	k := [2]uint32{src, dst}
	if v := t.siteDeltas[k] + n; v != 0 {
		t.siteDeltas[k] = v
	} else {
		delete(t.siteDeltas, k)
	}
}

// flushLinks writes the gathered in-link and site graph changes: each
// target's in-link set and each site's links are read and written once.
func (t *Tx) flushLinks() error {
	if err := t.flushInLinks(); err != nil {
		return err
	}
	return t.flushSiteLinks()
}

func (t *Tx) flushInLinks() error {
	p, err := t.takePrep()
	if err != nil {
		return err
	}
	var values []inValue
	if p != nil && p.withIn && t.inAdd.len() == 0 && len(t.inDel) == 0 {
		// Computed by PrepareFlush, and no change since.
		values = p.in
		p.withIn, p.in, p.inAdd, p.inDel = false, nil, nil, nil
	} else {
		var add []uint64
		if p != nil && p.withIn {
			// Changes came after PrepareFlush: its result is incomplete.
			add = p.inAdd
			t.inDel = append(p.inDel, t.inDel...)
			p.withIn, p.in, p.inAdd, p.inDel = false, nil, nil, nil
		}
		add = t.inAdd.appendTo(add)
		t.inAdd = blocks[uint64]{}
		if len(add) == 0 && len(t.inDel) == 0 {
			return nil
		}
		add = sortU64(add, nil)
		t.inDel = sortU64(t.inDel, nil)
		if values, err = inLinkValues(add, t.inDel, t.tx.Bucket(bucketIn).Get); err != nil {
			return err
		}
	}
	in := t.tx.Bucket(bucketIn)
	key := make([]byte, 8) // bbolt copies keys
	for _, v := range values {
		binary.BigEndian.PutUint64(key, v.target)
		if v.value == nil {
			if err := in.Delete(key); err != nil {
				return fmt.Errorf("in-links of doc %d: %w", v.target, err)
			}
			continue
		}
		if err := in.Put(key, v.value); err != nil {
			return fmt.Errorf("in-links of doc %d: %w", v.target, err)
		}
	}
	t.inDel = t.inDel[:0]
	t.inWritten = true
	return nil
}

// inValue is the new in-link set of a target: nil when it is empty (the
// key is deleted).
type inValue struct {
	target uint64
	value  []byte
}

// inLinkValues computes the in-link sets that the sorted changes add and
// del (target<<32 | source) make, in target order, reading the current
// sets with get. It writes nothing, so it may run on a snapshot of the
// in-links bucket (PrepareFlush).
func inLinkValues(add, del []uint64, get func(key []byte) []byte) ([]inValue, error) {
	out := make([]inValue, 0, countTargets(add, del))
	var adds, dels []uint32
	for len(add) > 0 || len(del) > 0 {
		// The next target with changes.
		target := uint64(1<<64 - 1)
		if len(add) > 0 {
			target = add[0] >> 32
		}
		if len(del) > 0 && del[0]>>32 < target {
			target = del[0] >> 32
		}
		adds, dels = adds[:0], dels[:0]
		// Each change was computed against the set as it stood, so a
		// pair's changes alternate: more adds than removes means the link
		// is there now, more removes that it is gone.
		for len(add) > 0 || len(del) > 0 {
			var pair uint64
			switch {
			case len(add) > 0 && (len(del) == 0 || add[0] <= del[0]):
				pair = add[0]
			default:
				pair = del[0]
			}
			if pair>>32 != target {
				break
			}
			n := 0
			for len(add) > 0 && add[0] == pair {
				n++
				add = add[1:]
			}
			for len(del) > 0 && del[0] == pair {
				n--
				del = del[1:]
			}
			switch {
			case n > 0:
				adds = append(adds, uint32(pair))
			case n < 0:
				dels = append(dels, uint32(pair))
			}
		}
		if len(adds) == 0 && len(dels) == 0 {
			continue
		}
		v := get(u64(target))
		if v == nil && len(dels) == 0 {
			// A target without in-links so far (a new document, most of
			// a batch's targets): adds is its sorted set.
			out = append(out, inValue{target: target, value: sortedSetBytes(adds)})
			continue
		}
		bm := roaring.New()
		if v != nil {
			if err := unmarshalBitmap(bm, v); err != nil {
				return nil, fmt.Errorf("in-links of doc %d: %w: %w", target, ErrCorrupt, err)
			}
		}
		bm.AddMany(adds)
		for _, s := range dels {
			bm.Remove(s)
		}
		if bm.IsEmpty() {
			out = append(out, inValue{target: target})
			continue
		}
		bm.RunOptimize()
		v, err := bm.ToBytes()
		if err != nil {
			return nil, fmt.Errorf("in-links of doc %d: %w", target, err)
		}
		out = append(out, inValue{target: target, value: v})
	}
	return out, nil
}

// countTargets is the number of distinct targets of the sorted changes
// add and del (target<<32 | source), an upper bound of the number of
// in-link sets they change.
func countTargets(add, del []uint64) int {
	n := 0
	last := uint64(1<<64 - 1)
	for len(add) > 0 || len(del) > 0 {
		var pair uint64
		if len(add) > 0 && (len(del) == 0 || add[0] <= del[0]) {
			pair, add = add[0], add[1:]
		} else {
			pair, del = del[0], del[1:]
		}
		if pair>>32 != last {
			last = pair >> 32
			n++
		}
	}
	return n
}

func (t *Tx) flushSiteLinks() error {
	if len(t.siteDeltas) == 0 {
		return nil
	}
	keys := make([][2]uint32, 0, len(t.siteDeltas))
	for k := range t.siteDeltas {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]uint32) int {
		if a[0] != b[0] {
			return int(int64(a[0]) - int64(b[0]))
		}
		return int(int64(a[1]) - int64(b[1]))
	})
	sl := t.tx.Bucket(bucketSiteLinks)
	for len(keys) > 0 {
		src := keys[0][0]
		n := 1
		for n < len(keys) && keys[n][0] == src {
			n++
		}
		links, err := decodeSiteLinks(src, sl.Get(u64(uint64(src))))
		if err != nil {
			return err
		}
		for _, k := range keys[:n] {
			c := int64(links[k[1]]) + t.siteDeltas[k]
			switch {
			case c < 0:
				return fmt.Errorf("site graph: links from site %d to site %d would be %d", src, k[1], c)
			case c == 0:
				delete(links, k[1])
			default:
				links[k[1]] = uint32(c)
			}
		}
		if len(links) == 0 {
			if err := sl.Delete(u64(uint64(src))); err != nil {
				return err
			}
		} else if err := sl.Put(u64(uint64(src)), encodeSiteLinks(links)); err != nil {
			return fmt.Errorf("site links of site %d: %w", src, err)
		}
		keys = keys[n:]
	}
	clear(t.siteDeltas)
	return nil
}

// encodeSiteLinks writes a site's links: uvarint length of a roaring
// bitmap of the linked site ids, the bitmap (portable format), then for
// each linked site in increasing order the number of page links (uvarint).
func encodeSiteLinks(links map[uint32]uint32) []byte {
	bm := roaring.New()
	for s := range links {
		bm.Add(s)
	}
	bm.RunOptimize()
	rb := mustBytes(bm)
	b := binary.AppendUvarint(nil, uint64(len(rb)))
	b = append(b, rb...)
	it := bm.Iterator()
	for it.HasNext() {
		b = binary.AppendUvarint(b, uint64(links[it.Next()]))
	}
	return b
}

func decodeSiteLinks(site uint32, v []byte) (map[uint32]uint32, error) {
	links := map[uint32]uint32{}
	if v == nil {
		return links, nil
	}
	bm, counts, err := splitSiteLinks(site, v)
	if err != nil {
		return nil, err
	}
	it := bm.Iterator()
	for i := 0; it.HasNext(); i++ {
		links[it.Next()] = counts[i]
	}
	return links, nil
}

func splitSiteLinks(site uint32, v []byte) (*roaring.Bitmap, []uint32, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return nil, nil, fmt.Errorf("site links of site %d: %w: bad length", site, ErrCorrupt)
	}
	bm := roaring.New()
	if err := unmarshalBitmap(bm, v[k:k+int(n)]); err != nil {
		return nil, nil, fmt.Errorf("site links of site %d: %w: %w", site, ErrCorrupt, err)
	}
	rest := v[k+int(n):]
	counts := make([]uint32, 0, bm.GetCardinality())
	for len(rest) > 0 {
		c, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, nil, fmt.Errorf("site links of site %d: %w: bad count", site, ErrCorrupt)
		}
		counts = append(counts, uint32(c))
		rest = rest[k:]
	}
	if uint64(len(counts)) != bm.GetCardinality() {
		return nil, nil, fmt.Errorf("site links of site %d: %w: %d counts for %d sites", site, ErrCorrupt, len(counts), bm.GetCardinality())
	}
	return bm, counts, nil
}

// SiteLinks returns the sites that pages of site links to (never itself)
// and, in the same order, how many page-to-page links go to each.
func (t *Tx) SiteLinks(site uint64) (*roaring.Bitmap, []uint32, error) {
	if t.legacy {
		return nil, nil, ErrNeedsUpgrade
	}
	if err := t.flushLinks(); err != nil {
		return nil, nil, err
	}
	v := t.tx.Bucket(bucketSiteLinks).Get(u64(site))
	if v == nil {
		return roaring.New(), nil, nil
	}
	return splitSiteLinks(uint32(site), v)
}

// ForEachSiteLinks calls fn for every site with links to other sites, in
// id order, with the linked sites and the page link counts (as SiteLinks).
func (t *Tx) ForEachSiteLinks(fn func(site uint64, linked *roaring.Bitmap, counts []uint32) error) error {
	if t.legacy {
		return ErrNeedsUpgrade
	}
	if err := t.flushLinks(); err != nil {
		return err
	}
	return t.tx.Bucket(bucketSiteLinks).ForEach(func(k, v []byte) error {
		id := getU64(k)
		bm, counts, err := splitSiteLinks(uint32(id), v)
		if err != nil {
			return err
		}
		return fn(id, bm, counts)
	})
}

// ForEachOutLinks calls fn with every document that has out-links, in id
// order; bm is a fresh copy.
func (t *Tx) ForEachOutLinks(fn func(id uint64, bm *roaring.Bitmap) error) error {
	if err := t.flushOut(); err != nil {
		return err
	}
	return forEachBitmap(t.tx.Bucket(bucketOut), "out-links", fn)
}

// ForEachInLinks calls fn with every document that has in-links, in id
// order; bm is a fresh copy.
func (t *Tx) ForEachInLinks(fn func(id uint64, bm *roaring.Bitmap) error) error {
	if t.legacy {
		return ErrNeedsUpgrade
	}
	if err := t.flushLinks(); err != nil {
		return err
	}
	return forEachBitmap(t.tx.Bucket(bucketIn), "in-links", fn)
}

func forEachBitmap(b interface {
	ForEach(func(k, v []byte) error) error
}, what string, fn func(id uint64, bm *roaring.Bitmap) error) error {
	return b.ForEach(func(k, v []byte) error {
		bm := roaring.New()
		if err := unmarshalBitmap(bm, v); err != nil {
			return fmt.Errorf("%s of doc %d: %w: %w", what, getU64(k), ErrCorrupt, err)
		}
		return fn(getU64(k), bm)
	})
}

// unmarshalBitmap decodes a stored roaring bitmap into bm and checks
// that it is consistent: UnmarshalBinary accepts some damaged values (a
// run container without runs, say) whose iteration then panics, so a
// damaged graph.db would crash a stage instead of failing with an error.
func unmarshalBitmap(bm *roaring.Bitmap, v []byte) error {
	if err := bm.UnmarshalBinary(v); err != nil {
		return err
	}
	return bm.Validate()
}
