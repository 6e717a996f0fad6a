package harvester_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/harvester"
	ht "github.com/wirecrawl/wire/pkg/harvester/harvestertest"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// rawServer is an HTTP/1.x server on loopback that records each request
// line exactly as it came (net/http's server answers a malformed one
// with 400 before any handler sees it) and answers every request with
// the same response, closing the connection.
type rawServer struct {
	port     string
	ln       net.Listener
	response string
	wg       sync.WaitGroup
	mu       sync.Mutex
	lines    []string
}

func startRawServer(t *testing.T, status, body string) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, response: fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, len(body), body)}
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// serve reads one request head from c, records its first line and
// answers.
func (s *rawServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	first := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		if first == "" {
			first = line
			s.mu.Lock()
			s.lines = append(s.lines, first)
			s.mu.Unlock()
		}
		if line == "" {
			break
		}
	}
	c.Write([]byte(s.response))
}

func (s *rawServer) requestLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// warcTargets returns the WARC-Target-URI of every response record of
// the harvest directory's WARC files, read back in strict mode.
func warcTargets(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	var out []string
	for _, f := range files {
		infos, err := warcio.Verify(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range infos {
			if r.Type == "response" {
				out = append(out, r.TargetURI)
			}
		}
	}
	return out
}

// harvestOne harvests entries as batch 1 of a new collection and returns
// the fetch log, the robots file by site, the WARC response targets and
// the run's log.
func harvestOne(t *testing.T, web *ht.Web, urls ...string) (map[string]fetchlog.Record, map[string]fetchlog.Robots, []string, string) {
	t.Helper()
	cfg := web.Config(wait)
	col := ht.NewCollection(t, t.TempDir(), cfg)
	b := col.Batch(1)
	ht.WriteBatch(t, b.Dir, 1, ht.Entries(urls...))
	var logs syncBuffer
	if _, err := harvester.RunCollection(context.Background(), col, 0, harvester.Options{Config: cfg, Logger: slogTo(&logs)}); err != nil {
		t.Fatal(err)
	}
	rl, err := fetchlog.ReadRobots(filepath.Join(b.HarvestPath(), fetchlog.RobotsFile))
	if err != nil {
		t.Fatal(err)
	}
	sites := map[string]fetchlog.Robots{}
	for _, r := range rl {
		sites[r.Site] = r
	}
	return readLog(t, b.HarvestPath()), sites, warcTargets(t, b.HarvestPath()), logs.String()
}

// TestRobotsRedirectNormalised: a robots.txt redirect target is requested
// and archived as the project's normaliser spells it — user info
// dropped, spaces escaped — and the rules it brings are obeyed. Issue 37:
// the target was used as the server wrote it, so the request line read
// "GET /robots.txt?a b HTTP/1.0 HTTP/1.1" (a second request line
// smuggled into the first), and the WARC writer refused the hop while
// its body still became the site's rules.
func TestRobotsRedirectNormalised(t *testing.T) {
	raw := startRawServer(t, "200 OK", "User-agent: *\nDisallow: /secret\n")
	loc := "http://user:secret@r.test:" + raw.port + "/robots.txt?a b HTTP/1.0"
	web := ht.Start(t,
		&ht.Host{Name: "s.test", Robots: &ht.Page{Status: 302, Header: http.Header{"Location": {loc}}}, Pages: map[string]*ht.Page{
			"/": html("home"), "/secret": html("secret"),
		}},
		&ht.Host{Name: "r.test"}, // its name resolves; the raw server answers on its own port
	)
	logged, sites, targets, _ := harvestOne(t, web, web.URL("s.test", "/"), web.URL("s.test", "/secret"))

	if got := raw.requestLines(); len(got) != 1 || got[0] != "GET /robots.txt?a%20b%20HTTP/1.0 HTTP/1.1" {
		t.Errorf("request lines at the redirect target: %q", got)
	}
	want := "http://r.test:" + raw.port + "/robots.txt?a%20b%20HTTP/1.0"
	found := false
	for _, u := range targets {
		found = found || u == want
		if strings.Contains(u, "secret@") || strings.Contains(u, " ") {
			t.Errorf("WARC-Target-URI %q", u)
		}
	}
	if !found {
		t.Errorf("WARC response targets %q, want %q among them", targets, want)
	}
	if r := logged[web.URL("s.test", "/secret")]; r.Err != harvester.ErrRobots {
		t.Errorf("/secret: %+v, want excluded by the redirected robots.txt", r)
	}
	if r := logged[web.URL("s.test", "/")]; r.Err != "" || r.Status != 200 {
		t.Errorf("/: %+v", r)
	}
	if r := sites[web.Site("s.test")]; r.Status != 200 || r.Err != "" || !strings.Contains(r.Body, "Disallow: /secret") {
		t.Errorf("robots.jsonl: %+v", r)
	}
}

// TestRobotsRedirectRefused: a robots.txt redirect whose target the
// normaliser refuses is not followed, with the reason logged; the 3xx is
// the answer (robots.txt unavailable: no restrictions, RFC 9309
// §2.3.1.2).
func TestRobotsRedirectRefused(t *testing.T) {
	web := ht.Start(t,
		&ht.Host{Name: "s.test", Robots: &ht.Page{Status: 302, Header: http.Header{"Location": {"http://exa mple.test/robots.txt"}}}, Pages: map[string]*ht.Page{
			"/secret": html("secret"),
		}},
	)
	logged, sites, _, logs := harvestOne(t, web, web.URL("s.test", "/secret"))
	if r := sites[web.Site("s.test")]; r.Status != 302 || r.Err != "" {
		t.Errorf("robots.jsonl: %+v", r)
	}
	if r := logged[web.URL("s.test", "/secret")]; r.Err != "" || r.Status != 200 {
		t.Errorf("/secret: %+v, want fetched (robots.txt unavailable)", r)
	}
	if n := len(web.RequestsTo("s.test")); n != 2 {
		t.Errorf("s.test got %d requests, want robots.txt and /secret", n)
	}
	if !strings.Contains(logs, "robots.txt redirect not followed") || !strings.Contains(logs, "forbidden domain code point") {
		t.Errorf("no reason logged:\n%s", logs)
	}
}

// TestRobotsResponseNotStored: a robots.txt response the WARC writer
// refuses (here a status line with a carriage return in it) is not in
// the archive, so it does not decide the site's rules: the robots.txt
// counts as unreachable and no page of the site is requested. Issue 37:
// its body became the rules, with only a warning.
func TestRobotsResponseNotStored(t *testing.T) {
	web := ht.Start(t,
		&ht.Host{Name: "s.test", Robots: ht.Hijack(func(c net.Conn) {
			body := "User-agent: *\nAllow: /\n"
			fmt.Fprintf(c, "HTTP/1.1 200 O\rK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}), Pages: map[string]*ht.Page{"/": html("home")}},
	)
	logged, sites, targets, _ := harvestOne(t, web, web.URL("s.test", "/"))
	r := sites[web.Site("s.test")]
	if r.Status != 200 || !strings.HasPrefix(r.Err, harvester.ErrStore+": ") || r.Body != "" {
		t.Errorf("robots.jsonl: %+v, want status 200 with a store error and no rules", r)
	}
	if got := logged[web.URL("s.test", "/")]; !strings.HasPrefix(got.Err, "robots: robots.txt unreachable (store: ") {
		t.Errorf("/: %+v, want robots.txt unreachable", got)
	}
	if n := len(web.RequestsTo("s.test")); n != 1 {
		t.Errorf("s.test got %d requests, want robots.txt only", n)
	}
	for _, u := range targets {
		if strings.HasSuffix(u, "/robots.txt") {
			t.Errorf("refused response archived as %s", u)
		}
	}
}
