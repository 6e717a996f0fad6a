package harvester_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
)

// heapPeak samples the heap while a test runs and reports its highest
// value above the level at the start.
type heapPeak struct {
	base, peak uint64
	stop       chan struct{}
	wg         sync.WaitGroup
}

func watchHeap() *heapPeak {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	p := &heapPeak{base: m.HeapAlloc, peak: m.HeapAlloc, stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				runtime.ReadMemStats(&m)
				p.peak = max(p.peak, m.HeapAlloc)
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// growth stops sampling and returns the peak growth of the heap.
func (p *heapPeak) growth() uint64 {
	close(p.stop)
	p.wg.Wait()
	return p.peak - p.base
}

// TestHostileServers harvests one batch with a host for each kind of
// hostile server next to a well-behaved one, once for each
// harvester.warc_mode. Each bad URL ends within its limit with the error
// (or truncation) the docs promise, the heap stays bounded although the
// servers offer hundreds of megabytes — the gzip bomb is cut at
// max_body_bytes of decoded bytes in both modes, raw mode storing only
// its first compressed bytes — the good host is fetched whole, and the
// batch is completed and marked.
func TestHostileServers(t *testing.T) {
	for _, mode := range config.WARCModes() {
		t.Run(mode, func(t *testing.T) { hostileServers(t, mode) })
	}
}

func hostileServers(t *testing.T, mode string) {
	var endlessSent, hugeSent atomic.Int64
	noise := ht.Noise(20000, 7)
	web := ht.Start(t,
		&ht.Host{Name: "good.test", Pages: map[string]*ht.Page{"/": html("good"), "/1": html("good 1"), "/2": html("good 2")}},
		&ht.Host{Name: "drip.test", Pages: map[string]*ht.Page{"/": ht.Drip(100 * time.Millisecond)}},
		&ht.Host{Name: "endless.test", Pages: map[string]*ht.Page{"/": ht.Endless(&endlessSent)}},
		&ht.Host{Name: "bomb.test", Pages: map[string]*ht.Page{"/": ht.GzipBomb(100 << 20)}},
		&ht.Host{Name: "loop.test",
			Robots: &ht.Page{Status: 302, Header: http.Header{"Location": {"/robots.txt"}}},
			Pages:  map[string]*ht.Page{"/loop": {Status: 302, Header: http.Header{"Location": {"/loop"}}}}},
		&ht.Host{Name: "huge.test", Pages: map[string]*ht.Page{"/": ht.Huge(50<<20, &hugeSent)}},
		&ht.Host{Name: "garbage.test", Pages: map[string]*ht.Page{
			"/binary": {Body: noise, Header: http.Header{"Content-Type": {"text/html"}}},
			"/noise":  ht.Hijack(func(c net.Conn) { c.Write(noise) }),
		}},
		&ht.Host{Name: "reset.test", Pages: map[string]*ht.Page{
			"/before": ht.Hijack(ht.Reset),
			"/mid": ht.Hijack(func(c net.Conn) {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html>partial"))
				time.Sleep(30 * time.Millisecond)
				ht.Reset(c)
			}),
		}},
		&ht.Host{Name: "stall.test", Pages: map[string]*ht.Page{"/": ht.Stall(30 * time.Second)}},
		&ht.Host{Name: "dnsdrop.test", DNS: "drop"},
	)
	u := web.URL
	cfg := web.Config(20 * time.Millisecond)
	cfg.Harvester.Connections = 16
	cfg.Harvester.FirstByteTimeout = config.Duration(time.Second)
	cfg.Harvester.ReadTimeout = config.Duration(2 * time.Second)
	cfg.Harvester.TotalTimeout = config.Duration(10 * time.Second)
	cfg.Harvester.MinTransferRate = 1000 // the drip sends 10 bytes/s
	cfg.Harvester.MaxBodyBytes = 64 << 10
	cfg.Harvester.WARCMode = mode

	type want struct {
		status int
		err    string // prefix of the fetch log error; "" = success
		trunc  string // WARC-Truncated of the stored response
		within time.Duration
	}
	cases := map[string]want{
		u("good.test", "/"):                     {200, "", "", time.Second},
		u("good.test", "/1"):                    {200, "", "", time.Second},
		u("good.test", "/2"):                    {200, "", "", time.Second},
		u("drip.test", "/"):                     {200, "timeout: transfer slower than 1000 bytes/s over 5s", "time", 6500 * time.Millisecond},
		u("endless.test", "/"):                  {200, "", "length", 3 * time.Second},
		u("bomb.test", "/"):                     {200, "", "length", 3 * time.Second},
		u("loop.test", "/loop"):                 {302, "", "", time.Second},
		u("huge.test", "/"):                     {200, "", "length", 3 * time.Second},
		u("garbage.test", "/binary"):            {200, "", "", time.Second},
		u("garbage.test", "/noise"):             {0, "protocol", "", time.Second},
		u("reset.test", "/before"):              {0, "reset", "", time.Second},
		u("reset.test", "/mid"):                 {200, "reset", "disconnect", time.Second},
		u("stall.test", "/"):                    {0, "timeout: no response within 1s", "", 2500 * time.Millisecond},
		"http://nx.test:" + web.Port + "/":      {0, "dns: no such host nx.test", "", 0},
		"http://dnsdrop.test:" + web.Port + "/": {0, "dns: timeout looking up dnsdrop.test", "", 0},
	}
	var urls []string
	for url := range cases {
		urls = append(urls, url)
	}
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))

	heap := watchHeap()
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	took := time.Since(start)
	grown := heap.growth()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; heap grew by at most %.1f MiB", sum, float64(grown)/(1<<20))
	if !(&collection.Batch{Dir: dir}).Done(collection.StageHarvested) || sum.URLs != len(cases) {
		t.Fatalf("batch not completed: %+v", sum)
	}
	if took > 9*time.Second {
		t.Errorf("the batch took %v; the slowest limit is the drip's 5 s window", took)
	}
	// The servers offered 100 MB (bomb), 50 MB (huge) and an endless
	// stream; the harvester keeps 64 KiB of each.
	if grown > 48<<20 {
		t.Errorf("heap grew by %d MiB", grown>>20)
	}
	if n := hugeSent.Load(); n > 16<<20 {
		t.Errorf("huge.test wrote %d MiB before the harvester hung up", n>>20)
	}
	if n := endlessSent.Load(); n > 16<<20 {
		t.Errorf("endless.test wrote %d MiB before the harvester hung up", n>>20)
	}

	logged := readLog(t, filepath.Join(dir, "harvest"))
	for url, w := range cases {
		r := logged[url]
		if r.Status != w.status || !strings.HasPrefix(r.Err, w.err) || (w.err == "") != (r.Err == "") {
			t.Errorf("%s: status %d err %q, want %d %q", url, r.Status, r.Err, w.status, w.err)
		}
		if w.within > 0 && time.Duration(r.Millis)*time.Millisecond > w.within {
			t.Errorf("%s: took %d ms, limit %v", url, r.Millis, w.within)
		}
		if w.trunc != "" || w.status > 0 {
			resp := readRecord(t, filepath.Join(dir, "harvest"), r)
			if resp.Truncated != w.trunc {
				t.Errorf("%s: WARC-Truncated %q, want %q", url, resp.Truncated, w.trunc)
			}
			max := cfg.Harvester.MaxBodyBytes
			if w.trunc == "length" && r.Bytes != max {
				t.Errorf("%s: %d bytes logged, want the %d cap", url, r.Bytes, max)
			}
			// Decoded bytes at the cap: the bomb's, decoded, in decoded
			// mode; in raw mode its first compressed bytes, at most an
			// eighth and 64 KiB more than the cap.
			if stored := int64(len(resp.Body)); w.trunc == "length" && (stored > max+max/8+64<<10 || mode == config.WARCModeDecoded && stored != max) {
				t.Errorf("%s: %d bytes stored, cap %d", url, stored, max)
			}
			if url == u("bomb.test", "/") && mode == config.WARCModeRaw {
				if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" || int64(len(decoded(t, resp))) < max {
					t.Errorf("bomb stored with Content-Encoding %q, decoding to %d bytes: want the gzip as sent, at least the cap", ce, len(decoded(t, resp)))
				}
			}
		}
	}
	// robots.txt redirecting to itself: five redirects are followed
	// (RFC 9309 §2.3.1.2), then the file counts as unavailable.
	robotsHops := 0
	for _, r := range web.RequestsTo("loop.test") {
		if r.Path == "/robots.txt" {
			robotsHops++
		}
	}
	if robotsHops != 6 {
		t.Errorf("loop.test: robots.txt requested %d times, want 1 + 5 redirects", robotsHops)
	}
	for _, r := range web.Requests() {
		if r.Host == "nx.test" || r.Host == "dnsdrop.test" {
			t.Errorf("a host that does not resolve was reached: %+v", r)
		}
	}
	if err := web.CheckOneConnPerHost(); err != nil {
		t.Error(err)
	}
	// The transport would send a request reset on a kept-alive connection
	// again at once (pkg/fetch refuses it): once each.
	seen := map[string]int{}
	for _, r := range web.RequestsTo("reset.test") {
		seen[r.Path]++
	}
	if seen["/before"] != 1 || seen["/mid"] != 1 {
		t.Errorf("reset.test: requests %v, want /before and /mid once each", seen)
	}
	checkWARCs(t, filepath.Join(dir, "harvest"))
	servers := readServers(t, filepath.Join(dir, "harvest"))
	if s := servers["dnsdrop.test"]; !strings.HasPrefix(s.DNSError, "dns: timeout") {
		t.Errorf("dnsdrop.test in servers.jsonl: %+v", s)
	}
}
