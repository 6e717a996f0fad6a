package linkgraph

import (
	"encoding/binary"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// The out-link change log: the ids of the documents whose out-link set
// was written since the log was last reset, and the token that reset
// gave it. A reader that keeps a copy of the out-links outside graph.db
// (the manager's links cache, docs/manager.md "Incremental planning")
// records the token with its copy: while graph.db's token is the same,
// the copy plus the out-link sets of the logged documents is the graph;
// any other token, or none, says the copy cannot be trusted.
var (
	keyOutChanged = []byte("out_changed") // roaring bitmap of doc ids
	keyOutToken   = []byte("out_token")   // uint64 of the last reset; absent: never reset
)

// logOutChange records in the transaction that the out-link set of doc
// id was written; flush adds the ids to the stored log.
func (t *Tx) logOutChange(id uint64) {
	if t.outChanged == nil {
		t.outChanged = roaring.New()
	}
	t.outChanged.Add(uint32(id))
}

// OutChanges returns the out-link change log: the token of its last
// reset (0 if it was never reset: every out-link set may have changed)
// and a copy of the ids of the documents whose out-link set was written
// since, this transaction's writes included.
func (t *Tx) OutChanges() (token uint64, ids *roaring.Bitmap, err error) {
	ids, err = t.storedOutChanges()
	if err != nil {
		return 0, nil, err
	}
	if t.outChanged != nil {
		ids.Or(t.outChanged)
	}
	if v := t.tx.Bucket(bucketMeta).Get(keyOutToken); v != nil {
		if len(v) != 8 {
			return 0, nil, fmt.Errorf("out-link change log: %w: token of %d bytes", ErrCorrupt, len(v))
		}
		token = binary.BigEndian.Uint64(v)
	}
	return token, ids, nil
}

func (t *Tx) storedOutChanges() (*roaring.Bitmap, error) {
	bm := roaring.New()
	if v := t.tx.Bucket(bucketMeta).Get(keyOutChanged); v != nil {
		if err := unmarshalBitmap(bm, v); err != nil {
			return nil, fmt.Errorf("out-link change log: %w: %w", ErrCorrupt, err)
		}
	}
	return bm, nil
}

// ResetOutChanges empties the out-link change log, this transaction's
// writes so far included, and gives it token (not 0). Out-link sets
// written later in the transaction are logged after the reset.
func (t *Tx) ResetOutChanges(token uint64) error {
	if token == 0 {
		return fmt.Errorf("reset out-link change log: token 0")
	}
	m := t.tx.Bucket(bucketMeta)
	if err := m.Delete(keyOutChanged); err != nil {
		return fmt.Errorf("reset out-link change log: %w", err)
	}
	if err := m.Put(keyOutToken, u64(token)); err != nil {
		return fmt.Errorf("reset out-link change log: %w", err)
	}
	t.outChanged = nil
	return nil
}

// flushOutChanges adds the transaction's logged ids to the stored log.
func (t *Tx) flushOutChanges() error {
	if t.outChanged == nil || t.outChanged.IsEmpty() {
		return nil
	}
	bm, err := t.storedOutChanges()
	if err != nil {
		return err
	}
	bm.Or(t.outChanged)
	bm.RunOptimize()
	v, err := bm.ToBytes()
	if err != nil {
		return fmt.Errorf("write out-link change log: %w", err)
	}
	if err := t.tx.Bucket(bucketMeta).Put(keyOutChanged, v); err != nil {
		return fmt.Errorf("write out-link change log: %w", err)
	}
	t.outChanged = nil
	return nil
}
