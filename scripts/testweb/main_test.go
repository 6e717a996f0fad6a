package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/testweb"
)

func TestServeUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	seeds, ready, logf := filepath.Join(dir, "seeds.txt"), filepath.Join(dir, "ready"), filepath.Join(dir, "log.tsv")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- newApp(&out).RunContext(ctx, []string{"testweb", "--hosts", "15", "--seed", "3",
			"--http", "127.0.0.1:0", "--dns", "127.0.0.1:0", "--seeds-out", seeds, "--seeds", "4",
			"--ready-file", ready, "--log", logf})
	}()
	readyText := waitReady(t, ready, done)
	lines := strings.Split(strings.TrimSpace(string(readyText)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "http=127.0.0.1:") || !strings.HasPrefix(lines[1], "dns=127.0.0.1:") {
		t.Fatalf("ready file %q", readyText)
	}
	httpAddr := strings.TrimPrefix(lines[0], "http=")
	seedText, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	seedURLs := strings.Fields(string(seedText))
	if len(seedURLs) != 4 || !strings.Contains(seedURLs[0], httpAddr[strings.LastIndex(httpAddr, ":"):]) {
		t.Fatalf("seeds %q", seedURLs)
	}

	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, httpAddr)
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(seedURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("seed %s: status %d", seedURLs[0], resp.StatusCode)
	}
	tr.CloseIdleConnections()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("command: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("command did not stop")
	}
	if out.String() != string(readyText) {
		t.Errorf("stdout %q, ready file %q", out.String(), readyText)
	}
	logText, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Split(strings.TrimSuffix(string(logText), "\n"), "\t")
	if len(fields) != 8 || fields[0] != "1" || fields[2] != "/" || fields[3] != "200" || fields[6] != "127.0.0.1" || fields[7] != "tcp" {
		t.Fatalf("log %q", logText)
	}
	for _, f := range fields[4:6] {
		if _, err := time.Parse(time.RFC3339Nano, f); err != nil {
			t.Errorf("bad time %q: %v", f, err)
		}
	}
}

func TestHeterogeneousFlagsNeedHeterogeneous(t *testing.T) {
	err := newApp(io.Discard).Run([]string{"testweb", "--slow-fraction", "0.5"})
	if err == nil || !strings.Contains(err.Error(), "need Heterogeneous") {
		t.Errorf("--slow-fraction without --heterogeneous: error %v", err)
	}
	err = newApp(io.Discard).Run([]string{"testweb", "--heterogeneous", "--crawl-delay-min", "1500ms"})
	if err == nil || !strings.Contains(err.Error(), "whole number of seconds") {
		t.Errorf("--crawl-delay-min 1500ms: error %v", err)
	}
}

