package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// TestBenchTLS is the benchmark of scripts/bench-tls.sh (it runs only
// with WIRE_BENCH=1): part 1 of TestBenchHarvester (wait 0, the harvester
// against a plain keep-alive client, one connection per host, on the same
// URLs) on two webs of one seed, one all plain HTTP and one all HTTPS
// (every site over TLS, no certificate trouble; the plain-HTTP side of a
// few sites is still crawled: redirects and pages on both schemes), in
// the same run. It prints for each pages/s and CPU per page (the process's:
// the test web's share included), the TLS handshakes per host and how
// many of them resumed a session, and the harvester's share of each
// ceiling.
//
// Environment: BENCH_HOSTS [200], BENCH_MAX_PAGES [300],
// BENCH_CONNECTIONS [32], BENCH_ROUNDS [2].
func TestBenchTLS(t *testing.T) {
	if os.Getenv("WIRE_BENCH") == "" {
		t.Skip("set WIRE_BENCH=1 (scripts/bench-tls.sh)")
	}
	hosts := envInt(t, "BENCH_HOSTS", 200)
	maxPages := envInt(t, "BENCH_MAX_PAGES", 300)
	conns := envInt(t, "BENCH_CONNECTIONS", 32)
	rounds := envInt(t, "BENCH_ROUNDS", 2)
	type result struct {
		harvRate, harvCPU, plainRate, plainCPU float64 // pages/s, µs per page
		handshakes, resumed, tlsHosts          int     // the harvester's best round
		plainHandshakes                        int
	}
	var res [2]result
	for k, https := range []bool{false, true} {
		cfg := testweb.Config{Seed: 1, Hosts: hosts, MaxPages: maxPages, OutOfScope: -1}
		name := "plain HTTP"
		var ca string
		var tlsCfg *tls.Config
		if https {
			cfg.HTTPSShare, cfg.TroubleFraction, name = 1, -1, "HTTPS"
		}
		web := startWeb(t, cfg)
		if https {
			ca = filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, web.CACertPEM(), 0o644); err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(web.CACertPEM())
			tlsCfg = &tls.Config{RootCAs: pool, ClientSessionCache: tls.NewLRUClientSessionCache(1024)}
		}
		urls := inScopeURLs(web)
		r := &res[k]
		for round := 1; round <= rounds; round++ {
			reqs0, conns0 := len(web.Requests()), len(web.Conns())
			dir := filepath.Join(t.TempDir(), fmt.Sprintf("%06d", round))
			ht.WriteBatch(t, dir, round, ht.Entries(urls...))
			took, cpu, _, pages := harvest(t, web, dir, conns, 0, ca)
			n := len(web.Requests()) - reqs0
			hs, resumed, perHost := tlsConns(web.Conns()[conns0:])
			rate := float64(pages) / took.Seconds()
			fmt.Printf("bench: %s round %d: harvester %d requests, %d pages stored in %v: %.0f pages/s, CPU %.0f µs/page; %d TLS handshakes on %d hosts (%d resumed)\n",
				name, round, n, pages, took.Round(time.Millisecond), rate, float64(cpu.Microseconds())/float64(pages), hs, perHost, resumed)
			if rate > r.harvRate {
				r.harvRate, r.harvCPU = rate, float64(cpu.Microseconds())/float64(pages)
				r.handshakes, r.resumed, r.tlsHosts = hs, resumed, perHost
			}
			var requested []string
			all := web.Conns()
			for _, q := range web.Requests()[reqs0:] {
				requested = append(requested, requestURL(web, all, q))
			}
			conns0 = len(web.Conns())
			cpu0 := cpuTime()
			took = plainClient(t, web.DNSAddr(), requested, conns, biggestFirst, tlsCfg)
			pcpu := cpuTime() - cpu0
			phs, presumed, _ := tlsConns(web.Conns()[conns0:])
			prate := float64(len(requested)) / took.Seconds()
			fmt.Printf("bench: %s round %d: plain client %d requests in %v: %.0f requests/s, CPU %.0f µs/request; %d TLS handshakes (%d resumed)\n",
				name, round, len(requested), took.Round(time.Millisecond), prate, float64(pcpu.Microseconds())/float64(len(requested)), phs, presumed)
			if prate > r.plainRate {
				// The harvester's pages/s are of stored pages; the plain
				// client's of its requests: the harvester's requests per
				// stored page scale it.
				r.plainRate, r.plainCPU, r.plainHandshakes = prate*float64(pages)/float64(n), float64(pcpu.Microseconds())/float64(len(requested))*float64(n)/float64(pages), phs
			}
		}
		web.Close()
	}
	for k, name := range []string{"plain HTTP", "HTTPS"} {
		r := res[k]
		fmt.Printf("bench: RESULT %s: harvester %.0f pages/s, %.0f µs CPU/page; plain keep-alive client %.0f pages/s, %.0f µs CPU/page: %.0f%% of the ceiling (target >= 70%%)\n",
			name, r.harvRate, r.harvCPU, r.plainRate, r.plainCPU, 100*r.harvRate/r.plainRate)
	}
	h := res[1]
	fmt.Printf("bench: RESULT TLS handshakes: harvester %d on %d hosts (%.2f per host), %d resumed; plain client %d; TLS costs the harvester %.0f%% of its plain-HTTP rate and %.0f µs CPU/page\n",
		h.handshakes, h.tlsHosts, float64(h.handshakes)/float64(max(h.tlsHosts, 1)), h.resumed, h.plainHandshakes,
		100*(1-h.harvRate/res[0].harvRate), h.harvCPU-res[0].harvCPU)
}

// tlsConns counts the TLS connections among conns, those that resumed a
// session, and the hosts they went to.
func tlsConns(conns []testweb.Conn) (handshakes, resumed, hosts int) {
	seen := map[string]bool{}
	for _, c := range conns {
		if !c.TLS {
			continue
		}
		handshakes++
		if c.Resumed {
			resumed++
		}
		seen[c.Host] = true
	}
	return handshakes, resumed, len(seen)
}

// requestURL is the URL of request q: its scheme is its connection's.
func requestURL(web *testweb.Web, conns []testweb.Conn, q testweb.Request) string {
	if q.ConnID > 0 && conns[q.ConnID-1].TLS {
		return fmt.Sprintf("https://%s:%d%s", q.Host, web.HTTPSPort(), q.Path)
	}
	return fmt.Sprintf("http://%s:%d%s", q.Host, web.Port(), q.Path)
}
