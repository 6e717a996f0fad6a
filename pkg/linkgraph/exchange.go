package linkgraph

import (
	"encoding/json"
	"fmt"
	"strconv"

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