// TestSubdomainFlags: --subdomain-share and --subdomain-domains reach
// testweb.Config (the configuration written rebuilds the subdomain web),
// and are refused where the package refuses them.
func TestSubdomainFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--subdomain-share", "0.5"}, "needs Addresses"},
		{[]string{"--subdomain-domains", "3", "--addresses", "4"}, "needs SubdomainShare"},
		{[]string{"--subdomain-share", "2", "--addresses", "4"}, "between 0 and 1"},
	} {
		err := newApp(io.Discard).Run(append([]string{"testweb"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}

	cfg := servedConfig(t, "--hosts", "40", "--seed", "5", "--addresses", "6",
		"--heterogeneous", "--subdomain-share", "0.5", "--subdomain-domains", "3")
	if cfg.SubdomainShare != 0.5 || cfg.SubdomainDomains != 3 {
		t.Fatalf("config %+v", cfg)
	}
	w, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, names := range w.Subdomains() {
		n += len(names)
	}
	if len(w.Subdomains()) != 3 || n != 20 {
		t.Errorf("rebuilt web: %d sites under %d domains, want 20 under 3: %v", n, len(w.Subdomains()), w.Subdomains())
	}
}

// TestCrawlDelayMaxPagesFlag: --crawl-delay-max-pages reaches
// testweb.Config (the configuration written rebuilds a web whose
// Crawl-delay sites are no bigger than the cap), and is refused where the
// package refuses it.
func TestCrawlDelayMaxPagesFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--crawl-delay-max-pages", "10"}, "need Heterogeneous"},
		{[]string{"--heterogeneous", "--crawl-delay-max-pages", "-1"}, "CrawlDelayMaxPages must not be negative"},
	} {
		err := newApp(io.Discard).Run(append([]string{"testweb"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}

	cfg := servedConfig(t, "--hosts", "200", "--seed", "2", "--max-pages", "300",
		"--heterogeneous", "--crawl-delay-fraction", "0.05", "--crawl-delay-max-pages", "6")
	if cfg.CrawlDelayMaxPages != 6 {
		t.Fatalf("config %+v", cfg)
	}
	w, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]int{}
	for _, u := range w.URLs() {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if pu.Path != "/img/logo.png" { // the logo is no page
			pages[pu.Hostname()]++
		}
	}
	delayed, biggest := 0, 0
	for _, h := range w.HostNames() {
		if _, alias := w.Aliases()[h]; alias {
			continue
		}
		if d, err := strconv.Atoi(w.CrawlDelay(h)); err == nil && d >= 2 {
			delayed++
			biggest = max(biggest, pages[h])
		}
	}
	if delayed != 10 || biggest > 6 || biggest == 0 {
		t.Errorf("rebuilt web: %d Crawl-delay sites, the biggest of %d pages; want 10 of at most 6", delayed, biggest)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--http", "0.0.0.0:0"},
		{"--dns", ":53"},
		{"--http", "192.168.1.1:80"},
		{"--dns", "localhost:0"},
	} {
		err := newApp(io.Discard).Run(append([]string{"testweb"}, args...))
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%v: error %v, want a loopback refusal", args, err)
		}
	}
}

// TestConfigOutRebuildsTheWeb: the configuration written by --config-out
// rebuilds, without listening, a web with the same URLs (ports included),
// hostile hosts, sizes and heterogeneous web (aliases, response times),
// which is how scripts compute the truth.
func TestConfigOutRebuildsTheWeb(t *testing.T) {
	dir := t.TempDir()
	seeds, ready, cfgFile := filepath.Join(dir, "seeds.txt"), filepath.Join(dir, "ready"), filepath.Join(dir, "web.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- newApp(io.Discard).RunContext(ctx, []string{"testweb", "--hosts", "40", "--seed", "5",
			"--pages", "3000", "--heavy-pages", "--hostile", "--seeds-out", seeds, "--seeds", "3",
			"--heterogeneous", "--slow-fraction", "0.1", "--crawl-delay-min", "1s", "--crawl-delay-max", "1s", "--big-sites", "2",
			"--ready-file", ready, "--config-out", cfgFile})
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ready file never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	var cfg testweb.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.Hostile || !cfg.HeavyPages || cfg.Pages != 3000 || cfg.Hosts != 40 || strings.HasSuffix(cfg.HTTPAddr, ":0") ||
		!cfg.Heterogeneous || cfg.SlowFraction != 0.1 || cfg.CrawlDelayMin != time.Second || cfg.BigSites != 2 {
		t.Fatalf("config %+v", cfg)
	}
	w, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seedText, _ := os.ReadFile(seeds)
	if got := strings.Join(w.SeedURLs(3), "\n") + "\n"; got != string(seedText) {
		t.Errorf("rebuilt seeds %q, served %q", got, seedText)
	}
	if len(w.HostileHosts()) == 0 || w.PageCount() < 3000 {
		t.Errorf("rebuilt web: %d hostile hosts, %d pages", len(w.HostileHosts()), w.PageCount())
	}
	slow, aliases := 0, w.Aliases()
	for _, h := range w.HostNames() {
		if _, alias := aliases[h]; !alias && w.ResponseTime(h) >= testweb.DefaultSlowMin {
			slow++
		}
	}
	if slow != 4 || len(w.BigSites()) != 2 || len(w.Aliases()) == 0 {
		t.Fatalf("rebuilt web: %d slow hosts, big sites %v, aliases %v", slow, w.BigSites(), w.Aliases())
	}
	// The served web answers for the rebuilt web's aliases.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, cfg.HTTPAddr)
	}}
	defer tr.CloseIdleConnections()
	for bare, name := range w.Aliases() {
		port := cfg.HTTPAddr[strings.LastIndex(cfg.HTTPAddr, ":"):]
		req, err := http.NewRequest(http.MethodGet, "http://"+bare+port+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := "http://" + name + port + "/"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
			t.Errorf("%s: %d %q, want 301 %s", bare, resp.StatusCode, resp.Header.Get("Location"), want)
		}
		break
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestRequestLogGolden: the request log's format, byte for byte
// (testdata/requests.tsv.golden, which crawlcheck's tests read too).
func TestRequestLogGolden(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CLT", -4*3600))
	reqs := []testweb.Request{
		{ConnID: 1, Host: "www.a.cl", Path: "/robots.txt", Status: 200, Start: t0, End: t0.Add(1500 * time.Microsecond), Addr: "127.0.0.1"},
		{ConnID: 2, Host: "a.cl", Path: "/?x=1&y=%C3%B1", Status: 301, Start: t0.Add(time.Second), End: t0.Add(time.Second + 1), Addr: "127.0.0.1"},
		{ConnID: 3, Host: "reset.hostil.cl", Path: "/", Status: 0, Start: t0.Add(2 * time.Second), End: t0.Add(2 * time.Second), Addr: "127.77.0.3"},
		{ConnID: 4, Host: "b.cl", Path: "/", Status: 404, Start: t0.Add(3 * time.Second), End: t0.Add(4 * time.Second)}, // address unknown
		{ConnID: 5, Host: "www.a.cl", Path: "/p1.html", Status: 304, Start: t0.Add(5 * time.Second), End: t0.Add(5*time.Second + 900*time.Microsecond), Addr: "127.0.0.1", Conditional: true},
	}
	// Connection 2 came over TLS.
	got := requestLog(reqs, []testweb.Conn{{ID: 1}, {ID: 2, TLS: true}, {ID: 3}})
	golden := filepath.Join("testdata", "requests.tsv.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request log:\n%s\nwant (%s):\n%s", got, golden, want)
	}
}

