package linkgraph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// The scores bucket holds the manager's estimator state: OPIC cash and
// history, the last PageRank of partial-pagerank, the PageRank imported
// from a previous crawl. What each entry means is the manager's
// (docs/manager.md); this file only stores and loads three shapes:
//
//	scores/
//	  v:NAME   nested bucket, a vector indexed by doc id:
//	           chunk number (8 bytes BE) → up to ScoreChunk float64
//	           (8 bytes LE each); element i is value i%ScoreChunk of chunk i/ScoreChunk
//	  t:NAME   nested bucket, a table: key (a URL) → float64 (8 bytes LE)
//	  meta     nested bucket: key → bytes
//
// Vectors are read and written whole, one chunk per key, so a vector of
// 50 million values is 6,100 sequential reads and the writer rewrites only
// the chunks that changed. A graph.db opened read-only that predates the
// bucket reads as empty.

// ScoreChunk is the number of values in one chunk of a score vector.
const ScoreChunk = 8192

var keyScoreMeta = []byte("meta")

// ErrNoScores means graph.db has no scores bucket to write into (it was
// opened read-only, or by an older program that did not create it).
var ErrNoScores = errors.New("graph.db has no scores bucket")

func (t *Tx) scores() *bolt.Bucket { return t.tx.Bucket(bucketScores) }

func (t *Tx) scoresRW() (*bolt.Bucket, error) {
	b := t.scores()
	if b == nil {
		return nil, ErrNoScores
	}
	return b, nil
}

func vectorKey(name string) []byte { return []byte("v:" + name) }
func tableKey(name string) []byte  { return []byte("t:" + name) }

