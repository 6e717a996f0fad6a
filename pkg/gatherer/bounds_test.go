package gatherer

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/gatherer/gathertest"
)

// peakHeap runs fn and returns the highest live heap seen while it ran,
// above the heap before it, sampled every few milliseconds.
func peakHeap(fn func()) (peak uint64, elapsed time.Duration) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var top uint64
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
				top = max(top, m.HeapAlloc)
			}
		}
	}()
	start := time.Now()
	fn()
	elapsed = time.Since(start)
	close(done)
	wg.Wait()
	if top > before.HeapAlloc {
		peak = top - before.HeapAlloc
	}
	return peak, elapsed
}

// TestBoundedMemory gathers a batch of hostile and large pages through
// the whole stage (WARC files, workers, text segment): a page of garbage
// bytes, a 50 MB page, a page nested 100,000 deep, and 120 pages of 1 MB.
// The run ends in bounded time, and the live heap stays within a few
// times the largest page plus the in-flight budget, not the size of the
// batch (about 190 MB here).
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 190 MB of pages")
	}
	const mb = 1 << 20
	real := fixture(t, "pages/sqlite-lang.html")
	garbage := make([]byte, 8*mb)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	big := bytes.Repeat(real, 50*mb/len(real)+1)[:50*mb]
	pages := []gathertest.Page{
		{DocID: 1, URL: "http://www.a.cl/garbage", Status: 200, Header: html("text/html"), Body: garbage},
		{DocID: 2, URL: "http://www.a.cl/big", Status: 200, Header: html("text/html"), Body: big},
		{DocID: 3, URL: "http://www.a.cl/deep", Status: 200, Header: html("text/html"), Body: []byte(strings.Repeat("<div><a href=x><b>", 100000) + "deep" + strings.Repeat("</b></a></div>", 100000))},
	}
	for i := range 120 {
		body := bytes.Repeat(real, mb/len(real)+1)[:mb]
		body = append([]byte("<p>page "+strconv.Itoa(i)+"</p>"), body...) // each its own text
		pages = append(pages, gathertest.Page{DocID: uint64(10 + i), URL: "http://www.b.cl/" + strconv.Itoa(i), Status: 200, Header: html("text/html"), Body: body})
	}
	col := newCollection(t)
	b := gathertest.Batch(t, col, 1, pages)
	o := options(t, col, b, 2)
	o.MaxBodyBytes = 64 * mb
	o.InflightBytes = 16 * mb
	var s *Summary
	var err error
	peak, el := peakHeap(func() { s, err = Run(context.Background(), o) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages, %.0f MB in %v: heap peak +%.0f MB", s.Docs, float64(s.BytesIn)/mb, el.Round(time.Millisecond), float64(peak)/mb)
	if s.HTML != len(pages) || s.ReadErrors != 0 {
		t.Errorf("summary %+v", s)
	}
	if el > 5*time.Minute {
		t.Errorf("took %v", el)
	}
	// The 50 MB page costs about 6 times its size while it is parsed
	// (body, tokenizer buffer, text); the rest is the budget and the
	// segment's index.
	// Garbage not yet collected counts too, so the bound is generous.
	if limit := uint64(10*50*mb + 4*16*mb + 64*mb); peak > limit {
		t.Errorf("heap grew by %d MB, limit %d MB", peak/mb, limit/mb)
	}

	// The 1 MB pages alone (120 MB) with a budget of 8 MB: the heap stays
	// far below the size of the batch.
	b2 := gathertest.Batch(t, col, 2, pages[3:])
	o = options(t, col, b2, 2)
	o.InflightBytes = 8 * mb
	peak, el = peakHeap(func() { s, err = Run(context.Background(), o) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages, %.0f MB in %v: heap peak +%.0f MB", s.Docs, float64(s.BytesIn)/mb, el.Round(time.Millisecond), float64(peak)/mb)
	if limit := uint64(48 * mb); peak > limit {
		t.Errorf("heap grew by %d MB for a batch of 120 MB, limit %d MB", peak/mb, limit/mb)
	}
}