// servedConfig runs testweb with args until it is listening, stops it,
// and returns the configuration it wrote (--config-out).
func servedConfig(t *testing.T, args ...string) testweb.Config {
	t.Helper()
	dir := t.TempDir()
	ready, cfgFile := filepath.Join(dir, "ready"), filepath.Join(dir, "web.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- newApp(io.Discard).RunContext(ctx, append(append([]string{"testweb"}, args...), "--ready-file", ready, "--config-out", cfgFile))
	}()
	waitReady(t, ready, done)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	var cfg testweb.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitReady waits (10 s at most) for testweb's ready file and returns its
// text; it fails the test if the command ends first (done).
func waitReady(t *testing.T, ready string, done <-chan error) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if text, err := os.ReadFile(ready); err == nil {
			return text
		}
		select {
		case err := <-done:
			t.Fatalf("command ended early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("ready file never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChangeFlags: the flags of the changing web, the validators and the
// codings reach testweb.Config, the time origin the web took is written
// into --config-out (so the rebuilt web has the same versions), and bad
// values are refused where the package or the command refuses them.
func TestChangeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--change-share", "0.5"}, "need Change"},
		{[]string{"--change", "--time-origin", "yesterday"}, `--time-origin "yesterday": not an RFC 3339 time`},
		{[]string{"--time-origin", "2026-12-01T00:00:00Z"}, "TimeOrigin needs Change, HonestShare or LyingShare"},
		{[]string{"--honest-share", "0.8", "--lying-share", "0.5"}, "add up to more than 1"},
		{[]string{"--change", "--change-interval-min", "1500ms"}, "ChangeIntervalMin must be a whole number of seconds"},
		{[]string{"--compress-share", "-1"}, "CompressShare and ChunkedShare must be between 0 and 1"},
	} {
		err := newApp(io.Discard).Run(append([]string{"testweb", "--hosts", "5"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}

	before := time.Now().Truncate(time.Second)
	cfg := servedConfig(t, "--hosts", "30", "--seed", "3", "--change", "--change-interval-min", "10s", "--change-interval-max", "1000s",
		"--change-link-share", "0.2", "--honest-share", "0.5", "--lying-share", "-1", "--compress-share", "0.3", "--chunked-share", "0.2")
	if !cfg.Change || cfg.ChangeIntervalMin != 10*time.Second || cfg.ChangeIntervalMax != 1000*time.Second || cfg.ChangeLinkShare != 0.2 ||
		cfg.HonestShare != 0.5 || cfg.LyingShare != -1 || cfg.CompressShare != 0.3 || cfg.ChunkedShare != 0.2 ||
		cfg.TimeOrigin.Before(before) || cfg.TimeOrigin.After(time.Now()) || cfg.TimeOrigin.Nanosecond() != 0 {
		t.Fatalf("config %+v (served after %v)", cfg, before)
	}
	w, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Origin().Equal(cfg.TimeOrigin) {
		t.Errorf("rebuilt web's origin %v, written %v", w.Origin(), cfg.TimeOrigin)
	}
	policies := map[testweb.ValidatorPolicy]int{}
	for _, h := range w.HostNames() {
		policies[w.Validators(h)]++
	}
	if policies[testweb.ValidatorsHonest] == 0 || policies[testweb.ValidatorsNone] == 0 || policies[testweb.ValidatorsLying] != 0 {
		t.Errorf("rebuilt web's validator policies %v, want honest and none only", policies)
	}

	cfg = servedConfig(t, "--hosts", "5", "--change", "--time-origin", "2026-12-01T03:00:00-03:00")
	if want := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC); !cfg.TimeOrigin.Equal(want) {
		t.Errorf("--time-origin: config says %v, want %v", cfg.TimeOrigin, want)
	}
	if cfg := servedConfig(t, "--hosts", "5"); !cfg.TimeOrigin.IsZero() || cfg.Change {
		t.Errorf("plain web: config %+v", cfg)
	}
}
