package extract

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// usage is what one call cost: wall time, bytes allocated, and the peak
// of the live heap above what it was before the call.
type usage struct {
	elapsed   time.Duration
	allocated uint64
	peak      uint64
}

// measure runs fn and reports its usage. A goroutine samples the heap
// every few milliseconds, so the peak is approximate but cannot be
// underestimated by much: a GC cycle cannot free what fn still holds.
func measure(fn func()) usage {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapAlloc)
				mu.Unlock()
			}
		}
	}()
	start := time.Now()
	fn()
	el := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	close(done)
	wg.Wait()
	peak = max(peak, after.HeapAlloc)
	u := usage{elapsed: el, allocated: after.TotalAlloc - before.TotalAlloc}
	if peak > before.HeapAlloc {
		u.peak = peak - before.HeapAlloc
	}
	return u
}

// TestBounds: a hostile page ends in bounded time and memory. The bounds
// are generous (the machine may be shared); what they catch is a page
// costing much more than a few times its size, or seconds per megabyte.
// Each page is at most harvester.max_body_bytes in a crawl.
func TestBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pages of up to 50 MB")
	}
	const mb = 1 << 20
	real, err := os.ReadFile(filepath.Join("testdata", "pages", "sqlite-lang.html"))
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 20*mb)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	big := bytes.Repeat(real, 50*mb/len(real)+1)[:50*mb] // many documents run together: 50 MB of tags, text and links
	cases := []struct {
		name, contentType string
		body              []byte
		check             func(t *testing.T, r *Result)
	}{
		{"garbage bytes, undeclared", "text/html", garbage, nil},
		{"garbage bytes as shift_jis", "text/html; charset=shift_jis", garbage[:5*mb], nil},
		{"50 MB page", "text/html", big, func(t *testing.T, r *Result) {
			if len(r.Text) < 2*mb || len(r.Links) == 0 {
				t.Errorf("%d bytes of text, %d links", len(r.Text), len(r.Links))
			}
		}},
		{"50 MB of one text node", "text/html; charset=utf-8", append([]byte("<p>"), bytes.Repeat([]byte("palabra "), 50*mb/8)...), func(t *testing.T, r *Result) {
			if len(r.Text) != 50*mb/8*8-1 {
				t.Errorf("%d bytes of text", len(r.Text))
			}
		}},
		{"50 MB inline script", "text/html", []byte("<p>a</p><script>" + strings.Repeat("document.write('<a href=x>');", 50*mb/29) + "</script><p>b</p>"), func(t *testing.T, r *Result) {
			if r.Text != "a\nb" || len(r.Links) != 0 {
				t.Errorf("text %q, %d links", r.Text, len(r.Links))
			}
		}},
		{"nested 100,000 deep", "text/html", []byte(strings.Repeat("<div><span><a href=x><b>", 100000) + "deep" + strings.Repeat("</b></a></span></div>", 100000) + "<p>end"), func(t *testing.T, r *Result) {
			if !strings.HasSuffix(r.Text, "deep\nend") {
				t.Errorf("text ends %q", r.Text[max(0, len(r.Text)-20):])
			}
		}},
		{"hidden 100,000 deep", "text/html", []byte("<div hidden>" + strings.Repeat("<div><p><table><tr><td>", 100000) + "secret<p>end"), func(t *testing.T, r *Result) {
			if r.Text != "" {
				t.Errorf("text %.40q", r.Text)
			}
		}},
		{"100,000 unclosed anchors", "text/html", []byte(strings.Repeat("<a href=/x>x", 100000)), func(t *testing.T, r *Result) {
			if len(r.Links) != 1 {
				t.Errorf("%d links", len(r.Links))
			}
		}},
		{"one tag with 1,000,000 attributes", "text/html", []byte("<a " + strings.Repeat("x=y ", 1000000) + "href=/z>z</a>"), nil},
	}
	e := New(Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r *Result
			u := measure(func() { r = e.Extract(c.body, c.contentType, page) })
			n := uint64(len(c.body))
			t.Logf("%.1f MB in %v: %.1f MB allocated, heap peak +%.1f MB", float64(n)/mb, u.elapsed.Round(time.Millisecond), float64(u.allocated)/mb, float64(u.peak)/mb)
			checkUTF8(t, r)
			if u.elapsed > 60*time.Second {
				t.Errorf("took %v", u.elapsed)
			}
			if limit := 12*n + 64*mb; u.allocated > limit {
				t.Errorf("allocated %d bytes for a %d-byte page (limit %d)", u.allocated, n, limit)
			}
			if limit := 8*n + 64*mb; u.peak > limit {
				t.Errorf("heap grew by %d bytes for a %d-byte page (limit %d)", u.peak, n, limit)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}
