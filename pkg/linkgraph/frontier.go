package linkgraph

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bolt "go.etcd.io/bbolt"
)

// frontierSet returns the transaction's frontier set, loading it on first
// use. A version 1 file opened read-only has none: it is computed from
// the documents.
func (t *Tx) frontierSet() (*roaring.Bitmap, error) {
	if t.frontier != nil {
		return t.frontier, nil
	}
	bm := roaring.New()
	v := t.tx.Bucket(bucketMeta).Get(keyFrontier)
	if v == nil {
		if err := t.ForEachDoc(func(d *Doc) error {
			if d.InFrontier() {
				bm.Add(uint32(d.ID))
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("frontier set: %w", err)
		}
	} else if err := unmarshalBitmap(bm, v); err != nil {
		return nil, fmt.Errorf("frontier set: %w: %w", ErrCorrupt, err)
	}
	t.frontier = bm
	return bm, nil
}

// FrontierSize is the number of documents in the frontier (Doc.InFrontier:
// known, never attempted, not excluded). The Sydney strategy and the
// fixed budget of the seeder bound it (docs/frontier.md).
func (t *Tx) FrontierSize() (uint64, error) {
	fr, err := t.frontierSet()
	if err != nil {
		return 0, err
	}
	return fr.GetCardinality(), nil
}

// Frontier returns a copy of the set of frontier document ids.
func (t *Tx) Frontier() (*roaring.Bitmap, error) {
	fr, err := t.frontierSet()
	if err != nil {
		return nil, err
	}
	return fr.Clone(), nil
}

// Parked records one file of parked links under COLLECTION/frontier/
// (docs/frontier.md): links to new URLs that the Sydney strategy or the
// frontier budget kept out of the frontier for now. The record is written
// in the transaction that took in the batch whose links it holds, after
// the file itself; it is deleted in the transaction that releases it.
type Parked struct {
	Seq     uint64    `json:"seq"`     // file number (meta next_park)
	File    string    `json:"file"`    // file name in COLLECTION/frontier/
	Batch   int       `json:"batch"`   // batch whose links it holds; 0 for the remainder of a release
	Links   int       `json:"links"`   // records in the file
	Created time.Time `json:"created"` //
}

// NewParkSeq gives the next park file number.
func (t *Tx) NewParkSeq() uint64 { return t.next(keyNextPark) }

// LastParkSeq is the largest park file number given so far.
func (t *Tx) LastParkSeq() uint64 { return t.counter(keyNextPark) }

// PutParked records a park file.
func (t *Tx) PutParked(p Parked) error {
	v, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("park file %d: %w", p.Seq, err)
	}
	if err := t.parked().Put(u64(p.Seq), v); err != nil {
		return fmt.Errorf("park file %d: %w", p.Seq, err)
	}
	return nil
}

// DeleteParked forgets a park file (it has been released).
func (t *Tx) DeleteParked(seq uint64) error {
	if err := t.parked().Delete(u64(seq)); err != nil {
		return fmt.Errorf("park file %d: %w", seq, err)
	}
	return nil
}

// ForEachParked calls fn for every park file still to release, oldest
// first.
func (t *Tx) ForEachParked(fn func(Parked) error) error {
	b := t.parked()
	if b == nil {
		return nil // a version 1 file opened read-only
	}
	return b.ForEach(func(k, v []byte) error {
		var p Parked
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("park file %d: %w: %w", getU64(k), ErrCorrupt, err)
		}
		return fn(p)
	})
}

func (t *Tx) parked() *bolt.Bucket { return t.tx.Bucket(bucketParked) }
