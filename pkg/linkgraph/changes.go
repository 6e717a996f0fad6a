package linkgraph

import (
	"encoding/binary"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// The change logs: for the out-link sets and for the document records,
// the ids of the documents written since the log was last reset, and the
// token that reset gave it. A reader that keeps a copy of graph.db's
// out-links or of what it derives from the records outside graph.db (the
// manager's caches, docs/manager.md "Incremental planning") records the
// token with its copy: while graph.db's token is the same, the copy plus
// the logged documents is graph.db; any other token, or none, says the
// copy cannot be trusted.
type changeLog int

const (
	outLog changeLog = iota // out-link sets (ReplaceOutLinks, AddOutLinks, SetOutLinks)
	docLog                  // document records (every write of one, new documents included)
	logCount
)

var logKeys = [logCount]struct {
	name           string
	changed, token []byte // meta keys: roaring bitmap of doc ids; uint64 of the last reset (absent: never reset)
}{
	outLog: {"out-link", []byte("out_changed"), []byte("out_token")},
	docLog: {"document", []byte("doc_changed"), []byte("doc_token")},
}

// logChange records in the transaction that doc id was written; flush
// adds the ids to the stored log.
func (t *Tx) logChange(l changeLog, id uint64) {
	if t.changed[l] == nil {
		t.changed[l] = roaring.New()
	}
	t.changed[l].Add(uint32(id))
}

// OutChanges returns the out-link change log: the token of its last
// reset (0 if it was never reset: every out-link set may have changed)
// and a copy of the ids of the documents whose out-link set was written
// since, this transaction's writes included.
func (t *Tx) OutChanges() (token uint64, ids *roaring.Bitmap, err error) {
	return t.changes(outLog)
}

// DocChanges is OutChanges for the document records: the ids of the
// documents whose record was written (or created) since the last
// ResetDocChanges.
func (t *Tx) DocChanges() (token uint64, ids *roaring.Bitmap, err error) {
	return t.changes(docLog)
}

// ResetOutChanges empties the out-link change log, this transaction's
// writes so far included, and gives it token (not 0). Out-link sets
// written later in the transaction are logged after the reset.
func (t *Tx) ResetOutChanges(token uint64) error { return t.resetChanges(outLog, token) }

// ResetDocChanges is ResetOutChanges for the document change log.
func (t *Tx) ResetDocChanges(token uint64) error { return t.resetChanges(docLog, token) }

func (t *Tx) changes(l changeLog) (uint64, *roaring.Bitmap, error) {
	if l == docLog {
		if err := t.flushRecords(); err != nil { // logs the records held in memory
			return 0, nil, err
		}
	}
	ids, err := t.storedChanges(l)
	if err != nil {
		return 0, nil, err
	}
	if t.changed[l] != nil {
		ids.Or(t.changed[l])
	}
	var token uint64
	if v := t.tx.Bucket(bucketMeta).Get(logKeys[l].token); v != nil {
		if len(v) != 8 {
			return 0, nil, fmt.Errorf("%s change log: %w: token of %d bytes", logKeys[l].name, ErrCorrupt, len(v))
		}
		token = binary.BigEndian.Uint64(v)
	}
	return token, ids, nil
}

func (t *Tx) storedChanges(l changeLog) (*roaring.Bitmap, error) {
	bm := roaring.New()
	if v := t.tx.Bucket(bucketMeta).Get(logKeys[l].changed); v != nil {
		if err := unmarshalBitmap(bm, v); err != nil {
			return nil, fmt.Errorf("%s change log: %w: %w", logKeys[l].name, ErrCorrupt, err)
		}
	}
	return bm, nil
}

func (t *Tx) resetChanges(l changeLog, token uint64) error {
	k := logKeys[l]
	if token == 0 {
		return fmt.Errorf("reset %s change log: token 0", k.name)
	}
	if l == docLog {
		if err := t.flushRecords(); err != nil { // the records held so far are in the reset
			return err
		}
	}
	m := t.tx.Bucket(bucketMeta)
	if err := m.Delete(k.changed); err != nil {
		return fmt.Errorf("reset %s change log: %w", k.name, err)
	}
	if err := m.Put(k.token, u64(token)); err != nil {
		return fmt.Errorf("reset %s change log: %w", k.name, err)
	}
	t.changed[l] = nil
	return nil
}

// flushChanges adds the transaction's logged ids to the stored logs.
func (t *Tx) flushChanges() error {
	for l := range logCount {
		if t.changed[l] == nil || t.changed[l].IsEmpty() {
			continue
		}
		bm, err := t.storedChanges(l)
		if err != nil {
			return err
		}
		bm.Or(t.changed[l])
		bm.RunOptimize()
		v, err := bm.ToBytes()
		if err != nil {
			return fmt.Errorf("write %s change log: %w", logKeys[l].name, err)
		}
		if err := t.tx.Bucket(bucketMeta).Put(logKeys[l].changed, v); err != nil {
			return fmt.Errorf("write %s change log: %w", logKeys[l].name, err)
		}
		t.changed[l] = nil
	}
	return nil
}
