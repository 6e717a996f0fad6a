package harvester_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/testweb"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// TestHTTPSWeb harvests every in-scope page of a small mostly-HTTPS web
// (both schemes, every TLS trouble) and its hostile TLS hosts, trusting
// the web's CA: certificate problems never stop a fetch and are recorded
// in each page's metadata record; the hostile TLS hosts end as tls errors
// within the connect time limit; no host is asked twice at once, across
// schemes.
func TestHTTPSWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a synthetic web")
	}
	web, err := testweb.New(testweb.Config{Seed: 5, Hosts: 40, MaxPages: 6, OutOfScope: -1, HTTPSShare: 0.8, TroubleFraction: 0.3, Hostile: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, web.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	inScope := map[string]bool{}
	for _, h := range web.HostNames() {
		if _, hostile := web.IsHostile(h); !hostile {
			inScope[h] = true
		}
	}
	var urls []string
	for _, u := range web.URLs() {
		if p, err := url.Parse(u); err == nil && inScope[p.Hostname()] {
			urls = append(urls, u)
		}
	}
	var hostile []string
	for _, hh := range web.HostileHosts() {
		switch hh.Kind {
		case testweb.HostileTLSStall, testweb.HostileTLSDrip, testweb.HostileTLSGarbage, testweb.HostileSchemeLoop:
			hostile = append(hostile, hh.Entries...)
		}
	}
	sort.Strings(urls)
	cfg := (&ht.Web{DNSAddr: web.DNSAddr()}).Config(10 * time.Millisecond)
	cfg.Harvester.Connections = 16
	cfg.Harvester.ConnectTimeout = config.Duration(500 * time.Millisecond)
	cfg.Harvester.CAFile = ca
	cfg.Harvester.MaxCrawlDelay = 0 // the small sites' Crawl-delay: 1 would set the test's time
	dir := filepath.Join(t.TempDir(), "000001")
	ht.WriteBatch(t, dir, 1, ht.Entries(append(append([]string(nil), urls...), hostile...)...))
	start := time.Now()
	sum, err := harvester.RunDir(context.Background(), dir, harvester.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (%v)", sum, time.Since(start).Round(time.Millisecond))

	harvest := filepath.Join(dir, "harvest")
	logged := readLog(t, harvest)
	counts := map[string]int{}
	for _, u := range urls {
		r := logged[u]
		if web.Disallowed(u, cfg.Crawl.ProductToken) {
			continue
		}
		info, _ := web.Page(u)
		if r.Status != info.Status || (r.Err != "" && !strings.HasPrefix(r.Err, "mime")) {
			t.Errorf("%s: logged %d %q, the model serves %d", u, r.Status, r.Err, info.Status)
			continue
		}
		if !strings.HasPrefix(u, "https:") || r.WARC == "" {
			continue
		}
		fields, err := warcio.ReadMetadata(filepath.Join(harvest, r.WARC), r.Offset+r.Length)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		meta := map[string]string{}
		for _, f := range fields {
			meta[f.Name] = f.Value
		}
		p, _ := url.Parse(u)
		truth, _ := web.TLS(p.Hostname())
		wantProblem := map[testweb.TLSTrouble]string{testweb.TroubleExpired: "expired", testweb.TroubleWrongName: "wrong-name",
			testweb.TroubleSelfSigned: "self-signed"}[truth.Trouble]
		valid := meta[warcio.MetaTLSCertValid] == "true"
		if meta[warcio.MetaTLSProtocol] == "" || meta[warcio.MetaTLSCipher] == "" || valid != (wantProblem == "") ||
			!strings.HasPrefix(meta[warcio.MetaTLSCertProblem], wantProblem) {
			t.Errorf("%s (%s): metadata %v", u, truth.Trouble, meta)
		}
		counts["https"]++
		if !valid {
			counts["broken certificate"]++
		}
		if meta[warcio.MetaTLSResumed] == "true" {
			counts["resumed"]++
		}
	}
	t.Logf("%v", counts)
	if counts["broken certificate"] == 0 || counts["https"] == 0 {
		t.Errorf("counts %v", counts)
	}
	for _, u := range hostile {
		r := logged[u]
		if strings.Contains(u, "scheme-loop") {
			if r.Status != 301 {
				t.Errorf("%s: %+v", u, r)
			}
			continue
		}
		if fetch.KindOf(r.Err) != "tls" || r.Millis > 1500 {
			t.Errorf("%s: %+v", u, r)
		}
	}
	// One host, one request at a time, whatever the scheme.
	byHost := map[string][]testweb.Request{}
	for _, r := range web.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for host, rs := range byHost {
		for i := 1; i < len(rs); i++ {
			if rs[i].Start.Before(rs[i-1].End) {
				t.Errorf("%s: %s started before %s ended", host, rs[i].Path, rs[i-1].Path)
			}
		}
	}
}
