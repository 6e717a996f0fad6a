package extract

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// pooledState returns the state Extract left in e's pool (sync.Pool may
// drop it, under the race detector at random: then nil).
func pooledState(e *Extractor) *state {
	st, _ := e.pool.Get().(*state)
	return st
}

// within reports whether s's bytes lie inside b.
func within(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p < lo+uintptr(len(b))
}

// TestStateOutlivesPage: what a pooled state keeps from a page (its
// memory of resolutions) does not refer to the page's bytes, which the
// caller may reuse, and the page's links are cleared from its scratch
// slices, beyond what the next, smaller page uses too.
func TestStateOutlivesPage(t *testing.T) {
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, `<a href="/p%d.html">page %d</a> <a href="q%d">q</a> <a href="http://other.example/%d">x</a>`, i, i, i, i)
	}
	e := New(Options{})
	for round := range 20 {
		body := []byte(big.String())
		if round%2 == 1 {
			body = []byte(`<a href="/small">s</a><a href="rel">r</a>`)
		}
		r := e.Extract(body, "text/html", page)
		if len(r.Links) == 0 {
			t.Fatal("no links")
		}
		st := pooledState(e)
		if st == nil {
			continue
		}
		for _, res := range st.cache.entries {
			if within(res.href, body) || within(res.url, body) {
				t.Fatalf("round %d: remembered resolution %q -> %q refers to the page", round, res.href, res.url)
			}
		}
		for scope := range st.cache.scopes {
			if within(scope, body) {
				t.Fatalf("round %d: remembered scope %q refers to the page", round, scope)
			}
		}
		for i, l := range st.p.links[:cap(st.p.links)] {
			if l != (rawLink{}) {
				t.Fatalf("round %d: raw link %d left: %+v", round, i, l)
			}
		}
		for i, l := range st.links[:cap(st.links)] {
			if l != (Link{}) {
				t.Fatalf("round %d: link %d left: %+v", round, i, l)
			}
		}
		e.pool.Put(st)
		// The page's bytes reused: the Result keeps its own.
		want := fmt.Sprint(r.Links)
		for i := range body {
			body[i] = 'x'
		}
		if got := fmt.Sprint(r.Links); got != want {
			t.Fatalf("round %d: links changed with the page's bytes", round)
		}
	}
}

// TestDuplicateLinks: exact duplicates (URL, anchor, nofollow) are
// dropped and the first of each kept in order, also when the hashes that
// find them collide.
func TestDuplicateLinks(t *testing.T) {
	var b strings.Builder
	var want []Link
	type key struct {
		url, anchor string
		nofollow    bool
	}
	seen := map[key]bool{}
	for i := range 400 {
		href, anchor, nofollow := fmt.Sprintf("/p%d", i%7), fmt.Sprintf("a%d", i%5), i%3 == 0
		rel := ""
		if nofollow {
			rel = ` rel=nofollow`
		}
		fmt.Fprintf(&b, `<a href="%s"%s>%s</a>`, href, rel, anchor)
		l := Link{URL: "http://www.example.cl" + href, Anchor: anchor, NoFollow: nofollow, Tag: TagA}
		if k := (key{l.URL, l.Anchor, l.NoFollow}); !seen[k] {
			seen[k] = true
			want = append(want, l)
		}
	}
	for _, mask := range []uint64{^uint64(0), 3, 0} {
		linkHashMask = mask
		r := New(Options{}).Extract([]byte(b.String()), "text/html", page)
		linkHashMask = ^uint64(0)
		if fmt.Sprint(r.Links) != fmt.Sprint(want) {
			t.Errorf("mask %#x: %d links, want %d:\n%v\n%v", mask, len(r.Links), len(want), r.Links, want)
		}
		if cap(r.Links) > 2*len(r.Links) {
			t.Errorf("mask %#x: %d links in a slice of %d", mask, len(r.Links), cap(r.Links))
		}
	}
}

// TestResolutionsFind: the memory of resolutions finds every entry it
// holds after its table grows (entries re-slotted by the hash bits their
// slots keep), and tells apart entries whose hashes agree in those bits,
// or in full, by scope and href.
func TestResolutionsFind(t *testing.T) {
	var c resolutions
	type key struct {
		scope int32
		href  string
		h     uint64
	}
	var keys []key
	for page := range 6 {
		n := 300 * (page + 1)
		c.reserve(n)
		for i := range n {
			k := key{scope: int32(i % 3), href: fmt.Sprintf("p%d/%d", page, i)}
			switch i % 4 {
			case 0:
				k.h = resolutionHash(k.scope, k.href)
			case 1:
				k.h = uint64(i%5)<<32 | 7 // low bits shared with many others
			default:
				k.h = 42 // the same hash in full
			}
			if j, _ := c.find(k.scope, k.h, k.href); j >= 0 {
				t.Fatalf("page %d: %q found before it was added", page, k.href)
			}
			_, slot := c.find(k.scope, k.h, k.href)
			if j := c.add(slot, k.h, resolution{href: k.href, scope: k.scope, url: "u" + k.href}); j != len(keys) {
				t.Fatalf("page %d: %q added at %d, want %d", page, k.href, j, len(keys))
			}
			keys = append(keys, k)
		}
		for want, k := range keys {
			if j, _ := c.find(k.scope, k.h, k.href); j != want || c.entries[j].url != "u"+k.href {
				t.Fatalf("page %d, %d slots: %q of scope %d found at %d, want %d", page, len(c.slots), k.href, k.scope, j, want)
			}
			if j, _ := c.find(k.scope+3, k.h, k.href); j >= 0 {
				t.Fatalf("page %d: %q found in another scope", page, k.href)
			}
		}
	}
	if len(c.slots) < 2*len(c.entries) {
		t.Errorf("%d slots for %d entries", len(c.slots), len(c.entries))
	}
}
