package testweb

import (
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// benchConfigs are the webs the benchmarks serve: the default shape and
// the scale run's (scripts/bench-crawl.sh: 10,000 hosts, a million pages,
// heavy pages, hostile hosts).
func benchConfigs() []struct {
	name string
	cfg  Config
} {
	return []struct {
		name string
		cfg  Config
	}{
		{"1000hosts", Config{Seed: 23, Hosts: 1000, MaxPages: 5000}},
		{"1Mpages", Config{Seed: 1, Hosts: 10000, MaxPages: 20000, Pages: 1000000, HeavyPages: true, Hostile: true}},
	}
}

// samplePaths returns up to n (site, path) pairs spread over the web.
func samplePaths(w *Web, n int) (sites []int, paths []string) {
	for si := 0; si < w.nIn && len(paths) < n; si += 1 + w.nIn/1000 {
		s := &w.sites[si]
		for i := 0; i < s.pages && i < 200 && len(paths) < n; i++ {
			sites = append(sites, si)
			paths = append(paths, w.pathOf(s, i, s.kindOf(i)))
		}
	}
	return sites, paths
}

// BenchmarkRespond renders pages as the server does (no network, no
// truth).
func BenchmarkRespond(b *testing.B) {
	for _, bc := range benchConfigs() {
		b.Run(bc.name, func(b *testing.B) {
			w, err := New(bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			sites, paths := samplePaths(w, 20000)
			b.ReportAllocs()
			b.ResetTimer()
			var n int64
			for i := 0; i < b.N; i++ {
				resp, _, _ := w.respond(sites[i%len(sites)], paths[i%len(paths)], false)
				n += int64(len(resp.body))
			}
			b.SetBytes(n / int64(b.N))
		})
	}
}

// BenchmarkServe fetches pages over loopback HTTP with keep-alive from
// parallel clients, as a crawler would, and reports the memory the web
// keeps per request (its request records).
func BenchmarkServe(b *testing.B) {
	for _, bc := range benchConfigs() {
		b.Run(bc.name, func(b *testing.B) {
			w := startWeb(b, bc.cfg)
			sites, paths := samplePaths(w, 20000)
			urls := make([]string, len(paths))
			for k := range paths {
				urls[k] = w.origin(sites[k]) + paths[k]
			}
			c := newClient(b, w)
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			var n atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := n.Add(1)
					resp, err := c.Get(urls[int(k)%len(urls)])
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
			b.StopTimer()
			// Connections are not what is measured: close them and wait
			// until the server has seen them closed.
			c.Transport.(*http.Transport).CloseIdleConnections()
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if openConns(w) == 0 {
					break
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/float64(b.N), "kept-B/req")
		})
	}
}

// openConns counts the connections the web has not seen closed.
func openConns(w *Web) int {
	n := 0
	for _, c := range w.Conns() {
		if c.Closed.IsZero() {
			n++
		}
	}
	return n
}

// BenchmarkForEachPage enumerates the link graph of a 100,000-page web.
func BenchmarkForEachPage(b *testing.B) {
	w, err := New(Config{Seed: 1, Hosts: 1000, MaxPages: 5000, Pages: 100000})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	links := 0
	for i := 0; i < b.N; i++ {
		if err := w.ForEachPage(func(p PageInfo) error { links += len(p.Links); return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.PageCount()*b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(links/b.N)/float64(w.PageCount()), "links/page")
}
