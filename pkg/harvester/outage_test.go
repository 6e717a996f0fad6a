package harvester_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// outageWeb serves a small test web and returns it with the URLs of its
// in-scope hosts.
func outageWeb(t *testing.T, hosts int) (*testweb.Web, []string) {
	t.Helper()
	// The DNS server listens on an address of its own: taking the resolver
	// down frees its port, which no other test's server should take.
	web, err := testweb.New(testweb.Config{Seed: 5, Hosts: hosts, MaxPages: 6, OutOfScope: -1, DNSAddr: "127.0.53.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	in := map[string]bool{}
	for _, h := range web.HostNames() {
		in[h] = true
	}
	var urls []string
	for _, u := range web.URLs() {
		if p, err := url.Parse(u); err == nil && in[p.Hostname()] {
			urls = append(urls, u)
		}
	}
	return web, urls
}

// partialLog reads the fetch log of an unfinished harvest.
func partialLog(t *testing.T, dir string) []fetchlog.Record {
	t.Helper()
	recs, err := fetchlog.ReadFile(filepath.Join(dir, "harvest.partial", fetchlog.LogFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return recs
}

// checkNoOutageLogged fails for any logged line of a network failure.
func checkNoOutageLogged(t *testing.T, recs []fetchlog.Record) {
	t.Helper()
	for _, r := range recs {
		if r.Err != "" && (fetch.KindOf(r.Err) == string(fetch.KindDNS) || strings.Contains(r.Err, "gave-up")) {
			t.Errorf("logged during the outage: %s %s", r.URL, r.Err)
		}
	}
}

// rerun harvests the batch again with the network back and checks that
// it finishes with no failure at all.
func rerun(t *testing.T, dir string, cfg config.Config, urls int) {
	t.Helper()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatalf("rerun with the network back: %v", err)
	}
	if sum.URLs != urls {
		t.Errorf("rerun: %+v", sum)
	}
	for _, kind := range []string{string(fetch.KindDNS), string(fetch.KindConnect), harvester.ErrGaveUp} {
		if n := sum.Errors[kind]; n > 0 {
			t.Errorf("rerun: %d errors %s: %s", n, kind, sum)
		}
	}
}

// TestResolverDown: a resolver that refuses, stays silent or answers
// SERVFAIL from the start stops the batch with fetch.ErrNetworkDown,
// nothing logged and the batch not harvested; a rerun once it is back
// harvests the batch with no failure.
func TestResolverDown(t *testing.T) {
	if testing.Short() {
		t.Skip("harvests a test web")
	}
	for _, mode := range []testweb.DNSMode{testweb.DNSRefused, testweb.DNSSilent, testweb.DNSServFail} {
		t.Run(mode.String(), func(t *testing.T) {
			// Each mode has a web of its own; most of the time is the
			// resolver's timeouts.
			t.Parallel()
			web, urls := outageWeb(t, 14)
			cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(5 * time.Millisecond)
			cfg.Harvester.DNSTimeout = config.Duration(300 * time.Millisecond)
			dir := filepath.Join(t.TempDir(), "000001")
			ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
			if err := web.SetDNSDown(mode); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
			if !errors.Is(err, fetch.ErrNetworkDown) {
				t.Fatalf("run with the resolver %s: %v, want ErrNetworkDown", mode, err)
			}
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			if recs := partialLog(t, dir); len(recs) != 0 {
				t.Errorf("%d lines logged during the outage, first %+v", len(recs), recs[0])
			}
			if (&collection.Batch{Dir: dir}).Done(collection.StageHarvested) {
				t.Fatal("batch marked harvested")
			}
			if n := len(web.Requests()); n != 0 {
				t.Errorf("%d HTTP requests with the resolver down", n)
			}
			data, err := os.ReadFile(filepath.Join(dir, "harvest.partial", harvester.StoppedFile))
			if err != nil || !strings.Contains(string(data), `"why":"`+harvester.StoppedNetworkDown+`"`) {
				t.Errorf("stopped.json: %s, %v", data, err)
			}
			if err := web.SetDNSDown(testweb.DNSUp); err != nil {
				t.Fatal(err)
			}
			rerun(t, dir, cfg, len(urls))
			if _, err := os.Stat(filepath.Join(dir, "harvest", harvester.StoppedFile)); err == nil {
				t.Error("stopped.json published with the harvest")
			}
		})
	}
}

// TestResolverDownMidBatch: the resolver goes away while the batch is
// harvested and the cached answers expire; the run stops with nothing
// of the outage logged, and the rerun finishes the batch.
func TestResolverDownMidBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("harvests a test web")
	}
	web, urls := outageWeb(t, 14)
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(60 * time.Millisecond)
	cfg.Harvester.DNSTimeout = config.Duration(300 * time.Millisecond)
	// The test web's answers have a TTL of 300 s: the ceiling cuts it.
	cfg.Harvester.DNSMinTTL = config.Duration(50 * time.Millisecond)
	cfg.Harvester.DNSMaxTTL = config.Duration(50 * time.Millisecond)
	// Each request on a new connection, which looks the host up again
	// once the cached answer is 50 ms old.
	cfg.Harvester.MaxIdle = config.Duration(10 * time.Millisecond)
	cfg.Harvester.Connections = 14
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(urls...))
	errc := make(chan error, 1)
	go func() {
		_, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
		errc <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(partialLog(t, dir)) < 10 && time.Now().Before(deadline) {
		select {
		case err := <-errc:
			t.Fatalf("the run ended before the resolver went down: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := web.SetDNSDown(testweb.DNSRefused); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if !errors.Is(err, fetch.ErrNetworkDown) {
		for _, r := range readLog(t, filepath.Join(dir, "harvest")) {
			if r.Err != "" {
				t.Log(r.URL, r.Err)
			}
		}
		t.Fatalf("run: %v, want ErrNetworkDown", err)
	}
	recs := partialLog(t, dir)
	t.Logf("%v; %d of %d URLs logged before", err, len(recs), len(urls))
	checkNoOutageLogged(t, recs)
	if len(recs) >= len(urls) {
		t.Errorf("every URL logged: the outage came too late to test anything")
	}
	if err := web.SetDNSDown(testweb.DNSUp); err != nil {
		t.Fatal(err)
	}
	rerun(t, dir, cfg, len(urls))
}

// TestNXDomainIsNoOutage: names that do not exist are the web's
// failures, not an outage: logged, and the batch done.
func TestNXDomainIsNoOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("harvests a test web")
	}
	web, urls := outageWeb(t, 4)
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(5 * time.Millisecond)
	var missing []string
	for _, h := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		missing = append(missing, "http://www.no-existe-"+h+".cl/")
	}
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(append(missing, urls...)...))
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if n := sum.Errors[string(fetch.KindDNS)]; n != len(missing) {
		t.Errorf("%d DNS errors, want %d: %+v", n, len(missing), sum)
	}
}
