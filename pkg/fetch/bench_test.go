package fetch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// BenchmarkKeepAlive is one GET after another on one kept-alive
// connection to a loopback server answering a 4.8 KB page: by a Host in
// raw mode, as the harvester fetches (its own HTTP/1.1 session, the
// request's time limits, the head recorded), and by net/http's client,
// as the plain keep-alive client of the harvester's benchmark
// (harvester/bench_test.go) does. The server's share is in both. It
// tells whether the harvester's fetch path, not what it does around it
// (politeness, WARC records, the logs), costs more than the plain
// client's: docs/harvester.md, "Figures".
func BenchmarkKeepAlive(b *testing.B) {
	body := bytes.Repeat([]byte("<p>a page of the benchmark</p>\n"), 155)
	s := newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	})
	url := s.URL + "/page.html"
	b.Run("host", func(b *testing.B) {
		cfg := testConfig()
		cfg.Raw = true
		h := New(cfg, nil).NewHost()
		defer h.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := h.Do(ctx, Request{URL: url, MaxBody: testMax})
			if err != nil || len(resp.Body) != len(body) {
				b.Fatalf("%v, %d bytes", err, len(resp.Body))
			}
			resp.Release()
		}
	})
	b.Run("net-http", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 1}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := client.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != int64(len(body)) {
				b.Fatalf("%v, %d bytes", err, n)
			}
		}
	})
}