// ScoreVector reads the score vector name; it is nil when there is none.
func (t *Tx) ScoreVector(name string) ([]float64, error) {
	s := t.scores()
	if s == nil {
		return nil, nil
	}
	b := s.Bucket(vectorKey(name))
	if b == nil {
		return nil, nil
	}
	var v []float64
	if k, _ := b.Cursor().Last(); len(k) == 8 && getU64(k) < 1<<20 {
		// At its size from the start: appending grew a million-entry
		// vector through dozens of copies.
		v = make([]float64, 0, (getU64(k)+1)*ScoreChunk)
	}
	err := b.ForEach(func(k, val []byte) error {
		c := getU64(k)
		if len(k) != 8 || len(val)%8 != 0 || len(val) > 8*ScoreChunk || c != uint64(len(v)/ScoreChunk) || len(v)%ScoreChunk != 0 {
			return fmt.Errorf("score vector %s: chunk %d (%d bytes) out of place", name, c, len(val))
		}
		for i := 0; i < len(val); i += 8 {
			v = append(v, math.Float64frombits(binary.LittleEndian.Uint64(val[i:])))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// PutScoreVector stores v as the score vector name, replacing the old
// one; chunks whose bytes did not change are not rewritten.
func (t *Tx) PutScoreVector(name string, v []float64) error {
	s, err := t.scoresRW()
	if err != nil {
		return fmt.Errorf("put score vector %s: %w", name, err)
	}
	b, err := s.CreateBucketIfNotExists(vectorKey(name))
	if err != nil {
		return fmt.Errorf("put score vector %s: %w", name, err)
	}
	chunks := (len(v) + ScoreChunk - 1) / ScoreChunk
	buf := make([]byte, 0, 8*ScoreChunk)
	for c := 0; c < chunks; c++ {
		part := v[c*ScoreChunk : min((c+1)*ScoreChunk, len(v))]
		buf = buf[:0]
		for _, x := range part {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
		key := u64(uint64(c))
		if bytes.Equal(b.Get(key), buf) {
			continue
		}
		if err := b.Put(key, bytes.Clone(buf)); err != nil {
			return fmt.Errorf("put score vector %s chunk %d: %w", name, c, err)
		}
	}
	// Drop chunks past the end (a shorter vector).
	cur := b.Cursor()
	for k, _ := cur.Seek(u64(uint64(chunks))); k != nil; k, _ = cur.Seek(u64(uint64(chunks))) {
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("put score vector %s: %w", name, err)
		}
	}
	return nil
}

// DeleteScores removes the score vector and the score table name, if any.
func (t *Tx) DeleteScores(name string) error {
	s, err := t.scoresRW()
	if err != nil {
		return fmt.Errorf("delete scores %s: %w", name, err)
	}
	for _, k := range [][]byte{vectorKey(name), tableKey(name)} {
		if err := s.DeleteBucket(k); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return fmt.Errorf("delete scores %s: %w", name, err)
		}
	}
	return nil
}

// ScoreMeta returns a copy of the scores metadata value of key, nil if
// unset.
func (t *Tx) ScoreMeta(key string) []byte {
	s := t.scores()
	if s == nil {
		return nil
	}
	m := s.Bucket(keyScoreMeta)
	if m == nil {
		return nil
	}
	return bytes.Clone(m.Get([]byte(key)))
}

// PutScoreMeta sets the scores metadata value of key.
func (t *Tx) PutScoreMeta(key string, val []byte) error {
	s, err := t.scoresRW()
	if err != nil {
		return fmt.Errorf("put score meta %s: %w", key, err)
	}
	m, err := s.CreateBucketIfNotExists(keyScoreMeta)
	if err != nil {
		return fmt.Errorf("put score meta %s: %w", key, err)
	}
	if err := m.Put([]byte(key), bytes.Clone(val)); err != nil {
		return fmt.Errorf("put score meta %s: %w", key, err)
	}
	return nil
}

// ClearScoreTable removes every entry of the score table name.
func (t *Tx) ClearScoreTable(name string) error {
	s, err := t.scoresRW()
	if err != nil {
		return fmt.Errorf("clear score table %s: %w", name, err)
	}
	if err := s.DeleteBucket(tableKey(name)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
		return fmt.Errorf("clear score table %s: %w", name, err)
	}
	return nil
}

// PutScores adds the entries fill puts to the score table name, creating
// it if needed (a later put of a key wins). Putting keys in ascending
// order is fastest; a large table is best written in several
// transactions of a few hundred thousand entries.
func (t *Tx) PutScores(name string, fill func(put func(key string, v float64) error) error) error {
	s, err := t.scoresRW()
	if err != nil {
		return fmt.Errorf("put scores %s: %w", name, err)
	}
	b, err := s.CreateBucketIfNotExists(tableKey(name))
	if err != nil {
		return fmt.Errorf("put scores %s: %w", name, err)
	}
	b.FillPercent = 0.9
	return fill(func(key string, v float64) error {
		if key == "" || len(key) > bolt.MaxKeySize {
			return fmt.Errorf("score table %s: key of %d bytes", name, len(key))
		}
		var val [8]byte
		binary.LittleEndian.PutUint64(val[:], math.Float64bits(v))
		return b.Put([]byte(key), val[:])
	})
}

// ScoreTableLen is the number of entries of the score table name.
func (t *Tx) ScoreTableLen(name string) int {
	s := t.scores()
	if s == nil {
		return 0
	}
	b := s.Bucket(tableKey(name))
	if b == nil {
		return 0
	}
	return b.Stats().KeyN
}

func tableValue(name string, k, v []byte) (float64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("score table %s: value of %q has %d bytes", name, k, len(v))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v)), nil
}

// ForEachScore calls fn with every entry of the score table name, in key
// order; key is valid only during the call.
func (t *Tx) ForEachScore(name string, fn func(key []byte, v float64) error) error {
	s := t.scores()
	if s == nil {
		return nil
	}
	b := s.Bucket(tableKey(name))
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		x, err := tableValue(name, k, v)
		if err != nil {
			return err
		}
		return fn(k, x)
	})
}

// ScoreOf returns the value of key in the score table name.
func (t *Tx) ScoreOf(name, key string) (float64, bool, error) {
	s := t.scores()
	if s == nil {
		return 0, false, nil
	}
	b := s.Bucket(tableKey(name))
	if b == nil {
		return 0, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return 0, false, nil
	}
	x, err := tableValue(name, []byte(key), v)
	return x, err == nil, err
}

// JoinURLScores calls fn with the doc id of every known URL that has an
// entry in the score table name (keyed by normalised URL), walking the
// urls bucket and the table side by side: both are sorted by URL, so the
// join is two sequential scans whatever their sizes.
func (t *Tx) JoinURLScores(name string, fn func(docID uint64, v float64) error) error {
	s := t.scores()
	if s == nil {
		return nil
	}
	b := s.Bucket(tableKey(name))
	if b == nil {
		return nil
	}
	uc := t.tx.Bucket(bucketURLs).Cursor()
	sc := b.Cursor()
	uk, uv := uc.First()
	sk, sv := sc.First()
	for uk != nil && sk != nil {
		switch c := bytes.Compare(uk, sk); {
		case c < 0:
			uk, uv = uc.Seek(sk)
		case c > 0:
			sk, sv = sc.Seek(uk)
		default:
			x, err := tableValue(name, sk, sv)
			if err != nil {
				return err
			}
			if err := fn(getU64(uv), x); err != nil {
				return err
			}
			uk, uv = uc.Next()
			sk, sv = sc.Next()
		}
	}
	return nil
}
