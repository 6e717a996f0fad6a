package linkgraph

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

// TestCreatedIndex: the index answers as a map does, through growth,
// with keys whose first words collide (long probe runs) or follow each
// other.
func TestCreatedIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		key  func(i int) URLKey
	}{
		{"random", 5000, func(i int) URLKey { return URLKey{rand.Uint64(), rand.Uint64()} }},
		{"same first word", 300, func(i int) URLKey { return URLKey{42, uint64(i)} }},
		{"first words one slot apart", 300, func(i int) URLKey { return URLKey{uint64(i), 7} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x createdIndex
			want := map[URLKey]uint64{}
			keys := make([]URLKey, tc.n)
			for i := range keys {
				keys[i] = tc.key(i)
				if _, ok := x.get(keys[i]); ok {
					t.Fatalf("key %d found before it was put", i)
				}
				x.put(keys[i], uint64(i+1))
				want[keys[i]] = uint64(i + 1)
				if 2*x.n > len(x.slots) {
					t.Fatalf("%d keys in %d slots", x.n, len(x.slots))
				}
			}
			if x.n != len(want) {
				t.Errorf("n = %d, want %d", x.n, len(want))
			}
			for k, id := range want {
				if got, ok := x.get(k); !ok || got != id {
					t.Fatalf("get %v = %d, %v; want %d", k, got, ok, id)
				}
			}
			// Keys never put differ from every stored one in one word.
			for i := 0; i < 1000; i++ {
				k := keys[i%len(keys)]
				k[i%2] ^= 1 << (i % 64)
				if _, stored := want[k]; stored {
					continue
				}
				if id, ok := x.get(k); ok {
					t.Fatalf("absent key %v found with id %d", k, id)
				}
			}
		})
	}
}

// TestURLKeys: a URL's key is the same in every transaction of one open
// Graph (the seeder computes it in read transactions for the write one),
// and the write transaction finds the URLs it created by either form.
func TestURLKeys(t *testing.T) {
	g, _ := openTemp(t)
	var keys []URLKey
	urls := []string{"http://a.cl/", "http://a.cl/x", "http://b.cl/"}
	if err := g.View(func(tx *Tx) error {
		for _, u := range urls {
			keys = append(keys, tx.URLKey(u))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if keys[0] == keys[1] || keys[1] == keys[2] {
		t.Fatalf("keys collide: %v", keys)
	}
	err := g.Update(func(tx *Tx) error {
		for _, u := range urls[:2] {
			if _, _, err := tx.AddURL(u, 1, 0, 0); err != nil {
				return err
			}
		}
		for i, u := range urls {
			id1, ok1 := tx.CreatedURLKey(keys[i])
			id2, ok2 := tx.CreatedURL(u)
			id3, ok3 := tx.LookupURL(u)
			if ok1 != (i < 2) || ok1 != ok2 || ok1 != ok3 || id1 != id2 || id1 != id3 {
				return fmt.Errorf("%s: %d %v, %d %v, %d %v", u, id1, ok1, id2, ok2, id3, ok3)
			}
		}
		return errRollback // the documents have no site: not for keeping
	})
	if err != errRollback {
		t.Fatal(err)
	}
}

var errRollback = errors.New("rolled back")
