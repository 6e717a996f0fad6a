package linkgraph

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// A collection that is one partition of a web split over K collections
// (docs/format/exchange.md) keeps two records of its exchange files in
// the meta bucket: the numbers of the files it wrote whose transaction
// committed but which are not published yet (exchange_out), and, per
// sender partition, the numbers of the files it took in (exchange_in_I),
// so that a file is taken in once however often it is copied or seen.

var keyExchangeOut = []byte("exchange_out")

func keyExchangeIn(from int) []byte { return []byte("exchange_in_" + strconv.Itoa(from)) }

// NewExchangeSeq gives the next exchange file number (the park files'
// counter: the numbers are unique in the collection).
func (t *Tx) NewExchangeSeq() uint64 { return t.next(keyNextPark) }

// ExchangeOut returns the numbers of the exchange files written and
// committed but not known to be published.
func (t *Tx) ExchangeOut() ([]uint64, error) {
	v := t.tx.Bucket(bucketMeta).Get(keyExchangeOut)
	if v == nil {
		return nil, nil
	}
	var seqs []uint64
	if err := json.Unmarshal(v, &seqs); err != nil {
		return nil, fmt.Errorf("exchange files written: %w: %w", ErrCorrupt, err)
	}
	return seqs, nil
}

// PutExchangeOut records the numbers of the exchange files written and
// committed but not published yet (nil: none).
func (t *Tx) PutExchangeOut(seqs []uint64) error {
	b := t.tx.Bucket(bucketMeta)
	if len(seqs) == 0 {
		return b.Delete(keyExchangeOut)
	}
	v, err := json.Marshal(seqs)
	if err != nil {
		return err
	}
	return b.Put(keyExchangeOut, v)
}

// ExchangeTaken returns the numbers of the exchange files taken in from
// partition from.
func (t *Tx) ExchangeTaken(from int) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if v := t.tx.Bucket(bucketMeta).Get(keyExchangeIn(from)); v != nil {
		if err := unmarshalBitmap(bm, v); err != nil {
			return nil, fmt.Errorf("exchange files taken from partition %d: %w: %w", from, ErrCorrupt, err)
		}
	}
	return bm, nil
}

// PutExchangeTaken records the numbers of the exchange files taken in
// from partition from.
func (t *Tx) PutExchangeTaken(from int, bm *roaring.Bitmap) error {
	bm.RunOptimize()
	v, err := bm.ToBytes()
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucketMeta).Put(keyExchangeIn(from), v)
}

// The cross-partition part of the site graph: links from this
// collection's pages to sites of other partitions (whose URLs are sent
// to them and never become documents here), counted once per linking
// page at its first fetch, by source site id and target site key, in the
// sitelinks_remote bucket (key: 8-byte source site id then the target's
// site key; value: uvarint count). With the sitelinks bucket it is the
// site graph a partition publishes (pkg/sitegraph).

var bucketSiteRemote = []byte("sitelinks_remote")

// AddRemoteSiteLinks adds, for source site src, counts[key] links to
// the site key of another partition.
func (t *Tx) AddRemoteSiteLinks(src uint64, counts map[string]uint32) error {
	if len(counts) == 0 {
		return nil
	}
	b := t.tx.Bucket(bucketSiteRemote)
	if b == nil {
		return fmt.Errorf("links to other partitions' sites: %w: no %s bucket", ErrCorrupt, bucketSiteRemote)
	}
	for key, n := range counts {
		k := append(u64(src), key...)
		var c uint64
		if v := b.Get(k); v != nil {
			var w int
			if c, w = binary.Uvarint(v); w <= 0 {
				return fmt.Errorf("links from site %d to %s: %w: bad count", src, key, ErrCorrupt)
			}
		}
		if err := b.Put(k, binary.AppendUvarint(nil, c+uint64(n))); err != nil {
			return fmt.Errorf("links from site %d to %s: %w", src, key, err)
		}
	}
	return nil
}

// ForEachRemoteSiteLink calls fn for every source site and site key of
// another partition it links to, with the number of page links, in
// source id then key order. A file written before the bucket existed
// (opened read-only) has none.
func (t *Tx) ForEachRemoteSiteLink(fn func(src uint64, key string, links uint32) error) error {
	b := t.tx.Bucket(bucketSiteRemote)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		c, w := binary.Uvarint(v)
		if len(k) <= 8 || w <= 0 || c > 1<<32-1 {
			return fmt.Errorf("links to other partitions' sites: %w: bad record %q", ErrCorrupt, k)
		}
		return fn(getU64(k[:8]), string(k[8:]), uint32(c))
	})
}

// ExchangeCount is how many exchange files, and lines in them, went one
// way.
type ExchangeCount struct {
	Files int64     `json:"files"`
	Lines int64     `json:"lines"`
	Bytes int64     `json:"bytes,omitempty"` // the files' size (sent only; since 2026-12-08)
	At    time.Time `json:"at,omitzero"`     // the transaction's time (last counts only)
}

// ExchangePeer is what went to and came from one other partition: in
// total, and in the newest seeder transaction that sent to it or took
// from it.
type ExchangePeer struct {
	Sent         ExchangeCount `json:"sent"`
	Received     ExchangeCount `json:"received"`
	LastSent     ExchangeCount `json:"lastSent"`
	LastReceived ExchangeCount `json:"lastReceived"`
	// Removed counts the published files to it removed once it reported
	// them taken.
	Removed int64 `json:"removed,omitempty"`
}

var keyExchangeStats = []byte("exchange_stats")

// ExchangeStats returns, by partition number, what the exchange sent to
// and took from every other partition (empty outside partitioned
// collections).
func (t *Tx) ExchangeStats() (map[int]*ExchangePeer, error) {
	m := map[int]*ExchangePeer{}
	v := t.tx.Bucket(bucketMeta).Get(keyExchangeStats)
	if v == nil {
		return m, nil
	}
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("exchange counts: %w: %w", ErrCorrupt, err)
	}
	return m, nil
}

// PutExchangeStats records what ExchangeStats returns.
func (t *Tx) PutExchangeStats(m map[int]*ExchangePeer) error {
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucketMeta).Put(keyExchangeStats, v)
}
